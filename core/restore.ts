// `npm run restore -- --from <file>`: an archive made by `npm run backup` into the empty database
// (DATABASE_URL) or empty data directory (DATA_DIR) that `npm start` would use, and the blob store
// its settings name. Checks everything before it writes anything (core/backup/load.ts).
import { parseArgs } from 'node:util';
import pino from 'pino';
import { ConfigError, loadConfig } from './kernel/config.ts';
import { describe } from './backup/connect.ts';
import { restoreBackup } from './backup/load.ts';

const usage = 'usage: npm run restore -- --from <file.zip>';
let args;
try {
  args = parseArgs({ options: { from: { type: 'string' } }, strict: true }).values;
} catch (err) {
  process.stderr.write(`restore: ${(err as Error).message}\n${usage}\n`);
  process.exit(2);
}
if (!args.from) {
  process.stderr.write(`${usage}\n`);
  process.exit(2);
}
let config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`restore: ${err.message}\n`);
    process.exit(2);
  }
  throw err;
}
const log = pino({ level: process.env['LOG_LEVEL'] || 'warn' });
try {
  const s = await restoreBackup(config, { from: args.from, log });
  if (s.redone) console.log(`${s.where}: an unfinished restore was found there; it was cleared and redone`);
  console.log(`${s.where}: restored ${s.tables} tables (${s.rows} rows) and ${s.blobs} file blobs from ${args.from}`);
  if (s.migrated.length) console.log(`then applied ${s.migrated.length} newer migration(s): ${s.migrated.join(', ')}`);
} catch (err) {
  console.error(`restore failed (${describe(config)}): ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
