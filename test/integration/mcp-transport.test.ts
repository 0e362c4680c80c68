// The HTTP rules of /mcp over real HTTP: bearer auth and its 401, the protected-resource metadata,
// Host and Origin checks, protocol versions, sessions (random, bound to their user, dead after
// DELETE), and the stateless mode for nodes behind a balancer.
import t from 'tap';
import http from 'node:http';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestServer, call, createUser, FIXTURES, type TestServer } from '../helpers/server.ts';

const s = await startTestServer({
  plugins: [path.join(FIXTURES, 'basic')],
  overrides: {
    mcp: {
      mode: 'stateful',
      allowedOrigins: ['https://app.example.com'],
      allowedHosts: ['folio.internal', 'edge.example.com:8443'],
      // A quick answer goes out whole if it is ready within the hold: room for a loaded CI machine.
      holdMs: 250,
    },
  },
});
t.teardown(() => s.close());
const alice = await createUser(s, 'alice@example.com');
const bob = await createUser(s, 'bob@example.com');

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const LIST = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** JSON-RPC messages in the body, SSE or JSON. */
  messages: Array<Record<string, any>>;
}

/** A raw HTTP request with node:http, so Host can be anything. Fails if the answer has not ended within `timeoutMs`. */
function raw(
  server: TestServer,
  method: string,
  opts: { token?: string; session?: string; body?: unknown; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Raw> {
  const url = new URL(`${server.url}/mcp`);
  const headers: Record<string, string> = { accept: 'application/json, text/event-stream', ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.session) headers['mcp-session-id'] = opts.session;
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  if (payload !== undefined) headers['content-type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const r = http.request({ host: url.hostname, port: url.port, path: url.pathname, method, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        const type = res.headers['content-type'] ?? '';
        const messages = type.includes('text/event-stream')
          ? body
              .split('\n')
              // An empty data line is the priming event of a resumable stream (an id to resume from).
              .filter((l) => l.startsWith('data: ') && l.length > 'data: '.length)
              .map((l) => JSON.parse(l.slice(6)))
          : type.includes('json') && body
            ? [JSON.parse(body)]
            : [];
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, messages });
      });
    });
    const ms = opts.timeoutMs ?? 15000;
    const timer = setTimeout(() => r.destroy(new Error(`${method} /mcp: the answer did not end within ${ms} ms`)), ms);
    r.on('close', () => clearTimeout(timer));
    r.on('error', reject);
    if (payload !== undefined) r.write(payload);
    r.end();
  });
}

async function openSession(token: string): Promise<string> {
  const r = await raw(s, 'POST', { token, body: INIT });
  if (r.status !== 200) throw new Error(`initialize: ${r.status} ${r.body}`);
  const id = r.headers['mcp-session-id'];
  if (typeof id !== 'string') throw new Error('no session id');
  await raw(s, 'POST', { token, session: id, body: { jsonrpc: '2.0', method: 'notifications/initialized' } });
  return id;
}

t.test('401 without a usable token, pointing at the protected-resource metadata', async (t) => {
  const meta = `${s.url}/.well-known/oauth-protected-resource`;
  for (const [what, opts] of [
    ['no token', {}],
    ['junk', { token: 'hello' }],
    ['unknown', { token: 'folio_api_' + 'A'.repeat(38) }],
  ] as const) {
    const r = await raw(s, 'POST', { ...opts, body: INIT });
    t.equal(r.status, 401, what);
    t.match(
      r.headers['www-authenticate'],
      new RegExp(`^Bearer resource_metadata="${meta.replace(/[.?]/g, '\\$&')}"`),
      `${what}: WWW-Authenticate`,
    );
    t.match(r.messages[0], { jsonrpc: '2.0', error: { message: /^401 Unauthorized: / } });
  }
  const bad = await raw(s, 'POST', { token: 'hello', body: INIT });
  t.match(bad.headers['www-authenticate'], /error="invalid_token"/);
  const inUrl = await fetch(`${s.url}/mcp?access_token=${alice.token}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  t.equal(inUrl.status, 401, 'a token in the URL is refused, as on curl');
  const get = await raw(s, 'GET', {});
  t.equal(get.status, 401, 'every method needs the token');
  const client = new Client({ name: 't', version: '1' });
  await t.rejects(client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`))), 'the SDK client is refused too');
});

