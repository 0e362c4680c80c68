// Every error path of the REST API: 401, 403 missing_scope, 404 (and the cross-user matrix: another
// user's note answers exactly like a note that does not exist), 400 naming fields, 405, 412, 413,
// 428, malformed and hostile bodies. Each is RFC 9457 problem+json with a code listed in the
// OpenAPI document for that operation and status (rest-support.ts checks every answer).
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startTestServer, createUser, call, req } from '../helpers/server.ts';
import { api, spec } from './rest-support.ts';

const REQUEST_BYTES = 64 * 1024;
const s = await startTestServer({
  overrides: {
    limits: {
      responseBytes: 65536,
      responseHardCapBytes: 8388608,
      requestBytes: REQUEST_BYTES,
      jsonDepth: 32,
      handlerTimeoutMs: 30000,
      visibleTimeoutMs: 200,
    },
  },
});
t.teardown(() => s.close());
const alice = await createUser(s, 'alice@example.com');
const bob = await createUser(s, 'bob@example.com');
const A = { token: alice.token };

const created = await api(s, 'POST', '/notetaker/notes', {
  ...A,
  body: { title: 'Secret plans', body: '# Plan\n\nzanzibar\n', tags: ['private'] },
});
const note = created.json();

t.test('401: no token, junk, bad scheme, unknown token, token in the URL — problem+json with WWW-Authenticate', async (t) => {
  const cases: Array<[string, { token?: string; headers?: Record<string, string> }, string]> = [
    ['no token', {}, '/notetaker/notes'],
    ['junk', { token: 'hello' }, '/notetaker/notes'],
    ['basic auth', { headers: { authorization: 'Basic dXNlcjpwYXNz' } }, '/notetaker/notes'],
    ['unknown', { token: 'folio_api_' + 'A'.repeat(38) }, '/notetaker/tags'],
    ['token in the query string', { token: alice.token }, `/notetaker/notes?access_token=${alice.token}`],
    ['no token on a write', {}, `/notetaker/notes/${note.id}`],
  ];
  for (const [what, opts, path] of cases) {
    const method = what === 'no token on a write' ? 'DELETE' : 'GET';
    const r = await api(s, method, path, opts);
    t.equal(r.status, 401, what);
    t.match(r.headers.get('www-authenticate'), /^Bearer realm="folio"/, `${what}: WWW-Authenticate`);
    t.match(r.headers.get('content-type'), /^application\/problem\+json/);
    t.equal(r.json().code, 'unauthenticated');
  }
  const inUrl = await api(s, 'GET', `/notetaker/notes?token=${alice.token}`, A);
  t.match(inUrl.json().detail, /in the URL/);
  t.match(inUrl.headers.get('www-authenticate'), /error="invalid_request"/);
  t.equal((await api(s, 'GET', `/notetaker/notes/${note.id}`, A)).json().title, 'Secret plans', 'the note is untouched by refused writes');
});

t.test('403 missing_scope: a read-only token cannot write; notes:write implies notes:read', async (t) => {
  const minted = await call(s, alice.token, 'admin', 'mint_curl_token', { scopes: ['notes:read'] });
  t.equal(minted.status, 200);
  const ro = { token: minted.json().token as string };
  t.equal((await api(s, 'GET', '/notetaker/notes', ro)).status, 200, 'reads work');
  const w = await api(s, 'POST', '/notetaker/notes', { ...ro, body: { title: 'nope' } });
  t.equal(w.status, 403);
  t.equal(w.json().code, 'missing_scope');
  t.same(w.json().missing_scopes, ['notes:write']);
  t.match(w.json().detail, /notes:write/);
  t.match(w.headers.get('www-authenticate'), /error="insufficient_scope", scope="notes:write"/);
  for (const [m, p] of [
    ['PATCH', `/notetaker/notes/${note.id}`],
    ['PUT', `/notetaker/notes/${note.id}`],
    ['DELETE', `/notetaker/notes/${note.id}`],
    ['POST', `/notetaker/notes/${note.id}/restore`],
    ['DELETE', `/notetaker/trash/${note.id}`],
    ['POST', `/notetaker/notes/${note.id}/revisions/1/restore`],
  ] as const) {
    const r = await api(s, m, p, { ...ro, body: { append: { text: 'x' } } });
    t.equal(r.status, 403, `${m} ${p}`);
    t.equal(r.json().code, 'missing_scope');
  }
  const report = await api(s, 'POST', '/notetaker/reports', { ...ro, body: { group_by: 'day', format: 'markdown' } });
  t.equal(report.status, 200, 'a report only reads');
  const saving = await api(s, 'POST', '/notetaker/reports', { ...ro, body: { group_by: 'day', format: 'markdown', save_as_note: true } });
  t.equal(saving.status, 403, 'saving a report writes');
  t.same(saving.json().missing_scopes, ['notes:write']);

  // Every write answers with what it wrote, so writing implies reading: a token with notes:write
  // reads too, and a minted one says so in its scopes.
  const { token: wo } = await s.folio.identity.createApiToken(alice.id, { scopes: ['notes:write'] });
  const r = await api(s, 'GET', `/notetaker/notes/${note.id}`, { token: wo });
  t.equal(r.status, 200, 'a notes:write token reads');
  const c = await api(s, 'POST', '/notetaker/notes', { token: wo, body: { title: 'write works' } });
  t.equal(c.status, 201);
  const mintedWrite = await call(s, alice.token, 'admin', 'mint_curl_token', { scopes: ['notes:write'] });
  t.same(mintedWrite.json().scopes, ['notes:write', 'notes:read'], 'a minted token shows what its scopes imply');
  const { token: wildcard } = await s.folio.identity.createApiToken(alice.id, { scopes: ['notes:*'] });
  t.equal((await api(s, 'GET', '/notetaker/tags', { token: wildcard })).status, 200, 'notes:* grants notes:read');
  const { token: other } = await s.folio.identity.createApiToken(alice.id, { scopes: ['files:read'] });
  const o = await api(s, 'GET', '/notetaker/tags', { token: other });
  t.equal(o.status, 403);
  t.match(o.json().detail, /it has: files:read/);
});

