// core/db: opening, migrating, pinging and closing, on both engines, against real databases.
import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { openDatabase, runMigrations } from '../../core/db/database.ts';
import { DATABASE_SCHEMA } from '../../core/domains.ts';
import { IdentityService } from '../../core/domain/identity/service.ts';
import { openTestDatabase, testLogger } from '../helpers/db.ts';
import { copyPgliteTemplate } from '../helpers/template.ts';

const log = testLogger();
const repoRoot = path.resolve(import.meta.dirname, '../..');

t.test('opens the engine the run is for, migrated, and pings', async (t) => {
  // An empty database migrated on open, not a copy of the test template: the path a first start takes.
  const db = await openTestDatabase({ fresh: true });
  t.teardown(() => db.cleanup());
  t.equal(db.engine, process.env['DATABASE_URL'] ? 'postgres' : 'pglite');
  await db.ping(5000);

  const em = db.orm.em.fork();
  const applied = await em.execute<{ name: string }[]>('select name from mikro_orm_migrations order by id');
  t.ok(
    applied.some((m) => m.name === 'Migration20261121000000_identity'),
    'first migration recorded',
  );
  t.same(await runMigrations(db.orm), [], 'nothing left to apply');

  const ext = await em.execute<{ n: number }[]>(`select count(*)::int as n from pg_extension where extname = 'pg_trgm'`);
  t.equal(ext[0]?.n, 1, 'pg_trgm is installed');
  const sim = await em.execute<{ s: number }[]>(`select similarity('folio', 'folios') as s`);
  t.ok((sim[0]?.s ?? 0) > 0.5, 'pg_trgm works');

  if (db.engine === 'pglite') {
    // PGlite has one session, and runs in its own worker thread: a long statement holds the
    // connection but not this thread, so a ping times out on schedule and recovers afterwards.
    const busy = db.orm.em.fork().execute('select pg_sleep(1.5)');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = Date.now();
    await t.rejects(db.ping(300), /timed out/, 'ping rejects while the only connection is busy');
    const took = Date.now() - started;
    t.ok(took < 1000, `and on time (${took} ms), with the event loop free`);
    await busy;
    await db.ping(5000);
    t.pass('ping recovers once the statement is done');
  }

  // The hand-written migrations and the entity definitions must describe the same schema.
  const drift = await db.orm.schema.getUpdateSchemaSQL({ wrap: false });
  t.equal(drift.trim(), '', 'entities match the migrated schema');
});

t.test('PGlite keeps its data across close and reopen, and in another process', async (t) => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'folio-pglite-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  // Starts from a copy of the migrated test template: migrating an empty PGlite is the test above
  // and the migrate CLI test below; this one is about what survives a close.
  await copyPgliteTemplate(dataDir, log);

  const first = await openDatabase({ schema: DATABASE_SCHEMA, dataDir, log });
  t.equal(first.engine, 'pglite');
  const user = await new IdentityService(first).createUser({ email: 'persist@example.com' });
  await t.rejects(openDatabase({ schema: DATABASE_SCHEMA, dataDir, log }), /already open/, 'a second open of the same dir is refused');
  await first.close();
  await first.close(); // idempotent

  // another process finds the schema already there
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(repoRoot, 'core/migrate.ts')], {
    cwd: repoRoot,
    env: { ...process.env, DATABASE_URL: '', DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
    timeout: 60_000,
  });
  t.match(stdout, /up to date/, 'migrate CLI in a second process sees the migrated schema');

  const second = await openDatabase({ schema: DATABASE_SCHEMA, dataDir, log, migrate: false });
  t.teardown(() => second.close());
  const again = await new IdentityService(second).getUser(user.id);
  t.equal(again?.email, 'persist@example.com', 'data survived');
  t.same(await runMigrations(second.orm), []);
  await second.ping(5000);
  await second.close();

  // a lock left behind by a dead process is taken over
  await writeFile(path.join(dataDir, 'pglite', 'folio.lock'), '999999999');
  const third = await openDatabase({ schema: DATABASE_SCHEMA, dataDir, log, migrate: false });
  t.equal(await new IdentityService(third).countUsers(), 1);
  await third.close();
});

t.test('the migrate CLI applies migrations to a fresh PGlite', async (t) => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'folio-cli-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(repoRoot, 'core/migrate.ts')], {
    cwd: repoRoot,
    env: { ...process.env, DATABASE_URL: '', DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
    timeout: 60_000,
  });
  t.match(stdout, /applied \d+ migration\(s\)/);
  t.match(stdout, /Migration20261121000000_identity/);
});

t.test('ping rejects within its timeout when the server never answers', async (t) => {
  // A TCP listener that accepts and then says nothing, like a wedged server.
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const hung = net.createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.resume(); // read and drop whatever the client sends, so its hang-up is noticed
  });
  await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((resolve) => hung.close(() => resolve()));
  });
  const { port } = hung.address() as net.AddressInfo;

  const db = await openDatabase({
    schema: DATABASE_SCHEMA,
    databaseUrl: `postgres://postgres@127.0.0.1:${port}/hung`,
    dataDir: tmpdir(),
    log,
    migrate: false,
  });
  t.equal(db.engine, 'postgres');

  for (const attempt of [1, 2, 3]) {
    const started = Date.now();
    await t.rejects(db.ping(300), /timed out|timeout/i, `attempt ${attempt} rejects`);
    const took = Date.now() - started;
    t.ok(took >= 250 && took < 1500, `attempt ${attempt} answered in ${took} ms`);
  }
  t.equal(accepted, 3, 'each ping made its own connection');
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(sockets.size, 0, 'timed-out connections were torn down, not left hanging');

  const closing = Date.now();
  await db.close();
  t.ok(Date.now() - closing < 2000, 'close does not hang either');
});

t.test('ping rejects promptly when nothing listens', async (t) => {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));

  const db = await openDatabase({
    schema: DATABASE_SCHEMA,
    databaseUrl: `postgres://postgres@127.0.0.1:${port}/none`,
    dataDir: tmpdir(),
    log,
    migrate: false,
  });
  t.teardown(() => db.close());
  const started = Date.now();
  await t.rejects(db.ping(3000), /ECONNREFUSED|connect/i);
  t.ok(Date.now() - started < 2000, 'refused connections fail fast');
});

t.test('opening a server that is not there fails instead of hanging when migrating', async (t) => {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  await t.rejects(
    openDatabase({ schema: DATABASE_SCHEMA, databaseUrl: `postgres://postgres@127.0.0.1:${port}/none`, dataDir: tmpdir(), log }),
  );
});