t.test('GET /.well-known/oauth-protected-resource describes /mcp (RFC 9728)', async (t) => {
  for (const p of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
    const r = await fetch(s.url + p);
    t.equal(r.status, 200, p);
    t.match(r.headers.get('content-type'), /^application\/json/);
    t.same(await r.json(), {
      resource: `${s.url}/mcp`,
      resource_name: 'Folio 1.2.4',
      authorization_servers: [`${s.url}/oauth`],
      scopes_supported: [
        'admin',
        'files:read',
        'files:write',
        'notes:read',
        'notes:write',
        'search',
        'tokens',
        'transcribe',
        'transcribe:read',
        'users',
      ],
      bearer_methods_supported: ['header'],
    });
  }
});

t.test('Host: loopback with any port and the configured hosts; anything else is 403', async (t) => {
  for (const host of ['localhost:1234', '127.0.0.1', '[::1]:80', 'folio.internal', 'folio.internal:9999', 'edge.example.com:8443']) {
    const r = await raw(s, 'POST', { token: alice.token, body: INIT, headers: { host } });
    t.equal(r.status, 200, `Host ${host} is answered`);
  }
  for (const host of [
    'evil.example.com',
    'evil.example.com:3000',
    'edge.example.com',
    '127.0.0.1.evil.example.com',
    'localhost.evil.example.com',
  ]) {
    const r = await raw(s, 'POST', { token: alice.token, body: INIT, headers: { host } });
    t.equal(r.status, 403, `Host ${host} is refused`);
    t.match(r.messages[0], { error: { message: /Host/ } });
  }
  const noToken = await raw(s, 'POST', { body: INIT, headers: { host: 'evil.example.com' } });
  t.equal(noToken.status, 403, 'refused before authentication');
});

