// Opens the database: an external PostgreSQL server (DATABASE_URL), or an embedded PGlite persisted
// under <dataDir>/pglite and served on a loopback socket. Either way the ORM talks to it through the
// same MikroORM postgresql driver (pg underneath), so every query and migration is the same SQL.
import { existsSync } from 'node:fs';
import { mkdir, open, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import pg from 'pg';
import type { Logger as PinoLogger } from 'pino';
import type { LogContext, Logger as OrmLogger, LoggerNamespace, LoggerOptions, MigrationObject } from '@mikro-orm/core';
import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import type { PgliteWorkerData, PgliteWorkerMessage } from './pglite-worker.ts';

export interface Database {
  /** The MikroORM instance (postgresql driver). Fork `orm.em` per unit of work. */
  orm: MikroORM;
  engine: 'postgres' | 'pglite';
  /**
   * Runs `select 1` on a connection of its own (never one of the pool the application's queries
   * wait for, so a busy pool does not delay it); rejects on error or when no answer arrives within
   * `timeoutMs`. Never hangs.
   */
  ping(timeoutMs: number): Promise<void>;
  /** Closes the ORM pool, and in PGlite mode the socket server and PGlite itself. Idempotent. */
  close(): Promise<void>;
}

/**
 * The tables the database holds: every domain hands its entities and migrations in (core/domains.ts),
 * so this layer knows no domain.
 */
export interface DatabaseSchema {
  entities: readonly unknown[];
  /** Applied in this order; each name is recorded once applied. */
  migrations: MigrationObject[];
}

export interface OpenDatabaseOptions {
  schema: DatabaseSchema;
  databaseUrl?: string | undefined;
  dataDir: string;
  log: PinoLogger;
  /** Apply pending migrations on open (default true). */
  migrate?: boolean;
  /** Open a target that holds an unfinished restore's marker (only `npm run restore` does). */
  restoring?: boolean;
}

/**
 * A restore in progress leaves a marker until it has loaded everything: a file in the PGlite
 * directory, or a table in PostgreSQL. A Folio does not open a database that holds one (a restore
 * killed mid-way leaves a target that would look like a valid, empty Folio); `npm run restore`
 * recognises it as its own unfinished run and redoes it.
 */
export const RESTORE_MARKER = 'folio.restoring';
export const RESTORE_TABLE = 'folio_restore_in_progress';

export class UnfinishedRestore extends Error {
  override name = 'UnfinishedRestore';
  constructor(where: string) {
    super(
      `${where} holds an unfinished restore (one was stopped before it ended); Folio does not start on a partly restored database. ` +
        'Run `npm run restore -- --from <archive>` again with the same settings to redo it, or point DATA_DIR/DATABASE_URL elsewhere.',
    );
  }
}

/**
 * PostgreSQL's restore marker is looked for where the schema is first touched (migrating: what
 * `npm start`, the worker and `npm run migrate` do), not on open: opening stays free of queries, so
 * a database that is down is reported by the health check instead of hanging the open.
 */
async function refuseUnfinishedRestore(orm: MikroORM): Promise<void> {
  const [row] = await orm.em
    .getConnection()
    .execute<{ marker: string | null }[]>(`select to_regclass('public.${RESTORE_TABLE}')::text as marker`);
  if (row?.marker) throw new UnfinishedRestore('the PostgreSQL database (DATABASE_URL)');
}

/** How long close() waits for the pool to end before it gives up on connections stuck in a query. */
const CLOSE_TIMEOUT_MS = 5_000;

/** How long the health check's own connection may take to open at start. */
const WARM_TIMEOUT_MS = 5_000;

/** How long a pooled query may wait for a connection (pool slot or TCP connect) before failing. */
const CONNECT_TIMEOUT_MS = 15_000;

export async function openDatabase(opts: OpenDatabaseOptions): Promise<Database> {
  const log = opts.log.child({ component: 'db' });
  const ormLog = opts.log.child({ component: 'orm' });
  const migrate = opts.migrate ?? true;
  if (!opts.databaseUrl && !opts.restoring && existsSync(path.join(opts.dataDir, 'pglite', RESTORE_MARKER))) {
    throw new UnfinishedRestore(`PGlite at ${path.join(opts.dataDir, 'pglite')}`);
  }
  const db = opts.databaseUrl
    ? await openPostgres(opts.databaseUrl, opts.schema, ormLog)
    : await openPglite(path.join(opts.dataDir, 'pglite'), opts.schema, log, ormLog);
  if (migrate) {
    try {
      const applied = await runMigrations(db.orm);
      log.info({ engine: db.engine, applied }, applied.length ? 'migrations applied' : 'schema up to date');
    } catch (err) {
      await db.close().catch(() => {});
      throw err;
    }
  }
  return db;
}

/** Applies pending migrations; returns the names applied, in order. */
export async function runMigrations(orm: MikroORM): Promise<string[]> {
  // Nodes starting together against one PostgreSQL server would race to apply the same migrations:
  // a session advisory lock (on its own connection, held across the migrator's) lets one apply them
  // while the others wait, then find nothing left. The embedded engine has one backend: no lock.
  const url = orm.config.get('clientUrl');
  const lock = url ? new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS }) : undefined;
  if (lock) {
    await lock.connect();
    await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
  }
  try {
    await refuseUnfinishedRestore(orm);
    const done = await orm.migrator.up();
    return done.map((m) => m.name);
  } finally {
    // Closing the session releases its lock.
    await lock?.end().catch(() => {});
  }
}

