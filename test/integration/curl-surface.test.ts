// The curl surface over real HTTP: every route, rule and status of spec §4.1, §5, §7, §8.
import t from 'tap';
import net from 'node:net';
import path from 'node:path';
import { startTestServer, req, call, createUser, FIXTURES } from '../helpers/server.ts';

const s = await startTestServer({
  plugins: [path.join(FIXTURES, 'basic'), path.join(FIXTURES, 'gated'), path.join(FIXTURES, 'typed')],
  overrides: {
    limits: {
      responseBytes: 4096,
      responseHardCapBytes: 262144,
      requestBytes: 65536,
      jsonDepth: 32,
      handlerTimeoutMs: 1500,
      visibleTimeoutMs: 100,
    },
  },
});
t.teardown(() => s.close());
const alice = await createUser(s, 'alice@example.com');
const staffer = await createUser(s, 'sam@example.com', ['staff']);

t.test('GET /curl is the starting point', async (t) => {
  const r = await req(s, 'GET', '/curl', { token: alice.token });
  t.equal(r.status, 200);
  t.match(r.headers.get('content-type'), /^text\/plain/);
  t.match(r.text, /POST .*\/curl\/call\/\{namespace\}\/\{function\}/);
});

t.test('whoami names the account, its namespaces and the server version', async (t) => {
  const r = await req(s, 'GET', '/curl/whoami', { token: alice.token });
  t.equal(r.status, 200);
  t.match(r.text, /user: alice@example\.com/);
  t.match(r.text, /server: folio 1\.2\.4/);
  t.match(r.text, /namespaces: .*acme/);
  t.notMatch(r.text, /staff/, 'a namespace hidden by its rule is not listed');
  const sam = await req(s, 'GET', '/curl/whoami', { token: staffer.token });
  t.match(sam.text, /namespaces: .*staff/);
});

t.test('help lists namespaces per caller; help/{ns} lists functions with signatures', async (t) => {
  const r = await req(s, 'GET', '/curl/help', { token: alice.token });
  t.equal(r.status, 200);
  t.match(r.text, /acme\s+Echo and friends/);
  t.notMatch(r.text, /\bstaff\b/);
  t.notMatch(r.text, /\bthrows\b/, 'a rule that throws hides its namespace');
  t.notMatch(r.text, /\bhangs\b/, 'a rule that hangs hides its namespace');
  const ns = await req(s, 'GET', '/curl/help/acme', { token: alice.token });
  t.equal(ns.status, 200);
  t.match(ns.text, /acme\.echo\(text: string, times\?: integer = 1\) -> string/);
});

t.test('function help is written for a model: signature, args, returns, size advice', async (t) => {
  const r = await req(s, 'GET', '/curl/help/acme/echo', { token: alice.token });
  t.equal(r.status, 200);
  t.match(r.text, /^acme\.echo\(text: string, times\?: integer = 1\) -> string\n/);
  t.match(r.text, /times: integer, optional, default 1, >= 1, <= 100/);
  t.match(r.text, /RETURNS\n {2}string/);
  t.match(r.text, /max_bytes_llm/);
  t.notMatch(r.text, /EXAMPLES/);
  const ex = await req(s, 'GET', '/curl/help/acme/echo?examples=true', { token: alice.token });
  t.match(
    ex.text,
    /EXAMPLES\n {2}# twice\n {2}curl -s -X POST http:\/\/127\.0\.0\.1:\d+\/curl\/call\/acme\/echo .*-d '\{"text":"it'\\''s","times":2\}'/,
  );
  const ts = await req(s, 'GET', '/curl/help/greeter/hello', { token: alice.token });
  t.match(ts.text, /greeter\.hello\(name: string\) -> string/, 'TypeBox schemas render the same');
});

t.test('QUERY answers like GET; a value in the body wins over the query string', async (t) => {
  const q = await req(s, 'QUERY', '/curl/help/acme/echo?examples=false', { token: alice.token, body: { examples: true } });
  t.equal(q.status, 200);
  t.match(q.text, /EXAMPLES/);
  const plain = await req(s, 'QUERY', '/curl/whoami', { token: alice.token });
  t.equal(plain.status, 200);
  t.match(plain.text, /alice@example\.com/);
  const bad = await req(s, 'QUERY', '/curl/help', { token: alice.token, body: '[1,2]' });
  t.equal(bad.status, 400);
  const noToken = await req(s, 'QUERY', '/curl/help', {});
  t.equal(noToken.status, 401);
});

