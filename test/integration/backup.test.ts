// `npm run backup` and `npm run restore` as an operator runs them (child processes, settings from the
// environment), against a Folio that keeps serving: the archive restores on the other engine
// (PGlite <-> PostgreSQL) with every row and every file byte as they were, a backup killed mid-way
// leaves the previous archive untouched, and a bad archive or a used target is refused with
// nothing written. The source engine is the run's (DATABASE_URL set: PostgreSQL).
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, open, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import t, { type Test } from 'tap';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { startFolio, type Folio } from '../../core/app.ts';
import { openSource } from '../../core/backup/connect.ts';
import { listTables, MANIFEST, tableRows, type Manifest } from '../../core/backup/format.ts';
import { scheduledArchives } from '../../core/backup/schedule.ts';
import { DATABASE_SCHEMA } from '../../core/domains.ts';
import { loadConfig, PACKAGE_ROOT } from '../../core/kernel/config.ts';
import { testLogger } from '../helpers/db.ts';
import { startS3rver } from '../helpers/blob-store-suite.ts';
import { runScript } from '../helpers/process.ts';
import { ADMIN_TOKEN, createUser, eventually, fresh, FIRST_PARTY, req, startTestServer, type TestServer } from '../helpers/server.ts';

const SOURCE_PG = process.env['DATABASE_URL'] || undefined;
/** The other engine: PGlite when the run is on PostgreSQL, else the PostgreSQL server (if there is one). */
const OTHER_PG = SOURCE_PG ? undefined : 'postgres://postgres@127.0.0.1:5432/postgres';

interface Target {
  engine: 'postgres' | 'pglite';
  dataDir: string;
  databaseUrl: string | null;
  drop(): Promise<void>;
}

const scratch = await mkdtemp(path.join(tmpdir(), 'folio-backup-'));
const targets: Target[] = [];

async function postgresReachable(url: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    await c.end();
    return true;
  } catch {
    return false;
  }
}
const otherEngine: 'postgres' | 'pglite' = SOURCE_PG ? 'pglite' : OTHER_PG && (await postgresReachable(OTHER_PG)) ? 'postgres' : 'pglite';
const sourceEngine: 'postgres' | 'pglite' = SOURCE_PG ? 'postgres' : 'pglite';
/** For checks that are not about the engine: PostgreSQL when there is one (an empty PGlite takes seconds to migrate). */
const quickEngine: 'postgres' | 'pglite' = sourceEngine === 'postgres' || otherEngine === 'postgres' ? 'postgres' : 'pglite';