/** pg_advisory_lock key held while migrations run (any fixed number, the same on every node). */
const MIGRATION_LOCK_KEY = 7_405_118_301;

function baseOptions(schema: DatabaseSchema, log: PinoLogger): Options {
  return {
    entities: [...schema.entities] as NonNullable<Options['entities']>,
    // The domains' migrations, handed in; names are their file names without extension.
    migrations: {
      migrationsList: schema.migrations,
      // No schema snapshot: it would be written next to the migrations on every run.
      snapshot: false,
      transactional: true,
      allOrNothing: true,
    },
    extensions: [Migrator],
    // Every service method forks its own EntityManager; a stray use of the global one is a bug.
    allowGlobalContext: false,
    loggerFactory: (options) => new PinoOrmLogger(log, options),
  };
}

async function openPostgres(databaseUrl: string, schema: DatabaseSchema, ormLog: PinoLogger): Promise<Database> {
  const orm = await MikroORM.init({
    ...baseOptions(schema, ormLog),
    clientUrl: databaseUrl,
    pool: { min: 0, max: 10 },
    // Merged into pg's pool config. connectionString lets pg honour everything in the URL
    // (sslmode and friends), which MikroORM's own URL parsing ignores.
    // (It also wins over the database name, so MikroORM's create-if-missing cannot work: off.
    // The database must exist.)
    driverOptions: { connectionString: databaseUrl, connectionTimeoutMillis: CONNECT_TIMEOUT_MS },
    ensureDatabase: false,
  });
  let closed: Promise<void> | undefined;
  const probe = new PingConnection({ connectionString: databaseUrl });
  probe.warm(WARM_TIMEOUT_MS);
  return {
    orm,
    engine: 'postgres',
    ping: (timeoutMs) => probe.ping(timeoutMs),
    // The pool's end waits for every checked-out connection; one whose query the server never
    // answers (a hung server, a dropped packet) would hold the close forever. Bounded instead.
    close: () => {
      probe.close();
      return (closed ??= withTimeout(orm.close(true), CLOSE_TIMEOUT_MS, 'closing the database pool').catch((err: unknown) =>
        ormLog.warn({ err }, 'database pool did not close cleanly; leaving its connections behind'),
      ));
    },
  };
}

/**
 * The health check's own connection: opened on first use, kept while it works, destroyed when a
 * ping fails or times out (a hung server never answers on it again), so the next ping starts clean.
 * Concurrent pings share the one in flight. Kept out of the ORM's pool on purpose: a pool whose
 * connections are all taken by long report or search queries makes its callers queue, and a health
 * check queued there would call a busy database down.
 */
class PingConnection {
  readonly #config: pg.ClientConfig;
  #client: pg.Client | undefined;
  #inflight: Promise<void> | undefined;
  #closed = false;

  constructor(config: pg.ClientConfig) {
    this.#config = config;
  }

  /** Connects ahead of the first ping (in the background; a failure is the first ping's to report). */
  warm(timeoutMs: number): void {
    this.ping(timeoutMs).catch(() => {});
  }

