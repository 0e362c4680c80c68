// What Node would print to stderr by itself goes through the logger instead, so that the log stays
// JSON lines: a process warning is a warn line, and an exception nothing caught or a promise
// rejection nothing handled is one fatal line, after which the process exits 1 (its state is not
// to be trusted). Shared by `npm start` and `npm run worker`. What no handler sees, the engine
// itself aborting (an exhausted heap), is in the README's operations part.
import type { Logger } from 'pino';

export function logProcessEvents(log: Logger): void {
  process.removeAllListeners('warning');
  process.on('warning', (warning) => log.warn({ warning: { name: warning.name, message: warning.message } }, 'process warning'));
  // An unhandled rejection comes here too (Node's default, --unhandled-rejections=throw), with its origin.
  process.on('uncaughtException', (err, origin) => {
    log.fatal({ err, origin }, origin === 'unhandledRejection' ? 'unhandled promise rejection' : 'uncaught exception');
    process.exit(1);
  });
}
