// One JSON log line per request, with its request id, and never a credential.
import t from 'tap';
import net from 'node:net';
import v8 from 'node:v8';
import vm from 'node:vm';
import { pino } from 'pino';
import { startTestServer, req, createUser } from '../helpers/server.ts';

const lines: Array<Record<string, any>> = [];
const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
const s = await startTestServer({ log });
t.teardown(() => s.close());

t.test('each request is one line with its id, method, path, status and time', async (t) => {
  lines.length = 0;
  const r = await req(s, 'GET', '/curl/whoami', { token: s.adminToken, headers: { 'x-request-id': 'trace-me-42' } });
  t.equal(r.status, 200);
  t.equal(r.headers.get('x-request-id'), 'trace-me-42', 'a sane id from the client is kept');
  await new Promise((r) => setTimeout(r, 20));
  const mine = lines.filter((l) => l.reqId === 'trace-me-42');
  t.equal(mine.length, 1);
  t.match(mine[0], { msg: 'request completed', req: { method: 'GET', path: '/curl/whoami' }, res: { statusCode: 200 } });
  t.type(mine[0]!.responseTime, 'number');
  const generated = await req(s, 'GET', '/health', { headers: { 'x-request-id': 'bad id with spaces' } });
  t.match(generated.headers.get('x-request-id'), /^[0-9a-f-]{36}$/, 'an unusable id is replaced');
});

t.test('every answer of POST /mcp carries the request id of its log line', async (t) => {
  lines.length = 0;
  const mcp = (id: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${s.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${s.adminToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-request-id': id,
        ...headers,
      },
      body: JSON.stringify(body),
    });
  const init = await mcp('mcp-init', {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'log-test', version: '1' } },
  });
  await init.text();
  t.equal(init.headers.get('x-request-id'), 'mcp-init', 'the initialize answer (an SSE stream sent whole)');
  const session = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' };
  const call = await mcp(
    'mcp-call',
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'admin__plugin_status', arguments: {} } },
    session,
  );
  t.match(await call.text(), /event: message\n(.*\n)*data: \{"result"/);
  t.equal(call.headers.get('x-request-id'), 'mcp-call', 'a tool call answer');
  const refused = await mcp('mcp-refused', { jsonrpc: '2.0', id: 3, method: 'tools/list' });
  t.equal(refused.status, 400, 'no session header');
  await refused.text();
  t.equal(refused.headers.get('x-request-id'), 'mcp-refused', 'a JSON-RPC error Folio answers itself');
  const accepted = await mcp('mcp-note', { jsonrpc: '2.0', method: 'notifications/initialized' }, session);
  t.equal(accepted.status, 202);
  t.equal(accepted.headers.get('x-request-id'), 'mcp-note', 'a notification accepted with no body');
  const generated = await mcp('', { jsonrpc: '2.0', id: 4, method: 'tools/list' }, session);
  await generated.text();
  t.match(generated.headers.get('x-request-id'), /^[0-9a-f-]{36}$/, 'one made when the client sends none');
  await new Promise((r) => setTimeout(r, 20));
  for (const id of ['mcp-init', 'mcp-call', 'mcp-refused', 'mcp-note'])
    t.equal(lines.filter((l) => l.reqId === id && l.req?.path === '/mcp').length, 1, `one line for ${id}`);
});