  /**
   * Each caller gets its own deadline. The attempt in flight is shared; a caller whose deadline
   * passes gives up on it for everyone: its connection is destroyed, and the next ping starts clean.
   */
  ping(timeoutMs: number): Promise<void> {
    if (this.#closed) return Promise.reject(new Error('the database is closed'));
    let attempt = this.#inflight;
    if (!attempt) {
      const started: Promise<void> = this.#attempt(timeoutMs).finally(() => {
        if (this.#inflight === started) this.#inflight = undefined;
      });
      this.#inflight = attempt = started;
    }
    const shared = attempt;
    return withTimeout(shared, timeoutMs, 'database ping').catch((err: unknown) => {
      if (this.#inflight === shared) {
        this.#inflight = undefined;
        if (this.#client) this.#drop(this.#client);
      }
      throw err;
    });
  }

  async #attempt(timeoutMs: number): Promise<void> {
    let client = this.#client;
    try {
      await withTimeout(
        (async () => {
          if (!client) {
            const fresh = new pg.Client({ ...this.#config, connectionTimeoutMillis: timeoutMs });
            fresh.on('error', () => this.#drop(fresh)); // a late socket error must not crash the process
            this.#client = client = fresh;
            await fresh.connect();
          }
          await client.query('select 1');
        })(),
        timeoutMs,
        'database ping',
      );
    } catch (err) {
      if (client) this.#drop(client);
      throw err;
    }
  }

  #drop(client: pg.Client): void {
    if (this.#client === client) this.#client = undefined;
    // end() waits for the server to close the socket; a hung server never does. Destroy it.
    const stream = (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream;
    stream?.destroy();
  }

  close(): void {
    this.#closed = true;
    const client = this.#client;
    this.#client = undefined;
    if (client) client.end().catch(() => {});
  }
}

async function openPglite(dir: string, schema: DatabaseSchema, log: PinoLogger, ormLog: PinoLogger): Promise<Database> {
  await mkdir(dir, { recursive: true });
  const releaseLock = await lockDataDir(dir);
  let engine: PgliteWorker | undefined;
  let orm: MikroORM | undefined;
  const shutdown = async () => {
    // Order matters: the ORM's connection first (a clean goodbye to the socket server), then the
    // worker (stops the server, rolls back anything left open, flushes PGlite to disk).
    try {
      await orm?.close(true);
    } finally {
      try {
        await rm(path.join(dir, PORT_FILE), { force: true });
        await engine?.stop();
      } finally {
        await releaseLock();
      }
    }
  };
  try {
    engine = await startPgliteWorker(dir, log);
    log.info({ dataDir: dir, port: engine.port, ms: engine.startMs }, 'embedded PGlite started');
    await writeFile(path.join(dir, PORT_FILE), JSON.stringify({ pid: process.pid, port: engine.port } satisfies PglitePortFile));
    orm = await MikroORM.init({
      ...baseOptions(schema, ormLog),
      host: '127.0.0.1',
      port: engine.port,
      user: 'postgres',
      password: '',
      dbName: 'postgres',
      // PGlite is one backend session: exactly one pooled connection, kept open for good.
      pool: { min: 0, max: 1, idleTimeoutMillis: 0 },
      driverOptions: { connectionTimeoutMillis: CONNECT_TIMEOUT_MS },
      ensureDatabase: false,
    });
  } catch (err) {
    await shutdown().catch(() => {});
    throw err;
  }
  const theOrm = orm;
  // The engine runs one statement at a time, but its socket server takes its statements from every
  // connection in turn: on a connection of its own the ping waits for the statement running, not
  // for every query queued in the ORM's one-connection pool. A statement (or a transaction) that
  // holds the engine past the deadline still makes it time out.
  const probe = new PingConnection({ host: '127.0.0.1', port: engine.port, user: 'postgres', password: '', database: 'postgres' });
  probe.warm(WARM_TIMEOUT_MS);
  let closed: Promise<void> | undefined;
  return {
    orm: theOrm,
    engine: 'pglite',
    ping: (timeoutMs) => probe.ping(timeoutMs),
    close: () => {
      probe.close();
      return (closed ??= shutdown());
    },
  };
}

interface PgliteWorker {
  port: number;
  startMs: number;
  stop(): Promise<void>;
}

/** Starts core/db/pglite-worker.ts and waits until its socket server listens. */
async function startPgliteWorker(dir: string, log: PinoLogger): Promise<PgliteWorker> {
  const worker = new Worker(new URL('./pglite-worker.ts', import.meta.url), {
    workerData: { dir } satisfies PgliteWorkerData,
  });
  const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
  const ready = await new Promise<{ port: number; ms: number }>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the PGlite worker exited (code ${code}) before it was ready`)));
    worker.once('message', (msg: PgliteWorkerMessage) => {
      if (msg.type === 'ready') resolve(msg);
      else reject(new Error(`the PGlite worker did not start: ${JSON.stringify(msg)}`));
    });
  }).catch(async (err: unknown) => {
    await worker.terminate();
    throw err;
  });
  worker.removeAllListeners('error').removeAllListeners('message');
  worker.on('error', (err) => log.error({ err }, 'the PGlite worker failed'));
  worker.on('message', (msg: PgliteWorkerMessage) => {
    if (msg.type === 'close-error') log.error({ error: msg.message }, 'closing PGlite failed');
  });
  let stopping: Promise<void> | undefined;
  return {
    port: ready.port,
    startMs: ready.ms,
    stop: () =>
      (stopping ??= (async () => {
        worker.postMessage({ type: 'close' });
        const timer = setTimeout(() => {
          log.error('the PGlite worker did not stop within 30 s; terminating it');
          void worker.terminate();
        }, 30_000);
        try {
          await exited;
        } finally {
          clearTimeout(timer);
        }
      })()),
  };
}

// --- helpers -------------------------------------------------------------------------------------

function withTimeout<T>(work: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${timeoutMs} ms`)), timeoutMs);
  });
  work.catch(() => {}); // if the timer wins, a later rejection of `work` is not unhandled
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Next to the lock: the loopback port the embedded PGlite of the process holding the lock is served
 * on, so that `npm run backup` can take its snapshot through the running server (core/backup/).
 */