/** An empty data directory, or an empty database (with a data directory for its blobs). */
async function newTarget(engine: 'postgres' | 'pglite'): Promise<Target> {
  const dataDir = await mkdtemp(path.join(scratch, 'target-'));
  let target: Target;
  if (engine === 'pglite') {
    target = { engine, dataDir, databaseUrl: null, drop: () => rm(dataDir, { recursive: true, force: true }) };
  } else {
    const db = await fresh((SOURCE_PG ?? OTHER_PG)!);
    target = {
      engine,
      dataDir,
      databaseUrl: db.url,
      drop: async () => {
        await db.drop();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  }
  targets.push(target);
  return target;
}

function envOf(x: { dataDir: string; databaseUrl: string | null }): Record<string, string> {
  return { DATA_DIR: x.dataDir, ...(x.databaseUrl ? { DATABASE_URL: x.databaseUrl } : {}), LOG_LEVEL: 'warn' };
}

const backup = (x: { dataDir: string; databaseUrl: string | null }, out: string) =>
  runScript('core/backup.ts', ['--out', out], envOf(x), 120_000);
const restore = (x: { dataDir: string; databaseUrl: string | null }, from: string) =>
  runScript('core/restore.ts', ['--from', from], envOf(x), 120_000);

/** Every table's rows as JSON text in primary-key order, times in UTC: the canonical dump. */
async function canonical(x: { dataDir: string; databaseUrl: string | null }): Promise<Map<string, string[]>> {
  const s = await openSource({ ...loadConfig({ env: {} }), dataDir: x.dataDir, databaseUrl: x.databaseUrl }, testLogger());
  try {
    await s.client.query('begin isolation level repeatable read read only');
    await s.client.query(`set local timezone = 'UTC'`);
    const out = new Map<string, string[]>();
    for (const table of await listTables(s.client)) {
      const rows: string[] = [];
      for await (const r of tableRows(s.client, table)) rows.push(r);
      out.set(`${table.schema}.${table.name}`, rows);
    }
    await s.client.query('commit');
    return out;
  } finally {
    await s.close();
  }
}

/** Every entry of an archive, in memory (the test's archives are small). */
async function readArchive(file: string): Promise<Map<string, Buffer>> {
  const zip = await yauzl.openPromise(file, { lazyEntries: true });
  const out = new Map<string, Buffer>();
  for await (const e of zip.eachEntry()) {
    const chunks: Buffer[] = [];
    for await (const c of await zip.openReadStreamPromise(e)) chunks.push(c as Buffer);
    out.set(e.fileName, Buffer.concat(chunks));
  }
  zip.close();
  return out;
}

function archiveRows(entries: Map<string, Buffer>): Map<string, string[]> {
  const m = JSON.parse(entries.get(MANIFEST)!.toString()) as Manifest;
  return new Map(
    m.tables.map((tb) => [
      `${tb.schema}.${tb.name}`,
      entries
        .get(tb.entry)!
        .toString('utf8')
        .split('\n')
        .filter((l) => l !== ''),
    ]),
  );
}

/** A copy of an archive with entries changed (null drops one), as a valid zip. */
async function rewrite(src: string, dst: string, edit: (name: string, data: Buffer) => Buffer | null): Promise<void> {
  const entries = await readArchive(src);
  const zip = new yazl.ZipFile();
  for (const [name, data] of entries) {
    const next = edit(name, data);
    if (next) zip.addBuffer(next, name);
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const c of zip.outputStream as AsyncIterable<Buffer>) chunks.push(c);
  await writeFile(dst, Buffer.concat(chunks));
}

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

async function isEmpty(x: Target): Promise<boolean> {
  if (x.engine === 'pglite')
    return !existsSync(path.join(x.dataDir, 'pglite')) || (await readdir(path.join(x.dataDir, 'pglite'))).length === 0;
  const c = new pg.Client({ connectionString: x.databaseUrl! });
  await c.connect();
  try {
    const { rows } = await c.query(`select count(*)::int as n from pg_tables where schemaname not in ('pg_catalog', 'information_schema')`);
    return rows[0].n === 0;
  } finally {
    await c.end();
  }
}

async function startOn(x: Target): Promise<Folio> {
  const config = loadConfig({
    env: {},
    overrides: {
      port: 0,
      host: '127.0.0.1',
      dataDir: x.dataDir,
      databaseUrl: x.databaseUrl,
      pluginsDir: [FIRST_PARTY],
      skillsDir: [path.join(PACKAGE_ROOT, 'skills')],
      bootstrapAdminToken: ADMIN_TOKEN,
      logLevel: 'silent',
      reload: { watch: false, debounceMs: 50 },
      isolation: { importTimeoutMs: 30_000 },
    },
  });
  return startFolio(config, testLogger());
}

// --- the source: a running Folio with a user's notes (with revisions), files (with versions), a
// share link and a token, seeded through its HTTP API ------------------------------------------

let s: TestServer;
let alice: { id: string; token: string };
const seeded = {
  notes: [] as { id: string; title: string; body: string; first: string; version: number }[],
  files: [] as { id: string; versions: Buffer[] }[],
  share: { path: '', bytes: Buffer.alloc(0) },
  token: '',
};

async function upload(name: string, body: Buffer) {
  const r = await fetch(`${s.url}/api/v1/filedb/files?name=${encodeURIComponent(name)}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/octet-stream' },
    body,
  });
  if (r.status !== 201) throw new Error(`upload ${r.status} ${await r.text()}`);
  return (await r.json()) as { id: string };
}

t.before(async () => {
  s = await startTestServer();
  alice = await createUser(s, 'alice@example.com');
  for (let i = 0; i < 3; i++) {
    // Characters a line-based reader or a careless serializer mangles: U+2028 and U+2029 (line
    // breaks to JavaScript's readline, not to JSON), control characters, astral characters.
    const title = `note ${i} 𝄞😀`;
    const created = (
      await req(s, 'POST', '/api/v1/notetaker/notes', {
        token: alice.token,
        body: { title, body: `first ${i} ${TRICKY}\u0001\u001f\r\t`, tags: [`tag${i}𝕏𝔸`, 'plain'] },
      })
    ).json();
    if (!created.id) throw new Error(`create note: ${JSON.stringify(created)}`);
    let version = created.version as number;
    for (const edit of [`second ${i} — ünïcode ✓ \u2028`, `third ${i}\n\n## section\ntext ${TRICKY}`]) {
      const r = await req(s, 'PATCH', `/api/v1/notetaker/notes/${created.id}`, {
        token: alice.token,
        body: { body: edit },
        headers: { 'if-match': `"${version}"` },
      });
      if (r.status !== 200) throw new Error(`patch ${r.status} ${r.text}`);
      version = r.json().version;
    }
    seeded.notes.push({
      id: created.id,
      title,
      body: `third ${i}\n\n## section\ntext ${TRICKY}`,
      first: `first ${i} ${TRICKY}\u0001\u001f\r\t`.trimEnd(),
      version,
    });
  }
  // Binary bytes (every byte value), a second version, and one large file for the kill test.
  const v1 = Buffer.from(Array.from({ length: 4096 }, (_, i) => i % 256));
  const v2 = randomBytes(70_000);
  const f = await upload('bytes.bin', v1);
  const put = await fetch(`${s.url}/api/v1/filedb/files/${f.id}/content`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/octet-stream', 'if-match': '"1"' },
    body: v2,
  });
  if (put.status !== 200) throw new Error(`put ${put.status} ${await put.text()}`);
  seeded.files.push({ id: f.id, versions: [v1, v2] });
  const big = randomBytes(8 * 1024 * 1024);
  seeded.files.push({ id: (await upload('big.bin', big)).id, versions: [big] });
  const link = (await req(s, 'POST', `/api/v1/filedb/files/${f.id}/shares`, { token: alice.token, body: {} })).json();
  seeded.share = { path: new URL(link.url).pathname, bytes: v2 };
  const tok = await req(s, 'POST', '/api/v1/tokens', {
    token: alice.token,
    body: { name: 'reader', scopes: ['notes:read', 'files:read'], expires_in_days: 30 },
  });
  seeded.token = tok.json().token;
  // jsonb with the same characters (and a title with control characters the API may refuse),
  // written straight into the source database.
  const c = await openSource(
    { ...loadConfig({ env: {} }), dataDir: s.folio.config.dataDir, databaseUrl: s.folio.config.databaseUrl },
    testLogger(),
  );
  try {
    await c.client.query(`update public.file_versions set extracted_pages = $1::jsonb where file_id = $2`, [
      JSON.stringify([{ page: 1, text: `p ${TRICKY}\u0001\u001f\u007f`, [`k${TRICKY}`]: TRICKY }]),
      f.id,
    ]);
    for (const [i, n] of seeded.notes.entries()) {
      n.title = i === 2 ? `ctl\u0001\u0007${TRICKY}` : `note ${i} ${TRICKY}`;
      await c.client.query(`update public.notes set title = $1 where id = $2`, [n.title, n.id]);
    }
    await c.client.query(`update public.notes set tags = array[$1, 'plain'] where id = $2`, [`t\u0002${TRICKY}`, seeded.notes[1]!.id]);
  } finally {
    await c.close();
  }
});