t.test("cross-user matrix: every route with another user's note id is 404, byte-identical to a random id", async (t) => {
  // A trashed note of alice's too, for the trash routes.
  const trashed = (await api(s, 'POST', '/notetaker/notes', { ...A, body: { title: 'Trashed secret' } })).json();
  await api(s, 'DELETE', `/notetaker/notes/${trashed.id}`, A);
  const before = (await api(s, 'GET', `/notetaker/notes/${note.id}`, A)).json();
  const B = { token: bob.token };
  const sp = await spec(s);
  const bodies: Record<string, unknown> = {
    'PATCH /notetaker/notes/{id}': { append: { text: 'pwned' } },
    'PUT /notetaker/notes/{id}': { expected_version: 1, title: 'pwned', body: '', tags: [] },
  };
  // The notetaker group's routes (the filedb group's are in rest-files.test.ts).
  const withId = sp.operations.filter((o) => o.template.startsWith('/notetaker/') && o.template.includes('{id}'));
  t.ok(withId.length >= 9, `${withId.length} routes take a note id`);
  for (const o of withId) {
    for (const [label, headers] of [
      ['plain', {}],
      ['with If-Match', { 'if-match': '"1"' }],
    ] as const) {
      if (label === 'with If-Match' && !['PATCH', 'PUT', 'DELETE'].includes(o.method)) continue;
      const victim = o.template.startsWith('/notetaker/trash') ? trashed.id : note.id;
      const path = (id: string) => o.template.replace('{id}', id).replace('{version}', '1');
      const body = label === 'with If-Match' && o.method === 'PATCH' ? { title: 'pwned' } : bodies[`${o.method} ${o.template}`];
      const opts = { ...B, headers, ...(body ? { body } : {}) };
      const theirs = await api(s, o.method, path(victim), opts);
      const nobody = await api(s, o.method, path(randomUUID()), opts);
      const what = `${o.method} ${o.template} (${label})`;
      t.equal(theirs.status, 404, `${what}: another user's note`);
      t.equal(nobody.status, 404, `${what}: no such note`);
      t.equal(theirs.text, nobody.text, `${what}: same body`);
      t.equal(theirs.json().code, 'not_found');
      const junk = await api(s, o.method, path('not-a-uuid'), opts);
      t.equal(junk.status, 404, `${what}: an id that is no uuid`);
      t.equal(junk.text, nobody.text, `${what}: same body for junk`);
    }
  }
  const after = (await api(s, 'GET', `/notetaker/notes/${note.id}`, A)).json();
  t.same(after, before, "alice's note is untouched");
  t.equal((await api(s, 'GET', `/notetaker/notes/${trashed.id}`, A)).status, 200, "alice's trashed note is still there");

  // The routes without an id never show another user's notes.
  t.same((await api(s, 'GET', '/notetaker/notes', B)).json().items, []);
  t.same((await api(s, 'GET', '/notetaker/trash', B)).json().items, []);
  t.same((await api(s, 'GET', '/notetaker/tags', B)).json().items, []);
  t.same((await api(s, 'GET', '/notetaker/search?q=zanzibar', B)).json().items, []);
  t.equal((await api(s, 'GET', '/notetaker/search?q=zanzibar', A)).json().items.length, 1, 'alice finds it');
  const rep = await api(s, 'POST', '/notetaker/reports', { ...B, body: { group_by: 'tag', format: 'markdown' } });
  t.notMatch(rep.text, /Secret plans/);
});

