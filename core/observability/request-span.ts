// The root span of each HTTP request when tracing is on, in place of the OpenTelemetry HTTP and
// Koa instrumentations (they run context propagation, attribute gathering and emitter binding on
// every request, sampled or not). Started on the bare Node request, so the call served before Koa
// (core/surfaces/curl/fast-call.ts) has it too. A server-kind span named after the method,
// continuing the caller's trace when the request carries a W3C `traceparent` (extracted through
// the propagation API, so OTEL_PROPAGATORS is honoured), with the stable HTTP semantic attributes.
// The sampler the SDK uses (the same instance, core/observability/tracing.ts) decides here, once
// per request and before any SDK span exists: an unsampled request runs under a bare span context
// (its trace id, for log lines and error ids, and a span id; no SDK span, no attributes), and
// Folio's inner spans (core/contract/observe.ts) skip themselves under it. A sampled one gets the
// SDK's span, on the trace id already drawn (handed over to the SDK's id generator).
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type * as OtelApi from '@opentelemetry/api';
import { OTEL_SLOT } from '../contract/observe.ts';
import type { Sampling } from './tracing.ts';

/** Health probes and scrapes every few seconds would drown the traces that matter. */
const UNTRACED = /^\/(health|ready|metrics)(\?|$)/;

export type RequestSpan = (req: IncomingMessage, res: ServerResponse, serve: () => void) => void;

/** Runs `serve` inside the request's span; undefined when tracing is off. */
export function requestSpan(): RequestSpan | undefined {
  const otel = (globalThis as { [OTEL_SLOT]?: typeof OtelApi })[OTEL_SLOT];
  if (!otel) return undefined;
  const api = otel;
  const tracer = api.trace.getTracer('folio');
  const sampling = (globalThis as Record<symbol, Sampling | undefined>)[Symbol.for('folio.opentelemetry.sampling')];
  const getter: OtelApi.TextMapGetter<IncomingHttpHeaders> = {
    keys: (h) => Object.keys(h),
    get: (h, key) => h[key],
  };
  // The headers the configured propagators read (traceparent, tracestate, baggage by default): a
  // request with none of them starts a new trace, and skips the propagators altogether.
  const fields = api.propagation.fields();
  const carriesContext = (h: IncomingHttpHeaders) => {
    for (const f of fields) if (h[f] !== undefined) return true;
    return false;
  };
  return (req, res, serve) => {
    const url = req.url ?? '/';
    if (UNTRACED.test(url)) return serve();
    const method = req.method ?? 'GET';
    const parent = carriesContext(req.headers) ? api.propagation.extract(api.ROOT_CONTEXT, req.headers, getter) : api.ROOT_CONTEXT;
    if (sampling) {
      const up = api.trace.getSpanContext(parent);
      const traceId = up ? up.traceId : sampling.ids.generateTraceId();
      if (!sampling.records(parent, traceId, method)) {
        const bare = api.trace.wrapSpanContext({
          traceId,
          spanId: sampling.ids.generateSpanId(),
          traceFlags: api.TraceFlags.NONE,
          ...(up?.traceState ? { traceState: up.traceState } : {}),
        });
        return api.context.with(api.trace.setSpan(parent, bare), serve);
      }
      if (!up) sampling.ids.handOver(traceId);
    }
    const span = tracer.startSpan(method, { kind: api.SpanKind.SERVER, attributes: { 'http.request.method': method } }, parent);
    // Without the shared sampler (tracing started elsewhere) an unsampled request's span records
    // nothing and needs no end.
    if (span.isRecording()) {
      const q = url.indexOf('?');
      span.setAttributes({
        'url.path': q < 0 ? url : url.slice(0, q),
        'network.protocol.version': req.httpVersion,
        'network.peer.address': req.socket.remoteAddress ?? '',
      });
      if (req.headers.host) span.setAttribute('server.address', req.headers.host);
      if (req.headers['user-agent']) span.setAttribute('user_agent.original', req.headers['user-agent']);
      res.once('close', () => {
        span.setAttribute('http.response.status_code', res.statusCode);
        if (res.statusCode >= 500) span.setStatus({ code: api.SpanStatusCode.ERROR });
        if (!res.writableFinished) span.setAttribute('error.type', 'aborted');
        span.end();
      });
    }
    api.context.with(api.trace.setSpan(parent, span), serve);
  };
}
