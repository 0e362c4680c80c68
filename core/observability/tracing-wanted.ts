// Whether tracing is asked for, read before anything of OpenTelemetry is loaded (core/tracing.ts).

/** Whether the environment asks for traces: an exporter named, and the SDK not disabled. */
export function tracingWanted(env: NodeJS.ProcessEnv): boolean {
  const exporters = (env['OTEL_TRACES_EXPORTER'] ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '' && e !== 'none');
  return exporters.length > 0 && env['OTEL_SDK_DISABLED'] !== 'true';
}

const FLUSH = Symbol.for('folio.tracing.flush');

/** Called by the preload: how to send the spans still buffered (the SDK's shutdown). */
export function setTracingFlush(flush: () => Promise<void>): void {
  (globalThis as Record<symbol, unknown>)[FLUSH] = flush;
}

/**
 * Sends the spans still buffered, when tracing runs; called by main.ts and worker.ts once Folio has
 * stopped (after its drain, so the spans of the requests it finished are in), before they exit.
 * Bounded: an unreachable collector does not hold the exit up for more than `timeoutMs`.
 */
export async function flushTracing(timeoutMs = 2000): Promise<void> {
  const flush = (globalThis as Record<symbol, unknown>)[FLUSH] as (() => Promise<void>) | undefined;
  if (!flush) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    flush().catch((err: unknown) => process.stderr.write(`folio: tracing shutdown: ${(err as Error)?.message ?? String(err)}\n`)),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs))),
  ]);
  clearTimeout(timer);
}