t.test('skills: namespaces, list, one guide', async (t) => {
  const all = await req(s, 'GET', '/curl/skill', { token: alice.token });
  t.equal(all.status, 200);
  t.match(all.text, /acme\s+\(how_it_works\)/);
  const list = await req(s, 'GET', '/curl/skill/acme', { token: alice.token });
  t.match(list.text, /how_it_works: What acme is for\./);
  const one = await req(s, 'GET', '/curl/skill/acme/how_it_works', { token: alice.token });
  t.equal(one.status, 200);
  t.match(one.text, /^---\nname: how_it_works/);
  const missing = await req(s, 'GET', '/curl/skill/acme/nope', { token: alice.token });
  t.equal(missing.status, 404);
  const hidden = await req(s, 'GET', '/curl/skill/staff', { token: alice.token });
  t.equal(hidden.status, 404);
});

t.test('401: no token, junk, bad checksum, unknown token, token in the query string', async (t) => {
  for (const [what, opts, p] of [
    ['no token', {}, '/curl/help'],
    ['junk', { token: 'hello' }, '/curl/help'],
    ['bad checksum', { token: alice.token.slice(0, -1) + (alice.token.endsWith('A') ? 'B' : 'A') }, '/curl/help'],
    ['unknown', { token: 'folio_api_' + 'A'.repeat(38) }, '/curl/whoami'],
    ['query string', { token: alice.token }, `/curl/help?access_token=${alice.token}`],
  ] as const) {
    const r = await req(s, 'GET', p, opts);
    t.equal(r.status, 401, what);
    t.match(r.headers.get('www-authenticate'), /^Bearer/, `${what}: WWW-Authenticate`);
  }
  const post = await req(s, 'POST', '/curl/call/acme/echo', { body: { text: 'x' } });
  t.equal(post.status, 401);
  t.match(post.headers.get('www-authenticate'), /^Bearer/);
});

t.test('public routes need no token', async (t) => {
  const spec = await req(s, 'GET', '/curl/openapi.json');
  t.equal(spec.status, 200);
  const doc = spec.json();
  t.equal(doc.openapi, '3.1.0');
  t.equal(doc.info.version, '1.2.4');
  t.notOk(JSON.stringify(doc).includes('alice'), 'no user data');
  const methods = Object.values(doc.paths as Record<string, object>).flatMap((p) => Object.keys(p));
  t.notOk(methods.includes('query'), 'no QUERY operation');
  t.ok(methods.includes('get') && methods.includes('post'));
  const docs = await req(s, 'GET', '/curl/docs');
  t.equal(docs.status, 200);
  t.match(docs.text, /\/curl\/openapi\.json/);
  t.notMatch(docs.text, /https?:\/\/(?!127\.)/, 'no CDN: every asset is served by Folio');
  for (const asset of docs.text.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)) {
    const a = await req(s, 'GET', asset[1]!);
    t.equal(a.status, 200, `${asset[1]} is served`);
  }
  const health = await req(s, 'GET', '/health');
  t.equal(health.status, 200);
  t.same(health.json().database.status, 'ok');
  t.equal(health.json().version, '1.2.4');
});

