// README.md as a newcomer follows it: every ```sh block, in order, in one shell, against a started
// Folio on a fresh database (the way rustdoc runs the examples in its docs). A block fails when a
// command in it fails: each `curl` runs with --fail-with-body, so an HTTP error (a 404 while a
// plugin loads, a 409 on a file in the trash) stops the walk-through there, and the shell runs with
// `set -euo pipefail`. The test fills in what a reader has of their own and nothing else:
//   - the server's address (http://127.0.0.1:3000 in the README) and the token printed at first start
//     (`folio_api_...`);
//   - the files a reader brings (photo.jpg, report-v2.pdf, standup.wav, in the working directory);
//   - `folio` on PATH, as `npm i -g .` links it (a link to bin/folio), and EDITOR.
// `plugins/` in the working directory is the server's plugins folder. A block that cannot run here
// says why in a comment just before it: `<!-- not run by the README test: <reason> -->`.
import t from 'tap';
import { spawn, execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';
import { startTestServer } from '../helpers/server.ts';

const found = (cmd: string) =>
  promisify(execFile)('sh', ['-c', `command -v ${cmd}`]).then(
    () => true,
    () => false,
  );
if (!(await found('jq')) || !(await found('ffmpeg')) || !(await found('pocketsphinx_continuous'))) {
  const why =
    'the README uses jq and transcribes with ffmpeg and pocketsphinx (Debian: apt-get install jq ffmpeg pocketsphinx pocketsphinx-en-us)';
  // CI installs them (.ci/run): there, a missing tool is a failure, not a skip.
  if (process.env['CI']) throw new Error(why);
  t.plan(0, why);
  process.exit(0);
}

interface Block {
  /** The line of the opening fence, 1-based. */
  line: number;
  code: string;
  /** Why the test does not run it, when the README says so. */
  skip: string | null;
}

const SKIP = /^<!-- not run by the README test: (.+?) -->$/;

/** The ```sh and ```bash blocks of a Markdown text, in order. */
function shellBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)/.exec(lines[i]!);
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && lines[end] !== '```') end++;
    if (open[1] === 'sh' || open[1] === 'bash') {
      let b = i - 1;
      while (b > 0 && lines[b]!.trim() === '') b--;
      const before = b >= 0 ? lines[b]! : '';
      blocks.push({ line: i + 1, code: lines.slice(i + 1, end).join('\n'), skip: SKIP.exec(before)?.[1] ?? null });
    }
    i = end;
  }
  return blocks;
}

/** One second of silence, 16 kHz mono 16-bit PCM: a recording a reader might have. */
function silentWav(): Buffer {
  const data = Buffer.alloc(32000);
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(36 + data.length, 4);
  h.write('WAVEfmt ', 8);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(16000, 24);
  h.writeUInt32LE(32000, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36);
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}

const README = await readFile(path.join(PACKAGE_ROOT, 'README.md'), 'utf8');
const blocks = shellBlocks(README);

t.test('the README marks few blocks as not run, each with its reason', async (t) => {
  const skipped = blocks.filter((b) => b.skip);
  for (const b of skipped) t.comment(`not run: README.md:${b.line}: ${b.skip}`);
  t.ok(blocks.length >= 20, `${blocks.length} shell blocks found`);
  t.ok(skipped.length * 3 <= blocks.length, `${skipped.length} of ${blocks.length} not run: at most a third`);
  t.ok(
    README.split('\n').every(
      (l, i, all) =>
        !l.startsWith('<!-- not run by the README test') || /^```(sh|bash)$/.test(all.slice(i + 1).find((n) => n.trim()) ?? ''),
    ),
    'every mark stands right before a shell block',
  );
});

t.test('every shell block of README.md runs, in order, against a fresh server', async (t) => {
  const s = await startTestServer();
  const work = await mkdtemp(path.join(tmpdir(), 'folio-readme-'));
  t.teardown(async () => {
    await s.close();
    await rm(work, { recursive: true, force: true });
  });
  const bin = path.join(work, '.bin');
  await mkdir(bin);
  await symlink(path.join(PACKAGE_ROOT, 'bin/folio'), path.join(bin, 'folio'));
  await symlink(s.scratchPlugins, path.join(work, 'plugins'));
  await writeFile(
    path.join(work, 'photo.jpg'),
    Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0, 0xff, 0xd9]),
  );
  await writeFile(path.join(work, 'report-v2.pdf'), '%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
  await writeFile(path.join(work, 'standup.wav'), silentWav());

  const fill = (code: string) => code.replaceAll('http://127.0.0.1:3000', s.url).replaceAll('folio_api_...', s.adminToken);
  const run = blocks.filter((b) => !b.skip);
  const script = [
    'set -euo pipefail',
    'curl() { command curl --fail-with-body --show-error "$@"; }',
    ...run.map((b, i) => [`printf '\\n@@start ${i}\\n' >&2`, fill(b.code), `printf '\\n@@done ${i}\\n' >&2`].join('\n')),
  ].join('\n');
  await writeFile(path.join(work, '.walkthrough.sh'), script);

  const env: Record<string, string> = {
    PATH: `${bin}:${process.env['PATH'] ?? ''}`,
    HOME: work,
    XDG_CONFIG_HOME: path.join(work, '.config'),
    EDITOR: 'true',
    NO_COLOR: '1',
  };
  if (process.env['NODE_COMPILE_CACHE']) env['NODE_COMPILE_CACHE'] = path.resolve(process.env['NODE_COMPILE_CACHE']);
  const result = await new Promise<{ code: number | null; out: string; err: string }>((resolve, reject) => {
    const child = spawn('bash', ['.walkthrough.sh'], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 150_000 });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
  });

  const done = new Set([...result.err.matchAll(/^@@done (\d+)$/gm)].map((m) => Number(m[1])));
  const started = new Set([...result.err.matchAll(/^@@start (\d+)$/gm)].map((m) => Number(m[1])));
  for (const [i, b] of run.entries()) {
    const first = b.code.split('\n').find((l) => l.trim() && !l.startsWith('#')) ?? '';
    if (done.has(i)) {
      t.pass(`README.md:${b.line}: ${first}`);
    } else {
      const own = result.err.split(`@@start ${i}\n`)[1] ?? '';
      t.fail(`README.md:${b.line}: ${started.has(i) ? 'failed' : 'not reached'}: ${first}`, {
        stderr: started.has(i) ? own.slice(-3000) : undefined,
        stdout: started.has(i) ? result.out.slice(-2000) : undefined,
      });
      if (started.has(i)) break;
    }
  }
  t.equal(result.code, 0, 'the walk-through ends without an error');
});
