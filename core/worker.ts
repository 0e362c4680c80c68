// `npm run worker`: a process that only runs background jobs, for scaling the work out beside the
// servers (which then run with JOBS_IN_PROCESS=false, or keep working too). PostgreSQL only: the
// embedded PGlite belongs to the one server process that opened it.
import { ConfigError, loadConfig } from './kernel/config.ts';
import { openDatabase } from './db/database.ts';
import { ChangeFeed } from './db/change-feed.ts';
import { JobQueue } from './db/jobs.ts';
import { DATABASE_SCHEMA } from './domains.ts';
import { createDomains, createLogger, scopeCatalogue } from './app.ts';
import { logProcessEvents } from './crash.ts';
import { flushTracing } from './observability/tracing-wanted.ts';

// As core/main.ts: under npm (`npm run worker`) a parent gone without forwarding its signal must not
// leave this worker running on its own. Watched from the first second; before the worker runs,
// exit at once; after, stop as on SIGTERM.
const parent = process.ppid;
let onParentGone = (): void => {
  process.stderr.write('folio worker: parent process exited during start-up: exiting\n');
  process.exit(1);
};
if (process.env['npm_lifecycle_event']) {
  setInterval(() => {
    if (process.ppid !== parent) onParentGone();
  }, 1000).unref();
}

let config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`folio worker: ${err.message}\n`);
    process.exit(2);
  }
  throw err;
}
if (!config.databaseUrl) {
  process.stderr.write(
    'folio worker: a separate worker needs PostgreSQL (set DATABASE_URL). With the embedded database, ' +
      '`npm start` runs the jobs itself (jobs.inProcess, on by default).\n',
  );
  process.exit(2);
}
const log = createLogger(config).child({ process: 'worker' });
logProcessEvents(log);
const db = await openDatabase({ schema: DATABASE_SCHEMA, databaseUrl: config.databaseUrl, dataDir: config.dataDir, log }).catch(
  (err: unknown) => {
    log.fatal({ err }, 'worker failed to start');
    process.exit(1);
  },
);
const feed = new ChangeFeed({ db, databaseUrl: config.databaseUrl, log: log.child({ component: 'changes' }) });
await feed.start();
const jobs = new JobQueue({ db, log: log.child({ component: 'jobs' }), settings: config.jobs });
createDomains(config, {
  db,
  feed,
  jobs,
  log,
  scopes: scopeCatalogue(),
  publicUrl: () => (config.publicUrl ?? `http://${config.host}:${config.port}`).replace(/\/+$/, ''),
});
await jobs.start({ work: true });
log.info({ kinds: jobs.names }, 'folio worker running');

let stopping = false;
const stop = (reason: Record<string, unknown>) => {
  if (stopping) return;
  stopping = true;
  log.info(reason, 'stopping');
  (async () => {
    await jobs.stop();
    await feed.close();
    await db.close();
  })().then(
    () => flushTracing().then(() => process.exit(0)),
    (err: unknown) => {
      log.error({ err }, 'error while stopping');
      process.exit(1);
    },
  );
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stop({ signal }));
onParentGone = () => stop({ reason: 'parent process exited' });
