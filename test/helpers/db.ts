// A throwaway database per test file, on whichever engine the run is for:
//   DATABASE_URL set   -> a `folio_t_<random>` database on that server, dropped on cleanup;
//   DATABASE_URL unset -> an embedded PGlite in a fresh temp dir, removed on cleanup.
// By default it starts as a copy of the migrated template (test/helpers/template.ts), so opening it
// finds every migration applied; `fresh: true` starts from an empty database that `openDatabase`
// migrates, the path a first start takes.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino, { type Logger } from 'pino';
import { openDatabase, type Database } from '../../core/db/database.ts';
import { DATABASE_SCHEMA } from '../../core/domains.ts';
import { copyPgliteTemplate, createFromPostgresTemplate } from './template.ts';

export type TestDatabase = Database & { cleanup(): Promise<void>; dataDir: string };

/** Quiet unless TEST_LOG_LEVEL says otherwise. */
export function testLogger(): Logger {
  return pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' });
}

export interface TestDatabaseOptions {
  /** Apply pending migrations on open (default true). `false` implies an empty database. */
  migrate?: boolean;
  /** Start from an empty database instead of a copy of the migrated template (default false). */
  fresh?: boolean;
}

export async function openTestDatabase(opts: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const serverUrl = process.env['DATABASE_URL'] || undefined;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'folio-test-'));
  const log = testLogger();
  const migrate = opts.migrate ?? true;
  const fromTemplate = migrate && !opts.fresh;

  if (!serverUrl) {
    let db: Database;
    try {
      if (fromTemplate) await copyPgliteTemplate(dataDir, log);
      db = await openDatabase({ schema: DATABASE_SCHEMA, dataDir, log, migrate });
    } catch (err) {
      await rm(dataDir, { recursive: true, force: true });
      throw err;
    }
    return Object.assign(db, {
      dataDir,
      cleanup: async () => {
        await db.close();
        await rm(dataDir, { recursive: true, force: true });
      },
    });
  }

  const dbName = `folio_t_${randomBytes(6).toString('hex')}`;
  try {
    if (fromTemplate) await createFromPostgresTemplate(serverUrl, dbName, log);
    else await admin(serverUrl, `create database ${dbName}`);
  } catch (err) {
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
  const url = new URL(serverUrl);
  url.pathname = `/${dbName}`;
  let db: Database;
  try {
    db = await openDatabase({ schema: DATABASE_SCHEMA, databaseUrl: url.toString(), dataDir, log, migrate });
  } catch (err) {
    await admin(serverUrl, `drop database if exists ${dbName} with (force)`).catch(() => {});
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
  return Object.assign(db, {
    dataDir,
    cleanup: async () => {
      try {
        await db.close();
      } finally {
        await admin(serverUrl, `drop database if exists ${dbName} with (force)`);
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  });
}

async function admin(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
