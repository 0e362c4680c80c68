// Where a backup reads from and a restore writes to: the settings `npm start` uses (DATABASE_URL,
// or the embedded PGlite under DATA_DIR; the blob store's settings).
//
// An embedded PGlite is locked by the process that has it open (core/db/database.ts). When that is a
// running Folio, the backup connects to the loopback port it publishes next to the lock and takes its
// snapshot there: the socket server runs one connection's transaction at a time, so the dump sees
// one consistent state and the server's writes wait for it. When no Folio runs, it opens the data
// directory itself (holding the lock, so none can start meanwhile).
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import type { Logger } from 'pino';
import { LOCK_FILE, openDatabase, PORT_FILE, processAlive, type Database, type PglitePortFile } from '../db/database.ts';
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

/** Is the restore target empty? Throws a clear error when it is not. */
export async function assertEmptyTarget(settings: BackupSettings): Promise<void> {
  const where = describe(settings);
  if (!settings.databaseUrl) {
    const dir = path.join(settings.dataDir, 'pglite');
    const entries = await readdir(dir).catch(() => [] as string[]);
    if (entries.length > 0) {
      throw new BackupError(`${where}: not empty; restore goes into an empty data directory only (set DATA_DIR to a new one)`);
    }
    return;
  }
  const client = await connect({ connectionString: settings.databaseUrl });
  try {
    const { rows } = await client.query<{ n: number }>(
      `select count(*)::int as n from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where c.relkind in ('r', 'p', 'v', 'm', 'S')
          and n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg\\_%'`,
    );
    if (rows[0]!.n > 0) {
      throw new BackupError(
        `${where}: the database is not empty (${rows[0]!.n} tables, views or sequences); restore goes into an empty database only (create a new one: createdb ...)`,
      );
    }
  } finally {
    await client.end();
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
  });
}
