// The admin namespace and token rules over HTTP: minting, users, per-user namespace access,
// disabled users, and what a minted token may and may not do.
import t from 'tap';
import path from 'node:path';
import { startTestServer, req, call, createUser, FIXTURES } from '../helpers/server.ts';

const s = await startTestServer({ plugins: [path.join(FIXTURES, 'basic'), path.join(FIXTURES, 'gated')] });
t.teardown(() => s.close());
const admin = s.adminToken;

t.test('the bootstrap admin token works and its user is an admin', async (t) => {
  const r = await req(s, 'GET', '/curl/whoami', { token: admin });
  t.equal(r.status, 200);
  t.match(r.text, /user: admin@localhost/);
  t.match(r.text, /roles: admin/);
});

t.test('mint_curl_token: default 900 s, max 3600, acts as its minter', async (t) => {
  const alice = await createUser(s, 'minter@example.com');
  const before = Date.now();
  const r = await call(s, alice.token, 'admin', 'mint_curl_token');
  t.equal(r.status, 200);
  const { token, expires_at } = r.json<{ token: string; expires_at: string }>();
  t.match(token, /^folio_mnt_/);
  const ttl = (Date.parse(expires_at) - before) / 1000;
  t.ok(ttl > 895 && ttl <= 901, `default ttl is 900 s (got ${ttl})`);
  const who = await req(s, 'GET', '/curl/whoami', { token });
  t.match(who.text, /user: minter@example\.com/);
  t.match(who.text, /token: minted, expires /);
  const asHandler = await call(s, token, 'acme', 'whoami');
  t.equal(asHandler.json().tokenKind, 'minted');
  t.equal(asHandler.json().user.email, 'minter@example.com');

  const max = await call(s, alice.token, 'admin', 'mint_curl_token', { ttl_seconds: 3600 });
  t.equal(max.status, 200);
  for (const bad of [0, 3601, 'soon', 1.5]) {
    const b = await call(s, alice.token, 'admin', 'mint_curl_token', { ttl_seconds: bad });
    t.equal(b.status, 400, `ttl_seconds ${JSON.stringify(bad)}`);
    t.match(b.text, /ttl_seconds/);
  }
  // A scope no catalogue has is refused, as tokens.create refuses it (a '*' token "has" any name).
  const bogus = await call(s, alice.token, 'admin', 'mint_curl_token', { scopes: ['bogus'] });
  t.equal(bogus.status, 400, bogus.text);
  t.match(bogus.text, /unknown scope "bogus"/);
  const narrow = await call(s, alice.token, 'admin', 'mint_curl_token', { scopes: ['notes:read'] });
  t.equal(narrow.status, 200, narrow.text);
});

t.test("a minted token cannot mint (403) and has at most its minter's scopes", async (t) => {
  const user = await s.folio.identity.createUser({ email: 'scopes@example.com' });
  const { token: api } = await s.folio.identity.createApiToken(user.id, { name: 'reader', scopes: ['notes:read'] });
  const minted = (await call(s, api, 'admin', 'mint_curl_token')).json().token as string;
  const again = await call(s, minted, 'admin', 'mint_curl_token');
  t.equal(again.status, 403);
  t.match(again.text, /minted token cannot mint/);
  const who = await req(s, 'GET', '/curl/whoami', { token: minted });
  t.match(who.text, /scopes: notes:read$/m);
});

t.test('a minted token never outlives its parent, and dies with it', async (t) => {
  const user = await s.folio.identity.createUser({ email: 'parent@example.com' });
  const soon = new Date(Date.now() + 60_000);
  const parent = await s.folio.identity.createApiToken(user.id, { name: 'short', scopes: ['*'], expiresAt: soon });
  const r = await call(s, parent.token, 'admin', 'mint_curl_token', { ttl_seconds: 3600 });
  t.equal(r.status, 200);
  t.ok(Date.parse(r.json().expires_at) <= soon.getTime() + 1000, 'capped at the parent expiry');
  await s.folio.identity.revokeToken(user.id, parent.id);
  t.equal((await req(s, 'GET', '/curl/whoami', { token: r.json().token })).status, 401, 'revoking the parent kills the child');
  t.equal((await req(s, 'GET', '/curl/whoami', { token: parent.token })).status, 401);
});

t.test('an expired token is refused', async (t) => {
  const user = await s.folio.identity.createUser({ email: 'expired@example.com' });
  const { token } = await s.folio.identity.createApiToken(user.id, { name: 'old', scopes: ['*'], expiresAt: new Date(Date.now() - 1000) });
  const r = await req(s, 'GET', '/curl/whoami', { token });
  t.equal(r.status, 401);
  t.match(r.headers.get('www-authenticate'), /error="invalid_token"/);
});

