// `npm start`: load the configuration, start Folio, stop cleanly on SIGINT/SIGTERM.
import { ConfigError, loadConfig } from './kernel/config.ts';
import { createLogger, startFolio } from './app.ts';
import { startFailureHint } from './start-failure.ts';
import { logProcessEvents } from './crash.ts';
import { flushTracing } from './observability/tracing-wanted.ts';

let config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`folio: ${err.message}\n`);
    process.exit(2);
  }
  throw err;
}
const log = createLogger(config);
// Logs are JSON lines: what Node would print to stderr by itself (warnings, a crash) goes through
// the logger instead.
logProcessEvents(log);
const folio = await startFolio(config, log).catch((err: unknown) => {
  log.fatal({ err }, 'folio failed to start');
  // The log line has the whole error; a cause an operator meets first also gets a line to act on.
  const hint = startFailureHint(err, config);
  if (hint) process.stderr.write(`folio: cannot start: ${hint}\n`);
  process.exit(1);
});
if (folio.generatedAdminToken) {
  process.stdout.write(
    `\nFirst start: created the admin user admin@localhost.\n` +
      `Its API token (shown once; keep it safe):\n\n  ${folio.generatedAdminToken}\n\n` +
      `Try: curl -H "Authorization: Bearer ${folio.generatedAdminToken}" ${folio.url}/curl/whoami\n\n`,
  );
}
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping');
    folio.close().then(
      () => flushTracing().then(() => process.exit(0)),
      (err: unknown) => {
        log.error({ err }, 'error while stopping');
        process.exit(1);
      },
    );
  });
}
