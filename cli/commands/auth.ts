// `folio auth ...`: log in to one or more Folio servers (profiles) with an API token, see which
// is in use, print the token for another tool, log out.
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import type { Command } from 'commander';
import { credentials, failure, raw, type Target } from '../lib/client.ts';
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
async function check(target: Target): Promise<{ ok: true } | { ok: false; reason: string }> {
  const res = await raw(target, 'GET', '/notetaker/notes?limit=1', {});
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
      .action(async (o: { url?: string; withToken?: boolean; web?: boolean; browser: boolean; scopes?: string }) => {
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
        config.current = name;
        saveConfig(config);
        process.stderr.write(
          `logged in to ${url} as profile ${name} (${typeof saved === 'string' ? 'API token' : 'browser sign-in'}, stored in ${store.describe()})\n`,
        );
      });
    examples(
      login,
      'folio auth login --url http://127.0.0.1:3000 --web',
      'folio auth login --url http://127.0.0.1:3000',
      'folio auth login --url https://work.example.com --profile work < token.txt',
      'folio --profile work notes list',
    );

    const status = withOutput(group.command('status').description('the profiles, which one is in use, and whether its token works')).action(
      async (o: OutputOptions) => {
        const config = loadConfig();
        const active = cli.target();
        const activeName = cli.profile();
        const rows: Array<{ profile: string; url: string; active: boolean; token: string; works: boolean | null }> = [];
        if (active.tokenFrom === 'FOLIO_TOKEN')
          rows.push({ profile: '(FOLIO_TOKEN)', url: active.url, active: true, token: 'FOLIO_TOKEN', works: (await check(active)).ok });
        for (const [name, p] of Object.entries(config.profiles)) {
          const token = credentials().get(name);
          const isActive = active.tokenFrom !== 'FOLIO_TOKEN' && name === (active.profile ?? activeName);
          const works = token
            ? ((await check({ url: p.url, token, profile: name, tokenFrom: 'profile' }).catch(() => null))?.ok ?? null)
            : false;
          rows.push({ profile: name, url: p.url, active: isActive, token: token ? credentials().describe() : 'none', works });
        }
        emit(rows, o, () => {
          if (rows.length === 0) process.stdout.write(`not logged in: folio auth login --url ${active.url}\n`);
          for (const r of rows) {
            const state =
              r.works === null
                ? 'server unreachable'
                : r.works
                  ? 'token works'
                  : r.token === 'none'
                    ? 'no token'
                    : 'token refused: log in again';
            process.stdout.write(
              `${r.active ? '*' : ' '} ${r.profile}  ${r.url}  ${state}  (${r.token === 'none' ? 'no token stored' : `token from ${r.token}`})\n`,
            );
          }
        });
        const mine = rows.find((r) => r.active);
        if (!mine || mine.works === false) process.exitCode = EXIT.auth;
      },
    );
    examples(status, 'folio auth status', 'folio auth status --json');

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
