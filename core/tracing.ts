// The tracing preload: `node --import ./core/tracing.ts core/main.ts` (and the same for the worker).
// With OTEL_TRACES_EXPORTER unset (or `none`) it loads nothing and tracing costs nothing; set, it
// starts the OpenTelemetry SDK before the app's modules load (core/observability/tracing.ts).
import { setTracingFlush, tracingWanted } from './observability/tracing-wanted.ts';

if (tracingWanted(process.env)) {
  const { startTracing } = await import('./observability/tracing.ts');
  const sdk = await startTracing();
  // No signal handlers here: they would replace Node's default exit before main.ts sets its own,
  // and shut the SDK down while the drain still serves requests. main.ts and worker.ts flush after
  // they have stopped (flushTracing), and a process that ends on its own flushes at beforeExit.
  let done: Promise<void> | undefined;
  const flush = () => (done ??= sdk.shutdown());
  setTracingFlush(flush);
  process.once('beforeExit', () => void flush().catch(() => {}));
}
