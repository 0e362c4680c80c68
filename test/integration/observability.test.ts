// GET /metrics and GET /ready on a real server: counters move with real calls over curl, REST and
// MCP, labels stay within the registry's names, the token rules hold; /ready goes 503 while
// starting, while draining, and with its database gone (a real PostgreSQL database dropped).
import t from 'tap';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, req, call, createUser, fresh, eventually, FIXTURES } from '../helpers/server.ts';
import { Readiness } from '../../core/observability/ready.ts';

const TOKEN = 'metrics-token-for-tests-0123456789';

/** The value of the sample `name{labels}` in a Prometheus text, or undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}

/** Every value of one label of a metric in the text. */
function labelValues(text: string, name: string, label: string): string[] {
  const out = new Set<string>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const m = new RegExp(`${label}="([^"]*)"`).exec(line);
    if (m) out.add(m[1]!);
  }
  return [...out];
}

t.test('off unless METRICS_ENABLED: no /metrics route', async (t) => {
  const s = await startTestServer({ firstParty: true });
  t.teardown(() => s.close());
  const r = await req(s, 'GET', '/metrics', { token: s.adminToken });
  t.equal(r.status, 404);
});

t.test('/metrics with a token: counters after real calls, bounded labels', async (t) => {
  const s = await startTestServer({
    plugins: [path.join(FIXTURES, 'basic')],
    overrides: { metrics: { enabled: true, token: TOKEN } },
  });
  t.teardown(() => s.close());
  const scrape = async () => {
    const r = await req(s, 'GET', '/metrics', { token: TOKEN });
    t.equal(r.status, 200);
    return r.text;
  };

  t.test('token rules', async (t) => {
    const none = await req(s, 'GET', '/metrics');
    t.equal(none.status, 401);
    t.match(none.headers.get('www-authenticate'), /^Bearer/);
    t.equal((await req(s, 'GET', '/metrics', { token: 'not-the-token' })).status, 403);
    t.equal((await req(s, 'GET', '/metrics', { token: `${TOKEN}x` })).status, 403);
    // A user's own API token is not the metrics token.
    t.equal((await req(s, 'GET', '/metrics', { token: s.adminToken })).status, 403);
    const ok = await req(s, 'GET', '/metrics', { token: TOKEN });
    t.equal(ok.status, 200);
    t.match(ok.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  });

  t.test('curl, REST and MCP calls move the counters', async (t) => {
    const user = await createUser(s, `m-${randomBytes(4).toString('hex')}@example.com`);
    const before = await scrape();
    const n = (text: string, surface: string, fn: string) => sample(text, 'folio_calls_total', { surface, function: fn }) ?? 0;
    for (let i = 0; i < 3; i++) t.equal((await call(s, user.token, 'acme', 'noop')).status, 200);
    t.equal((await call(s, user.token, 'acme', 'echo', { times: 2 })).status, 400);
    t.equal((await call(s, user.token, 'acme', 'boom')).status, 500);
    // Made-up names: each would be a series of its own if names came from the request.
    for (const made of ['nope_1', 'nope_2', 'nope_3']) t.equal((await call(s, user.token, 'acme', made)).status, 404);
    t.equal((await call(s, user.token, `zz${randomBytes(3).toString('hex')}`, 'x')).status, 404);
    const created = await req(s, 'POST', '/api/v1/notetaker/notes', { token: user.token, body: { title: 'metrics', body: 'hello' } });
    t.equal(created.status, 201);
    t.equal((await req(s, 'GET', `/api/v1/notetaker/notes/${randomBytes(4).toString('hex')}`, { token: user.token })).status, 404);

    const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${user.token}` } },
    });
    const client = new Client({ name: 'metrics-test', version: '1.0.0' });
    await client.connect(transport);
    t.teardown(() => client.close().catch(() => {}));
    await client.callTool({ name: 'acme__noop', arguments: {} });

    const after = await scrape();
    t.equal(n(after, 'curl', 'acme.noop') - n(before, 'curl', 'acme.noop'), 3, 'three curl calls of acme.noop');
    t.equal(n(after, 'mcp', 'acme.noop') - n(before, 'mcp', 'acme.noop'), 1, 'one MCP call');
    t.equal(n(after, 'rest', 'POST /api/v1/notetaker/notes') - n(before, 'rest', 'POST /api/v1/notetaker/notes'), 1, 'one REST create');
    const errors = (fn: string, code: string, text: string) =>
      sample(text, 'folio_call_errors_total', { surface: 'curl', function: fn, code }) ?? 0;
    t.equal(errors('acme.echo', 'validation_failed', after) - errors('acme.echo', 'validation_failed', before), 1);
    t.equal(errors('acme.boom', 'internal', after) - errors('acme.boom', 'internal', before), 1);
    t.equal(errors('unknown', 'not_found', after) - errors('unknown', 'not_found', before), 4, 'unknown names collapse to one label');
    t.equal(
      (sample(after, 'folio_call_errors_total', { surface: 'rest', function: 'GET /api/v1/notetaker/notes/{id}', code: 'not_found' }) ??
        0) -
        (sample(before, 'folio_call_errors_total', { surface: 'rest', function: 'GET /api/v1/notetaker/notes/{id}', code: 'not_found' }) ??
          0),
      1,
      'REST routes by their template, not the id',
    );
    t.ok((sample(after, 'folio_call_duration_seconds_count', { surface: 'curl', function: 'acme.noop' }) ?? 0) >= 3);
    t.ok((sample(after, 'folio_mcp_sessions') ?? 0) >= 1, 'the open MCP session is counted');

    const names = labelValues(after, 'folio_calls_total', 'function');
    t.notOk(
      names.some((f) => f.includes('nope_') || f.startsWith('zz')),
      'no label from a made-up name',
    );
    t.notOk(after.includes(user.id), 'no user id anywhere');
    t.notOk(after.includes(created.json<{ id: string }>().id), 'no note id anywhere');
    for (const f of names) t.match(f, /^(unknown|[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*|(GET|POST|PUT|PATCH|DELETE) \/api\/v1\/\S*)$/);

    // Isolated plugins: acme runs in a process of its own (third-party by default).
    t.ok((sample(after, 'folio_plugin_hosts_running') ?? 0) >= 1, 'a plugin host is running');
    t.equal(sample(after, 'folio_plugins_disabled'), 0);
    t.ok(sample(after, 'folio_db_pool_connections', { state: 'idle' }) !== undefined, 'the pool is reported');
    // The database-backed gauges: the note counts against storage (read at scrape, cached briefly).
    const withStorage = await eventually(scrape, (text) => (sample(text, 'folio_storage_used_bytes', { kind: 'notes' }) ?? 0) > 0, 15_000);
    t.ok((sample(withStorage, 'folio_storage_used_bytes', { kind: 'notes' }) ?? 0) > 0, 'storage used is reported');
    t.ok(labelValues(withStorage, 'folio_jobs_queued', 'kind').length > 0 || withStorage.includes('# TYPE folio_jobs_queued gauge'));
  });
});

t.test('/ready: ready, details only for operators, draining', async (t) => {
  const s = await startTestServer({ overrides: { metrics: { enabled: false, token: TOKEN } } });
  let closed = false;
  t.teardown(() => (closed ? undefined : s.close()));
  const plain = await req(s, 'GET', '/ready');
  t.equal(plain.status, 200);
  t.same(plain.json(), { status: 'ready' });
  const user = await createUser(s, `r-${randomBytes(4).toString('hex')}@example.com`);
  t.same((await req(s, 'GET', '/ready', { token: user.token })).json(), { status: 'ready' }, 'no details for a plain user');
  t.same((await req(s, 'GET', '/ready', { token: 'wrong' })).json(), { status: 'ready' }, 'nor for a bad token');
  for (const token of [s.adminToken, TOKEN]) {
    const d = (await req(s, 'GET', '/ready', { token })).json<{ dependencies: Array<{ name: string; status: string }> }>();
    t.match(d, { status: 'ready', dependencies: [{ name: 'database', status: 'ok' }] });
  }
  t.equal((await req(s, 'GET', '/health')).status, 200);

  s.folio.markDraining();
  const draining = await req(s, 'GET', '/ready');
  t.equal(draining.status, 503);
  t.same(draining.json(), { status: 'draining' });
  t.equal((await req(s, 'GET', '/health')).status, 200, 'still alive while draining');
  // close() marks it draining first (the SIGTERM path): requests in flight still finish.
  closed = true;
  await s.close();
});

t.test('/ready says starting until start is over', async (t) => {
  const r = new Readiness([{ name: 'database', check: () => Promise.resolve() }]);
  t.match(await r.answer(), { status: 503, plain: { status: 'starting' } });
  r.started();
  t.match(await r.answer(), { status: 200, plain: { status: 'ready' } });
  r.markDraining();
  r.started();
  t.match(await r.answer(), { status: 503, plain: { status: 'draining' } }, 'draining is never undone');
});

const serverUrl = process.env['DATABASE_URL'];
t.test('/ready: 503 once its PostgreSQL database is gone', { skip: serverUrl ? false : 'needs DATABASE_URL' }, async (t) => {
  const db = await fresh(serverUrl!, { fromTemplate: true });
  const s = await startTestServer({
    sharedDatabaseUrl: db.url,
    overrides: { jobs: { inProcess: false }, metrics: { enabled: true, token: TOKEN } },
  });
  t.teardown(async () => {
    await s.close().catch(() => {});
    await db.drop();
  });
  t.equal((await req(s, 'GET', '/ready')).status, 200);
  // The database is dropped for real: every connection to it is ended and none can be opened.
  await db.drop();
  const down = await eventually(
    () => req(s, 'GET', '/ready', { token: TOKEN }),
    (r) => r.status === 503,
    10_000,
  );
  t.equal(down.status, 503);
  t.match(down.json(), { status: 'unavailable', dependencies: [{ name: 'database', status: 'down', error: String }] });
  t.same((await req(s, 'GET', '/ready')).json(), { status: 'unavailable' }, 'plain callers get the status only');
});