t.test('400 validation_failed names each field; wrong types never reach the service', async (t) => {
  const r = await api(s, 'POST', '/notetaker/notes', { ...A, body: { title: 5, tags: 'work', colour: 'red', source: 'fax' } });
  t.equal(r.status, 400);
  const p = r.json();
  t.equal(p.code, 'validation_failed');
  const byPath = Object.fromEntries(p.errors.map((e: any) => [e.path, e]));
  t.match(byPath['/title'], { in: 'body', message: 'must be string' });
  t.match(byPath['/tags'], { in: 'body', message: 'must be array' });
  t.match(byPath['/colour'], { in: 'body', message: /is not a field this operation takes \(it takes: title, body, tags, source\)/ });
  t.match(byPath['/source'], { in: 'body', message: /must be one of "manual", "agent", "transcript", "import"/ });
  t.match(p.detail, /body \/title/);

  const missing = await api(s, 'POST', '/notetaker/notes', { ...A, body: { body: 'no title' } });
  t.same(missing.json().errors, [{ in: 'body', path: '/title', message: 'is required' }]);
  const empty = await api(s, 'POST', '/notetaker/notes', { ...A });
  t.equal(empty.status, 400);
  t.same(empty.json().errors, [{ in: 'body', path: '', message: 'a JSON object is required' }]);
  const arr = await api(s, 'POST', '/notetaker/notes', { ...A, body: '[1,2]' });
  t.equal(arr.status, 400);
  t.equal(arr.json().errors[0].message, 'must be object');
  const str = await api(s, 'POST', '/notetaker/notes', { ...A, body: '"just a string"' });
  t.equal(str.status, 400);
  const tag = await api(s, 'POST', '/notetaker/notes', { ...A, body: { title: 'x', tags: ['ok', 'not ok!'] } });
  t.equal(tag.status, 400);
  t.equal(tag.json().errors[0].path, '/tags/1');
  const nested = await api(s, 'PATCH', `/notetaker/notes/${note.id}`, { ...A, body: { append: { text: 7, extra: true } } });
  t.same(
    nested
      .json()
      .errors.map((e: any) => e.path)
      .sort(),
    ['/append/extra', '/append/text'],
  );
  const serviceRule = await api(s, 'POST', '/notetaker/notes', { ...A, body: { title: '   ' } });
  t.equal(serviceRule.status, 400, "the service's own rules answer the same way");
  t.equal(serviceRule.json().code, 'validation_failed');
  t.equal(serviceRule.json().errors[0].path, '/title');
  const q = await api(s, 'GET', '/notetaker/notes?limt=5', A);
  t.same(q.json().errors, [
    { in: 'query', path: '/limt', message: 'is not a parameter this operation takes (it takes: limit, cursor, tag, id_prefix)' },
  ]);
  const noQuery = await api(s, 'GET', '/notetaker/tags?x=1', A);
  t.equal(noQuery.status, 400);
});

t.test('400 bad_request: malformed JSON, deep nesting, bad If-Match — never a 500', async (t) => {
  for (const [what, body] of [
    ['truncated', '{"title": "x"'],
    ['trailing comma', '{"title": "x",}'],
    ['not JSON at all', 'title=x'],
    ['deep nesting', `{"title":"x","tags":${'['.repeat(40)}${']'.repeat(40)}}`],
    ['hostile nesting', '['.repeat(100_000)],
  ] as const) {
    const r = await api(s, 'POST', '/notetaker/notes', { ...A, body });
    t.equal(r.status, what === 'hostile nesting' ? 413 : 400, what);
    t.match(r.json().code, what === 'hostile nesting' ? 'payload_too_large' : 'bad_request', what);
  }
  const deep = await api(s, 'POST', '/notetaker/notes', { ...A, body: `{"title":"x","tags":${'['.repeat(40)}${']'.repeat(40)}}` });
  t.match(deep.json().detail, /nested more than 32 levels/);
  const deepSmall = await api(s, 'POST', '/notetaker/notes', { ...A, body: '['.repeat(20_000) + ']'.repeat(20_000) });
  t.equal(deepSmall.status, 400);
  const multipart = await api(s, 'POST', '/notetaker/notes', {
    ...A,
    body: '--x\r\n',
    headers: { 'content-type': 'multipart/form-data; boundary=x' },
  });
  t.equal(multipart.status, 415, 'multipart is not what the operation takes');
  t.equal(multipart.json().code, 'unsupported_media_type');
  const tags = await api(s, 'PATCH', `/notetaker/notes/${note.id}`, { ...A, headers: { 'if-match': '"1", "2"' }, body: { title: 'x' } });
  t.equal(tags.status, 400);
  t.equal(tags.json().code, 'bad_request');
  const unquoted = await api(s, 'PATCH', `/notetaker/notes/${note.id}`, { ...A, headers: { 'if-match': '1' }, body: { title: 'x' } });
  t.equal(unquoted.status, 400);
  t.match(unquoted.json().detail, /entity tag in quotes/);
});

