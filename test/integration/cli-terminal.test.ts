// `folio` at a real terminal and under Ctrl-C, as a person meets it: the CLI runs as a subprocess
// against a real Folio; a pseudo-terminal comes from util-linux `script` (no native pty module).
// A progress bar is drawn on a terminal and never into a pipe; Ctrl-C stops a transfer at once with
// exit 130 and one line, and leaves no half-written file behind. A note's Markdown is drawn for the
// terminal at a terminal and comes out as stored in a pipe.
import t from 'tap';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';
import { createUser, req, startTestServer } from '../helpers/server.ts';

const BIN = path.join(PACKAGE_ROOT, 'cli/folio.ts');
const s = await startTestServer();
const home = await mkdtemp(path.join(tmpdir(), 'folio-cli-terminal-'));
t.teardown(async () => {
  await s.close();
  await rm(home, { recursive: true, force: true });
});
const ann = await createUser(s, 'ann-cli-terminal@example.com');

const env: Record<string, string> = {
  PATH: process.env['PATH'] ?? '',
  HOME: home,
  XDG_CONFIG_HOME: path.join(home, 'config'),
  FOLIO_URL: s.url,
  FOLIO_TOKEN: ann.token,
  TERM: 'xterm',
};
if (process.env['NODE_COMPILE_CACHE']) env['NODE_COMPILE_CACHE'] = process.env['NODE_COMPILE_CACHE'];