t.test('create_user: admins only; the new token works; duplicates and bad input are 4xx', async (t) => {
  const r = await call(s, admin, 'admin', 'create_user', { email: 'Carol@Example.com', name: 'Carol', roles: ['staff'] });
  t.equal(r.status, 200);
  const carol = r.json<{ id: string; email: string; roles: string[]; token: string }>();
  t.equal(carol.email, 'carol@example.com');
  t.same(carol.roles, ['staff']);
  t.match(carol.token, /^folio_api_/);
  const who = await req(s, 'GET', '/curl/whoami', { token: carol.token });
  t.match(who.text, /namespaces: .*staff/);
  const dup = await call(s, admin, 'admin', 'create_user', { email: 'carol@example.com' });
  t.equal(dup.status, 409);
  t.match(dup.text, /already/);
  const bad = await call(s, admin, 'admin', 'create_user', { email: 'not an email' });
  t.equal(bad.status, 400);
  t.match(bad.text, /email/);
  const notAdmin = await call(s, carol.token, 'admin', 'create_user', { email: 'dave@example.com' });
  t.equal(notAdmin.status, 403);
});

t.test('set_namespace_access: enabled shows, disabled hides everywhere, default returns to the rule', async (t) => {
  const erin = await createUser(s, 'erin@example.com');
  const set = (namespace: string, access: string) =>
    call(s, admin, 'admin', 'set_namespace_access', { user_id: erin.id, namespace, access });
  t.equal((await call(s, erin.token, 'staff', 'ping')).status, 404, 'hidden by the rule');
  t.equal((await set('staff', 'enabled')).status, 200);
  t.equal((await call(s, erin.token, 'staff', 'ping')).text, 'pong', 'enabled beats the rule at the next request');
  t.equal((await set('acme', 'disabled')).status, 200);
  for (const [m, p] of [
    ['GET', '/curl/help/acme'],
    ['GET', '/curl/help/acme/echo'],
    ['GET', '/curl/skill/acme'],
    ['GET', '/curl/skill/acme/how_it_works'],
    ['POST', '/curl/call/acme/noop'],
  ] as const) {
    t.equal((await req(s, m, p, { token: erin.token, ...(m === 'POST' ? { body: {} } : {}) })).status, 404, `${m} ${p} hidden`);
  }
  t.notMatch((await req(s, 'GET', '/curl/whoami', { token: erin.token })).text, /acme/);
  t.equal((await set('throws', 'enabled')).status, 200);
  t.equal((await call(s, erin.token, 'throws', 'ping')).text, 'pong', 'an operator can open a namespace whose rule fails');
  await set('acme', 'default');
  await set('staff', 'default');
  t.equal((await call(s, erin.token, 'acme', 'noop')).status, 200);
  t.equal((await call(s, erin.token, 'staff', 'ping')).status, 404);
  const other = await createUser(s, 'frank@example.com');
  t.equal((await call(s, other.token, 'acme', 'noop')).status, 200, "one user's toggle is not another's");

  const unknownUser = await call(s, admin, 'admin', 'set_namespace_access', {
    user_id: '00000000-0000-4000-8000-000000000000',
    namespace: 'acme',
    access: 'enabled',
  });
  t.equal(unknownUser.status, 404);
  const badAccess = await call(s, admin, 'admin', 'set_namespace_access', { user_id: erin.id, namespace: 'acme', access: 'maybe' });
  t.equal(badAccess.status, 400);
  const notAdmin = await call(s, erin.token, 'admin', 'set_namespace_access', { user_id: erin.id, namespace: 'staff', access: 'enabled' });
  t.equal(notAdmin.status, 403);
});

t.test("a disabled user's tokens stop working at once, minted ones too", async (t) => {
  const gus = await createUser(s, 'gus@example.com');
  const minted = (await call(s, gus.token, 'admin', 'mint_curl_token')).json().token as string;
  t.equal((await req(s, 'GET', '/curl/whoami', { token: gus.token })).status, 200);
  await s.folio.identity.setDisabled(gus.id, true);
  t.equal((await req(s, 'GET', '/curl/whoami', { token: gus.token })).status, 401);
  t.equal((await req(s, 'GET', '/curl/whoami', { token: minted })).status, 401);
  await s.folio.identity.setDisabled(gus.id, false);
  t.equal((await req(s, 'GET', '/curl/whoami', { token: gus.token })).status, 200);
});

t.test('plugin_status lists plugins with versions for admins', async (t) => {
  const r = await call(s, admin, 'admin', 'plugin_status');
  t.equal(r.status, 200);
  const rows = r.json<Array<{ namespace: string; version: string; state: string; loaded_at: string }>>();
  const adminRow = rows.find((p) => p.namespace === 'admin')!;
  t.equal(adminRow.version, '1.0.0');
  t.equal(adminRow.state, 'loaded');
  t.ok(Date.parse(adminRow.loaded_at) > 0);
  t.ok(rows.some((p) => p.namespace === 'acme'));
});

t.test('failed_jobs and retry_failed_job are for admins', async (t) => {
  const r = await call(s, admin, 'admin', 'failed_jobs', { limit: 10 });
  t.equal(r.status, 200);
  t.same(r.json(), [], 'no job has failed on a new server');
  const unknown = await call(s, admin, 'admin', 'retry_failed_job', { id: '00000000-0000-4000-8000-000000000000' });
  t.equal(unknown.status, 404);
  t.match(unknown.text, /no failed job/);
  const bob = await createUser(s, 'jobs-nosy@example.com');
  for (const fn of ['failed_jobs', 'retry_failed_job']) {
    const denied = await call(s, bob.token, 'admin', fn, fn === 'failed_jobs' ? {} : { id: '00000000-0000-4000-8000-000000000000' });
    t.equal(denied.status, 403, `${fn} needs the admin role`);
  }
});