t.test('413 payload_too_large: declared or streamed', async (t) => {
  const big = JSON.stringify({ title: 'big', body: 'x'.repeat(REQUEST_BYTES) });
  const r = await api(s, 'POST', '/notetaker/notes', { ...A, body: big });
  t.equal(r.status, 413);
  t.equal(r.json().code, 'payload_too_large');
  t.match(r.json().detail, new RegExp(`most this server accepts is ${REQUEST_BYTES} bytes`));
  // Chunked: no Content-Length to refuse up front.
  const chunks = async function* () {
    for (let i = 0; i < 10; i++) yield new TextEncoder().encode(i === 0 ? '{"title":"t","body":"' : 'y'.repeat(16 * 1024));
  };
  const res = await fetch(`${s.url}/api/v1/notetaker/notes`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
    body: ReadableStream.from(chunks()),
    duplex: 'half',
  });
  t.equal(res.status, 413);
  t.equal(((await res.json()) as { code: string }).code, 'payload_too_large');
  const patch = await api(s, 'PATCH', `/notetaker/notes/${note.id}`, { ...A, body: { append: { text: 'z'.repeat(REQUEST_BYTES) } } });
  t.equal(patch.status, 413);
});

t.test('404 and 405 outside the operations; OPTIONS answers Allow', async (t) => {
  const r = await req(s, 'GET', '/api/v1/notetaker/nothing', A);
  t.equal(r.status, 404);
  t.match(r.headers.get('content-type'), /^application\/problem\+json/);
  t.equal(r.json().code, 'not_found');
  t.match(r.json().detail, /openapi\.json/);
  const m = await req(s, 'PUT', '/api/v1/notetaker/notes', { ...A, body: {} });
  t.equal(m.status, 405);
  t.equal(m.json().code, 'method_not_allowed');
  t.equal(m.headers.get('allow'), 'GET, POST, HEAD, OPTIONS');
  const o = await req(s, 'OPTIONS', `/api/v1/notetaker/notes/${note.id}`);
  t.equal(o.status, 204);
  t.equal(o.headers.get('allow'), 'GET, PATCH, PUT, DELETE, HEAD, OPTIONS');
  const head = await req(s, 'HEAD', `/api/v1/notetaker/notes/${note.id}`, A);
  t.equal(head.status, 200);
  t.equal(head.headers.get('etag'), `"${(await api(s, 'GET', `/notetaker/notes/${note.id}`, A)).json().version}"`);
});

t.test('500 internal: an error id in the body, the stack only in the log', async (t) => {
  const { Authenticator } = await import('../../core/kernel/auth.ts');
  // Restored at teardown too, should the request throw.
  const authenticate = t.capture(Authenticator.prototype, 'authenticate', () =>
    Promise.reject(new Error('database exploded at /secret/path.ts:42')),
  );
  const r = await api(s, 'GET', '/notetaker/tags', A);
  authenticate.restore();
  t.equal(r.status, 500);
  const p = r.json();
  t.equal(p.code, 'internal');
  t.match(p.error_id, /^[0-9a-f-]{36}$/);
  t.equal(p.instance, `urn:uuid:${p.error_id}`);
  t.notMatch(r.text, /exploded|secret|\.ts:/, 'no message or stack of the cause');
});

t.test('every problem code an operation answered is in its x-problem-codes (checked per call); coverage', async (t) => {
  const sp = await spec(s);
  const seen = new Set(
    [...sp.seen.values()]
      .flatMap((v) => [...v])
      .filter((x) => x.includes(' '))
      .map((x) => x.split(' ')[1]),
  );
  for (const code of ['unauthenticated', 'missing_scope', 'not_found', 'validation_failed', 'bad_request', 'payload_too_large', 'internal'])
    t.ok(seen.has(code), `${code} was answered`);
});
