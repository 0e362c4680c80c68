// `npm run migrate`: applies pending migrations to DATABASE_URL, or to the embedded PGlite under
// DATA_DIR (default ./data) when DATABASE_URL is unset. Prints what it applied; exits 0 on success.
import path from 'node:path';
import pino from 'pino';
import { openDatabase, runMigrations, type Database } from './db/database.ts';
import { DATABASE_SCHEMA } from './domains.ts';

const databaseUrl = process.env['DATABASE_URL'] || undefined;
const dataDir = path.resolve(process.env['DATA_DIR'] || './data');
const log = pino({ level: process.env['LOG_LEVEL'] || 'warn' });
const where = databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `PGlite at ${path.join(dataDir, 'pglite')}`;

let db: Database | undefined;
try {
  db = await openDatabase({ schema: DATABASE_SCHEMA, databaseUrl, dataDir, log, migrate: false });
  const applied = await runMigrations(db.orm);
  if (applied.length === 0) {
    console.log(`${where}: schema up to date, nothing to apply`);
  } else {
    console.log(`${where}: applied ${applied.length} migration(s):`);
    for (const name of applied) console.log(`  ${name}`);
  }
} catch (err) {
  console.error(`${where}: migration failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
} finally {
  await db?.close();
}