t.test('an idle keep-alive connection holds on to no request it carried', async (t) => {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  const seen: Array<WeakRef<object>> = [];
  const onRequest = (req: object, res: object) => seen.push(new WeakRef(req), new WeakRef(res));
  s.folio.server.on('request', onRequest);
  t.teardown(() => void s.folio.server.off('request', onRequest));
  // One connection, kept open: a curl call (its fast path), a POST /mcp (served before Koa), a Koa route.
  const socket = net.connect(Number(new URL(s.url).port), '127.0.0.1');
  t.teardown(() => void socket.destroy());
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  let received = '';
  socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
  const ask = async (method: string, path: string, body: string, extra = '') => {
    const before = received.length;
    socket.write(
      `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${s.adminToken}\r\nContent-Type: application/json\r\n${extra}` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    while (!/\r\n\r\n[\s\S]*\S/.test(received.slice(before))) await new Promise((r) => setTimeout(r, 5));
    return received.slice(before);
  };
  t.match(await ask('POST', '/curl/call/folio/pins', '{}'), /^HTTP\/1\.1 200/);
  t.match(
    await ask('POST', '/mcp', '{"jsonrpc":"2.0","id":1,"method":"tools/list"}', 'Accept: application/json, text/event-stream\r\n'),
    /^HTTP\/1\.1 400/,
  );
  t.match(await ask('GET', '/curl/whoami', ''), /^HTTP\/1\.1 200/);
  t.equal(seen.length, 6, 'three requests came on the connection');
  // deref() keeps its target alive to the end of the job: every gc() runs in a job of its own.
  for (let i = 0; i < 10; i++) {
    await new Promise((r) => setTimeout(r, 20));
    gc();
    await new Promise((r) => setTimeout(r, 0));
    if (!seen.some((w) => w.deref())) break;
  }
  t.equal(socket.destroyed, false, 'the connection is still open');
  t.same(
    seen.map((w) => w.deref() !== undefined),
    [false, false, false, false, false, false],
    'every request and response it carried is collected',
  );
});

t.test('tokens never reach the log, from the header or the URL', async (t) => {
  lines.length = 0;
  await req(s, 'GET', '/curl/help', { token: s.adminToken });
  await req(s, 'GET', `/curl/help?access_token=${s.adminToken}&x=1`);
  await new Promise((r) => setTimeout(r, 20));
  const all = JSON.stringify(lines);
  t.notOk(all.includes(s.adminToken), 'the token is nowhere in the log');
  t.ok(lines.some((l) => l.req?.query === 'access_token=%5Bredacted%5D&x=1'));
});

t.test('share-link tokens and invitation secrets in the path never reach the log', async (t) => {
  const user = {
    id: (await req(s, 'POST', '/api/v1/users', { token: s.adminToken, body: { email: 'log-secrets@example.com' } })).json().id as string,
    token: s.adminToken,
  };
  const up = await fetch(`${s.url}/api/v1/filedb/files?name=secret.txt`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.token}` },
    body: 'shared bytes',
  });
  const file = (await up.json()) as { id: string };
  const link = (await req(s, 'POST', `/api/v1/filedb/files/${file.id}/shares`, { token: user.token, body: {} })).json<{ token: string }>();
  const locked = (
    await req(s, 'POST', `/api/v1/filedb/files/${file.id}/shares`, { token: user.token, body: { password: 'correct horse battery' } })
  ).json<{ token: string }>();
  const inv = await req(s, 'POST', `/api/v1/users/${user.id}/invitations`, { token: s.adminToken, body: {} });
  const invitation = (inv.json().url as string).split('/').pop()!;
  lines.length = 0;
  t.equal((await fetch(`${s.url}/s/${link.token}`)).status, 200, 'the link serves');
  await fetch(`${s.url}/S/${link.token}/`);
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  t.equal((await fetch(`${s.url}/s/${locked.token}`, { method: 'POST', headers: form, body: 'password=wrong' })).status, 401);
  t.equal((await fetch(`${s.url}/invite/${invitation}`)).status, 200, 'the invitation page');
  await fetch(`${s.url}/invite/${invitation}`, { method: 'POST', headers: form, body: 'password=short&confirm=short' });
  // Refused by the HTTP parser (a header without a colon): logged by its own line.
  await new Promise<void>((resolve) => {
    const sock = net.connect(Number(new URL(s.url).port), '127.0.0.1', () =>
      sock.write(`GET /s/${link.token} HTTP/1.1\r\nHost: x\r\nbroken\r\n\r\n`),
    );
    sock.on('data', () => sock.end());
    sock.on('error', () => {});
    sock.on('close', () => resolve());
  });
  await new Promise((r) => setTimeout(r, 50));
  const all = JSON.stringify(lines);
  for (const [what, secret] of [
    ['share token', link.token],
    ['protected share token', locked.token],
    ['invitation secret', invitation],
  ] as const)
    t.notOk(all.includes(secret), `the ${what} is nowhere in the log`);
  const paths = lines.map((l) => l.req?.path).filter(Boolean);
  t.same(
    paths,
    ['/s/[redacted]', '/S/[redacted]/', '/s/[redacted]', '/invite/[redacted]', '/invite/[redacted]', '/s/[redacted]'],
    'each line keeps the route, not the secret',
  );
});

t.test('a failing handler is logged at error level with the id the caller saw', async (t) => {
  lines.length = 0;
  const r = await req(s, 'POST', '/curl/call/admin/nope', { token: s.adminToken, body: {} });
  t.equal(r.status, 404);
  await new Promise((r) => setTimeout(r, 20));
  t.ok(lines.some((l) => l.res?.statusCode === 404 && l.level === 30));
});

t.test('an upload the client breaks off is logged as its doing (info, 499), not as a server error', async (t) => {
  lines.length = 0;
  const sock = net.connect(Number(new URL(s.url).port), '127.0.0.1');
  await new Promise((r) => sock.once('connect', r));
  sock.write(
    `POST /api/v1/filedb/files?name=cut.bin HTTP/1.1\r\nHost: x\r\nX-Request-Id: cut-upload-1\r\nAuthorization: Bearer ${s.adminToken}\r\nContent-Length: 50000\r\n\r\n`,
  );
  sock.write(Buffer.alloc(1000, 1));
  await new Promise((r) => setTimeout(r, 100));
  sock.end();
  let mine: Array<Record<string, any>> = [];
  for (let i = 0; i < 100 && mine.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 20));
    mine = lines.filter((l) => l.reqId === 'cut-upload-1');
  }
  t.equal(mine.length, 1);
  t.match(mine[0], { level: 30, res: { statusCode: 499 }, clientError: { code: 'HPE_INVALID_EOF_STATE' } });
});

t.test("a 507 for the caller's own quota is an answer (info), not a failure (error)", async (t) => {
  const q = await startTestServer({ log, overrides: { storage: { quotaBytesPerUser: 1000 } } });
  t.teardown(() => q.close());
  const user = await createUser(q, 'full@example.com');
  const body = { title: 'Big', body: 'x'.repeat(2000) };
  const rest = await req(q, 'POST', '/api/v1/notetaker/notes', { token: user.token, body, headers: { 'x-request-id': 'quota-rest' } });
  const curl = await req(q, 'POST', '/curl/call/notetaker/create', { token: user.token, body, headers: { 'x-request-id': 'quota-curl' } });
  const koa = await req(q, 'POST', '/curl/call/notetaker/create?x=1', {
    token: user.token,
    body,
    headers: { 'x-request-id': 'quota-koa' },
  });
  t.same([rest.status, curl.status, koa.status], [507, 507, 507]);
  await new Promise((r) => setTimeout(r, 20));
  for (const id of ['quota-rest', 'quota-curl', 'quota-koa']) {
    const line = lines.find((l) => l.reqId === id);
    t.match(line, { level: 30, msg: 'request completed', res: { statusCode: 507 } }, id);
  }
});
