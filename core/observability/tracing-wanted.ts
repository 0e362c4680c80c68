// Whether tracing is asked for, read before anything of OpenTelemetry is loaded (core/tracing.ts).

/** Whether the environment asks for traces: an exporter named, and the SDK not disabled. */
export function tracingWanted(env: NodeJS.ProcessEnv): boolean {
  const exporters = (env['OTEL_TRACES_EXPORTER'] ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '' && e !== 'none');
  return exporters.length > 0 && env['OTEL_SDK_DISABLED'] !== 'true';
}
