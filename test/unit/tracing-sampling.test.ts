// The sampler Folio builds from OTEL_TRACES_SAMPLER (the one instance both the request span and the
// SDK use) and the id generator that hands a pre-drawn trace id over to the SDK.
import t from 'tap';
import { ROOT_CONTEXT, trace, TraceFlags, SpanKind } from '@opentelemetry/api';
import { PooledIds, samplerFromEnv } from '../../core/observability/tracing.ts';

const decide = (env: NodeJS.ProcessEnv, traceId: string, parent = ROOT_CONTEXT) =>
  samplerFromEnv(env).shouldSample(parent, traceId, 'GET', SpanKind.SERVER, {}, []).decision;

t.test('samplerFromEnv follows the SDK: ratio on the trace id, parent first', async (t) => {
  const ratio = { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' };
  // The ratio sampler folds the id's four 32-bit words together (xor) and compares with the ratio.
  t.equal(decide(ratio, '00000000000000000000000000000001'), 2, 'a low id is sampled (RECORD_AND_SAMPLED)');
  t.equal(decide(ratio, 'ffffffff000000000000000000000000'), 0, 'a high id is not (NOT_RECORD)');
  const sampledParent = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: 'ffffffff000000000000000000000000',
    spanId: '00f067aa0ba902b7',
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
  });
  t.equal(decide(ratio, 'ffffffff000000000000000000000000', sampledParent), 2, "a caller's sampled trace wins over the ratio");
  t.equal(decide({}, 'ffffffff000000000000000000000000'), 2, 'default: every trace');
  t.equal(decide({ OTEL_TRACES_SAMPLER: 'always_off' }, 'ffffffffffffffff0000000000000001'), 0);
});

t.test('PooledIds: valid ids, and a handed-over trace id is used once', async (t) => {
  const ids = new PooledIds();
  const seen = new Set<string>();
  let bad = 0;
  for (let i = 0; i < 1000; i++) {
    const tid = ids.generateTraceId();
    if (!/^[0-9a-f]{32}$/.test(tid) || !/^[0-9a-f]{16}$/.test(ids.generateSpanId())) bad++;
    seen.add(tid);
  }
  t.equal(bad, 0, 'hex ids of the right length');
  t.equal(seen.size, 1000, 'no repeats across pool refills');
  ids.handOver('4bf92f3577b34da6a3ce929d0e0e4736');
  t.equal(ids.generateTraceId(), '4bf92f3577b34da6a3ce929d0e0e4736');
  t.not(ids.generateTraceId(), '4bf92f3577b34da6a3ce929d0e0e4736', 'then random again');
});