t.test('Origin: absent, own or configured is fine; any other is 403', async (t) => {
  const port = new URL(s.url).port;
  for (const origin of [`http://127.0.0.1:${port}`, 'https://app.example.com']) {
    const r = await raw(s, 'POST', { token: alice.token, body: INIT, headers: { origin } });
    t.equal(r.status, 200, `Origin ${origin}`);
    t.equal(r.headers['access-control-allow-origin'], origin, 'CORS for an allowed origin');
    t.match(r.headers['access-control-expose-headers'], /Mcp-Session-Id/);
  }
  for (const origin of [
    'http://evil.example.com',
    'https://app.example.com.evil.example.com',
    'null',
    `http://localhost:${Number(port) + 1}`,
  ]) {
    const r = await raw(s, 'POST', { token: alice.token, body: INIT, headers: { origin } });
    t.equal(r.status, 403, `Origin ${origin} is refused`);
  }
  const preflight = await raw(s, 'OPTIONS', { headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' } });
  t.equal(preflight.status, 204, 'preflight of an allowed origin, without a token');
  t.match(preflight.headers['access-control-allow-headers'], /Authorization/);
  t.match(preflight.headers['access-control-allow-headers'], /Mcp-Session-Id/);
  const evilPreflight = await raw(s, 'OPTIONS', { headers: { origin: 'http://evil.example.com' } });
  t.equal(evilPreflight.status, 403);
});

t.test('MCP-Protocol-Version: a supported one is served, any other is 400', async (t) => {
  const id = await openSession(alice.token);
  const ok = await raw(s, 'POST', { token: alice.token, session: id, body: LIST, headers: { 'mcp-protocol-version': '2025-06-18' } });
  t.equal(ok.status, 200);
  for (const v of ['1900-01-01', 'not-a-version', '2025-11-25, 2025-06-18', '2026-07-28']) {
    const r = await raw(s, 'POST', { token: alice.token, session: id, body: LIST, headers: { 'mcp-protocol-version': v } });
    t.equal(r.status, 400, `version ${v}`);
    t.match(r.messages[0], { error: { message: /unsupported MCP-Protocol-Version/ } });
  }
  const onInit = await raw(s, 'POST', { token: alice.token, body: INIT, headers: { 'mcp-protocol-version': '1900-01-01' } });
  t.equal(onInit.status, 400, 'on initialize too, when the header is sent');
});

t.test('initialize asking for a newer revision (2026-07-28) is answered with the newest Folio speaks', async (t) => {
  // docs/mcp.md, "Protocol revisions": Folio speaks what its SDK (1.x) speaks. A request under
  // 2026-07-28 (server/discover) is refused by the MCP-Protocol-Version check above.
  const init = await raw(s, 'POST', { token: alice.token, body: { ...INIT, params: { ...INIT.params, protocolVersion: '2026-07-28' } } });
  t.equal(init.status, 200);
  t.equal(init.messages[0]?.result?.protocolVersion, '2025-11-25');
});

t.test('sessions: random ids, bound to their user, 404 for anyone else, dead after DELETE', async (t) => {
  const ids = await Promise.all([openSession(alice.token), openSession(alice.token), openSession(bob.token)]);
  for (const id of ids) t.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a random (v4) UUID');
  t.equal(new Set(ids).size, 3, 'all different');
  const [mine, , bobs] = ids;

  const own = await raw(s, 'POST', { token: alice.token, session: mine, body: LIST });
  t.equal(own.status, 200);
  t.ok(own.messages[0]?.result?.tools?.length > 0);
  const stolen = await raw(s, 'POST', { token: bob.token, session: mine, body: LIST });
  const unknown = await raw(s, 'POST', { token: bob.token, session: '00000000-0000-4000-8000-000000000000', body: LIST });
  t.equal(stolen.status, 404, "another user's token with alice's session id is refused");
  t.equal(unknown.status, 404);
  t.equal(stolen.body, unknown.body, 'exactly as if the session did not exist');
  t.equal((await raw(s, 'GET', { token: bob.token, session: mine })).status, 404, 'the stream too');
  t.equal((await raw(s, 'DELETE', { token: bob.token, session: mine })).status, 404, 'and DELETE');
  t.equal((await raw(s, 'POST', { token: alice.token, session: mine, body: LIST })).status, 200, "alice's session is untouched");
  t.equal((await raw(s, 'POST', { token: alice.token, session: bobs, body: LIST })).status, 404, 'both ways');

  const del = await raw(s, 'DELETE', { token: alice.token, session: mine });
  t.equal(del.status, 200);
  const after = await raw(s, 'POST', { token: alice.token, session: mine, body: LIST });
  t.equal(after.status, 404, 'a deleted session is gone');
  t.equal((await raw(s, 'GET', { token: alice.token, session: mine })).status, 404);

  const none = await raw(s, 'POST', { token: alice.token, body: LIST });
  t.equal(none.status, 400, 'no session id and not initialize');
  const again = await raw(s, 'POST', { token: alice.token, session: ids[1], body: INIT });
  t.equal(again.status, 400, 'initialize on an open session');
  t.equal((await raw(s, 'PUT', { token: alice.token, body: LIST })).status, 405);
});

t.test('a session opened with one token serves the same user with another', async (t) => {
  const minted = (await call(s, alice.token, 'admin', 'mint_curl_token', { ttl_seconds: 60 })).json<{ token: string }>().token;
  const id = await openSession(alice.token);
  const r = await raw(s, 'POST', {
    token: minted,
    session: id,
    body: { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'acme__whoami', arguments: {} } },
  });
  t.equal(r.status, 200);
  t.match(
    JSON.parse(r.messages[0]!.result.content[0].text),
    { tokenKind: 'minted', user: { email: 'alice@example.com' } },
    "each request acts with its own token's rights",
  );
});

t.test('a list change told while no stream was open is told again when the stream opens', async (t) => {
  const dora = await createUser(s, 'dora@example.com');
  const id = await openSession(dora.token);
  const listed = await raw(s, 'POST', { token: dora.token, session: id, body: LIST });
  t.ok(listed.messages[0]!.result.tools.some((x: { name: string }) => x.name === 'acme__echo'));
  const off = await call(s, s.adminToken, 'admin', 'set_namespace_access', { user_id: dora.id, namespace: 'acme', access: 'disabled' });
  t.equal(off.status, 200);
  await new Promise((r) => setTimeout(r, 400)); // the change is told (and missed: no stream yet)
  const ac = new AbortController();
  const res = await fetch(`${s.url}/mcp`, {
    headers: { authorization: `Bearer ${dora.token}`, accept: 'text/event-stream', 'mcp-session-id': id },
    signal: ac.signal,
  });
  t.equal(res.status, 200);
  const reader = res.body!.getReader();
  let seen = '';
  const until = Date.now() + 3000;
  while (!seen.includes('notifications/tools/list_changed') && Date.now() < until) {
    const chunk = await Promise.race([reader.read(), new Promise<undefined>((r) => setTimeout(() => r(undefined), until - Date.now()))]);
    if (!chunk || chunk.done) break;
    seen += new TextDecoder().decode(chunk.value);
  }
  ac.abort();
  t.match(seen, /notifications\/tools\/list_changed/, 'tools/list_changed arrives on the new stream');
  t.match(seen, /notifications\/resources\/list_changed/, 'and resources/list_changed');
});

t.test("a session's notification stream ends when the token that opened it expires", async (t) => {
  const minted = (await call(s, alice.token, 'admin', 'mint_curl_token', { ttl_seconds: 2 })).json<{ token: string }>().token;
  const id = await openSession(minted);
  const started = Date.now();
  const stream = await raw(s, 'GET', { token: minted, session: id, headers: { accept: 'text/event-stream' } });
  t.equal(stream.status, 200, 'the GET stream opened');
  const lasted = Date.now() - started;
  t.ok(lasted < 4000, `and was closed by the server at expiry (after ${lasted} ms)`);
  const again = await raw(s, 'GET', { token: minted, session: id, headers: { accept: 'text/event-stream' } });
  t.equal(again.status, 401, 'the expired token cannot reopen it');
});

t.test('stateless mode: tools/list and tools/call without a session, on any node', async (t) => {
  const sl = await startTestServer({
    plugins: [path.join(FIXTURES, 'basic')],
    overrides: { mcp: { mode: 'stateless', allowedOrigins: [], allowedHosts: [] } },
  });
  t.teardown(() => sl.close());
  const carol = await createUser(sl, 'carol@example.com');

  const list = await raw(sl, 'POST', { token: carol.token, body: LIST, headers: { 'mcp-protocol-version': '2025-11-25' } });
  t.equal(list.status, 200, 'tools/list with no initialize and no session');
  t.equal(list.headers['mcp-session-id'], undefined);
  t.ok(list.messages[0]!.result.tools.some((x: { name: string }) => x.name === 'acme__echo'));
  const echo = await raw(sl, 'POST', {
    token: carol.token,
    body: { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'acme__echo', arguments: { text: 'hi', times: 3 } } },
  });
  t.equal(echo.messages[0]!.result.content[0].text, 'hihihi');
  const unauth = await raw(sl, 'POST', { body: LIST });
  t.equal(unauth.status, 401, 'the same auth');
  const get = await raw(sl, 'GET', { token: carol.token });
  t.equal(get.status, 405, 'no server-sent stream');
  t.equal(get.headers.allow, 'POST');

  const transport = new StreamableHTTPClientTransport(new URL(`${sl.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${carol.token}` } },
  });
  const client = new Client({ name: 't', version: '1' });
  await client.connect(transport);
  t.teardown(() => client.close());
  t.equal(transport.sessionId, undefined, 'the SDK client works without a session');
  t.notOk(client.getServerCapabilities()?.tools?.listChanged, 'and is not promised list_changed');
  const r = (await client.callTool({ name: 'acme__echo', arguments: { text: 'ok' } })) as CallToolResult;
  t.equal((r.content[0] as { text: string }).text, 'ok');
  const err = (await client.callTool({ name: 'acme__echo', arguments: {} })) as CallToolResult;
  t.equal(err.isError, true);
  const curlText = (await call(sl, carol.token, 'acme', 'echo', {})).text;
  t.equal(
    (err.content[0] as { text: string }).text,
    curlText
      .replace('help: GET /curl/help/acme/echo', 'help: the inputSchema of acme__echo (tools/list)')
      .replaceAll('acme.echo', 'acme__echo'),
    'errors read as on curl, in MCP words',
  );

  // Closing the request is how a stateless client cancels.
  const before = JSON.parse((await call(sl, carol.token, 'acme', 'aborted_count')).text).aborted as number;
  const ac = new AbortController();
  const slow = fetch(`${sl.url}/mcp`, {
    method: 'POST',
    signal: ac.signal,
    headers: { authorization: `Bearer ${carol.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'acme__slow', arguments: { ms: 20000 } } }),
  }).then((res) => res.text());
  await new Promise((r) => setTimeout(r, 300));
  ac.abort();
  await slow.catch(() => {});
  let after = before;
  for (let i = 0; i < 80 && after === before; i++) {
    await new Promise((r) => setTimeout(r, 25));
    after = JSON.parse((await call(sl, carol.token, 'acme', 'aborted_count')).text).aborted as number;
  }
  t.equal(after, before + 1, "the handler's signal fired when the request closed");
});

// Defects from the "Hardening" review: a request that could hang forever, and bad params
// answered as an internal error. Stateless mode gets its own server.
const sl = await startTestServer({
  plugins: [path.join(FIXTURES, 'basic')],
  overrides: { mcp: { mode: 'stateless', allowedOrigins: [], allowedHosts: [] } },
});
t.teardown(() => sl.close());
const slUser = await createUser(sl, 'sol@example.com');

const callTool = (id: number | string, name: string, args: unknown) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});
const abortedCount = async (server: TestServer, token: string) =>
  JSON.parse((await call(server, token, 'acme', 'aborted_count')).text).aborted as number;
/** The answers (results and errors) among a response's messages. */
const answers = (r: Raw) => r.messages.filter((m) => 'result' in m || 'error' in m);
/** The answers of a batch (one JSON array). */
const batchAnswers = (r: Raw) => (r.messages[0] ?? []) as unknown as Array<Record<string, any>>;
const OLD = { 'mcp-protocol-version': '2025-03-26' }; // batches are a 2025-03-26 feature

t.test('a quick answer is one response with a Content-Length; a slow call streams as it goes', async (t) => {
  const id = await openSession(alice.token);
  const version = { 'mcp-protocol-version': '2025-11-25' }; // resumable streams (a priming event) are of this version
  const quick = await raw(s, 'POST', {
    token: alice.token,
    session: id,
    headers: version,
    body: callTool(30, 'acme__echo', { text: 'hi' }),
  });
  t.equal(quick.status, 200);
  t.match(quick.headers['content-type'], /text\/event-stream/);
  t.equal(quick.headers['content-length'], String(Buffer.byteLength(quick.body)), 'sent whole, with its length');
  t.notOk(quick.headers['transfer-encoding'], 'not chunked');
  t.match(quick.body, /^id: \S+\n(retry: \d+\n)?data: \n\n/, 'the priming event (an id to resume from) comes first');
  t.equal(answers(quick)[0]?.result?.content?.[0]?.text, 'hi');

  // A call that takes longer than the hold: the headers and the priming event go out at once.
  const url = new URL(`${s.url}/mcp`);
  const body = JSON.stringify(callTool(31, 'acme__slow', { ms: 1000 }));
  const timeline = await new Promise<{ headersAt: number; firstAt: number; endAt: number; chunked: boolean; text: string }>(
    (resolve, reject) => {
      const started = Date.now();
      const r = http.request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: {
            accept: 'application/json, text/event-stream',
            'content-type': 'application/json',
            authorization: `Bearer ${alice.token}`,
            'mcp-session-id': id,
            ...version,
          },
        },
        (res) => {
          const headersAt = Date.now() - started;
          let firstAt = -1;
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            if (firstAt < 0) firstAt = Date.now() - started;
            text += c;
          });
          res.on('end', () =>
            resolve({ headersAt, firstAt, endAt: Date.now() - started, chunked: res.headers['transfer-encoding'] === 'chunked', text }),
          );
        },
      );
      r.on('error', reject);
      r.end(body);
    },
  );
  t.ok(timeline.chunked, 'streamed, not held');
  t.ok(timeline.endAt >= 1000, 'the call took its time');
  t.ok(
    timeline.headersAt < 800 && timeline.firstAt < 800,
    `headers and priming event before the answer (${timeline.headersAt}/${timeline.firstAt} ms of ${timeline.endAt})`,
  );
  t.match(timeline.text, /"text":"done"/);
});

t.test('an id already in flight on the session is refused at once; the first request is still answered', async (t) => {
  const id = await openSession(alice.token);
  const started = Date.now();
  const first = raw(s, 'POST', { token: alice.token, session: id, body: callTool(7, 'acme__slow', { ms: 1500 }), timeoutMs: 8000 });
  await new Promise((r) => setTimeout(r, 300));
  const second = await raw(s, 'POST', {
    token: alice.token,
    session: id,
    body: callTool(7, 'acme__echo', { text: 'again' }),
    timeoutMs: 8000,
  });
  t.ok(Date.now() - started < 1400, 'the duplicate is answered before the first request finishes');
  t.equal(second.status, 200);
  t.same(second.messages, [
    {
      jsonrpc: '2.0',
      id: 7,
      error: { code: -32600, message: 'Invalid Request: id 7 is already in flight on this session; wait for its answer or use another id' },
    },
  ]);
  const firstDone = await first;
  t.same(
    answers(firstDone).map((m) => [m.id, m.result?.content?.[0]?.text]),
    [[7, 'done']],
    'the first request gets its own answer, and its stream ends',
  );
  const reused = await raw(s, 'POST', { token: alice.token, session: id, body: callTool(7, 'acme__echo', { text: 'free' }) });
  t.equal(answers(reused)[0]?.result?.content?.[0]?.text, 'free', 'once answered, the id may be used again');
  const numeric = raw(s, 'POST', { token: alice.token, session: id, body: callTool(8, 'acme__slow', { ms: 300 }) });
  const text = await raw(s, 'POST', { token: alice.token, session: id, body: callTool('8', 'acme__echo', { text: 'str' }) });
  t.equal(answers(text)[0]?.result?.content?.[0]?.text, 'str', 'the string "8" is another id than the number 8');
  t.equal(answers(await numeric)[0]?.result?.content?.[0]?.text, 'done');
});

t.test('a batch that repeats an id is refused whole: an error for each request, nothing run', async (t) => {
  for (const [mode, server, token, session] of [
    ['stateful', s, alice.token, await openSession(alice.token)],
    ['stateless', sl, slUser.token, undefined],
  ] as const) {
    const r = await raw(server, 'POST', {
      token,
      ...(session ? { session } : {}),
      body: [callTool(1, 'acme__slow', { ms: 200 }), callTool(2, 'acme__echo', { text: 'b' }), callTool(1, 'acme__echo', { text: 'c' })],
      headers: OLD,
      timeoutMs: 5000,
    });
    t.equal(r.status, 200, mode);
    const reply = batchAnswers(r);
    t.same(
      reply.map((m) => [m.id, m.error?.code, m.result]),
      [
        [1, -32600, undefined],
        [2, -32600, undefined],
        [1, -32600, undefined],
      ],
      `${mode}: an error for each request, and nothing run`,
    );
    t.equal(reply[0]?.error?.message, 'Invalid Request: id 1 appears more than once in this batch', mode);
    t.equal(
      reply[1]?.error?.message,
      'Invalid Request: the batch was refused whole (id 1 appears more than once in this batch); nothing in it was run',
      mode,
    );
  }
});

t.test('a batch reusing an id in flight on the session is refused whole; the request in flight is untouched', async (t) => {
  const id = await openSession(alice.token);
  const slow = raw(s, 'POST', { token: alice.token, session: id, body: callTool(5, 'acme__slow', { ms: 600 }) });
  await new Promise((r) => setTimeout(r, 150));
  const reuse = await raw(s, 'POST', {
    token: alice.token,
    session: id,
    body: [callTool(4, 'acme__echo', { text: 'x' }), callTool(5, 'acme__echo', { text: 'y' })],
    headers: OLD,
    timeoutMs: 5000,
  });
  const refused = batchAnswers(reuse);
  t.same(
    refused.map((m) => [m.id, m.error?.code]),
    [
      [4, -32600],
      [5, -32600],
    ],
  );
  t.match(refused[1]?.error?.message, /id 5 is already in flight on this session/);
  t.same(
    answers(await slow).map((m) => m.result?.content?.[0]?.text),
    ['done'],
    'the request in flight gets its answer',
  );
});

t.test('a cancelled request that is not a tool call ends its response stream too', async (t) => {
  const id = await openSession(alice.token);
  const r = await raw(s, 'POST', {
    token: alice.token,
    session: id,
    body: [LIST, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: LIST.id, reason: 'no longer needed' } }],
    headers: OLD,
    timeoutMs: 5000,
  });
  t.equal(r.status, 200);
  t.same(answers(r), [], 'no answer for the cancelled request, and the stream ended');
  const again = await raw(s, 'POST', { token: alice.token, session: id, body: LIST });
  t.ok(answers(again)[0]?.result?.tools?.length > 0, 'the id is free again');
});

t.test('stateless: a client that hangs up while its answer is held back stops the handler', async (t) => {
  const d = await startTestServer({
    plugins: [path.join(FIXTURES, 'basic')],
    overrides: { mcp: { mode: 'stateless', allowedOrigins: [], allowedHosts: [], holdMs: 2000 } },
  });
  t.teardown(() => d.close());
  const eve = await createUser(d, 'eve@example.com');
  const before = await abortedCount(d, eve.token);
  const url = new URL(`${d.url}/mcp`);
  await new Promise<void>((resolve) => {
    const r = http.request({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'POST',
      headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${eve.token}` },
    });
    r.on('error', () => resolve());
    r.on('response', () => t.fail('nothing is sent while the answer is held'));
    r.end(JSON.stringify(callTool(4, 'acme__slow', { ms: 10000 })));
    setTimeout(() => {
      r.destroy();
      resolve();
    }, 300);
  });
  let after = before;
  for (let i = 0; i < 80 && after === before; i++) {
    await new Promise((r) => setTimeout(r, 25));
    after = await abortedCount(d, eve.token);
  }
  t.equal(after, before + 1, "the handler's signal fired when the client went away");
});

