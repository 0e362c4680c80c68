// `npm run reindex` as an operator runs it, in its own process: on PostgreSQL beside a running
// server, it brings back what the index lost and drops what is gone; on the embedded database a
// server holding the data directory makes it refuse, saying what to do, with nothing touched.
import t from 'tap';
import { spawn } from 'node:child_process';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';
import { createUser, req, startTestServer, type TestServer } from '../helpers/server.ts';

function reindex(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['core/reindex.ts'], {
    cwd: PACKAGE_ROOT,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

async function hits(s: TestServer, token: string, q: string): Promise<string[]> {
  const r = await req(s, 'GET', `/api/v1/search?q=${encodeURIComponent(q)}`, { token });
  if (r.status !== 200) throw new Error(`search: ${r.status} ${r.text}`);
  return r.json<{ hits: Array<{ id: string }> }>().hits.map((h) => h.id);
}

async function indexed(s: TestServer, token: string, q: string, id: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await hits(s, token, q)).includes(id)) {
    if (Date.now() > deadline) throw new Error(`note ${id} never became searchable`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const s = await startTestServer({ overrides: { jobs: { pollSeconds: 1 } } });
t.teardown(() => s.close());
const alice = await createUser(s, 'alice@example.com');
const created = await req(s, 'POST', '/api/v1/notetaker/notes', {
  token: alice.token,
  body: { title: 'Field notes', body: 'a pangolin crossed the road' },
});
const noteId = created.json<{ id: string }>().id;
await indexed(s, alice.token, 'pangolin', noteId);

const databaseUrl = s.folio.config.databaseUrl;

t.test(
  'on the embedded database, while the server holds it: refused, saying to stop the server',
  { skip: databaseUrl ? 'PGlite only' : false },
  async (t) => {
    const r = await reindex({ DATA_DIR: s.folio.config.dataDir });
    t.equal(r.code, 1, r.stderr);
    t.match(r.stderr, /folio reindex: cannot open the embedded database/);
    t.match(r.stderr, /stop the server first/);
    t.same(await hits(s, alice.token, 'pangolin'), [noteId], 'the index is untouched');
  },
);

t.test(
  'on PostgreSQL, beside the running server: what the index lost comes back, what is gone leaves',
  { skip: databaseUrl ? false : 'PostgreSQL only (DATABASE_URL)' },
  async (t) => {
    const em = s.folio.db.orm.em.fork();
    await em.execute(`delete from search_chunks where resource_id = ?`, [noteId]);
    const ghost = '0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9';
    await em.execute(
      `insert into search_chunks (owner_id, kind, resource_id, chunk, title, updated_at, text, vector)
     values (?, 'note', ?, 0, 'ghost', now(), 'pangolin ghost', '''pangolin'':1 ''ghost'':2')`,
      [alice.id, ghost],
    );
    t.same(await hits(s, alice.token, 'pangolin'), [ghost], 'the index is wrong before');
    const r = await reindex({ DATABASE_URL: databaseUrl!, DATA_DIR: s.folio.config.dataDir });
    t.equal(r.code, 0, r.stderr);
    t.match(r.stderr, /rebuilding the search index of PostgreSQL/);
    t.match(r.stderr, /100% /, 'the progress reaches the end');
    t.match(r.stdout, /indexed \d+ resources, removed 1 gone ones/);
    t.same(await hits(s, alice.token, 'pangolin'), [noteId], 'and right after');
  },
);
