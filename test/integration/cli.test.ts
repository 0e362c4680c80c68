// The `folio` command line as a user and a script meet it: a real subprocess (cli/folio.ts, as the
// package's bin runs it) against a real Folio over HTTP. Each run costs a Node start, so each
// subtest spends its runs on what a user would notice: the scripts contract (FOLIO_URL /
// FOLIO_TOKEN, list --json, create from stdin, get), an $EDITOR that is a script, a conflict while
// editing, piping JSON, profiles and the 0600 token file, and the one-line errors with their exit codes.
import t from 'tap';
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';
import { call, createUser, req, startTestServer } from '../helpers/server.ts';
import { runFolio, type CliRun } from '../helpers/cli.ts';

const BIN = path.join(PACKAGE_ROOT, 'cli/folio.ts');
const s = await startTestServer();
const home = await mkdtemp(path.join(tmpdir(), 'folio-cli-'));
t.teardown(async () => {
  await s.close();
  await rm(home, { recursive: true, force: true });
});
const alice = await createUser(s, 'alice-cli@example.com');

type Run = CliRun;

/** Runs `folio ...args` with only the given environment (plus PATH and a private config dir). */
const folio = (args: string[], opts: { env?: Record<string, string | undefined>; input?: string } = {}): Promise<Run> =>
  runFolio(home, args, opts);

const asAlice = { FOLIO_URL: s.url, FOLIO_TOKEN: alice.token };
const rest = (method: string, p: string, body?: unknown) => req(s, method, `/api/v1${p}`, { token: alice.token, body });

t.test('scripts: create reads stdin and prints the id, list --json is an array, get prints the body', async (t) => {
  const body = '# Plan\n\n- ship the CLI\n';
  const created = await folio(['notes', 'create', '--title', 'From a script', '--tag', 'cli'], { env: asAlice, input: body });
  t.equal(created.code, 0, created.stderr);
  const id = created.stdout.trim();
  t.match(id, /^\S+$/, 'only the id, on one line');
  t.equal((await rest('GET', `/notetaker/notes/${id}`)).json().body, body, 'the body came from stdin');

  const list = await folio(['notes', 'list', '--json'], { env: asAlice });
  t.equal(list.code, 0, list.stderr);
  const items = JSON.parse(list.stdout);
  t.ok(Array.isArray(items), 'a JSON array');
  t.match(
    items.find((n: { id: string }) => n.id === id),
    { title: 'From a script', tags: ['cli'] },
  );

  const got = await folio(['notes', 'get', id], { env: asAlice });
  t.equal(got.code, 0, got.stderr);
  t.equal(got.stdout, body, 'the Markdown body, as it is');

  const picked = await folio(['notes', 'list', '--tag', 'cli', '--json', 'id,title'], { env: asAlice });
  t.same(JSON.parse(picked.stdout), [{ id, title: 'From a script' }], '--json with fields keeps only those');
  const templated = await folio(['notes', 'get', id, '--template', '{title} v{version} {tags}'], { env: asAlice });
  t.equal(templated.stdout, 'From a script v1 ["cli"]\n');
  const piped = await folio(['notes', 'list', '--tag', 'cli'], { env: asAlice });
  t.match(piped.stdout, new RegExp(`^${id}\tFrom a script\tcli\t`), 'through a pipe: tab-separated, no header');

  // As the README and --help write it: options first, then -- before text that starts with a dash.
  const appended = await folio(['notes', 'append', id, '--heading', 'Plan', '--', '- and the docs'], { env: asAlice });
  t.equal(appended.code, 0, appended.stderr);
  t.equal((await rest('GET', `/notetaker/notes/${id}`)).json().body, '# Plan\n\n- ship the CLI\n- and the docs\n', 'under its heading');
  // An earlier version is --version <n> of the command, not the program's version.
  const first = await folio(['notes', 'get', id, '--version', '1'], { env: asAlice });
  t.equal(first.code, 0, first.stderr);
  t.equal(first.stdout, body, 'version 1, as it was');
});