const TRICKY = 'a\u2028b\u2029c 𝄞😀 \u0085\u00a0\ufeff "q" \\ </x>';

/** The seeded rows, as the SOURCE database holds them (not through the archive's serializer). */
async function seededRows(x: { dataDir: string; databaseUrl: string | null }): Promise<unknown[]> {
  const c = await openSource({ ...loadConfig({ env: {} }), dataDir: x.dataDir, databaseUrl: x.databaseUrl }, testLogger());
  try {
    const ids = seeded.notes.map((n) => n.id);
    const files = seeded.files.map((f) => f.id);
    const q = async (sql: string, p: unknown[]) => (await c.client.query<{ r: unknown }>(sql, p)).rows.map((r) => r.r);
    return [
      await q(
        `select jsonb_build_object('id', id, 'title', title, 'body', body, 'tags', tags) as r from public.notes where id = any($1) order by id`,
        [ids],
      ),
      await q(
        `select jsonb_build_object('n', note_id, 'v', version, 'title', title, 'body', body, 'tags', tags) as r from public.note_revisions where note_id = any($1) order by note_id, version`,
        [ids],
      ),
      await q(
        `select jsonb_build_object('id', file_id, 'v', version, 'pages', extracted_pages) as r from public.file_versions where file_id = any($1) order by file_id, version`,
        [files],
      ),
    ];
  } finally {
    await c.close();
  }
}

t.teardown(async () => {
  await s?.close();
  for (const x of targets) await x.drop().catch(() => {});
  await rm(scratch, { recursive: true, force: true });
});

const source = () => ({ dataDir: s.folio.config.dataDir, databaseUrl: s.folio.config.databaseUrl });
const archive = () => path.join(scratch, 'folio.zip');

