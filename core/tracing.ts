// The tracing preload: `node --import ./core/tracing.ts core/main.ts` (and the same for the worker).
// With OTEL_TRACES_EXPORTER unset (or `none`) it loads nothing and tracing costs nothing; set, it
// starts the OpenTelemetry SDK before the app's modules load (core/observability/tracing.ts).
import { tracingWanted } from './observability/tracing-wanted.ts';

if (tracingWanted(process.env)) {
  const { startTracing } = await import('./observability/tracing.ts');
  const sdk = await startTracing();
  // Spans still buffered are sent before the process ends (main.ts exits after close()).
  let flushed = false;
  const flush = () => {
    if (flushed) return;
    flushed = true;
    sdk.shutdown().catch((err: unknown) => process.stderr.write(`folio: tracing shutdown: ${(err as Error).message}\n`));
  };
  process.once('beforeExit', flush);
  process.once('SIGTERM', flush);
  process.once('SIGINT', flush);
}