t.test('a response stream ends at its deadline, with an error for each request still unanswered', async (t) => {
  for (const mode of ['stateful', 'stateless'] as const) {
    const d = await startTestServer({
      plugins: [path.join(FIXTURES, 'basic')],
      overrides: { mcp: { mode, allowedOrigins: [], allowedHosts: [], streamDeadlineMs: 800 } },
    });
    t.teardown(() => d.close());
    const eve = await createUser(d, 'eve@example.com');
    const session =
      mode === 'stateful' ? ((await raw(d, 'POST', { token: eve.token, body: INIT })).headers['mcp-session-id'] as string) : undefined;
    const before = await abortedCount(d, eve.token);
    const started = Date.now();
    const r = await raw(d, 'POST', {
      token: eve.token,
      ...(session ? { session } : {}),
      body: callTool(3, 'acme__slow', { ms: 10000 }),
      timeoutMs: 6000,
    });
    const took = Date.now() - started;
    t.ok(took >= 700 && took < 3000, `${mode}: the stream ended at the deadline (after ${took} ms)`);
    t.same(
      answers(r),
      [{ jsonrpc: '2.0', id: 3, error: { code: -32603, message: 'Internal error: no answer within 800 ms; the request was abandoned' } }],
      `${mode}: an error for the unanswered request`,
    );
    let after = before;
    for (let i = 0; i < 80 && after === before; i++) {
      await new Promise((r) => setTimeout(r, 25));
      after = await abortedCount(d, eve.token);
    }
    t.equal(after, before + 1, `${mode}: the abandoned handler's signal fired`);
    if (session) {
      const again = await raw(d, 'POST', { token: eve.token, session, body: callTool(3, 'acme__echo', { text: 'next' }) });
      t.equal(answers(again)[0]?.result?.content?.[0]?.text, 'next', 'the session carries on, and the id is free');
    }
  }
});