/** What a user sees of the seeded data, through the API of the server at `url`. */
async function checkThroughApi(t: Test, url: string) {
  const srv = { url };
  for (const n of seeded.notes) {
    const got = (await req(srv, 'GET', `/api/v1/notetaker/notes/${n.id}`, { token: seeded.token })).json();
    t.match(got, { title: n.title, version: n.version }, `note ${n.id}`);
    t.equal(String(got.body).trimEnd(), n.body, `${n.id}: its body`);
    const revs = (await req(srv, 'GET', `/api/v1/notetaker/notes/${n.id}/revisions`, { token: seeded.token })).json();
    t.equal(revs.items.length, 3, `${n.id}: every revision`);
    const first = await req(srv, 'GET', `/api/v1/notetaker/notes/${n.id}/revisions/1`, { token: seeded.token });
    t.equal(String(first.json().body).trimEnd(), n.first, `${n.id}: revision 1's body`);
  }
  for (const f of seeded.files) {
    for (const [i, bytes] of f.versions.entries()) {
      const r = await fetch(`${url}/api/v1/filedb/files/${f.id}/versions/${i + 1}/content`, {
        headers: { authorization: `Bearer ${seeded.token}` },
      });
      t.equal(r.status, 200);
      t.equal(sha(Buffer.from(await r.arrayBuffer())), sha(bytes), `file ${f.id} version ${i + 1}: the same bytes`);
    }
  }
  const shared = await fetch(url + seeded.share.path);
  t.equal(shared.status, 200, 'the share link works, no token');
  t.equal(sha(Buffer.from(await shared.arrayBuffer())), sha(seeded.share.bytes));
  t.equal((await req(srv, 'GET', '/api/v1/tokens/self', { token: seeded.token })).status, 200, 'the personal token works');
}

t.test(`backup while ${sourceEngine} serves writes; restore on ${otherEngine}; and back`, async (t) => {
  // Writes go on during the backup and are all answered.
  let writing = true;
  const writes = (async () => {
    const statuses: number[] = [];
    while (writing)
      statuses.push((await req(s, 'POST', '/api/v1/notetaker/notes', { token: alice.token, body: { title: 'during' } })).status);
    return statuses;
  })();
  const made = await backup(source(), archive());
  writing = false;
  const statuses = await writes;
  t.equal(made.code, 0, made.stderr);
  t.match(made.stdout, /backed up \d+ tables/);
  t.ok(statuses.length > 0 && statuses.every((st) => st === 201), 'every write during the backup was answered 201');

  const entries = await readArchive(archive());
  const manifest = JSON.parse(entries.get(MANIFEST)!.toString()) as Manifest;
  t.equal(manifest.engine, sourceEngine);
  t.same(
    manifest.migrations,
    DATABASE_SCHEMA.migrations.map((m) => m.name),
    'every applied migration, in order',
  );
  t.equal(manifest.blobs.items.length, 3, 'three distinct blobs (two versions, one big file)');
  // The snapshot is consistent: every note has its revisions.
  const rows = archiveRows(entries);
  const notes = rows.get('public.notes')!.map((l) => JSON.parse(l));
  const revisions = rows.get('public.note_revisions')!.map((l) => JSON.parse(l));
  for (const n of notes) t.equal(revisions.filter((r) => r.note_id === n.id).length, n.version, `note ${n.id}: its revisions`);

  const there = await newTarget(otherEngine);
  const restored = await restore(there, archive());
  t.equal(restored.code, 0, restored.stderr);
  t.same(await canonical(there), rows, 'every table, row for row, as in the archive');
  t.same(await seededRows(there), await seededRows(source()), 'the seeded rows as the source database holds them');
  for (const b of manifest.blobs.items) {
    const file = path.join(there.dataDir, 'blobs', b.key.slice(0, 2), b.key.slice(2, 4), b.key);
    t.equal(sha(await readFile(file)), b.key, `blob ${b.key.slice(0, 8)}: its bytes`);
  }

  const folio = await startOn(there);
  try {
    await checkThroughApi(t, folio.url);
    // And back: a backup of that running server, restored on the first engine.
    const again = path.join(scratch, 'again.zip');
    const made2 = await backup(there, again);
    t.equal(made2.code, 0, made2.stderr);
    const back = await newTarget(sourceEngine);
    const restored2 = await restore(back, again);
    t.equal(restored2.code, 0, restored2.stderr);
    const entries2 = await readArchive(again);
    t.same(await canonical(back), archiveRows(entries2), `every table, row for row, back on ${sourceEngine}`);
    t.same(await seededRows(back), await seededRows(source()), `the seeded rows as the source holds them, back on ${sourceEngine}`);
    for (const b of (JSON.parse(entries2.get(MANIFEST)!.toString()) as Manifest).blobs.items) {
      const file = path.join(back.dataDir, 'blobs', b.key.slice(0, 2), b.key.slice(2, 4), b.key);
      t.equal(sha(await readFile(file)), b.key, `blob ${b.key.slice(0, 8)}: its bytes, back`);
    }
  } finally {
    await folio.close();
  }
});

