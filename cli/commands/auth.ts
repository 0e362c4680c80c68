// `folio auth ...`: log in to one or more Folio servers (profiles) with an API token, see which
// is in use, print the token for another tool, log out.
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import type { Command } from 'commander';
import { credentials, failure, raw, send, type Target } from '../lib/client.ts';
import { DEFAULT_URL, configFile, loadConfig, normalizeUrl, saveConfig } from '../lib/config.ts';
import type { Stored } from '../lib/credentials.ts';
import { CliError, EXIT } from '../lib/errors.ts';
import { browserLogin } from '../lib/oauth.ts';
import { examples, type Cli, type CommandGroup } from '../lib/group.ts';
import { emit, readStdin, withOutput, type OutputOptions } from '../lib/output.ts';

/** Reads a token from the terminal without echoing it. */
async function promptHidden(question: string): Promise<string> {
  process.stderr.write(question);
  const muted = new Writable({ write: (_chunk, _enc, done) => done() });
  const rl = createInterface({ input: process.stdin, output: muted, terminal: true });
  try {
    return await new Promise<string>((resolve) => rl.question('', resolve));
  } finally {
    rl.close();
    process.stderr.write('\n');
  }
}

/**
 * Does the server take this token? An authenticated read of the REST API: 401 means no; any other
 * answer (403 for a token without notes:read, 404 for a group switched off) means it authenticated.
 */
async function check(target: Target, timeoutMs?: number): Promise<{ ok: true } | { ok: false; reason: string }> {
  const res = await raw(target, 'GET', '/notetaker/notes?limit=1', timeoutMs ? { signal: AbortSignal.timeout(timeoutMs) } : {});
  await res.body?.cancel();
  if (res.status === 401) return { ok: false, reason: (await failure(target, res)).message };
  if (res.status >= 500) throw await failure(target, res);
  return { ok: true };
}