t.test('HTML catalogue: public namespaces only, no token needed', async (t) => {
  const r = await req(s, 'GET', '/curl/help', { headers: { accept: 'text/html,application/xhtml+xml' } });
  t.equal(r.status, 200);
  t.match(r.headers.get('content-type'), /text\/html/);
  t.match(r.text, /acme\.echo\(text: string/);
  t.match(r.text, /greeter/);
  t.notMatch(r.text, /staff|scoped|throws/, 'unlisted namespaces stay out');
  const one = await req(s, 'GET', '/curl/skill/acme', { headers: { accept: 'text/html' } });
  t.match(one.text, /how_it_works/);
  const curlish = await req(s, 'GET', '/curl/help', { headers: { accept: '*/*' } });
  t.equal(curlish.status, 401, 'programs get the authenticated text route');
});

t.test('404: hidden and nonexistent answer the same body', async (t) => {
  const hidden = await req(s, 'GET', '/curl/help/staff', { token: alice.token });
  const absent = await req(s, 'GET', '/curl/help/nosuchns', { token: alice.token });
  t.equal(hidden.status, 404);
  t.equal(absent.status, 404);
  t.equal(hidden.text.replace('staff', 'X'), absent.text.replace('nosuchns', 'X'));
  const hiddenCall = await call(s, alice.token, 'staff', 'ping');
  const absentCall = await call(s, alice.token, 'nosuchns', 'ping');
  t.equal(hiddenCall.status, 404);
  t.equal(hiddenCall.text.replace('staff', 'X'), absentCall.text.replace('nosuchns', 'X'));
  const fn = await call(s, alice.token, 'acme', 'nope');
  t.equal(fn.status, 404);
  const visible = await call(s, staffer.token, 'staff', 'ping');
  t.equal(visible.status, 200);
  t.equal(visible.text, 'pong');
});

t.test('403: visible but not entitled, saying what is missing', async (t) => {
  const r = await call(s, staffer.token, 'staff', 'purge');
  t.equal(r.status, 403);
  t.match(r.text, /role admin/);
  const cu = await call(s, alice.token, 'admin', 'create_user', { email: 'x@example.com' });
  t.equal(cu.status, 403);
  t.match(cu.text, /role admin/);
});

t.test('403 by scope: a token without the scope is told which one', async (t) => {
  const user = await s.folio.identity.createUser({ email: 'scoped@example.com' });
  const { token } = await s.folio.identity.createApiToken(user.id, { name: 'read only', scopes: ['notes:read'] });
  t.equal((await call(s, token, 'scoped', 'read')).status, 200);
  const w = await call(s, token, 'scoped', 'write');
  t.equal(w.status, 403);
  t.match(w.text, /scope notes:write/);
  const { token: all } = await s.folio.identity.createApiToken(user.id, { name: 'all notes', scopes: ['notes:*'] });
  t.equal((await call(s, all, 'scoped', 'write')).status, 200, 'notes:* grants notes:write');
});

t.test('400: each bad argument named, with the signature', async (t) => {
  const r = await call(s, alice.token, 'acme', 'echo', { text: 5, times: 0, extra: true });
  t.equal(r.status, 400);
  t.match(r.text, /- text: must be string/);
  t.match(r.text, /- times: must be >= 1/);
  t.match(r.text, /- extra: is not an argument of this function/);
  t.match(r.text, /signature: acme\.echo\(text: string, times\?: integer = 1\) -> string/);
  const missing = await call(s, alice.token, 'acme', 'echo', {});
  t.match(missing.text, /- text: is required/);
});

t.test('400: bodies that are not a JSON object', async (t) => {
  for (const [what, body] of [
    ['malformed', '{"text": "hi"'],
    ['array', '["hi"]'],
    ['string', '"hi"'],
    ['number', '42'],
    ['null', 'null'],
  ] as const) {
    const r = await req(s, 'POST', '/curl/call/acme/echo', { token: alice.token, body });
    t.equal(r.status, 400, what);
    t.match(r.text, /^400 Bad Request: /, what);
  }
  const deep = '{"text":"x","n":' + '['.repeat(5000) + ']'.repeat(5000) + '}';
  const r = await req(s, 'POST', '/curl/call/acme/echo', { token: alice.token, body: deep });
  t.equal(r.status, 400);
  t.match(r.text, /nested more than 32 levels/);
  const form = await req(s, 'POST', '/curl/call/acme/echo', {
    token: alice.token,
    body: '{"text":"form"}',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.equal(form.status, 200, "curl -d's default content type still means JSON");
  t.equal(form.text, 'form');
  const none = await req(s, 'POST', '/curl/call/acme/noop', { token: alice.token });
  t.equal(none.status, 200, 'no body means no arguments');
});

t.test('400: the server supplies the user', async (t) => {
  for (const arg of ['user', 'caller']) {
    const r = await call(s, alice.token, 'acme', 'noop', { [arg]: 'admin@localhost' });
    t.equal(r.status, 400);
    t.match(r.text, /the server supplies the user/);
  }
  const who = await call(s, alice.token, 'acme', 'whoami');
  t.equal(who.json().user.email, 'alice@example.com');
  t.equal(who.json().tokenKind, 'api');
});

t.test('413 for a request body over the limit, saying the size', async (t) => {
  const r = await req(s, 'POST', '/curl/call/acme/echo', { token: alice.token, body: { text: 'x'.repeat(70000) } });
  t.equal(r.status, 413);
  t.match(r.text, /65536 bytes/);
});

t.test('an answer given before the body is read reaches a client still sending it, on a closing connection', async (t) => {
  // A client that sends all of its body before it reads (as most do), on a connection it asked to
  // close: the answer (413 from the declared length, 401 from the token) comes before the body is
  // read, and the bytes still coming after it must not reset the connection before the client reads
  // it (lingering close, core/surfaces/http/linger.ts).
  for (const [token, status] of [
    [alice.token, /^HTTP\/1\.1 413 /],
    ['folio_api_not_a_token', /^HTTP\/1\.1 401 /],
  ] as const) {
    const sock = net.connect(Number(new URL(s.url).port), '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    let answer = '';
    sock.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    sock.on('error', () => {}); // writes after the close fail; that is not what is under test
    const chunk = Buffer.alloc(256 * 1024, 0x20);
    sock.write(
      `POST /curl/call/acme/echo HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${16 * chunk.length}\r\nConnection: close\r\n\r\n`,
    );
    sock.pause();
    for (let i = 0; i < 16 && !sock.destroyed; i++) {
      sock.write(chunk);
      await new Promise((r) => setTimeout(r, 10));
    }
    sock.resume();
    for (let i = 0; i < 500 && !answer.includes('\r\n\r\n'); i++) await new Promise((r) => setTimeout(r, 20));
    sock.destroy();
    t.match(answer, status, answer.split('\r\n')[0] || '(no answer)');
  }
});

t.test('bytes after a request that closes its connection do not cost the client its answer', async (t) => {
  // A client that sends a body its request does not declare (Node's http client does so for a GET
  // with a body): the bytes after the request are malformed, the request is answered, and the
  // connection closes lingering, so the answer is still there to read when the client reads.
  const sock = net.connect(Number(new URL(s.url).port), '127.0.0.1');
  await new Promise((r) => sock.once('connect', r));
  let answer = '';
  sock.on('data', (d: Buffer) => (answer += d.toString('latin1')));
  sock.on('error', () => {});
  sock.write(`GET /curl/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${alice.token}\r\nConnection: close\r\n\r\n`);
  sock.pause();
  const chunk = Buffer.alloc(256 * 1024, 0x20);
  for (let i = 0; i < 16 && !sock.destroyed; i++) {
    sock.write(chunk);
    await new Promise((r) => setTimeout(r, 10));
  }
  sock.resume();
  for (let i = 0; i < 500 && !answer.includes('server: folio'); i++) await new Promise((r) => setTimeout(r, 20));
  sock.destroy();
  t.match(answer, /^HTTP\/1\.1 200 /, answer.split('\r\n')[0] || '(no answer)');
  t.match(answer, /user: alice@example\.com/);
});

t.test('a request pipelined behind an answer that closes the connection is not served', async (t) => {
  // The first request is answered with Connection: close (two Authorization headers) while the one
  // behind it is still sending its body: the connection closes, and the second one never runs.
  // A client that keeps sending after the server's FIN (half-open, as an upload client may).
  const sock = net.connect({ port: Number(new URL(s.url).port), host: '127.0.0.1', allowHalfOpen: true });
  await new Promise((r) => sock.once('connect', r));
  let answer = '';
  sock.on('data', (d: Buffer) => (answer += d.toString('latin1')));
  sock.on('error', () => {});
  const body = JSON.stringify({ title: 'pipelined behind a close' });
  sock.write(
    `GET /curl/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${alice.token}\r\nAuthorization: Bearer ${alice.token}\r\n\r\n` +
      `POST /api/v1/notetaker/notes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${alice.token}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
  );
  await new Promise((r) => setTimeout(r, 300));
  if (!sock.destroyed) sock.write(body.slice(5));
  await new Promise((r) => setTimeout(r, 1000));
  sock.destroy();
  t.match(answer, /^HTTP\/1\.1 400 /, 'the first is refused');
  t.equal(answer.match(/HTTP\/1\.1 \d+/g)?.length, 1, 'and answered alone');
  const notes = await call(s, alice.token, 'notetaker', 'list', {});
  t.notMatch(notes.text, /pipelined behind a close/, 'the second one did not run');
});

t.test('413 for an answer over the ceiling; max_bytes_llm lowers, never raises', async (t) => {
  t.equal((await call(s, alice.token, 'acme', 'big', { size: 3000 })).status, 200);
  const over = await call(s, alice.token, 'acme', 'big', { size: 5000 });
  t.equal(over.status, 413);
  t.match(over.text, /5011 bytes, over this call's ceiling of 4096 bytes/);
  t.match(over.text, /Ask for less/);
  const lowered = await call(s, alice.token, 'acme', 'big', { size: 3000, max_bytes_llm: 1000 });
  t.equal(lowered.status, 413);
  t.match(lowered.text, /ceiling of 1000 bytes/);
  const raised = await call(s, alice.token, 'acme', 'big', { size: 5000, max_bytes_llm: 100000 });
  t.equal(raised.status, 413, 'max_bytes_llm cannot raise the ceiling');
  t.match(raised.text, /ceiling of 4096 bytes/);
  const fnRaised = await call(s, alice.token, 'acme', 'big_allowed', { size: 150000 });
  t.equal(fnRaised.status, 200, "a function's maxBytes raises its own ceiling");
  for (const bad of [0, -5, 1.5, 'ten']) {
    const r = await call(s, alice.token, 'acme', 'noop', { max_bytes_llm: bad });
    t.equal(r.status, 400, `max_bytes_llm ${JSON.stringify(bad)}`);
    t.match(r.text, /max_bytes_llm/);
  }
});

t.test('results: string -> text/plain, object -> JSON, bytes -> their type as a download', async (t) => {
  const text = await call(s, alice.token, 'acme', 'echo', { text: 'hi', times: 2 });
  t.match(text.headers.get('content-type'), /^text\/plain/);
  t.equal(text.text, 'hihi');
  const json = await call(s, alice.token, 'acme', 'noop');
  t.match(json.headers.get('content-type'), /^application\/json/);
  t.same(json.json(), { ok: true });
  const res = await fetch(`${s.url}/curl/call/acme/file`, { method: 'POST', headers: { authorization: `Bearer ${alice.token}` } });
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'image/png');
  t.match(res.headers.get('content-disposition'), /attachment; filename="dot\.png"/);
  t.same([...new Uint8Array(await res.arrayBuffer())], [0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]);
  // The call served before Koa, and the same call through Koa's route (a query string takes it
  // there): a download never runs as a page on Folio's origin, whatever its type says.
  for (const url of [`${s.url}/curl/call/acme/file`, `${s.url}/curl/call/acme/file?via=koa`]) {
    const r = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${alice.token}` } });
    t.equal(r.status, 200, url);
    t.equal(r.headers.get('x-content-type-options'), 'nosniff', url);
    t.equal(r.headers.get('content-security-policy'), "default-src 'none'; sandbox", url);
    t.match(r.headers.get('content-disposition'), /^attachment; filename="dot\.png"/, url);
    await r.arrayBuffer();
  }
});

t.test('500 carries an error id and never the stack or the message', async (t) => {
  const r = await call(s, alice.token, 'acme', 'boom');
  t.equal(r.status, 500);
  t.match(r.text, /error id: [0-9a-f-]{36}/);
  t.notMatch(r.text, /secret|\/srv\/folio|at .*:\d+/);
  const circ = await call(s, alice.token, 'acme', 'circular');
  t.equal(circ.status, 500);
  t.match(circ.text, /error id/);
});

t.test('a handler signal fires on the timeout and when the client goes away', async (t) => {
  const before = (await call(s, alice.token, 'acme', 'aborted_count')).json().aborted;
  const timedOut = await call(s, alice.token, 'acme', 'slow', { ms: 10000 });
  t.equal(timedOut.status, 500);
  t.match(timedOut.text, /did not finish within 1500 ms/);
  const ac = new AbortController();
  const pending = fetch(`${s.url}/curl/call/acme/slow`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ms: 10000 }),
    signal: ac.signal,
  }).catch(() => 'aborted');
  await new Promise((r) => setTimeout(r, 200));
  ac.abort();
  t.equal(await pending, 'aborted');
  let after = before;
  for (let i = 0; i < 40 && after < before + 2; i++) {
    await new Promise((r) => setTimeout(r, 25));
    after = (await call(s, alice.token, 'acme', 'aborted_count')).json().aborted;
  }
  t.equal(after, before + 2, 'both the timeout and the disconnect reached the handler');
});