t.test('kill -9 during a backup leaves the previous archive intact', async (t) => {
  const before = sha(await readFile(archive()));
  const env = envOf(source());
  const child = spawn(process.execPath, ['core/backup.ts', '--out', archive()], {
    cwd: PACKAGE_ROOT,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env },
    stdio: 'ignore',
  });
  const partial = path.join(scratch, `.folio.zip.${child.pid}.partial`);
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  // Killed as soon as it has started writing its archive.
  while (!existsSync(partial) && child.exitCode === null) await new Promise((r) => setTimeout(r, 2));
  child.kill('SIGKILL');
  await closed;
  t.equal(child.signalCode, 'SIGKILL', 'killed mid-way');
  t.equal(sha(await readFile(archive())), before, 'the previous archive is byte for byte as it was');
  const write = await req(s, 'POST', '/api/v1/notetaker/notes', { token: alice.token, body: { title: 'after the kill' } });
  t.equal(write.status, 201, 'the server takes writes: nothing of the killed backup holds it');
  const manifest = JSON.parse((await readArchive(archive())).get(MANIFEST)!.toString()) as Manifest;
  t.equal(manifest.format, 'folio-backup', 'and still a whole archive');
  // The next backup to that name clears what the killed one left.
  const next = await backup(source(), archive());
  t.equal(next.code, 0, next.stderr);
  t.notOk(existsSync(partial), 'the killed backup’s temporary file is gone');
});

/** Does `file` (growing) hold `marker` yet? Reads only what was added since `from`. */
async function holds(file: string, marker: Buffer, from: { offset: number; tail: Buffer }): Promise<boolean> {
  const fh = await open(file, 'r').catch(() => null);
  if (!fh) return false;
  try {
    const { size } = await fh.stat();
    if (size <= from.offset) return false;
    const buf = Buffer.alloc(size - from.offset);
    await fh.read(buf, 0, buf.length, from.offset);
    const hay = Buffer.concat([from.tail, buf]);
    from.offset = size;
    from.tail = hay.subarray(Math.max(0, hay.length - marker.length));
    return hay.includes(marker);
  } finally {
    await fh.close();
  }
}

for (const phase of ['database snapshot', 'blob copy'] as const) {
  t.test(`kill -9 during the ${phase} leaves the previous archive intact`, async (t) => {
    // Enough bytes that the copy is still going when the kill lands.
    if (phase === 'blob copy') for (let i = 0; i < 3; i++) await upload(`more-${i}.bin`, randomBytes(16 * 1024 * 1024));
    const before = sha(await readFile(archive()));
    const child = spawn(process.execPath, ['core/backup.ts', '--out', archive()], {
      cwd: PACKAGE_ROOT,
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...envOf(source()) },
      stdio: 'ignore',
    });
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const partial = path.join(scratch, `.folio.zip.${child.pid}.partial`);
    const spool = path.join(scratch, `.folio.zip.${child.pid}.spool`);
    // The snapshot's rows go to the spool file while its transaction is open; the blobs go into the
    // archive after every table's entry (a zip entry's name is in its header, at its start).
    const seen = { offset: 0, tail: Buffer.alloc(0) };
    const reached = () =>
      phase === 'database snapshot' ? Promise.resolve(existsSync(spool)) : holds(partial, Buffer.from('blobs/'), seen);
    while (child.exitCode === null && !(await reached())) await new Promise((r) => setTimeout(r, 1));
    child.kill('SIGKILL');
    await closed;
    t.equal(child.signalCode, 'SIGKILL', 'killed mid-way');
    t.equal(sha(await readFile(archive())), before, 'the previous archive is byte for byte as it was');
    const write = await req(s, 'POST', '/api/v1/notetaker/notes', { token: alice.token, body: { title: `after a kill in the ${phase}` } });
    t.equal(write.status, 201, 'the server takes writes');
    const next = await backup(source(), archive());
    t.equal(next.code, 0, next.stderr);
    t.notOk(existsSync(partial) || existsSync(spool), 'the killed backup’s temporary files are gone');
  });
}

