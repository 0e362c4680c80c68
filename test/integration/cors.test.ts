// CORS on /api/v1 and /curl for the origins in http.allowedOrigins, as a browser app on another
// origin meets it: the preflight of a call with a bearer token passes (Authorization, Content-Type,
// tus's headers, a max-age), the answer names the origin and exposes Location, ETag, Retry-After;
// an origin not listed gets no CORS headers; /mcp keeps its own Origin rule; a server with no
// allowed origins (the default) answers no preflight.
import t from 'tap';
import { startTestServer, createUser } from '../helpers/server.ts';

const APP = 'https://app.example.com';
const s = await startTestServer({ overrides: { http: { trustedProxies: [], allowedOrigins: [APP] } } });
t.teardown(() => s.close());
const alice = await createUser(s, 'alice@example.com');

const preflight = (path: string, origin: string, method = 'POST', headers = 'authorization, content-type') =>
  fetch(`${s.url}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
  });

t.test('an allowed origin passes the preflight of a bearer call, on /api/v1 and /curl', async (t) => {
  for (const [path, method] of [
    ['/api/v1/notetaker/notes', 'POST'],
    ['/api/v1/filedb/uploads', 'POST'],
    ['/curl/call/notetaker/append', 'POST'],
    ['/api/v1/notetaker/notes/00000000-0000-4000-8000-000000000000', 'PATCH'],
  ] as const) {
    const res = await preflight(path, APP, method, 'authorization, content-type, if-match, tus-resumable, upload-length');
    t.equal(res.status, 204, `${method} ${path}`);
    t.equal(res.headers.get('access-control-allow-origin'), APP);
    t.match(res.headers.get('access-control-allow-methods'), new RegExp(`\\b${method}\\b`));
    const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase();
    for (const h of ['authorization', 'content-type', 'if-match', 'tus-resumable', 'upload-length']) t.match(allowed, h);
    t.match(res.headers.get('access-control-max-age'), /^\d+$/);
    t.match(res.headers.get('vary'), /Origin/);
  }
});

t.test('the answers name the origin and expose what an app reads', async (t) => {
  const created = await fetch(`${s.url}/api/v1/notetaker/notes`, {
    method: 'POST',
    headers: { origin: APP, authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'from the browser', body: 'hi' }),
  });
  t.equal(created.status, 201);
  t.equal(created.headers.get('access-control-allow-origin'), APP);
  const exposed = (created.headers.get('access-control-expose-headers') ?? '').toLowerCase();
  for (const h of ['location', 'etag', 'retry-after', 'upload-offset']) t.match(exposed, h);
  // The curl call, served before Koa, carries them too; a refusal as well.
  const curl = await fetch(`${s.url}/curl/call/notetaker/list`, {
    method: 'POST',
    headers: { origin: APP, authorization: `Bearer ${alice.token}` },
  });
  t.equal(curl.status, 200);
  t.equal(curl.headers.get('access-control-allow-origin'), APP);
  const refused = await fetch(`${s.url}/api/v1/notetaker/notes`, { headers: { origin: APP } });
  t.equal(refused.status, 401);
  t.equal(refused.headers.get('access-control-allow-origin'), APP, 'a 401 is readable by the app');
});

t.test('an origin not listed gets no CORS headers', async (t) => {
  const res = await preflight('/api/v1/notetaker/notes', 'https://evil.example.net');
  t.equal(res.headers.get('access-control-allow-origin'), null);
  t.equal(res.headers.get('access-control-allow-headers'), null);
  const get = await fetch(`${s.url}/api/v1/notetaker/notes`, {
    headers: { origin: 'https://evil.example.net', authorization: `Bearer ${alice.token}` },
  });
  t.equal(get.headers.get('access-control-allow-origin'), null);
});

t.test('/mcp keeps its own Origin rule', async (t) => {
  const res = await fetch(`${s.url}/mcp`, {
    method: 'POST',
    headers: {
      origin: APP,
      authorization: `Bearer ${alice.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
  t.equal(res.status, 403, 'not in mcp.allowedOrigins');
  await res.text();
});

t.test('by default no origin is allowed', async (t) => {
  const plain = await startTestServer({});
  t.teardown(() => plain.close());
  const res = await fetch(`${plain.url}/api/v1/notetaker/notes`, {
    method: 'OPTIONS',
    headers: { origin: APP, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
  });
  t.equal(res.headers.get('access-control-allow-origin'), null);
});
