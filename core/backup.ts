// `npm run backup -- --out <file> [--blobs include|reference]`: one archive of the database and
// every file blob it references (core/backup/), with the settings `npm start` uses (DATABASE_URL or
// DATA_DIR, the blob store's). Safe while Folio runs. Prints a summary; exits 0 on success.
import { parseArgs } from 'node:util';
import pino from 'pino';
import { ConfigError, loadConfig } from './kernel/config.ts';
import { describe } from './backup/connect.ts';
import { createBackup } from './backup/dump.ts';

const usage = 'usage: npm run backup -- --out <file.zip> [--blobs include|reference]';
let args;
try {
  args = parseArgs({ options: { out: { type: 'string' }, blobs: { type: 'string' } }, strict: true }).values;
} catch (err) {
  process.stderr.write(`backup: ${(err as Error).message}\n${usage}\n`);
  process.exit(2);
}
if (!args.out || (args.blobs !== undefined && args.blobs !== 'include' && args.blobs !== 'reference')) {
  process.stderr.write(`${usage}\n`);
  process.exit(2);
}
let config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`backup: ${err.message}\n`);
    process.exit(2);
  }
  throw err;
}
const log = pino({ level: process.env['LOG_LEVEL'] || 'warn' });
try {
  const s = await createBackup(config, { out: args.out, blobs: args.blobs === 'reference' ? 'reference' : 'include', log });
  console.log(
    `${describe(config)}: backed up ${s.tables} tables (${s.rows} rows) and ${s.blobs} file blobs (${s.blobBytes} bytes) to ${s.out} ` +
      `(${s.archiveBytes} bytes; database snapshot ${s.snapshotMs} ms, total ${s.totalMs} ms)`,
  );
} catch (err) {
  console.error(`backup failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