/** Has the restore into `x` begun loading (its schema is being made)? */
async function loading(x: Target): Promise<boolean> {
  if (x.engine === 'pglite') return existsSync(path.join(x.dataDir, 'pglite', 'PG_VERSION'));
  const c = new pg.Client({ connectionString: x.databaseUrl! });
  await c.connect();
  try {
    const { rows } = await c.query(`select to_regclass('public.users') is not null as ok`);
    return rows[0].ok as boolean;
  } finally {
    await c.end();
  }
}

t.test('kill -9 during a restore: the target refuses to start, and a new restore finishes it', async (t) => {
  const x = await newTarget(otherEngine);
  const child = spawn(process.execPath, ['core/restore.ts', '--from', archive()], {
    cwd: PACKAGE_ROOT,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...envOf(x) },
    stdio: 'ignore',
  });
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  // Killed once it has begun making the target's schema.
  while (child.exitCode === null && !(await loading(x))) await new Promise((r) => setTimeout(r, 5));
  child.kill('SIGKILL');
  await closed;
  t.equal(child.signalCode, 'SIGKILL', 'killed mid-way');

  const start = await runScript('core/main.ts', [], { ...envOf(x), PORT: '0' }, 60_000);
  t.not(start.code, 0, 'Folio does not start on the partly restored target');
  t.match(start.stdout + start.stderr, /unfinished restore.*npm run restore/);

  const again = await restore(x, archive());
  t.equal(again.code, 0, again.stderr);
  t.match(again.stdout, /unfinished restore was found there; it was cleared and redone/);
  t.same(await canonical(x), archiveRows(await readArchive(archive())), 'every table, row for row, as in the archive');
  const folio = await startOn(x);
  try {
    t.equal((await req({ url: folio.url }, 'GET', '/api/v1/tokens/self', { token: seeded.token })).status, 200, 'and it serves');
  } finally {
    await folio.close();
  }
});

t.test('a restore does not touch a target a running Folio holds', async (t) => {
  const r = await restore(source(), archive());
  t.equal(r.code, 1);
  t.match(r.stderr, sourceEngine === 'pglite' ? /in use by process \d+/ : /not empty/);
  t.equal(
    (await req(s, 'GET', `/api/v1/notetaker/notes/${seeded.notes[0]!.id}`, { token: alice.token })).status,
    200,
    'the source is untouched',
  );
  if (sourceEngine === 'pglite') t.ok(existsSync(path.join(source().dataDir, 'pglite', 'PG_VERSION')), 'its data directory is there');
});

t.test('a database owner who is not superuser can restore', { skip: quickEngine !== 'postgres' && 'no PostgreSQL' }, async (t) => {
  const admin = new pg.Client({ connectionString: (SOURCE_PG ?? OTHER_PG)! });
  await admin.connect();
  const name = `folio_owner_${randomBytes(4).toString('hex')}`;
  await admin.query(`create role ${name} login nosuperuser nocreatedb nocreaterole`);
  await admin.query(`create database ${name} owner ${name}`);
  const url = new URL((SOURCE_PG ?? OTHER_PG)!);
  url.username = name;
  url.pathname = `/${name}`;
  const dataDir = await mkdtemp(path.join(scratch, 'owner-'));
  t.teardown(async () => {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.query(`drop role if exists ${name}`);
    await admin.end();
  });
  const x = { dataDir, databaseUrl: url.toString() };
  const r = await restore(x, archive());
  t.equal(r.code, 0, r.stderr);
  t.same(await canonical(x), archiveRows(await readArchive(archive())), 'every table, row for row, as in the archive');
});

