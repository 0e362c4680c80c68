// Traces with the official OpenTelemetry SDK and its in-memory exporter: tracing is started as the
// preload does (core/tracing.ts), before any module of the app loads, then a real server serves a
// real call; the spans recorded form one tree from the HTTP request down to the plugin process.
import t from 'tap';
import path from 'node:path';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { startTracing } from '../../core/observability/tracing.ts';
import { tracingWanted } from '../../core/observability/tracing-wanted.ts';

t.test('tracing is asked for by OTEL_TRACES_EXPORTER only', async (t) => {
  t.equal(tracingWanted({}), false);
  t.equal(tracingWanted({ OTEL_TRACES_EXPORTER: 'none' }), false);
  t.equal(tracingWanted({ OTEL_TRACES_EXPORTER: 'console', OTEL_SDK_DISABLED: 'true' }), false);
  t.equal(tracingWanted({ OTEL_TRACES_EXPORTER: 'otlp' }), true);
});

const exporter = new InMemorySpanExporter();
const sdk = await startTracing({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
// Only now the app: its modules load with the SDK running, as under the preload.
const { startTestServer, call, req, createUser, FIXTURES } = await import('../helpers/server.ts');

const s = await startTestServer({ plugins: [path.join(FIXTURES, 'basic')] });
t.teardown(async () => {
  await s.close();
  await sdk.shutdown();
});

const byTrace = (traceId: string) => exporter.getFinishedSpans().filter((x) => x.spanContext().traceId === traceId);
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
/** The request's server span: it ends last, once the response has closed, so its children have ended before it. */
const serverSpan = (path: string) => (x: ReadableSpan) => x.kind === SpanKind.SERVER && x.attributes['url.path'] === path;
/** Waits (polling, at most 5 s) until every one of `ready` matches a finished span. */
async function spansEnded(...ready: Array<(x: ReadableSpan) => boolean>): Promise<void> {
  for (let i = 0; i < 250 && !ready.every((f) => exporter.getFinishedSpans().some(f)); i++)
    await new Promise((resolve) => setTimeout(resolve, 20));
}

t.test('one curl call: HTTP request -> dispatch -> policy, plugin host', async (t) => {
  const user = await createUser(s, 'traced@example.com');
  exporter.reset();
  const r = await call(s, user.token, 'acme', 'noop');
  t.equal(r.status, 200);
  await spansEnded(serverSpan('/curl/call/acme/noop'));
  const dispatch = exporter.getFinishedSpans().find((x) => x.name === 'folio.dispatch');
  t.ok(dispatch, 'a dispatch span');
  const spans = byTrace(dispatch!.spanContext().traceId);
  const server = spans.find((x) => x.kind === SpanKind.SERVER);
  t.ok(server, 'the HTTP server span of the request');
  t.match(server!.attributes, { 'http.request.method': 'POST', 'url.path': '/curl/call/acme/noop', 'http.response.status_code': 200 });
  t.equal(parentOf(dispatch!), server!.spanContext().spanId, 'dispatch is a child of the HTTP request');
  t.match(dispatch!.attributes, { 'folio.surface': 'curl', 'folio.function': 'acme.noop' });
  const policy = spans.find((x) => x.name === 'folio.policy');
  const host = spans.find((x) => x.name === 'folio.plugin_host');
  t.equal(parentOf(policy!), dispatch!.spanContext().spanId, 'the policy decision is a child of dispatch');
  t.equal(parentOf(host!), dispatch!.spanContext().spanId, 'the plugin host round trip is a child of dispatch');
  t.match(host!.attributes, { 'folio.plugin': 'acme', 'folio.function': 'acme.noop' });
});

t.test('a failing call: its span says so, and the error id carries the trace id', async (t) => {
  exporter.reset();
  const r = await call(s, s.adminToken, 'acme', 'boom');
  t.equal(r.status, 500);
  const id = /error id:? ([0-9a-f-]+)/.exec(r.text)?.[1];
  t.ok(id, 'the answer names an error id');
  await spansEnded(serverSpan('/curl/call/acme/boom'));
  const dispatch = exporter.getFinishedSpans().find((x) => x.name === 'folio.dispatch');
  t.equal(dispatch!.status.code, 2, 'the dispatch span is marked failed');
  t.equal(dispatch!.attributes['folio.error_code'], 'internal');
  t.equal(id!.split('-')[0], dispatch!.spanContext().traceId, 'the error id starts with the trace id');
});

t.test('an unexpected failure outside a function: its error id carries the trace id too', async (t) => {
  const { Authenticator } = await import('../../core/kernel/auth.ts');
  const authenticate = t.capture(Authenticator.prototype, 'authenticate', () => Promise.reject(new Error('database exploded')));
  exporter.reset();
  const curl = await call(s, s.adminToken, 'acme', 'noop');
  const rest = await req(s, 'GET', '/api/v1/notetaker/notes', { token: s.adminToken });
  authenticate.restore();
  await spansEnded(serverSpan('/curl/call/acme/noop'), serverSpan('/api/v1/notetaker/notes'));
  const traceOf = (path: string) =>
    exporter
      .getFinishedSpans()
      .find((x) => x.kind === SpanKind.SERVER && x.attributes['url.path'] === path)
      ?.spanContext().traceId;
  t.equal(curl.status, 500);
  const id = /error id:? ([0-9a-f-]+)/.exec(curl.text)?.[1];
  t.equal(id?.split('-')[0], traceOf('/curl/call/acme/noop'), "the curl answer's error id starts with the request's trace id");
  t.equal(rest.status, 500);
  const problem = JSON.parse(rest.text) as { error_id: string; instance: string };
  t.equal(problem.error_id.split('-')[0], traceOf('/api/v1/notetaker/notes'), "the REST problem's error id starts with the trace id");
  t.equal(problem.instance, `tag:folio,2026:error:${problem.error_id}`, 'its instance names that id');
});

t.test('a REST call: its route span, and the database queries under it', async (t) => {
  exporter.reset();
  const r = await req(s, 'GET', '/api/v1/notetaker/notes', { token: s.adminToken });
  t.equal(r.status, 200);
  await spansEnded(serverSpan('/api/v1/notetaker/notes'));
  const rest = exporter.getFinishedSpans().find((x) => x.name === 'folio.rest');
  t.ok(rest, 'a REST span');
  t.equal(rest!.attributes['folio.function'], 'GET /api/v1/notetaker/notes');
  const spans = byTrace(rest!.spanContext().traceId);
  t.ok(
    spans.some((x) => x.name.startsWith('pg.query')),
    'pg queries in the same trace',
  );
  const server = spans.find((x) => x.kind === SpanKind.SERVER);
  t.equal(parentOf(rest!), server?.spanContext().spanId, 'the REST span is a child of the HTTP request');
});

t.test("a caller's traceparent: the request continues its trace", async (t) => {
  exporter.reset();
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const parentId = '00f067aa0ba902b7';
  const r = await req(s, 'GET', '/api/v1/notetaker/notes', {
    token: s.adminToken,
    headers: { traceparent: `00-${traceId}-${parentId}-01` },
  });
  t.equal(r.status, 200);
  await spansEnded(serverSpan('/api/v1/notetaker/notes'));
  const server = exporter.getFinishedSpans().find((x) => x.kind === SpanKind.SERVER);
  t.equal(server?.spanContext().traceId, traceId, "the caller's trace id");
  t.equal(parentOf(server!), parentId, "the caller's span is the parent");
});

t.test('probes and scrapes make no traces', async (t) => {
  exporter.reset();
  t.equal((await req(s, 'GET', '/health')).status, 200);
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.same(
    exporter.getFinishedSpans().filter((x) => x.kind === SpanKind.SERVER),
    [],
  );
});

t.test("a caller's unsampled trace: no span of Folio's is recorded", async (t) => {
  exporter.reset();
  const r = await req(s, 'GET', '/api/v1/notetaker/notes', {
    token: s.adminToken,
    headers: { traceparent: '00-5bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00' },
  });
  t.equal(r.status, 200);
  await new Promise((resolve) => setTimeout(resolve, 50));
  // Background work (jobs) may record traces of its own meanwhile; none may join the caller's.
  t.same(
    byTrace('5bf92f3577b34da6a3ce929d0e0e4736').map((x) => x.name),
    [],
    'the parent-based sampler follows the caller: nothing recorded',
  );
  t.notOk(
    exporter.getFinishedSpans().some((x) => x.kind === SpanKind.SERVER),
    'not even the request span',
  );
});

t.test('spans never carry what a user wrote: SQL literals are replaced, the query string is left out', async (t) => {
  const user = await createUser(s, 'private-trace@example.com');
  exporter.reset();
  const secret = `a private thought ${Date.now()}`;
  const r = await req(s, 'POST', '/api/v1/notetaker/notes', {
    token: user.token,
    body: { title: secret, body: `${secret} in the body` },
  });
  t.equal(r.status, 201);
  t.equal((await req(s, 'GET', '/api/v1/notetaker/notes?tag=secretqueryvalue', { token: user.token })).status, 200);
  let spans: ReadableSpan[] = [];
  for (
    let i = 0;
    i < 100 && !spans.some((x) => 'db.statement' in x.attributes && /insert/i.test(String(x.attributes['db.statement'])));
    i++
  ) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    spans = exporter.getFinishedSpans();
  }
  const inserts = spans.filter((x) => /insert into "?notes"?/i.test(String(x.attributes['db.statement'] ?? '')));
  t.ok(inserts.length > 0, 'the insert of the note is traced (so the check below looks at real spans)');
  const everything = JSON.stringify(spans.map((x) => ({ name: x.name, attributes: x.attributes, events: x.events })));
  t.notMatch(everything, 'a private thought', "the note's words are in no span");
  t.notMatch(everything, 'secretqueryvalue', 'nor the query string');
});
