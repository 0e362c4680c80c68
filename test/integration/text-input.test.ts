// Strings Folio cannot keep as text (a NUL, a lone surrogate, percent-encoded bytes that are not
// UTF-8) are refused with a 400 naming where they were, on every surface and for every group,
// before any service sees them: PostgreSQL's text cannot hold a NUL (it was a 500 from the driver
// for token, user and other names), and a lone surrogate would be stored as U+FFFD, changed.
import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, req, call, createUser } from '../helpers/server.ts';

const s = await startTestServer();
t.teardown(() => s.close());
const alice = await createUser(s, 'alice-text@example.com');

/** A JSON text with a raw escape in it (JSON.stringify would write a lone surrogate as \\ud800 too). */
const LONE = '{"name":"half \\ud800 a pair","scopes":["notes:read"],"expires_in_days":1}';

t.test('REST bodies: NUL and lone surrogates are 400 validation_failed naming the field', async (t) => {
  const before = (await req(s, 'GET', '/api/v1/tokens', { token: alice.token })).json().items.length;
  const nul = await req(s, 'POST', '/api/v1/tokens', {
    token: alice.token,
    body: { name: 'a\u0000b', scopes: ['notes:read'], expires_in_days: 1 },
  });
  t.equal(nul.status, 400, nul.text);
  t.match(nul.json(), { code: 'bad_request', detail: /name must not contain NUL/ });
  const lone = await req(s, 'POST', '/api/v1/tokens', { token: alice.token, body: LONE });
  t.equal(lone.status, 400, lone.text);
  t.match(lone.json().detail, /name must be valid Unicode/);
  const user = await req(s, 'POST', '/api/v1/users', { token: s.adminToken, body: { email: 'nul@example.com', name: 'a\u0000b' } });
  t.equal(user.status, 400, user.text);
  const key = await req(s, 'POST', '/api/v1/notetaker/notes', { token: alice.token, body: { title: 't', ['b\u0000dy']: 'x' } });
  t.equal(key.status, 400, 'a NUL in a member name too');
  const tokens = await req(s, 'GET', '/api/v1/tokens', { token: alice.token });
  t.equal(tokens.status, 200);
  t.equal(tokens.json().items.length, before, 'no token was made');
});

t.test('REST queries: NUL, lone surrogates and bytes that are not UTF-8 are 400 in: query', async (t) => {
  const nul = await req(s, 'GET', '/api/v1/users?email=a%00b', { token: s.adminToken });
  t.equal(nul.status, 400, nul.text);
  t.match(nul.json().errors[0], { in: 'query', path: '/email', message: /NUL/ });
  const latin1 = await req(s, 'POST', '/api/v1/filedb/files?name=caf%E9.txt', {
    token: alice.token,
    body: 'x',
    headers: { 'content-type': 'text/plain' },
  });
  t.equal(latin1.status, 400, latin1.text);
  t.match(latin1.json().errors[0], { in: 'query', message: /UTF-8/ });
  const surrogate = await req(s, 'GET', '/api/v1/search?q=%ED%A0%80', { token: alice.token });
  t.equal(surrogate.status, 400, 'an encoded lone surrogate is not UTF-8 either');
  const files = await req(s, 'GET', '/api/v1/filedb/files', { token: alice.token });
  t.equal(files.json().items.length, 0, 'nothing was stored');
  const fine = await req(s, 'GET', '/api/v1/search?q=caf%C3%A9', { token: alice.token });
  t.equal(fine.status, 200, 'UTF-8 is taken');
  const percent = await req(s, 'GET', '/api/v1/search?q=100%', { token: alice.token });
  t.equal(percent.status, 200, 'a % that escapes nothing is itself, as before');
});

t.test('curl surface: the same 400, naming the argument', async (t) => {
  const r = await call(s, alice.token, 'tokens', 'create', { name: 'a\u0000b', scopes: ['notes:read'], expires_in_days: 1 });
  t.equal(r.status, 400, r.text);
  t.match(r.text, /name must not contain NUL/);
  const admin = await call(s, s.adminToken, 'admin', 'create_user', { email: 'x@example.com', name: 'x\u0000' });
  t.equal(admin.status, 400, admin.text);
});

t.test('MCP: -32602 Invalid params naming the argument, and the session carries on', async (t) => {
  const client = new Client({ name: 'text-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${alice.token}` } },
  });
  await client.connect(transport);
  t.teardown(() => client.close());
  const err = await client
    .callTool({ name: 'tokens__create', arguments: { name: 'a\u0000b', scopes: ['notes:read'], expires_in_days: 1 } })
    .then(
      () => undefined,
      (e: Error & { code?: number }) => e,
    );
  t.ok(err, 'refused');
  t.match(err?.message, /name must not contain NUL/);
  const fine = await client.callTool({ name: 'notetaker__list', arguments: {} });
  t.notOk(fine.isError, 'the next call works');
});
