// What the call path and the jobs tell metrics and traces. Both are optional: with neither, a call pays one
// property read. Traces use the OpenTelemetry API only when core/tracing.ts started the SDK before
// the app loaded (it leaves the API in a global slot); otherwise no OpenTelemetry module is loaded.
import { randomUUID } from 'node:crypto';
import type * as OtelApi from '@opentelemetry/api';

/** Counts and times calls: the metrics (core/observability/metrics.ts) implement it. */
export interface CallObserver {
  /**
   * One call ended. `fn` is the registry's name of what was called (`ns.fn`, or a REST route
   * template), or `unknown`; `code` is `ok` or the error's stable code.
   */
  called(surface: string, fn: string, code: string, seconds: number): void;
}

/** Where core/tracing.ts leaves the OpenTelemetry API once its SDK runs. */
export const OTEL_SLOT = Symbol.for('folio.opentelemetry.api');

const otel = (globalThis as { [OTEL_SLOT]?: typeof OtelApi })[OTEL_SLOT];

export const tracingOn = otel !== undefined;

/** A tracer for Folio's own spans; undefined when tracing is off. */
const tracer = otel?.trace.getTracer('folio');

/**
 * Runs `work` inside a span `name` (a child of the active one) when tracing is on and the active
 * trace is sampled; plainly otherwise. A thrown error marks the span failed, with the error's stable code when it has one.
 */
export function traced<T>(name: string, attributes: Record<string, string | number | boolean>, work: () => Promise<T>): Promise<T> {
  if (!tracer || !otel) return work();
  const api = otel;
  // Under an unsampled request (a non-recording span) no child would be sampled either
  // (parent-based sampling): skip the span and its context switch altogether.
  const active = api.trace.getActiveSpan();
  if (active && !active.isRecording()) return work();
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await work();
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (typeof code === 'string') span.setAttribute('folio.error_code', code);
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** The active trace's id, when tracing is on and a span is active. */
export function activeTraceId(): string | undefined {
  if (!otel) return undefined;
  // Called for every log line: a comparison, not the API's validity check (two regular expressions).
  const id = otel.trace.getActiveSpan()?.spanContext().traceId;
  return id && id !== otel.INVALID_TRACEID ? id : undefined;
}

/**
 * A new error id: with tracing on, it starts with the trace id of the request (so the id an
 * answer shows finds the trace), then a random part that keeps ids of one request apart.
 */
export function newErrorId(): string {
  const trace = activeTraceId();
  return trace ? `${trace}-${randomUUID().slice(0, 8)}` : randomUUID();
}