t.test('a hanging visibility rule does not hold up the request', async (t) => {
  const started = Date.now();
  const r = await req(s, 'GET', '/curl/help', { token: alice.token });
  t.equal(r.status, 200);
  t.ok(Date.now() - started < 1500, 'answered although one rule never returns');
});

t.test('unknown routes get a plain 404', async (t) => {
  const r = await req(s, 'GET', '/curl/nothing/here', { token: alice.token });
  t.equal(r.status, 404);
  t.match(r.headers.get('content-type'), /text\/plain/);
  const get = await req(s, 'GET', '/curl/call/acme/echo', { token: alice.token });
  t.equal(get.status, 405, 'calling is POST only, and the route says so');
  t.equal(get.headers.get('allow'), 'POST');
  t.match(get.text, /a call is a POST, with its arguments as a JSON object: curl -X POST .*\/curl\/call\/acme\/echo/);
  t.match(get.text, /GET \/curl\/help\/acme\/echo/);
});

t.test('a plugin answers 4xx through the SDK error classes; dynamic import works in handlers', async (t) => {
  const missing = await call(s, alice.token, 'errs', 'missing');
  t.equal(missing.status, 404);
  t.match(missing.text, /no bookmark 42/);
  const bad = await call(s, alice.token, 'errs', 'bad');
  t.equal(bad.status, 400);
  t.match(bad.text, /- url: must start with http/);
  const stale = await call(s, alice.token, 'errs', 'stale');
  t.equal(stale.status, 409);
  t.match(stale.text, /"version": 4/);
  t.equal((await call(s, alice.token, 'errs', 'nope')).status, 403);
  const lazy = await call(s, alice.token, 'errs', 'lazy');
  t.equal(lazy.status, 200);
  t.match(lazy.text, /^[0-9a-f]{8}$/);
});