t.test('bad archives and used targets are refused, nothing written', async (t) => {
  const good = archive();
  const entries = await readArchive(good);
  const manifest = JSON.parse(entries.get(MANIFEST)!.toString()) as Manifest;

  const corrupt = path.join(scratch, 'corrupt.zip');
  const victim = manifest.blobs.items[0]!.entry!;
  await rewrite(good, corrupt, (name, data) =>
    name === victim ? Buffer.concat([data.subarray(0, -1), Buffer.from([data.at(-1)! ^ 1])]) : data,
  );
  const x1 = await newTarget(otherEngine);
  const r1 = await restore(x1, corrupt);
  t.equal(r1.code, 1);
  t.match(r1.stderr, /checksum mismatch in blobs\//);
  t.ok(await isEmpty(x1), 'the target is still empty');
  t.notOk(existsSync(path.join(x1.dataDir, 'blobs')), 'no blob written');

  const newer = path.join(scratch, 'newer.zip');
  await rewrite(good, newer, (name, data) =>
    name === MANIFEST
      ? Buffer.from(JSON.stringify({ ...manifest, migrations: [...manifest.migrations, 'Migration29990101000000_future'] }))
      : data,
  );
  const x2 = await newTarget(otherEngine);
  const r2 = await restore(x2, newer);
  t.equal(r2.code, 1);
  t.match(r2.stderr, /newer than this Folio.*Migration29990101000000_future/);
  t.ok(await isEmpty(x2), 'the target is still empty');

  const r3 = await restore(source(), good);
  t.equal(r3.code, 1);
  t.match(r3.stderr, /not empty|in use by process/);
  t.equal(
    (await req(s, 'GET', `/api/v1/notetaker/notes/${seeded.notes[0]!.id}`, { token: alice.token })).status,
    200,
    'the source is untouched',
  );

  const truncated = path.join(scratch, 'truncated.zip');
  const bytes = await readFile(good);
  await writeFile(truncated, bytes.subarray(0, Math.floor(bytes.length / 2)));
  const x4 = await newTarget(otherEngine);
  const r4 = await restore(x4, truncated);
  t.equal(r4.code, 1);
  t.match(r4.stderr, /not a Folio backup archive/);
  t.ok(await isEmpty(x4));
});

t.test('an archive of an older schema is restored and then migrated', async (t) => {
  const good = archive();
  const entries = await readArchive(good);
  const manifest = JSON.parse(entries.get(MANIFEST)!.toString()) as Manifest;
  const last = manifest.migrations.at(-1)!;
  // As the previous release made it: without the newest migration, in the list and in the
  // migrations table.
  const migEntry = manifest.tables.find((tb) => tb.name === 'mikro_orm_migrations')!;
  const lines = entries
    .get(migEntry.entry)!
    .toString()
    .split('\n')
    .filter((l) => l !== '' && JSON.parse(l).name !== last);
  const body = Buffer.from(lines.map((l) => l + '\n').join(''));
  // The tables that migration creates were not in that release's archive either.
  const newest = DATABASE_SCHEMA.migrations.at(-1)!;
  t.equal(newest.name, last);
  const m = new (newest.class as unknown as new (a: null, b: null) => { up(): unknown; getQueries(): unknown[] })(null, null);
  await m.up();
  const created = new Set(
    [
      ...m
        .getQueries()
        .map(String)
        .join('\n')
        .matchAll(/create table (?:if not exists )?"?(\w+)"?/gi),
    ].map((x) => x[1]),
  );
  const older: Manifest = {
    ...manifest,
    migrations: manifest.migrations.slice(0, -1),
    tables: manifest.tables
      .filter((tb) => !(tb.schema === 'public' && created.has(tb.name)))
      .map((tb) => (tb === migEntry ? { ...tb, rows: lines.length, bytes: body.length, sha256: sha(body) } : tb)),
    // Nor the sequences of those tables (an identity column's).
    sequences: manifest.sequences.filter((sq) => !created.has(sq.table.split('.').at(-1)!.replace(/"/g, ''))),
  };
  const file = path.join(scratch, 'older.zip');
  await rewrite(good, file, (name, data) =>
    name === MANIFEST ? Buffer.from(JSON.stringify(older)) : name === migEntry.entry ? body : data,
  );
  const x = await newTarget(otherEngine);
  const r = await restore(x, file);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, new RegExp(`applied 1 newer migration\\(s\\): ${last}`));
  const dump = await canonical(x);
  t.same(
    dump.get('public.mikro_orm_migrations')!.map((l) => JSON.parse(l).name),
    DATABASE_SCHEMA.migrations.map((m) => m.name),
    'every migration applied, the newest after the rows',
  );
  t.same(dump.get('public.notes'), archiveRows(entries).get('public.notes'), 'the notes as they were');

  // A blob the rows reference and the store lacks (removed after the snapshot, or lost): the
  // backup fails saying so, and leaves no archive with a hole in it.
  const key = manifest.blobs.items[0]!.key;
  await rm(path.join(x.dataDir, 'blobs', key.slice(0, 2), key.slice(2, 4), key));
  const out = path.join(scratch, 'holed.zip');
  const holed = await backup(x, out);
  t.equal(holed.code, 1);
  t.match(holed.stderr, new RegExp(`blob ${key}, referenced by the database snapshot, is gone from the blob store`));
  t.notOk(existsSync(out), 'no archive');
  t.same(
    (await readdir(scratch)).filter((n) => n.includes('holed')),
    [],
    'and no temporary file',
  );
});

t.test('scheduled backups: made by the server, the newest kept', async (t) => {
  const dir = path.join(scratch, 'scheduled');
  const srv = await startTestServer({ overrides: { backup: { dir, everyHours: 0.0002, keep: 2, blobs: 'include' } } });
  try {
    // Three made (under a second apart): two kept, the first removed.
    let first: string | undefined;
    const names = await eventually(
      () => scheduledArchives(dir),
      (n) => {
        first ??= n[0];
        return n.length === 2 && n[0] !== first;
      },
      60_000,
    );
    t.equal(names.length, 2, 'two kept');
    t.not(names[0], first, 'the oldest was removed');
    const m = JSON.parse((await readArchive(path.join(dir, names[1]!))).get(MANIFEST)!.toString()) as Manifest;
    t.equal(m.format, 'folio-backup');
    t.ok((await stat(path.join(dir, names[1]!))).size > 0);
  } finally {
    await srv.close();
  }
});

t.test('S3 blob store: the bytes copied into the archive, or only their keys recorded', async (t) => {
  const bucket = 'folio-backup';
  const s3 = await startS3rver(bucket);
  const s3Settings = (prefix: string) => ({
    kind: 's3',
    s3: {
      endpoint: s3.endpoint,
      bucket,
      region: 'us-east-1',
      prefix,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
    },
  });
  const s3Env = (prefix: string) => ({
    BLOB_STORE: 's3',
    S3_ENDPOINT: s3.endpoint,
    S3_BUCKET: bucket,
    S3_PREFIX: prefix,
    S3_ACCESS_KEY_ID: 'S3RVER',
    S3_SECRET_ACCESS_KEY: 'S3RVER',
    S3_FORCE_PATH_STYLE: 'true',
  });
  const srv = await startTestServer({ overrides: { files: { blobStore: s3Settings('src/') } } });
  try {
    const user = await createUser(srv, 'sam@example.com');
    const bytes = randomBytes(100_000);
    const up = await fetch(`${srv.url}/api/v1/filedb/files?name=s3.bin`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/octet-stream' },
      body: bytes,
    });
    t.equal(up.status, 201);
    const from = { dataDir: srv.folio.config.dataDir, databaseUrl: srv.folio.config.databaseUrl };
    const run = (script: string, args: string[], x: { dataDir: string; databaseUrl: string | null }, prefix: string | null) =>
      runScript(script, args, { ...envOf(x), ...(prefix === null ? {} : s3Env(prefix)) }, 120_000);

    const referenced = path.join(scratch, 's3-reference.zip');
    const made = await run('core/backup.ts', ['--out', referenced, '--blobs', 'reference'], from, 'src/');
    t.equal(made.code, 0, made.stderr);
    const entries = await readArchive(referenced);
    const m = JSON.parse(entries.get(MANIFEST)!.toString()) as Manifest;
    t.match(m.blobs, { store: 's3', mode: 'referenced', bucket, prefix: 'src/' });
    t.same(
      m.blobs.items.map((b) => b.key),
      [sha(bytes)],
    );
    t.notOk(
      [...entries.keys()].some((n) => n.startsWith('blobs/')),
      'no bytes in the archive',
    );

    const elsewhere = await newTarget(quickEngine);
    const refused = await run('core/restore.ts', ['--from', referenced], elsewhere, 'other/');
    t.equal(refused.code, 1);
    t.match(refused.stderr, /by key only.*1 of them are not in the configured s3 store/);
    t.ok(await isEmpty(elsewhere), 'nothing restored');
    const same = await newTarget(quickEngine);
    const ok = await run('core/restore.ts', ['--from', referenced], same, 'src/');
    t.equal(ok.code, 0, ok.stderr);
    t.same(await canonical(same), archiveRows(entries), 'the rows, with the bucket as it is');

    const included = path.join(scratch, 's3-include.zip');
    t.equal((await run('core/backup.ts', ['--out', included], from, 'src/')).code, 0);
    const onDisk = await newTarget(quickEngine);
    const r = await run('core/restore.ts', ['--from', included], onDisk, null);
    t.equal(r.code, 0, r.stderr);
    const file = path.join(onDisk.dataDir, 'blobs', sha(bytes).slice(0, 2), sha(bytes).slice(2, 4), sha(bytes));
    t.equal(sha(await readFile(file)), sha(bytes), 'the bytes, from the bucket into the disk store');
  } finally {
    await srv.close();
    await s3.close();
  }
});