export const PORT_FILE = 'folio.port';
/** The lock file's name inside <dataDir>/pglite; it holds the owner's pid. */
export const LOCK_FILE = 'folio.lock';
export interface PglitePortFile {
  pid: number;
  port: number;
}

const openDirs = new Set<string>();

/**
 * Two PGlite instances on one data directory corrupt it (e.g. `npm run migrate` while the server
 * runs). A pid file refuses the second opener, in this process or another; a stale one is taken over.
 */
async function lockDataDir(dir: string): Promise<() => Promise<void>> {
  const key = path.resolve(dir);
  if (openDirs.has(key)) throw new Error(`PGlite data directory ${key} is already open in this process`);
  const lockFile = path.join(key, LOCK_FILE);
  for (let attempt = 0; ; attempt++) {
    try {
      const fh = await open(lockFile, 'wx');
      await fh.writeFile(String(process.pid));
      await fh.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
      const pid = Number((await readFile(lockFile, 'utf8').catch(() => '')).trim());
      if (pid && pid !== process.pid && processAlive(pid)) {
        throw new Error(`PGlite data directory ${key} is in use by process ${pid}`, { cause: err });
      }
      await rm(lockFile, { force: true }); // stale: its owner is gone
    }
  }
  openDirs.add(key);
  return async () => {
    openDirs.delete(key);
    await rm(lockFile, { force: true });
  };
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** MikroORM's logger interface, written to pino. Queries go to `trace`, ORM chatter to `debug`. */
class PinoOrmLogger implements OrmLogger {
  readonly #log: PinoLogger;
  #debugMode: boolean | LoggerNamespace[];

  constructor(log: PinoLogger, options: LoggerOptions) {
    this.#log = log;
    this.#debugMode = options.debugMode ?? false;
  }

  log(namespace: string, message: string, context?: LogContext): void {
    // The migrator marks its "Applied ..." lines `enabled: true`: those are worth an info line.
    if (context?.enabled === true) this.#log.info({ ns: namespace }, stripAnsi(message));
    else if (this.#log.isLevelEnabled('debug')) this.#log.debug({ ns: namespace }, stripAnsi(message));
  }

  error(namespace: string, message: string): void {
    this.#log.error({ ns: namespace }, stripAnsi(message));
  }

  warn(namespace: string, message: string): void {
    this.#log.warn({ ns: namespace }, stripAnsi(message));
  }

  logQuery(context: LogContext): void {
    if (context.level === 'error') {
      this.#log.debug({ sql: context.query, took: context.took }, 'query failed');
    } else if (this.#log.isLevelEnabled('trace')) {
      this.#log.trace({ sql: context.query, took: context.took, results: context.results }, 'query');
    }
  }

  setDebugMode(debugMode: boolean | LoggerNamespace[]): void {
    this.#debugMode = debugMode;
  }

  isEnabled(namespace: LoggerNamespace, context?: LogContext): boolean {
    if (context?.enabled !== undefined) return context.enabled;
    if (namespace === 'query' || namespace === 'query-params') return this.#log.isLevelEnabled('trace');
    const mode = this.#debugMode;
    return mode === true || (Array.isArray(mode) && mode.includes(namespace)) || this.#log.isLevelEnabled('debug');
  }
}

function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;]*m/g, '');
}