t.test('a rule cannot change the caller other rules and handlers see', async (t) => {
  const help = await req(s, 'GET', '/curl/help', { token: alice.token });
  t.notMatch(help.text, /\bstaff\b/, 'staff stays hidden from alice');
  t.notMatch(help.text, /\bmutator\b/, 'the mutating rule threw on the frozen caller: fail closed');
  const who = await call(s, alice.token, 'acme', 'whoami');
  t.same(who.json().user.roles, []);
});

t.test('a minted token narrowed to fewer scopes is refused what it lacks (403 names the scope)', async (t) => {
  const narrowed = await call(s, alice.token, 'admin', 'mint_curl_token', { scopes: ['notes:read'] });
  t.equal(narrowed.status, 200);
  t.same(narrowed.json().scopes, ['notes:read']);
  const token = narrowed.json().token as string;
  t.equal((await call(s, token, 'scoped', 'read')).text, 'read ok');
  const w = await call(s, token, 'scoped', 'write');
  t.equal(w.status, 403);
  t.equal(w.text, '403 Forbidden: scoped.write needs scope notes:write, which this minted token does not carry (it has: notes:read).\n');
  const reader = await s.folio.identity.createUser({ email: 'reader@example.com' });
  const { token: readOnly } = await s.folio.identity.createApiToken(reader.id, { name: 'r', scopes: ['notes:read'] });
  const wider = await call(s, readOnly, 'admin', 'mint_curl_token', { scopes: ['notes:write'] });
  t.equal(wider.status, 400, 'cannot mint beyond your own scopes');
  t.match(wider.text, /notes:write/);
});

t.test('arguments may be declared in JSON Schema 2020-12', async (t) => {
  const ok = await call(s, alice.token, 'modern', 'pair', { pair: ['a', 1] });
  t.equal(ok.status, 200);
  t.equal(ok.text, 'a=1');
  const bad = await call(s, alice.token, 'modern', 'pair', { pair: ['a', 'b'] });
  t.equal(bad.status, 400);
  t.match(bad.text, /pair\.1: must be integer/);
});
