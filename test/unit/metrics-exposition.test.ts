// The Prometheus text of the call counters and the duration histogram, which Folio keeps itself
// (core/observability/metrics.ts) rather than through prom-client's labelled children.
import t from 'tap';
import { Metrics, type MetricsSources } from '../../core/observability/metrics.ts';

// Rendering these three metrics reads none of the sources (only the gauges do).
const metrics = () => new Metrics({} as MetricsSources);

/** The value of the one sample `line` starts with (name and labels as written), or undefined. */
function value(text: string, line: string): number | undefined {
  const l = text.split('\n').find((x) => x.startsWith(`${line} `));
  return l === undefined ? undefined : Number(l.slice(line.length + 1));
}

t.test('the duration histogram: cumulative buckets, a bound is inclusive, +Inf is the count', async (t) => {
  const m = metrics();
  for (const s of [0.0005, 0.001, 0.3, 31]) m.called('curl', 'acme.noop', 'ok', s);
  m.called('mcp', 'acme.noop', 'ok', 0.002);
  const text = await m.registry.getSingleMetricAsString('folio_call_duration_seconds');
  t.match(text, /^# HELP folio_call_duration_seconds .+\n# TYPE folio_call_duration_seconds histogram\n/);
  const labels = 'surface="curl",function="acme.noop"';
  const les = ['0.001', '0.005', '0.025', '0.1', '0.25', '1', '5', '30', '+Inf'];
  const buckets = les.map((le) => value(text, `folio_call_duration_seconds_bucket{le="${le}",${labels}}`));
  t.same(buckets, [2, 2, 2, 2, 2, 3, 3, 3, 4], 'counts up to each bound, 0.001 included in le="0.001"');
  t.equal(value(text, `folio_call_duration_seconds_count{${labels}}`), 4, '+Inf equals _count');
  t.ok(Math.abs(value(text, `folio_call_duration_seconds_sum{${labels}}`)! - 31.3015) < 1e-9, '_sum is the total');
  t.equal(value(text, 'folio_call_duration_seconds_count{surface="mcp",function="acme.noop"}'), 1, 'one series per surface');
});

t.test('calls and errors counters; label values escaped; reset empties both', async (t) => {
  const m = metrics();
  const odd = 'a"b\\c\nd{}';
  m.called('rest', odd, 'ok', 0.01);
  m.called('rest', odd, 'not_found', 0.01);
  const calls = await m.registry.getSingleMetricAsString('folio_calls_total');
  t.match(calls, /^# HELP folio_calls_total .+\n# TYPE folio_calls_total counter\n/);
  t.equal(value(calls, 'folio_calls_total{surface="rest",function="a\\"b\\\\c\\nd{}"}'), 2);
  const errors = await m.registry.getSingleMetricAsString('folio_call_errors_total');
  t.equal(value(errors, 'folio_call_errors_total{surface="rest",function="a\\"b\\\\c\\nd{}",code="not_found"}'), 1);

  m.registry.resetMetrics();
  t.notMatch(await m.registry.getSingleMetricAsString('folio_calls_total'), /^folio_calls_total\{/m, 'no call series after a reset');
  t.notMatch(await m.registry.getSingleMetricAsString('folio_call_errors_total'), /^folio_call_errors_total\{/m, 'nor error series');
  m.called('rest', odd, 'not_found', 0.01);
  t.equal(
    value(await m.registry.getSingleMetricAsString('folio_calls_total'), 'folio_calls_total{surface="rest",function="a\\"b\\\\c\\nd{}"}'),
    1,
  );
  t.equal(
    value(
      await m.registry.getSingleMetricAsString('folio_call_errors_total'),
      'folio_call_errors_total{surface="rest",function="a\\"b\\\\c\\nd{}",code="not_found"}',
    ),
    1,
    'errors count again after a reset, in step with calls',
  );
});

t.test('a duration that is not a number does not poison _sum', async (t) => {
  const m = metrics();
  m.called('curl', 'acme.noop', 'ok', Number.NaN);
  m.called('curl', 'acme.noop', 'ok', 0.5);
  const text = await m.registry.getSingleMetricAsString('folio_call_duration_seconds');
  t.equal(value(text, 'folio_call_duration_seconds_sum{surface="curl",function="acme.noop"}'), 0.5);
  t.equal(value(text, 'folio_call_duration_seconds_count{surface="curl",function="acme.noop"}'), 2);
});
