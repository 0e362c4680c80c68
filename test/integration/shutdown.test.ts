// The production start (bin/folio-server) as a service manager runs it: the process it leaves is
// Folio itself, so SIGTERM reaches Folio, which drains the writes in flight and exits 0 (its stop
// deadline makes it exit 1). Every write it acknowledged is in the database afterwards.
import t from 'tap';
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';
import { testLogger } from '../helpers/db.ts';
import { fresh } from '../helpers/server.ts';
import { copyPgliteTemplate } from '../helpers/template.ts';

const TOKEN = 'shutdown-test-bootstrap-token-0123456789';
const compileCache: Record<string, string> = process.env['NODE_COMPILE_CACHE']
  ? { NODE_COMPILE_CACHE: process.env['NODE_COMPILE_CACHE'] }
  : {};

function server(env: Record<string, string>) {
  const child = spawn(path.join(PACKAGE_ROOT, 'bin/folio-server'), [], {
    cwd: PACKAGE_ROOT,
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? '',
      PORT: '0',
      LOG_LEVEL: 'info',
      RELOAD_WATCH: 'false',
      BOOTSTRAP_ADMIN_TOKEN: TOKEN,
      ...compileCache,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const url = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /"url":"(http:\/\/[^"]+)".*"msg":"folio listening"/.exec(out);
      if (m) resolve(m[1]!);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => reject(new Error(`exited with ${code} before listening:\n${out}`)));
  });
  url.catch(() => {});
  return { child, url, exited, output: () => out };
}

const serverUrl = process.env['DATABASE_URL'];

t.test('SIGTERM in the middle of a burst of writes: drained, exit 0, nothing acknowledged lost', async (t) => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'folio-stop-'));
  const db = serverUrl ? await fresh(serverUrl, { fromTemplate: true }) : undefined;
  if (!db) await copyPgliteTemplate(dataDir, testLogger());
  t.teardown(async () => {
    await rm(dataDir, { recursive: true, force: true });
    await db?.drop();
  });
  const env = { DATA_DIR: dataDir, ...(db ? { DATABASE_URL: db.url } : {}) };
  const first = server(env);
  const url = await first.url;

  // The process the script leaves is Node running core/main.ts, not a shell waiting on it.
  t.match(first.output(), /"msg":"folio listening"/);
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  const acknowledged: { id: string; title: string }[] = [];
  let refused = 0;
  let n = 0;
  const writer = async () => {
    for (;;) {
      const title = `burst ${n++}`;
      try {
        const r = await fetch(`${url}/api/v1/notetaker/notes`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ title, body: `body of ${title}` }),
        });
        const text = await r.text();
        if (r.status !== 201) {
          refused++;
          return;
        }
        acknowledged.push({ id: (JSON.parse(text) as { id: string }).id, title });
      } catch {
        return; // refused or reset: not acknowledged, so nothing is owed
      }
    }
  };
  const writers = Array.from({ length: 8 }, writer);
  while (acknowledged.length < 40) await new Promise((r) => setTimeout(r, 10));
  // A slow upload in flight at SIGTERM: its body is still coming for ~2 s after the signal.
  const slowTitle = 'sent slowly across the stop';
  const slowBody = JSON.stringify({ title: slowTitle, body: 'x'.repeat(4000) });
  const slow = new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request(`${url}/api/v1/notetaker/notes`, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(slowBody)) },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    const pieces = slowBody.match(/[\s\S]{1,400}/g)!;
    let i = 0;
    const next = () => {
      if (i === pieces.length - 1) return req.end(pieces[i]);
      req.write(pieces[i++]);
      setTimeout(next, 250);
    };
    next();
  });
  await new Promise((r) => setTimeout(r, 300));
  first.child.kill('SIGTERM');
  const code = await first.exited;
  await Promise.all(writers);
  t.equal(code, 0, `exit 0: drained within the stop deadline\n${first.output().slice(-2000)}`);
  t.match(first.output(), /"signal":"SIGTERM","msg":"stopping"/, 'the signal reached Folio itself');
  const answer = await slow;
  t.equal(answer.status, 201, `the upload in flight at SIGTERM was served to its end: ${answer.text.slice(0, 200)}`);
  acknowledged.push({ id: (JSON.parse(answer.text) as { id: string }).id, title: slowTitle });
  t.comment(`${acknowledged.length} writes acknowledged, ${refused} answered otherwise`);

  const second = server(env);
  const again = await second.url;
  const missing: string[] = [];
  for (const { id, title } of acknowledged) {
    const r = await fetch(`${again}/api/v1/notetaker/notes/${id}`, { headers });
    const note = r.status === 200 ? ((await r.json()) as { title: string }) : undefined;
    if (note?.title !== title) missing.push(`${title} (${r.status})`);
  }
  t.same(missing, [], `all ${acknowledged.length} acknowledged notes are there after the restart`);
  second.child.kill('SIGTERM');
  t.equal(await second.exited, 0);
});

// `npm start` (development): npm's shell execs Node, so the SIGTERM npm forwards reaches Folio; and
// when npm dies without forwarding anything (SIGKILL), Folio notices its parent is gone and stops.
// Nothing is left serving on its own either way.
function npmStart(env: Record<string, string>) {
  const child = spawn('npm', ['start', '--silent'], {
    cwd: PACKAGE_ROOT,
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? '',
      PORT: '0',
      LOG_LEVEL: 'info',
      RELOAD_WATCH: 'false',
      BOOTSTRAP_ADMIN_TOKEN: TOKEN,
      ...compileCache,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return { child, output: () => out };
}

/** The pids of a process's children (Linux). */
async function childrenOf(pid: number): Promise<number[]> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  return text.split(/\s+/).filter(Boolean).map(Number);
}

const alive = (pid: number) => existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));

for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
  t.test(
    `${signal} to npm start: Folio stops too`,
    {
      // They run on PGlite either way: once (the PGlite run) is enough.
      skip: process.platform !== 'linux' ? 'reads /proc' : serverUrl ? 'runs in the embedded-database run' : false,
    },
    async (t) => {
      const dataDir = await mkdtemp(path.join(tmpdir(), 'folio-npm-'));
      await copyPgliteTemplate(dataDir, testLogger());
      t.teardown(() => rm(dataDir, { recursive: true, force: true }));
      const run = npmStart({ DATA_DIR: dataDir });
      const until = Date.now() + 120_000;
      while (!/"msg":"folio listening"/.test(run.output()) && Date.now() < until && run.child.exitCode === null)
        await new Promise((r) => setTimeout(r, 100));
      t.match(run.output(), /"msg":"folio listening"/, 'started');
      const [folio] = await childrenOf(run.child.pid!);
      t.ok(folio && /core\/main\.ts/.test(readFileSync(`/proc/${folio}/cmdline`, 'utf8')), "npm's child is Node running core/main.ts");
      run.child.kill(signal);
      const gone = Date.now() + 30_000;
      while (alive(folio!) && Date.now() < gone) await new Promise((r) => setTimeout(r, 100));
      const left = alive(folio!);
      if (left) process.kill(folio!, 'SIGKILL');
      t.notOk(left, 'Folio is not left running');
      t.match(
        run.output(),
        signal === 'SIGTERM' ? /"signal":"SIGTERM","msg":"stopping"/ : /"reason":"parent process exited","msg":"stopping"/,
      );
    },
  );
}