t.test('piping JSON: api POST --input - creates from a JSON document, and its answer pipes on', async (t) => {
  const doc = JSON.stringify({ title: 'Piped JSON', body: 'from jq', tags: ['pipe'] });
  const posted = await folio(['api', 'POST', '/notetaker/notes', '--input', '-', '--json', 'id,version'], { env: asAlice, input: doc });
  t.equal(posted.code, 0, posted.stderr);
  const { id, version } = JSON.parse(posted.stdout);
  t.equal(version, 1);
  const found = await folio(['api', 'GET', '/notetaker/notes', '-f', 'tag=pipe', '--template', '{items}'], { env: asAlice });
  t.match(JSON.parse(found.stdout), [{ id, title: 'Piped JSON' }], 'query fields on a GET; a nested value prints as JSON');
});

/** A note of alice's, made over REST, at version 1. */
async function aNote(title: string, body: string): Promise<string> {
  const r = await rest('POST', '/notetaker/notes', { title, body });
  if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
  return r.json().id;
}

t.test('edit: $EDITOR is a script; the edit is sent with If-Match and saved as the next version', async (t) => {
  const id = await aNote('Edit me', 'first line\n');
  const editor = path.join(home, 'append-editor.sh');
  await writeFile(editor, '#!/bin/sh\nprintf "added by the editor\\n" >> "$1"\n');
  await chmod(editor, 0o755);
  const r = await folio(['notes', 'edit', id], { env: { ...asAlice, EDITOR: editor } });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stderr, `saved ${id} as version 2`);
  t.match((await rest('GET', `/notetaker/notes/${id}`)).json(), { body: 'first line\nadded by the editor\n', version: 2 });
});

t.test('edit: a change on the server meanwhile is a conflict; nothing is overwritten and the text is kept', async (t) => {
  const id = await aNote('Contended', 'original\n');
  // The "editor" rewrites the file, and while it is open someone else appends to the note.
  const editor = path.join(home, 'racing-editor.sh');
  await writeFile(
    editor,
    `#!/bin/sh\nprintf "my rewrite\\n" > "$1"\n"${process.execPath}" "${BIN}" notes append ${id} "appended meanwhile" 2>/dev/null || exit 9\n`,
  );
  await chmod(editor, 0o755);
  const r = await folio(['notes', 'edit', id], { env: { ...asAlice, EDITOR: editor } });
  t.equal(r.code, 5, 'exit 5: conflict');
  t.match(r.stderr, /^folio: note \S+ changed on the server while you edited it \(you started from version 1; it is now version 2\)/);
  t.equal(r.stderr.trim().split('\n').length, 1, 'one line');
  const kept = /your text is in (\S+\.md)\./.exec(r.stderr)?.[1];
  t.ok(kept, 'names the file');
  t.equal(await readFile(kept!, 'utf8'), 'my rewrite\n', 'the edit is kept there');
  t.match((await rest('GET', `/notetaker/notes/${id}`)).json(), { body: 'original\nappended meanwhile', version: 2 }, 'the append stands');
  await rm(path.dirname(kept!), { recursive: true, force: true });
});

t.test('rm, the trash, restore and history', async (t) => {
  const id = await aNote('Short-lived', 'v1');
  t.equal((await folio(['notes', 'rm', id], { env: asAlice })).code, 0);
  const trash = await folio(['notes', 'list', '--trash', '--json', 'id'], { env: asAlice });
  t.same(JSON.parse(trash.stdout), [{ id }]);
  t.equal((await folio(['notes', 'restore', id], { env: asAlice })).code, 0);
  const history = await folio(['notes', 'history', id, '--json', 'version,change'], { env: asAlice });
  t.same(JSON.parse(history.stdout), [
    { version: 3, change: 'untrash' },
    { version: 2, change: 'trash' },
    { version: 1, change: 'create' },
  ]);
});

t.test('report --format pdf -o writes a PDF file', async (t) => {
  const out = path.join(home, 'report.pdf');
  const r = await folio(['notes', 'report', '--tag', 'cli', '--format', 'pdf', '-o', out], { env: asAlice });
  t.equal(r.code, 0, r.stderr);
  t.equal((await readFile(out)).subarray(0, 5).toString(), '%PDF-');
});

