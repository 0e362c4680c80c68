// The server process (`bin/folio-server` in production, `npm start` in development): load the
// configuration, start Folio, drain and stop on SIGINT/SIGTERM within SHUTDOWN_DEADLINE_MS.
import { ConfigError, loadConfig } from './kernel/config.ts';
import { createLogger, logsQuiet, startFolio } from './app.ts';
import { startFailureHint } from './start-failure.ts';
import { logProcessEvents } from './crash.ts';
import { flushTracing } from './observability/tracing-wanted.ts';

// Under npm (`npm start`), a parent killed without forwarding its signal (kill -9 of npm, a closed
// terminal) would leave this process serving on its own: the parent is noted before anything else
// and watched from the first second, start-up included. Gone before Folio listens: exit at once;
// gone after: stop as on SIGTERM.
const underNpm = Boolean(process.env['npm_lifecycle_event']);
const parent = process.ppid;
let onParentGone = (): void => {
  process.stderr.write('folio: parent process exited during start-up: exiting\n');
  process.exit(1);
};
const parentGone = () => process.ppid !== parent;
if (underNpm) {
  if (parentGone()) onParentGone();
  setInterval(() => {
    if (parentGone()) onParentGone();
  }, 1000).unref();
}

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
// Logs are JSON lines (readable lines on a terminal: LOG_FORMAT): what Node would print to stderr
// by itself (warnings, a crash) goes through the logger instead.
logProcessEvents(log);
const folio = await startFolio(config, log).catch((err: unknown) => {
  log.fatal({ err }, 'folio failed to start');
  // The log line has the whole error; a cause an operator meets first also gets a line to act on.
  const hint = startFailureHint(err, config);
  if (hint) process.stderr.write(`folio: cannot start: ${hint}\n`);
  process.exit(1);
});
// The admin token of a first start is shown once: it must reach the screen whatever happens next.
let showBanner = (): void => {};
if (folio.generatedAdminToken) {
  const token = folio.generatedAdminToken;
  showBanner = () => {
    showBanner = () => {};
    process.stdout.write(
      `\nFirst start: created the admin user admin@localhost.\n` +
        `Its API token (shown once; keep it safe):\n\n  ${token}\n\n` +
        `Next, in another terminal (README.md's walk-through goes on from there):\n\n` +
        `  export FOLIO=${folio.url} FOLIO_TOKEN=${token}\n` +
        `  curl -H "Authorization: Bearer $FOLIO_TOKEN" $FOLIO/curl/whoami\n\n`,
    );
  };
  // The last thing on screen: after the lines start-up's first tasks log. A stop before then
  // shows it at once (stop() below), so the token is never lost.
  void logsQuiet(1000, 5000).then(() => showBanner());
}
// A stop that hangs (a stuck plugin, an unreachable database) must not outlast the service
// manager's patience (systemd's TimeoutStopSec, Kubernetes' terminationGracePeriodSeconds: 30 s by
// default): past this deadline the process exits 1 with what it has.
const SHUTDOWN_DEADLINE_MS = 25_000;
let stopping = false;
const stop = (reason: Record<string, unknown>) => {
  if (stopping) return;
  stopping = true;
  showBanner();
  log.info(reason, 'stopping');
  setTimeout(() => {
    log.error({ deadlineMs: SHUTDOWN_DEADLINE_MS }, 'stop took longer than its deadline: exiting');
    process.exit(1);
  }, SHUTDOWN_DEADLINE_MS).unref();
  folio.close().then(
    () => flushTracing().then(() => process.exit(0)),
    (err: unknown) => {
      log.error({ err }, 'error while stopping');
      process.exit(1);
    },
  );
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stop({ signal }));
onParentGone = () => stop({ reason: 'parent process exited' });