t.test('bad params are -32602 Invalid params naming the parameter, not -32603 with a validation dump', async (t) => {
  const cases: Array<[string, object, string]> = [
    [
      'logging/setLevel',
      { level: 'loud' },
      'Invalid params: params.level must be one of "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency" (got "loud")',
    ],
    ['resources/read', { uri: 42 }, 'Invalid params: params.uri must be a string (got a number)'],
    ['tools/call', { name: 'acme__echo', arguments: ['hi'] }, 'Invalid params: params.arguments must be an object (got an array)'],
    ['tools/call', { arguments: {} }, 'Invalid params: params.name is required'],
    ['resources/read', {}, 'Invalid params: params.uri is required'],
    ['completion/complete', {}, 'Invalid params: params.ref must be an object (got nothing); params.argument is required'],
  ];
  for (const [mode, server, token, session] of [
    ['stateful', s, alice.token, await openSession(alice.token)],
    ['stateless', sl, slUser.token, undefined],
  ] as const) {
    for (const [method, params, message] of cases) {
      const r = await raw(server, 'POST', { token, ...(session ? { session } : {}), body: { jsonrpc: '2.0', id: 11, method, params } });
      t.equal(r.status, 200, `${mode} ${method}`);
      t.same(r.messages, [{ jsonrpc: '2.0', id: 11, error: { code: -32602, message } }], `${mode} ${method} ${JSON.stringify(params)}`);
    }
    const ok = await raw(server, 'POST', {
      token,
      ...(session ? { session } : {}),
      body: { jsonrpc: '2.0', id: 12, method: 'logging/setLevel', params: { level: 'error' } },
    });
    t.same(ok.messages, [{ jsonrpc: '2.0', id: 12, result: {} }], `${mode}: good params are served as before`);
    const unknown = await raw(server, 'POST', { token, ...(session ? { session } : {}), body: callTool(13, 'acme__nope', {}) });
    t.same(answers(unknown)[0]?.error, { code: -32602, message: 'Unknown tool: acme__nope' }, `${mode}: other errors are unchanged`);
    const unserved = await raw(server, 'POST', {
      token,
      ...(session ? { session } : {}),
      body: { jsonrpc: '2.0', id: 14, method: 'resources/subscribe', params: { uri: 'skill://notetaker/how_it_works' } },
    });
    t.equal(answers(unserved)[0]?.error?.code, -32601, `${mode}: a method Folio does not serve is still "Method not found"`);
  }
});
