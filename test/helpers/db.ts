// A throwaway database per test file, on whichever engine the run is for:
//   DATABASE_URL set   -> a fresh `folio_t_<random>` database on that server, dropped on cleanup;
//   DATABASE_URL unset -> an embedded PGlite in a fresh temp dir, removed on cleanup.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino, { type Logger } from 'pino';
import { openDatabase, type Database } from '../../core/db/database.ts';
import { DATABASE_SCHEMA } from '../../core/domains.ts';

export type TestDatabase = Database & { cleanup(): Promise<void>; dataDir: string };

/** Quiet unless TEST_LOG_LEVEL says otherwise. */
export function testLogger(): Logger {
  return pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' });
}

export async function openTestDatabase(opts: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const serverUrl = process.env['DATABASE_URL'] || undefined;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'folio-test-'));
  const log = testLogger();
  const migrate = opts.migrate ?? true;

  if (!serverUrl) {
    let db: Database;
    try {
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
  await admin(serverUrl, `create database ${dbName}`);
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