const quote = (a: string) => `'${a.replaceAll("'", `'\\''`)}'`;
const BAR = '\r\x1b[2K';

/** Runs a command to its end (never spawnSync: the Folio it talks to runs in this process). */
function run(cmd: string, args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** Uploads `bytes` random bytes with the CLI (piped) and returns the new file's id. */
async function upload(bytes: number, name: string): Promise<string> {
  const src = path.join(home, name);
  await writeFile(src, randomBytes(bytes));
  const r = await run(process.execPath, [BIN, 'files', 'upload', src]);
  t.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

t.test('a progress bar on a terminal, none in a pipe', async (t) => {
  const id = await upload(8 * 1024 * 1024, 'eight.bin');
  const out = path.join(home, 'eight.back');
  // `script` gives the command a pseudo-terminal for stdin, stdout and stderr, and copies what it
  // printed to our stdout.
  const tty = await run('script', ['-qfec', [process.execPath, BIN, 'files', 'download', id, '-o', out].map(quote).join(' '), '/dev/null']);
  t.equal(tty.status, 0, 'exit 0');
  t.match(tty.stdout, /downloading eight\.back \[[#-]+\]\s+\d+% /, 'the bar, with a percentage');
  t.ok(tty.stdout.includes(BAR), 'redrawn in place');
  t.match(tty.stdout, /wrote .*eight\.back/);

  const piped = await run(process.execPath, [BIN, 'files', 'download', id, '-o', out, '--clobber']);
  t.equal(piped.status, 0, piped.stderr);
  t.notOk(piped.stderr.includes(BAR), 'no bar drawn into a pipe');
  t.notMatch(piped.stderr, /downloading/);
});

/* eslint-disable no-control-regex -- the terminal's escape codes are what this test looks for */
t.test("a note's Markdown: drawn at a terminal, as stored in a pipe or with --raw/--json", async (t) => {
  const body = '# Weekly plan\n\nShip the **launcher** first.\n\n- docs\n- tests\n\nA title sent \x1b]0;pwned\x07 in the body.\n';
  const note = (await req(s, 'POST', '/api/v1/notetaker/notes', { token: ann.token, body: { title: 'Plan', body } })).json();
  const atTerminal = (args: string[], extra = '') =>
    run('script', ['-qfec', `${extra}${[process.execPath, BIN, 'notes', 'get', note.id, ...args].map(quote).join(' ')}`, '/dev/null']);

  const drawn = await atTerminal([]);
  t.equal(drawn.status, 0, drawn.stderr);
  t.match(drawn.stdout, /\x1b\[[\d;]*mWeekly plan/, 'the heading is styled');
  t.notMatch(drawn.stdout, /#\s*Weekly plan/, "and shown without its '#'");
  t.match(drawn.stdout, /\x1b\[1mlauncher\x1b\[22m/, 'bold is bold, not **');
  t.notMatch(drawn.stdout, /\*\*/);
  t.match(drawn.stdout, /^\s+\* .*docs/m, 'a list item');
  t.notOk(drawn.stdout.includes('\x1b]0;pwned'), 'an escape sequence inside the note does not reach the terminal');

  const plain = await atTerminal([], 'NO_COLOR=1 ');
  t.match(plain.stdout, /^Weekly plan\r?$/m, 'NO_COLOR: the same layout, no colours');
  t.notMatch(plain.stdout, /\x1b\[/);

  const raw = await atTerminal(['--raw']);
  t.equal(raw.stdout.replace(/\r\n/g, '\n'), body, '--raw at a terminal: the Markdown as stored');

  const piped = await run(process.execPath, [BIN, 'notes', 'get', note.id]);
  t.equal(piped.status, 0, piped.stderr);
  t.equal(piped.stdout, body, 'in a pipe: byte for byte as stored');

  const json = await atTerminal(['--json', 'body']);
  t.same(JSON.parse(json.stdout.replace(/\r\n/g, '\n')), { body }, '--json at a terminal: the stored body');
});

/* eslint-enable no-control-regex */

t.test('Ctrl-C during a download: exit 130, one line, no half-written file', async (t) => {
  const id = await upload(48 * 1024 * 1024, 'big.bin');
  const dir = await mkdtemp(path.join(home, 'dl-'));
  const out = path.join(dir, 'big.back');
  const child = spawn(process.execPath, [BIN, 'files', 'download', id, '-o', out], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  // Caught mid-transfer: frozen as soon as the .part file exists, interrupted, then let go (the
  // pending SIGINT is handled as soon as it runs again, long before 48 MB are through).
  const deadline = Date.now() + 30_000;
  while (!existsSync(`${out}.part`) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
  t.ok(existsSync(`${out}.part`), 'the download had started');
  child.kill('SIGSTOP');
  child.kill('SIGINT');
  child.kill('SIGCONT');
  t.equal(await exited, 130, 'exit 130, as a shell expects after Ctrl-C');
  t.equal(stderr, 'folio: interrupted\n', 'one line, no stack trace');
  t.same(await readdir(dir), [], 'neither the file nor its .part is left');
});

t.test('a large upload at a terminal: a progress bar; Ctrl-C partway, and the same command resumes it', async (t) => {
  const src = path.join(home, 'upload.bin');
  await writeFile(src, randomBytes(32 * 1024 * 1024));
  const tty = await run('script', ['-qfec', [process.execPath, BIN, 'files', 'upload', src].map(quote).join(' '), '/dev/null']);
  t.equal(tty.status, 0, 'exit 0');
  t.match(tty.stdout, /uploading upload\.bin \[[#-]+\]\s+\d+% /, 'the bar, with a percentage');

  const uploads = path.join(home, 'config', 'folio', 'uploads.json');
  await rm(uploads, { force: true });
  const child = spawn(process.execPath, [BIN, 'files', 'upload', src], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  // Caught once the server has made the upload (this machine remembers it), long before 32 MB are through.
  const deadline = Date.now() + 30_000;
  while (!existsSync(uploads) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
  child.kill('SIGSTOP');
  child.kill('SIGINT');
  child.kill('SIGCONT');
  t.equal(await exited, 130);
  t.equal(stderr, 'folio: interrupted; run the same command again to resume the upload\n');
  const again = await run(process.execPath, [BIN, 'files', 'upload', src]);
  t.equal(again.status, 0, again.stderr);
  t.match(again.stderr, /resuming an earlier upload of upload\.bin/);
});

t.test('Ctrl-C while output is stalled in a pipe: the process still stops at once', async (t) => {
  const id = await upload(4 * 1024 * 1024, 'stalled.bin');
  // Nobody reads the child's stdout: the pipe fills and the download waits on it.
  const child = spawn(process.execPath, [BIN, 'files', 'download', id, '-o', '-'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pause();
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  await new Promise((r) => setTimeout(r, 1500));
  child.kill('SIGINT');
  child.stdout.resume();
  t.equal(await exited, 130);
  t.equal(stderr, 'folio: interrupted\n');
});