t.test('errors: one line, no stack, an exit code per kind', async (t) => {
  const typo = await folio(['nots', 'list'], { env: asAlice });
  t.equal(typo.code, 2, 'usage error');
  t.match(typo.stderr, "unknown command 'nots'");
  t.match(typo.stderr, 'Did you mean notes?');
  const flag = await folio(['notes', 'list', '--jsn'], { env: asAlice });
  t.equal(flag.code, 2);
  t.match(flag.stderr, 'Did you mean --json?');

  const missing = await folio(['notes', 'get', 'no-such-note'], { env: asAlice });
  t.equal(missing.code, 3, 'not found');
  t.match(missing.stderr, /^folio: .*\[not_found, 404\]\n$/);

  const refused = await folio(['notes', 'list'], { env: { FOLIO_URL: s.url, FOLIO_TOKEN: 'folio_api_not-a-real-token' } });
  t.equal(refused.code, 4, 'auth');
  t.match(refused.stderr, /^folio: .*\[unauthenticated, 401\]; FOLIO_TOKEN was refused/);

  const minted = await call(s, alice.token, 'admin', 'mint_curl_token', { scopes: ['notes:read'] });
  const readOnly = await folio(['notes', 'create', '--title', 'nope'], { env: { FOLIO_URL: s.url, FOLIO_TOKEN: minted.json().token } });
  t.equal(readOnly.code, 4, 'a missing scope is an auth failure too');
  t.match(readOnly.stderr, '[missing_scope, 403]');

  // A port nothing listens on (any more): the server is gone.
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
  const gone = await folio(['notes', 'list'], { env: { FOLIO_URL: `http://127.0.0.1:${port}`, FOLIO_TOKEN: alice.token } });
  t.equal(gone.code, 7, 'unreachable');
  t.match(gone.stderr, `folio: cannot reach Folio at http://127.0.0.1:${port} (ECONNREFUSED)`);
  t.equal(gone.stderr.trim().split('\n').length, 1, 'one line, no stack trace');
});

t.test('auth: login stores the token in a 0600 file; an expired token says how to log in again; logout', async (t) => {
  const bad = await folio(['auth', 'login', '--url', s.url], { input: 'folio_api_wrong\n' });
  t.equal(bad.code, 4);
  t.match(bad.stderr, 'refused that token');

  const minted = (await call(s, alice.token, 'admin', 'mint_curl_token', { ttl_seconds: 600 })).json();
  const login = await folio(['auth', 'login', '--url', s.url], { input: `${minted.token}\n` });
  t.equal(login.code, 0, login.stderr);
  const file = path.join(home, 'config/folio/credentials.json');
  t.equal((await stat(file)).mode & 0o777, 0o600, 'the token file is private');
  const status = await folio(['auth', 'status', '--json']);
  t.match(JSON.parse(status.stdout), [{ profile: 'default', url: s.url, active: true, works: true }]);
  const token = await folio(['auth', 'token']);
  t.equal(token.stdout, `${minted.token}\n`, 'auth token prints it for other tools');

  // Later, the stored token has expired (a 1-second token, stored as a login would have stored it).
  const short = (await call(s, alice.token, 'admin', 'mint_curl_token', { ttl_seconds: 1 })).json();
  await writeFile(file, JSON.stringify({ default: short.token }), { mode: 0o600 });
  await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(short.expires_at) - Date.now() + 200)));
  const expired = await folio(['notes', 'list']);
  t.equal(expired.code, 4);
  t.match(expired.stderr, `[unauthenticated, 401]; log in again: folio auth login --url ${s.url}`);

  t.equal((await folio(['auth', 'logout'])).code, 0);
  const after = await folio(['notes', 'list']);
  t.equal(after.code, 4);
  t.match(after.stderr, /^folio: not logged in to \S+: run folio auth login/);
  // A profile asked for by name, wherever the option stands, is named in the answer (npx may take
  // options put before the command: they also work after it).
  const work = await folio(['notes', 'list', '--profile', 'work']);
  t.equal(work.code, 4);
  t.match(work.stderr, /^folio: not logged in to \S+ \(profile work\): run folio auth login --url \S+ --profile work/);
});

t.test('completion: the bash script completes commands and flags', async (t) => {
  const script = await folio(['completion', 'bash']);
  t.equal(script.code, 0);
  const file = path.join(home, 'folio.bash');
  await writeFile(file, script.stdout);
  const complete = (line: string) =>
    new Promise<string>((resolve, reject) => {
      const words = line.split(' ');
      const sh = `source ${file}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _folio; echo "\${COMPREPLY[*]}"`;
      const child = spawn('bash', ['-c', sh], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      child.on('error', reject);
      child.on('close', () => resolve(out.trim()));
    });
  t.equal(await complete('folio no'), 'notes');
  t.equal(await complete('folio notes hi'), 'history');
  t.equal(await complete('folio notes ls --t'), '--template --tag --trash', 'after an alias too');
});
