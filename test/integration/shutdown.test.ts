// The production start (bin/folio-server) as a service manager runs it: the process it leaves is
// Folio itself, so SIGTERM reaches Folio, which drains the writes in flight and exits 0 (its stop
// deadline makes it exit 1). Every write it acknowledged is in the database afterwards.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
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
  const before = acknowledged.length;
  first.child.kill('SIGTERM');
  const code = await first.exited;
  await Promise.all(writers);
  t.equal(code, 0, `exit 0: drained within the stop deadline\n${first.output().slice(-2000)}`);
  t.match(first.output(), /"signal":"SIGTERM","msg":"stopping"/, 'the signal reached Folio itself');
  t.ok(acknowledged.length >= before, `${acknowledged.length} writes acknowledged, ${refused} answered otherwise`);

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
