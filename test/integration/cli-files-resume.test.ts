// `folio files upload` resumes: a real CLI process uploads through a TCP proxy that stops passing
// bytes partway, and is killed (kill -9) there; the same command run again sends only the rest of
// the same upload (the file gets that upload's id) and the file arrives byte for byte.
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';
import { createUser, startTestServer } from '../helpers/server.ts';

const BIN = path.join(PACKAGE_ROOT, 'cli/folio.ts');
const s = await startTestServer();
const home = await mkdtemp(path.join(tmpdir(), 'folio-cli-resume-'));
const alice = await createUser(s, 'alice-resume@example.com');
const uploads = path.join(s.folio.config.dataDir, 'uploads');

// A proxy in front of the server. While `stallAfter` is set, it passes at most that many request
// bytes per connection and then stops reading (the connection hangs, as on a dead network).
let stallAfter: number | null = 8 * 1024 * 1024;
const target = new URL(s.url);
const sockets = new Set<net.Socket>();
const proxy = net.createServer((client) => {
  const upstream = net.connect(Number(target.port), target.hostname);
  sockets.add(client).add(upstream);
  let passed = 0;
  client.on('data', (chunk: Buffer) => {
    if (stallAfter !== null && passed + chunk.length > stallAfter) {
      upstream.write(chunk.subarray(0, Math.max(0, stallAfter - passed)));
      passed = stallAfter;
      client.pause();
      return;
    }
    passed += chunk.length;
    upstream.write(chunk);
  });
  upstream.pipe(client);
  const end = () => (client.destroy(), upstream.destroy());
  client.on('error', end).on('close', end);
  upstream.on('error', end).on('close', end);
});
await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
const proxyUrl = `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
t.teardown(async () => {
  for (const sock of sockets) sock.destroy();
  proxy.close();
  await s.close();
  await rm(home, { recursive: true, force: true });
});

function folio(args: string[]): { child: ChildProcess; done: Promise<{ code: number | null; stdout: string; stderr: string }> } {
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '',
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, 'config'),
    NO_COLOR: '1',
    FOLIO_URL: proxyUrl,
    FOLIO_TOKEN: alice.token,
  };
  if (process.env['NODE_COMPILE_CACHE']) env['NODE_COMPILE_CACHE'] = process.env['NODE_COMPILE_CACHE'];
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
  return { child, done };
}

/** The bytes the server holds of its one upload in progress, and that upload's id. */
async function inProgress(): Promise<{ id: string; size: number } | null> {
  const names = (await readdir(uploads).catch(() => [] as string[])).filter((n) => !n.endsWith('.json'));
  if (names.length !== 1) return null;
  return { id: names[0]!, size: (await stat(path.join(uploads, names[0]!))).size };
}

t.test('an upload killed partway is resumed by the same command', async (t) => {
  const data = randomBytes(24 * 1024 * 1024 + 5);
  const src = path.join(home, 'big.bin');
  await writeFile(src, data);

  const first = folio(['files', 'upload', src]);
  let seen: { id: string; size: number } | null = null;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    seen = await inProgress();
    if (seen && seen.size >= 4 * 1024 * 1024) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  t.ok(seen && seen.size > 0 && seen.size < data.length, `the server has ${seen?.size} of ${data.length} bytes`);
  first.child.kill('SIGKILL');
  await first.done;
  for (const sock of sockets) sock.destroy();

  stallAfter = null;
  const second = folio(['files', 'upload', src]);
  const r = await second.done;
  t.equal(r.code, 0, r.stderr);
  t.match(r.stderr, /resuming an earlier upload/);
  const id = r.stdout.trim();
  t.equal(id, seen!.id, 'the file is the upload the first run started');
  const res = await fetch(`${s.url}/api/v1/filedb/files/${id}/content`, { headers: { authorization: `Bearer ${alice.token}` } });
  const got = Buffer.from(await res.arrayBuffer());
  t.equal(createHash('sha256').update(got).digest('hex'), createHash('sha256').update(data).digest('hex'), 'identical bytes');
  t.equal(await inProgress(), null, 'nothing left in progress on the server');

  // Uploaded once and done: the same command again makes a new file (the finished upload is forgotten).
  const third = await folio(['files', 'upload', src]).done;
  t.equal(third.code, 0, third.stderr);
  t.not(third.stdout.trim(), id);
  t.notMatch(third.stderr, /resuming/);
});