export const auth: CommandGroup = {
  register(program: Command, cli: Cli) {
    const group = program.command('auth').description('log in to Folio servers and manage their tokens');
    examples(group, 'folio auth login --url https://folio.example.com', 'folio auth status');

    const login = group
      .command('login')
      .description('sign in to a server: in the browser (--web), or with an API token pasted or piped on stdin')
      .option('--url <url>', `the server (default: FOLIO_URL, the profile's, or ${DEFAULT_URL})`)
      .option('--with-token', 'read the token from stdin (implied when stdin is not a terminal)')
      .option('--web', 'sign in in the browser (OAuth); the access token is renewed by itself')
      .option('--no-browser', 'with --web: only print the address to open (on another machine, say)')
      .option('--scopes <list>', 'with --web: the scopes to ask for, comma-separated (default: all you may have)')
      .option('--switch', 'make this profile the one commands use (a first profile always is)')
      .action(async (o: { url?: string; withToken?: boolean; web?: boolean; browser: boolean; scopes?: string; switch?: boolean }) => {
        const name = cli.profile();
        const config = loadConfig();
        const url = normalizeUrl(o.url ?? process.env['FOLIO_URL'] ?? config.profiles[name]?.url ?? DEFAULT_URL);
        const store = credentials();
        let saved: Stored;
        if (o.web) {
          // The client registered by an earlier sign-in to the same server is used again.
          const before = config.profiles[name]?.url === url ? store.record(name) : undefined;
          saved = await browserLogin({
            url,
            clientId: typeof before === 'object' ? before.client_id : undefined,
            scopes: o.scopes?.split(/[\s,]+/).filter(Boolean),
            openBrowser: o.browser,
            timeoutMs: 5 * 60_000,
            announce: (address) =>
              process.stderr.write(
                `${o.browser ? 'Opening your browser; if it does not open, visit' : 'Open this address in a browser'}:\n  ${address}\n`,
              ),
          });
        } else {
          const token = (
            o.withToken || !process.stdin.isTTY ? await readStdin() : await promptHidden(`Paste an API token for ${url}: `)
          ).trim();
          if (!token) throw new CliError('no token given: paste one, or pipe it: folio auth login --url URL < token.txt', EXIT.usage);
          saved = token;
        }
        const target: Target = { url, token: typeof saved === 'string' ? saved : saved.access_token, profile: name, tokenFrom: 'profile' };
        const verdict = await check(target);
        if (!verdict.ok)
          throw new CliError(`${url} refused that token: ${verdict.reason.replace(/; log in again.*$/, '')}; nothing was saved`, EXIT.auth);
        store.set(name, saved);
        config.profiles[name] = { url };
        // A new profile becomes the current one only when asked, or when there is no other to use.
        const current = config.current && config.profiles[config.current] ? config.current : undefined;
        const becomesCurrent = o.switch === true || !current || current === name;
        if (becomesCurrent) config.current = name;
        saveConfig(config);
        process.stderr.write(
          `logged in to ${url} as profile ${name} (${typeof saved === 'string' ? 'API token' : 'browser sign-in'}, stored in ${store.describe()})\n`,
        );
        if (!becomesCurrent)
          process.stderr.write(`profile ${current} is still the one in use: folio auth switch ${name}, or --profile ${name} per command\n`);
      });
    examples(
      login,
      'folio auth login --url http://127.0.0.1:3000 --web',
      'folio auth login --url http://127.0.0.1:3000',
      'folio auth login --url https://work.example.com --profile work < token.txt',
      'folio auth login --url https://work.example.com --profile work --switch',
      'folio --profile work notes list',
    );

    const status = withOutput(
      group
        .command('status')
        .description('the profiles, which one is in use, and for each: the account, the server and its version, the token'),
    ).action(async (o: OutputOptions) => {
      const config = loadConfig();
      const active = cli.target();
      const activeName = cli.profile();
      // Every profile at once, each server given a few seconds: one that hangs does not hold up the rest.
      const pending: Array<Promise<StatusRow>> = [];
      if (active.tokenFrom === 'FOLIO_TOKEN') pending.push(describeLogin('(FOLIO_TOKEN)', active, true, 'FOLIO_TOKEN', undefined));
      for (const [name, p] of Object.entries(config.profiles)) {
        const token = credentials().get(name);
        const isActive = active.tokenFrom !== 'FOLIO_TOKEN' && name === (active.profile ?? activeName);
        const target: Target = { url: p.url, token, profile: name, tokenFrom: token ? 'profile' : 'none' };
        pending.push(describeLogin(name, target, isActive, token ? credentials().describe() : 'none', credentials().record(name)));
      }
      const rows = await Promise.all(pending);
      await emit(rows, o, () => {
        if (rows.length === 0) process.stdout.write(`not logged in: folio auth login --url ${active.url}\n`);
        for (const r of rows) printStatus(r);
      });
      const mine = rows.find((r) => r.active);
      if (!mine || mine.works === false) process.exitCode = EXIT.auth;
      else if (mine.works === null) process.exitCode = EXIT.unreachable;
    });
    examples(status, 'folio auth status', 'folio auth status --json account,server_version,expires_at');

    const switchCmd = group
      .command('switch')
      .description('make another logged-in profile the one commands use')
      .argument('[profile]', 'the profile (with two profiles and none named: the other one)')
      .action((wanted: string | undefined) => {
        const config = loadConfig();
        const names = Object.keys(config.profiles);
        const current = config.current ?? 'default';
        const others = names.filter((n) => n !== current);
        const name = wanted ?? (others.length === 1 ? others[0] : undefined);
        if (!name)
          throw new CliError(
            names.length === 0
              ? 'no profiles yet: folio auth login --url URL --profile NAME'
              : `name the profile to use: folio auth switch <${names.join('|')}>`,
            EXIT.usage,
          );
        if (!config.profiles[name])
          throw new CliError(
            `no profile named ${name}; the profiles are: ${names.join(', ') || 'none'} (folio auth login --profile ${name} makes one)`,
            EXIT.usage,
          );
        config.current = name;
        saveConfig(config);
        process.stderr.write(`now using profile ${name} (${config.profiles[name].url})\n`);
        if (process.env['FOLIO_PROFILE'] && process.env['FOLIO_PROFILE'] !== name)
          process.stderr.write(`note: FOLIO_PROFILE=${process.env['FOLIO_PROFILE']} is set and still wins in this shell\n`);
      });
    examples(switchCmd, 'folio auth switch work', 'folio auth switch');

    const token = group
      .command('token')
      .description('print the token in use (to hand to curl or another tool)')
      .action(() => {
        const t = cli.target();
        if (!t.token) throw new CliError(`not logged in to ${t.url}: run folio auth login --url ${t.url}`, EXIT.auth);
        process.stdout.write(t.token + '\n');
      });
    examples(token, 'curl -H "Authorization: Bearer $(folio auth token)" http://127.0.0.1:3000/api/v1/notetaker/tags');

    const logout = group
      .command('logout')
      .description("forget a profile's token (the server keeps the token valid until it is revoked there)")
      .action(() => {
        const name = cli.profile();
        const config = loadConfig();
        const removed = credentials().delete(name);
        if (!removed && !config.profiles[name]) throw new CliError(`no profile named ${name} in ${configFile()}`, EXIT.usage);
        delete config.profiles[name];
        if (config.current === name) delete config.current;
        saveConfig(config);
        process.stderr.write(`logged out of profile ${name}\n`);
      });
    examples(logout, 'folio auth logout', 'folio --profile work auth logout');
  },
};

