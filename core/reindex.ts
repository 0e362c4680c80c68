// `npm run reindex`: rebuilds the search index from every source (notes, files, transcripts, ...),
// with a progress bar on stderr. Run it after restoring a backup, after changing how text is
// indexed, or whenever search seems to miss something. On the embedded database (no DATABASE_URL)
// stop the server first: the embedded engine belongs to one process at a time.
import { ConfigError, loadConfig } from './kernel/config.ts';
import { openDatabase } from './db/database.ts';
import { ChangeFeed } from './db/change-feed.ts';
import { JobQueue } from './db/jobs.ts';
import { DATABASE_SCHEMA } from './domains.ts';
import { createDomains, createLogger, scopeCatalogue } from './app.ts';
import type { SearchService } from './domain/search/service.ts';

let config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`folio reindex: ${err.message}\n`);
    process.exit(2);
  }
  throw err;
}
// Quiet unless LOG_LEVEL says otherwise: the progress bar is the output.
const log = createLogger(process.env['LOG_LEVEL'] ? config : { ...config, logLevel: 'warn' as typeof config.logLevel }).child({
  process: 'reindex',
});
const where = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `the embedded database in ${config.dataDir}`;
const db = await openDatabase({
  schema: DATABASE_SCHEMA,
  databaseUrl: config.databaseUrl ?? undefined,
  dataDir: config.dataDir,
  log,
}).catch((err: unknown) => {
  process.stderr.write(
    `folio reindex: cannot open ${where}: ${err instanceof Error ? err.message : String(err)}` +
      (config.databaseUrl ? '\n' : '\n(on the embedded database, stop the server first)\n'),
  );
  process.exit(1);
});
const jobs = new JobQueue({ db, log, settings: config.jobs });
const domains = createDomains(config, {
  db,
  feed: new ChangeFeed(),
  jobs,
  log,
  scopes: scopeCatalogue(),
  publicUrl: () => (config.publicUrl ?? `http://${config.host}:${config.port}`).replace(/\/+$/, ''),
});
const search = domains.find((d) => d.domain.name === 'search')!.service as SearchService;

const tty = process.stderr.isTTY === true;
const started = Date.now();
let lastLine = 0;
const draw = (done: number, total: number) => {
  const now = Date.now();
  if (!tty && now - lastLine < 2000 && done < total) return;
  lastLine = now;
  const frac = total === 0 ? 1 : done / total;
  const width = 30;
  const bar = '#'.repeat(Math.round(frac * width)).padEnd(width, ' ');
  const rate = done / Math.max(0.001, (now - started) / 1000);
  const line = `[${bar}] ${Math.floor(frac * 100)}% ${done.toLocaleString('en')}/${total.toLocaleString('en')} resources, ${Math.round(rate)}/s`;
  process.stderr.write(tty ? `\r${line}\x1b[K` : `${line}\n`);
};

const controller = new AbortController();
process.once('SIGINT', () => controller.abort(new Error('interrupted')));
let code = 0;
try {
  process.stderr.write(`rebuilding the search index of ${where} (${search.sources.map((s) => s.kind).join(', ')})\n`);
  const r = await search.rebuild({ progress: draw, signal: controller.signal });
  if (tty) process.stderr.write('\n');
  process.stdout.write(
    `indexed ${r.indexed} resources, removed ${r.removed} gone ones, in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
  );
} catch (err) {
  if (tty) process.stderr.write('\n');
  process.stderr.write(`folio reindex: ${controller.signal.aborted ? 'interrupted; run it again to finish' : (err as Error).message}\n`);
  code = controller.signal.aborted ? 130 : 1;
} finally {
  await db.close();
}
process.exit(code);
