// OpenTelemetry traces with the official Node SDK: the pg instrumentation plus Folio's own spans
// (core/contract/observe.ts) under the request's root span (core/observability/request-span.ts,
// which replaces the HTTP and Koa instrumentations: they cost every request, sampled or not). Started by the preload
// core/tracing.ts before any module of the app loads, because ESM modules can be instrumented only
// through a loader hook that sees them load (import-in-the-middle, here told to wrap only the
// modules an instrumentation asked for). Configured by the standard OTEL_* variables; the SDK
// reads them itself (OTEL_TRACES_EXPORTER=console|otlp, OTEL_EXPORTER_OTLP_ENDPOINT, ...).
import { randomFillSync } from 'node:crypto';
import { register } from 'node:module';
import { createAddHookMessageChannel } from 'import-in-the-middle';
import * as api from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  SamplingDecision,
  TraceIdRatioBasedSampler,
  type IdGenerator,
  type Sampler,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';

export { tracingWanted } from './tracing-wanted.ts';

/** SQL with its literals (strings, dollar-quoted text, numbers) replaced by `?`. */
export function redactSql(sql: string): string {
  return sql
    .replace(/\$([A-Za-z_]\w*)?\$[\s\S]*?\$\1\$/g, '?')
    .replace(/[EeBbXxNn]?'(?:[^']|'')*'/g, '?')
    .replace(/(?<![\w$.])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b/g, '?');
}

/** The sampler OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG name, as the SDK reads them (default: parent-based, always on). */
export function samplerFromEnv(env: NodeJS.ProcessEnv = process.env): Sampler {
  const arg = Number(env['OTEL_TRACES_SAMPLER_ARG'] ?? '');
  const ratio = () => new TraceIdRatioBasedSampler(env['OTEL_TRACES_SAMPLER_ARG'] && arg >= 0 && arg <= 1 ? arg : 1);
  switch (env['OTEL_TRACES_SAMPLER']) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'traceidratio':
      return ratio();
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/**
 * Random trace and span ids from a pooled random buffer; `handOver` leaves a trace id already drawn
 * (and sampled on) for the next span that starts a trace, which takes it synchronously.
 */
const ZEROS: Record<number, string> = { 8: '0'.repeat(16), 16: '0'.repeat(32) };

export class PooledIds implements IdGenerator {
  #pool = Buffer.alloc(4096);
  #at = this.#pool.length;
  #next: string | undefined;
  #hex(bytes: number): string {
    if (this.#at + bytes > this.#pool.length) {
      randomFillSync(this.#pool);
      this.#at = 0;
    }
    const id = this.#pool.toString('hex', this.#at, (this.#at += bytes));
    // All zeros is the invalid id (odds of 2^-64 at worst, but the API would refuse the span).
    return id === ZEROS[bytes] ? this.#hex(bytes) : id;
  }
  handOver(traceId: string): void {
    this.#next = traceId;
  }
  generateTraceId(): string {
    const handed = this.#next;
    if (handed === undefined) return this.#hex(16);
    this.#next = undefined;
    return handed;
  }
  generateSpanId(): string {
    return this.#hex(8);
  }
}

/** What core/observability/request-span.ts decides with: the SDK's own sampler instance and id generator. */
export interface Sampling {
  sampler: Sampler;
  ids: PooledIds;
  /** The sampler's verdict on a new server span `name` of trace `traceId` under `parent`: false when it records nothing. */
  records(parent: api.Context, traceId: string, name: string): boolean;
}

/**
 * Starts the SDK and leaves the API where the kernel looks for it. `spanProcessors` replaces the
 * exporter the environment names (the tests use an in-memory one). Returns the SDK, to shut down
 * (which flushes what is buffered).
 */
export async function startTracing(opts: { spanProcessors?: SpanProcessor[] } = {}): Promise<NodeSDK> {
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);
  process.env['OTEL_SERVICE_NAME'] ??= 'folio';
  // Traces only: Folio's metrics are Prometheus (/metrics) and its logs pino lines. Left unset, the
  // SDK would also record metrics on every request and push them and logs to an OTLP endpoint.
  process.env['OTEL_METRICS_EXPORTER'] ??= 'none';
  process.env['OTEL_LOGS_EXPORTER'] ??= 'none';
  // One sampler and one id generator, shared with the request span (which decides before any SDK
  // span exists), so the two never disagree.
  const sampler = samplerFromEnv();
  const sampling: Sampling = {
    sampler,
    ids: new PooledIds(),
    records: (parent, traceId, name) =>
      sampler.shouldSample(parent, traceId, name, api.SpanKind.SERVER, {}, []).decision !== SamplingDecision.NOT_RECORD,
  };
  const sdk = new NodeSDK({
    sampler: sampling.sampler,
    idGenerator: sampling.ids,
    ...(opts.spanProcessors ? { spanProcessors: opts.spanProcessors } : {}),
    instrumentations: [
      // Queries of sampled requests and jobs only: under an unsampled request the span is dropped
      // by the parent-based sampler, and with no span at all the query is left alone.
      // The ORM writes values into the SQL text (note bodies, token hashes): the span keeps the
      // statement with every literal replaced, never the values. The hook runs for every query,
      // recorded or not, so it returns at once for a span that records nothing: redacting a
      // large note's SQL costs milliseconds.
      new PgInstrumentation({
        requireParentSpan: true,
        enhancedDatabaseReporting: false,
        requestHook: (span, info) => {
          if (!span.isRecording()) return;
          const text = redactSql(info.query.text);
          span.setAttribute('db.statement', text);
          span.setAttribute('db.query.text', text);
        },
      }),
    ],
  });
  sdk.start();
  await waitForAllMessagesAcknowledged();
  // The slot core/contract/observe.ts reads when it loads (not imported here: it must load after).
  (globalThis as Record<symbol, unknown>)[Symbol.for('folio.opentelemetry.api')] = api;
  (globalThis as Record<symbol, unknown>)[Symbol.for('folio.opentelemetry.sampling')] = sampling;
  return sdk;
}