interface StatusRow {
  profile: string;
  url: string;
  active: boolean;
  /** Where the token is kept (the keyring, a file, FOLIO_TOKEN), or none. */
  token: string;
  /** null: the server did not answer. */
  works: boolean | null;
  server_version: string | null;
  account: { email: string; name: string | null; roles: string[] } | null;
  /** api: a personal token; minted: a short-lived child of one; oauth: a browser sign-in. */
  token_kind: 'api' | 'minted' | 'oauth' | null;
  token_name: string | null;
  scopes: string[] | null;
  expires_at: string | null;
}

/** How long `auth status` waits for a server before calling it unreachable. */
const STATUS_TIMEOUT_MS = 5000;

async function json<T>(target: Target, path: string): Promise<T | undefined> {
  const res = await raw(target, 'GET', path, { signal: AbortSignal.timeout(STATUS_TIMEOUT_MS) }).catch(() => undefined);
  if (!res?.ok) {
    await res?.body?.cancel();
    return undefined;
  }
  return (await res.json().catch(() => undefined)) as T | undefined;
}

/** What a person checking a login wants: does the token work, whose it is, what it may do, until when. */
async function describeLogin(
  profile: string,
  target: Target,
  active: boolean,
  token: string,
  stored: Stored | undefined,
): Promise<StatusRow> {
  const row: StatusRow = {
    profile,
    url: target.url,
    active,
    token,
    works: false,
    server_version: null,
    account: null,
    token_kind: null,
    token_name: null,
    scopes: null,
    expires_at: null,
  };
  const health = await send(target, `${target.url}/health`, {
    headers: { accept: 'application/json' },
    signal: AbortSignal.timeout(STATUS_TIMEOUT_MS),
  })
    .then(async (r) => (await r.json().catch(() => ({}))) as { version?: string })
    .catch(() => undefined);
  row.server_version = health?.version ?? null;
  if (!target.token) return row;
  if (!health) {
    row.works = null; // no answer: whether the token works is unknown
    return row;
  }
  const verdict = await check(target, STATUS_TIMEOUT_MS).catch(() => null);
  row.works = verdict === null ? null : verdict.ok;
  if (!row.works) return row;
  const me = await json<{ email: string; name: string | null; roles: string[] }>(target, '/users/me');
  if (me) row.account = { email: me.email, name: me.name ?? null, roles: me.roles ?? [] };
  if (typeof stored === 'object') {
    row.token_kind = 'oauth';
    row.expires_at = stored.expires_at ? new Date(stored.expires_at).toISOString() : null;
  } else {
    const self = await json<{ kind: 'api' | 'minted'; name: string | null; scopes: string[]; expires_at: string | null }>(
      target,
      '/tokens/self',
    );
    if (self) {
      row.token_kind = self.kind;
      row.token_name = self.name;
      row.scopes = self.scopes;
      row.expires_at = self.expires_at;
    }
  }
  return row;
}

function printStatus(r: StatusRow): void {
  const out = (line: string) => process.stdout.write(line + '\n');
  const server = r.server_version ? `Folio ${r.server_version}` : 'server unreachable';
  out(`${r.active ? '*' : ' '} ${r.profile}  ${r.url}  (${server})`);
  const state =
    r.works === null
      ? 'server unreachable'
      : r.works
        ? 'token works'
        : r.token === 'none'
          ? 'no token stored'
          : 'token refused: log in again';
  out(`    ${state}${r.token === 'none' ? '' : `, kept in ${r.token}`}`);
  if (r.account)
    out(
      `    account: ${r.account.email}${r.account.name ? ` (${r.account.name})` : ''}${r.account.roles.length ? `, roles ${r.account.roles.join(' ')}` : ''}`,
    );
  if (r.token_kind) {
    const kind = r.token_kind === 'oauth' ? 'browser sign-in' : r.token_kind === 'minted' ? 'minted token' : 'personal token';
    out(`    token: ${kind}${r.token_name ? ` "${r.token_name}"` : ''}, ${r.expires_at ? `expires ${r.expires_at}` : 'does not expire'}`);
  }
  if (r.scopes) out(`    scopes: ${r.scopes.join(' ') || 'none'}`);
}
