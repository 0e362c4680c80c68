// Where a backup reads from and a restore writes to: the settings `npm start` uses (DATABASE_URL,
// or the embedded PGlite under DATA_DIR; the blob store's settings).
//
// An embedded PGlite is locked by the process that has it open (core/db/database.ts). When that is a
// running Folio, the backup connects to the loopback port it publishes next to the lock and takes its
// snapshot there: the socket server runs one connection's transaction at a time, so the dump sees
// one consistent state and the server's writes wait for it. When no Folio runs, it opens the data
// directory itself (holding the lock, so none can start meanwhile).
import { existsSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import type { Logger } from 'pino';
import {
  LOCK_FILE,
  openDatabase,
  PORT_FILE,
  processAlive,
  RESTORE_MARKER,
  RESTORE_TABLE,
  type Database,
  type PglitePortFile,
} from '../db/database.ts';
import { lazyBlobStore, type BlobStore } from '../domain/files/blob-store.ts';
import { DiskBlobStore } from '../domain/files/disk-store.ts';
import { DATABASE_SCHEMA } from '../domains.ts';
import type { Config } from '../kernel/config.ts';
import { BackupError } from './format.ts';

export type BackupSettings = Pick<Config, 'databaseUrl' | 'dataDir' | 'files'>;

export interface Session {
  engine: 'postgres' | 'pglite';
  /** One connection of its own (the dump's transaction runs on it). */
  client: pg.ClientBase;
  /** For messages: PostgreSQL (DATABASE_URL), or the PGlite directory. */
  where: string;
  close(): Promise<void>;
}

export function describe(settings: BackupSettings): string {
  return settings.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `PGlite at ${path.join(settings.dataDir, 'pglite')}`;
}

export function blobStoreOf(settings: BackupSettings): BlobStore {
  const b = settings.files.blobStore;
  return b.kind === 's3'
    ? lazyBlobStore('s3', async () => (await import('../domain/files/s3-store.ts')).S3BlobStore.fromSettings(b.s3))
    : new DiskBlobStore(path.join(settings.dataDir, 'blobs'));
}

async function connect(config: pg.ClientConfig): Promise<pg.Client> {
  const client = new pg.Client({ ...config, connectionTimeoutMillis: 15_000 });
  client.on('error', () => {}); // a dropped connection fails the query in flight; not the process
  await client.connect();
  return client;
}

function loopback(port: number): pg.ClientConfig {
  return { host: '127.0.0.1', port, user: 'postgres', password: '', database: 'postgres' };
}

/** The port published by the process holding the PGlite lock, or null when no live process holds it. */
async function runningPglite(dir: string): Promise<{ pid: number; port: number | null } | null> {
  const pid = Number((await readFile(path.join(dir, LOCK_FILE), 'utf8').catch(() => '')).trim());
  if (!pid || !processAlive(pid)) return null;
  const file = await readFile(path.join(dir, PORT_FILE), 'utf8').catch(() => null);
  const published = file ? (JSON.parse(file) as PglitePortFile) : null;
  return { pid, port: published && published.pid === pid ? published.port : null };
}

/** Opens the database to back up. */
export async function openSource(settings: BackupSettings, log: Logger): Promise<Session> {
  const where = describe(settings);
  if (settings.databaseUrl) {
    const client = await connect({ connectionString: settings.databaseUrl });
    return { engine: 'postgres', client, where, close: () => client.end() };
  }
  const dir = path.join(settings.dataDir, 'pglite');
  if (!existsSync(path.join(dir, 'PG_VERSION'))) throw new BackupError(`${where}: no database there (check DATA_DIR)`);
  const running = await runningPglite(dir);
  if (running) {
    if (running.port === null) {
      throw new BackupError(
        `${where}: in use by process ${running.pid}, which publishes no port to back up through; stop it and run again`,
      );
    }
    const client = await connect(loopback(running.port));
    return { engine: 'pglite', client, where, close: () => client.end() };
  }
  const db = await openDatabase({ schema: DATABASE_SCHEMA, dataDir: settings.dataDir, log, migrate: false });
  try {
    const published = JSON.parse(await readFile(path.join(dir, PORT_FILE), 'utf8')) as PglitePortFile;
    const client = await connect(loopback(published.port));
    return {
      engine: 'pglite',
      client,
      where,
      close: async () => {
        await client.end().catch(() => {});
        await db.close();
      },
    };
  } catch (err) {
    await db.close();
    throw err;
  }
}

/** The restore's hold on its target, from before the emptiness check to its end. */
export interface TargetClaim {
  /** An unfinished earlier restore was found and cleared (its marker, and all it had written). */
  redone: boolean;
  /** Marks the target "restore in progress" (before its first write). */
  mark(from: string): Promise<void>;
  /** Removes the mark: the target is a whole Folio database. */
  finish(): Promise<void>;
  /** After a failure: removes what this run wrote (the target was empty, or an unfinished restore, when it began). */
  undo(): Promise<void>;
  /** Lets go of the lock. */
  release(): Promise<void>;
}

/** An advisory lock key only restores take (a second restore into the same database is refused). */
const RESTORE_LOCK_KEY = 0x466f6c696f; // "Folio"

/**
 * Takes the target for a restore: the data directory's lock (PGlite) or an advisory lock
 * (PostgreSQL), then checks that it is empty (or holds only an unfinished restore of an earlier,
 * dead run, which is cleared). Throws a clear error when it is in use or not empty.
 */
export async function claimTarget(settings: BackupSettings, log: Logger): Promise<TargetClaim> {
  return settings.databaseUrl ? claimPostgres(settings, settings.databaseUrl, log) : claimPglite(settings, log);
}

async function claimPglite(settings: BackupSettings, log: Logger): Promise<TargetClaim> {
  const where = describe(settings);
  const dir = path.join(settings.dataDir, 'pglite');
  const lockFile = path.join(dir, LOCK_FILE);
  const existed = existsSync(dir);
  await mkdir(dir, { recursive: true });
  const lock = async (): Promise<void> => {
    for (let attempt = 0; ; attempt++) {
      try {
        await writeFile(lockFile, String(process.pid), { flag: 'wx' });
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
        const pid = Number((await readFile(lockFile, 'utf8').catch(() => '')).trim());
        if (pid === process.pid) return;
        if (pid && processAlive(pid)) {
          throw new BackupError(`${where}: in use by process ${pid} (a running Folio, or another restore); stop it first`);
        }
        await rm(lockFile, { force: true }); // stale: its owner is gone
      }
    }
  };
  const unlock = async () => {
    const pid = Number((await readFile(lockFile, 'utf8').catch(() => '')).trim());
    if (pid === process.pid) await rm(lockFile, { force: true });
  };
  const clear = async () => {
    for (const name of await readdir(dir)) {
      if (name !== LOCK_FILE && name !== RESTORE_MARKER) await rm(path.join(dir, name), { recursive: true, force: true });
    }
    await rm(path.join(dir, RESTORE_MARKER), { force: true });
  };
  try {
    await lock();
  } catch (err) {
    if (!existed) await rm(dir, { recursive: true, force: true }).catch(() => {});
    throw err;
  }
  let redone = false;
  try {
    const entries = (await readdir(dir)).filter((n) => n !== LOCK_FILE);
    if (entries.includes(RESTORE_MARKER)) {
      log.warn({ where }, 'clearing an unfinished restore (its process is gone) to redo it');
      await clear();
      redone = true;
    } else if (entries.length > 0) {
      throw new BackupError(`${where}: not empty; restore goes into an empty data directory only (set DATA_DIR to a new one)`);
    }
  } catch (err) {
    await unlock();
    throw err;
  }
  return {
    redone,
    async mark(from) {
      const fh = await open(path.join(dir, RESTORE_MARKER), 'w');
      try {
        await fh.writeFile(JSON.stringify({ pid: process.pid, from, startedAt: new Date().toISOString() }));
        await fh.sync();
      } finally {
        await fh.close();
      }
    },
    async finish() {
      await rm(path.join(dir, RESTORE_MARKER), { force: true });
    },
    async undo() {
      // Closing the database let go of the lock: take it again, and touch nothing if another has it.
      await lock();
      if (!existed) await rm(dir, { recursive: true, force: true });
      else await clear();
    },
    async release() {
      await unlock();
      if (!existed) await rmdir(dir).catch(() => {}); // made by this run, and left empty
    },
  };
}

async function claimPostgres(settings: BackupSettings, url: string, log: Logger): Promise<TargetClaim> {
  const where = describe(settings);
  const client = await connect({ connectionString: url });
  let held = false;
  const dropAll = async () => {
    const { rows } = await client.query<{ sql: string }>(
      `select format('drop schema %I cascade', nspname) as sql from pg_namespace n
        where nspname not in ('public', 'pg_catalog', 'information_schema') and nspname not like 'pg\\_%'
          and exists (select 1 from pg_class c where c.relnamespace = n.oid)
       union all
       select format('drop table if exists %I.%I cascade', schemaname, tablename) from pg_tables where schemaname = 'public'
       union all
       select format('drop sequence if exists %I.%I cascade', schemaname, sequencename) from pg_sequences where schemaname = 'public'`,
    );
    for (const r of rows) await client.query(r.sql);
  };
  try {
    const { rows: got } = await client.query<{ ok: boolean }>('select pg_try_advisory_lock($1::bigint) as ok', [RESTORE_LOCK_KEY]);
    if (!got[0]!.ok) throw new BackupError(`${where}: another restore is running into this database`);
    held = true;
    const { rows } = await client.query<{ n: number; marker: string | null }>(
      `select count(*)::int as n, to_regclass('public.${RESTORE_TABLE}')::text as marker
         from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where c.relkind in ('r', 'p', 'v', 'm', 'S')
          and n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg\\_%'`,
    );
    let redone = false;
    if (rows[0]!.marker) {
      // An earlier restore's: its session is gone (it would hold the advisory lock), and everything
      // here was made by it (the database was empty when it began).
      log.warn({ where }, 'clearing an unfinished restore (its process is gone) to redo it');
      await dropAll();
      redone = true;
    } else if (rows[0]!.n > 0) {
      throw new BackupError(
        `${where}: the database is not empty (${rows[0]!.n} tables, views or sequences); restore goes into an empty database only (create a new one: createdb ...)`,
      );
    }
    return {
      redone,
      async mark(from) {
        await client.query(
          `create table public.${RESTORE_TABLE} (pid integer not null, archive text not null, started_at timestamptz not null default now())`,
        );
        await client.query(`insert into public.${RESTORE_TABLE} (pid, archive) values ($1, $2)`, [process.pid, from]);
        // Still empty but for the mark (a Folio started on the empty database while the archive
        // was verified would have made its tables): then this restore leaves it alone.
        const { rows: now } = await client.query<{ n: number }>(
          `select count(*)::int as n from pg_class c join pg_namespace n on n.oid = c.relnamespace
            where c.relkind in ('r', 'p', 'v', 'm', 'S') and c.oid <> 'public.${RESTORE_TABLE}'::regclass
              and n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg\\_%'`,
        );
        if (now[0]!.n > 0) {
          await client.query(`drop table public.${RESTORE_TABLE}`);
          throw new BackupError(`${where}: the database is no longer empty (a Folio started on it meanwhile?); nothing was restored`);
        }
      },
      async finish() {
        await client.query(`drop table public.${RESTORE_TABLE}`);
      },
      async undo() {
        await dropAll();
        log.warn('the restore failed; the tables it had created were dropped');
      },
      async release() {
        await client.end().catch(() => {}); // the advisory lock ends with the session
      },
    };
  } catch (err) {
    if (held) await client.query('select pg_advisory_unlock($1::bigint)', [RESTORE_LOCK_KEY]).catch(() => {});
    await client.end().catch(() => {});
    throw err;
  }
}

/** Opens the (empty) restore target with no migration applied yet. */
export function openTarget(settings: BackupSettings, log: Logger): Promise<Database> {
  return openDatabase({
    schema: DATABASE_SCHEMA,
    databaseUrl: settings.databaseUrl ?? undefined,
    dataDir: settings.dataDir,
    log,
    migrate: false,
    restoring: true,
  });
}
