// Interactive sign-in: passwords (set by the user, or through an admin's one-time invitation link),
// the authorization server's page signing in with them, throttled per account and per client
// without telling known emails from unknown ones; and OAuth access tokens accepted only on the
// resource (surface) they were issued for, loopback redirect URIs on any port, refusals that say why.
import t from 'tap';
import { startTestServer, req, createUser } from '../helpers/server.ts';
import { authorize, Browser, LOOPBACK_REDIRECT, mcpStatus, registerClient } from '../helpers/oauth.ts';

const s = await startTestServer();
t.teardown(() => s.close());
const clientId = await registerClient(s.url);
const PASSWORD = 'correct horse battery staple';

t.test('an admin creates a user with a password; they sign in with it and grant what their roles allow', async (t) => {
  const made = await req(s, 'POST', '/api/v1/users', {
    token: s.adminToken,
    body: { email: 'pat@example.com', name: 'Pat', password: PASSWORD },
  });
  t.equal(made.status, 201);
  t.equal(made.json().has_password, true, 'the record says a password is set');
  t.notMatch(made.text, /argon2|correct horse/, 'and never shows it');
  const short = await req(s, 'POST', '/api/v1/users', { token: s.adminToken, body: { email: 'x@example.com', password: 'short' } });
  t.equal(short.status, 400, 'a password under 12 characters is refused');

  const flow = await authorize(
    s.url,
    clientId,
    { email: 'Pat@Example.com', password: PASSWORD },
    { scope: 'notes:read notes:write users' },
  );
  t.match(flow.page.html, /name="email"/, 'the sign-in page has an email field');
  t.match(flow.page.html, /type="password"/, 'and a password field');
  t.ok(flow.tokens?.access_token, 'signed in with the password, the code exchanged');
  t.equal(flow.tokens?.scope, 'notes:read notes:write', 'users needs role admin: not granted');

  const wrong = await authorize(s.url, clientId, { email: 'pat@example.com', password: 'not the password at all' });
  t.equal(wrong.refused?.status, 401, 'a wrong password: the page again');
  t.match(wrong.refused?.html ?? '', /do not match/);
});

t.test('a user sets their own password with an API token; changing it needs the current one', async (t) => {
  const u = await createUser(s, 'sam@example.com');
  const me = await req(s, 'GET', '/api/v1/users/me', { token: u.token });
  t.equal(me.json().has_password, false);
  t.equal((await req(s, 'PUT', '/api/v1/users/me/password', { token: u.token, body: { password: 'sam@example.com' } })).status, 400);
  t.equal((await req(s, 'PUT', '/api/v1/users/me/password', { token: u.token, body: { password: PASSWORD } })).status, 204);
  t.equal((await req(s, 'GET', '/api/v1/users/me', { token: u.token })).json().has_password, true);
  const noCurrent = await req(s, 'PUT', '/api/v1/users/me/password', { token: u.token, body: { password: 'another long password' } });
  t.equal(noCurrent.status, 403, 'changing it without the current password');
  const wrongCurrent = await req(s, 'PUT', '/api/v1/users/me/password', {
    token: u.token,
    body: { password: 'another long password', current_password: 'guess guess guess' },
  });
  t.equal(wrongCurrent.status, 403, 'or with a wrong one');
  t.match(wrongCurrent.json().detail, /send your current one as current_password/, 'and is told what to send');
  const changed = await req(s, 'PUT', '/api/v1/users/me/password', {
    token: u.token,
    body: { password: 'another long password', current_password: PASSWORD },
  });
  t.equal(changed.status, 204, 'with it: changed');
  t.ok((await authorize(s.url, clientId, { email: 'sam@example.com', password: 'another long password' })).tokens?.access_token);
  t.equal((await authorize(s.url, clientId, { email: 'sam@example.com', password: PASSWORD })).refused?.status, 401, 'the old one is gone');

  // A read-only token may not; an OAuth client acting for the user may not either.
  const reader = await req(s, 'POST', '/api/v1/tokens', {
    token: u.token,
    body: { name: 'r', scopes: ['notes:read'], expires_in_days: 1 },
  });
  const ro = await req(s, 'PUT', '/api/v1/users/me/password', { token: reader.json().token, body: { password: 'x'.repeat(20) } });
  t.equal(ro.status, 403);
  const oauth = await authorize(
    s.url,
    clientId,
    { email: 'sam@example.com', password: 'another long password' },
    {
      scope: 'tokens',
      resource: `${s.url}/api/v1`,
    },
  );
  const viaOAuth = await req(s, 'PUT', '/api/v1/users/me/password', {
    token: oauth.tokens!.access_token,
    body: { password: 'x'.repeat(20), current_password: 'another long password' },
  });
  t.equal(viaOAuth.status, 403, 'an OAuth token cannot set the password');
  t.match(viaOAuth.json().detail, /personal API token/);
});

t.test('an invitation link sets the password once, then works no more', async (t) => {
  const u = await createUser(s, 'invitee@example.com');
  const other = await createUser(s, 'not-admin@example.com');
  t.equal((await req(s, 'POST', `/api/v1/users/${u.id}/invitations`, { token: other.token, body: {} })).status, 403, 'not for non-admins');
  t.equal((await req(s, 'POST', `/api/v1/users/00000000-0000-0000-0000-000000000000/invitations`, { token: s.adminToken })).status, 404);
  const inv = await req(s, 'POST', `/api/v1/users/${u.id}/invitations`, { token: s.adminToken, body: { expires_in_hours: 2 } });
  t.equal(inv.status, 201);
  const { url, expires_at } = inv.json();
  t.match(url, new RegExp(`^${s.url}/invite/[A-Za-z0-9_-]{43}$`), 'a link on this server');
  t.ok(Math.abs(Date.parse(expires_at) - Date.now() - 2 * 3_600_000) < 60_000, 'expiring as asked');
  const secret = url.split('/').pop()!;
  const stored = await s.folio.db.orm.em
    .fork()
    .execute<Array<{ token_hash: string }>>(`select token_hash from user_invitations where user_id = ?`, [u.id]);
  t.not(stored[0]?.token_hash, secret, 'stored hashed, not as the link says');

  const browser = new Browser(s.url);
  const page = await browser.go(url);
  t.equal(page.status, 200);
  const html = await page.text();
  t.match(html, /invitee@example\.com/, 'the page names the account');
  t.equal(page.headers.get('x-frame-options'), 'DENY');
  t.equal((await browser.post(url, { password: PASSWORD, confirm: 'something else entirely' })).res.status, 400, 'the two must match');
  t.equal((await browser.post(url, { password: 'short', confirm: 'short' })).res.status, 400, 'and be long enough');
  const set = await browser.post(url, { password: PASSWORD, confirm: PASSWORD });
  t.equal(set.res.status, 200);
  t.match(await set.res.text(), /password is set/);
  t.equal((await browser.go(url)).status, 404, 'used: the link is dead');
  t.equal((await browser.post(url, { password: 'yet another password', confirm: 'yet another password' })).res.status, 404);
  t.ok((await authorize(s.url, clientId, { email: 'invitee@example.com', password: PASSWORD })).tokens?.access_token, 'signs in');

  // The users namespace makes the same links (curl and MCP).
  const viaCurl = await req(s, 'POST', '/curl/call/users/invite', { token: s.adminToken, body: { id: u.id, expires_in_hours: 1 } });
  t.equal(viaCurl.status, 200);
  t.match(viaCurl.json().url, /\/invite\/[A-Za-z0-9_-]{43}$/, 'users.invite gives a link');
  t.equal((await fetch(viaCurl.json().url)).status, 200, 'that opens the page');

  // An expired link is dead too.
  const old = (await req(s, 'POST', `/api/v1/users/${u.id}/invitations`, { token: s.adminToken })).json().url as string;
  await s.folio.db.orm.em
    .fork()
    .execute(`update user_invitations set expires_at = now() - interval '1 second' where user_id = ? and used_at is null`, [u.id]);
  t.equal((await fetch(old)).status, 404, 'expired');
  t.equal((await fetch(`${s.url}/invite/not-a-link`)).status, 404, 'junk');
});

/** One sign-in page, posted to as often as wanted (each post answers 401, 429 or a redirect). */
async function signInPage() {
  const u = new URL(`${s.url}/oauth/auth`);
  const params = {
    client_id: clientId,
    redirect_uri: LOOPBACK_REDIRECT,
    response_type: 'code',
    scope: 'notes:read',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
  };
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  const browser = new Browser(s.url);
  const page = await browser.follow(u.href);
  return {
    post: async (form: Record<string, string>) => (await browser.go(page.url, formPost({ ...form, decision: 'allow' }))).status,
  };
}
const formPost = (form: Record<string, string>): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(form).toString(),
});

t.test('parallel wrong sign-ins for one account: at most the limit is checked', async (t) => {
  await req(s, 'POST', '/api/v1/users', { token: s.adminToken, body: { email: 'burst@example.com', password: PASSWORD } });
  await req(s, 'POST', '/api/v1/users', { token: s.adminToken, body: { email: 'bystander@example.com', password: PASSWORD } });
  const page = await signInPage();
  const statuses = await Promise.all(
    Array.from({ length: 30 }, (_, i) => page.post({ email: 'burst@example.com', password: `parallel guess ${i}` })),
  );
  t.equal(statuses.filter((x) => x === 401).length, 5, 'five wrong passwords checked (the limit), no more');
  t.equal(statuses.filter((x) => x === 429).length, 25, 'the rest refused before any check');
  const right = await authorize(s.url, clientId, { email: 'burst@example.com', password: PASSWORD });
  t.equal(right.refused?.status, 429, 'the right password after the burst waits too');
  t.ok((await authorize(s.url, clientId, { email: 'bystander@example.com', password: PASSWORD })).tokens, 'another account signs in');
  t.ok(
    (await authorize(s.url, clientId, { email: 'bystander@example.com', password: PASSWORD })).tokens,
    'signing in right counts no failure',
  );
});

t.test('sign-in is throttled per account and per client, the same for unknown emails', async (t) => {
  await req(s, 'POST', '/api/v1/users', { token: s.adminToken, body: { email: 'target@example.com', password: PASSWORD } });
  const attempt = (email: string, password: string) => authorize(s.url, clientId, { email, password });
  const known: number[] = [];
  const unknown: number[] = [];
  for (let i = 0; i < 5; i++) {
    known.push((await attempt('target@example.com', `guess number ${i} .....`)).refused!.status);
    unknown.push((await attempt('nobody@example.com', `guess number ${i} .....`)).refused!.status);
  }
  t.same(known, [401, 401, 401, 401, 401]);
  t.same(unknown, known, 'an unknown email answers exactly as a known one');
  const locked = await attempt('target@example.com', PASSWORD);
  t.equal(locked.refused?.status, 429, 'the account is locked for a while, even for the right password');
  t.ok(Number(locked.refused?.retryAfter) > 0, 'Retry-After says how long');
  const lockedUnknown = await attempt('nobody@example.com', PASSWORD);
  t.equal(lockedUnknown.refused?.status, 429, 'an unknown email is locked the same way');
  const same = (html = '') => html.replace(/\d+ seconds/, '').replace(/interaction\/[^"]+/, '');
  t.equal(same(lockedUnknown.refused?.html), same(locked.refused?.html), 'with the same page');

  // Per client: failures with made-up emails from a shared address do not lock out an account
  // owner there (20 did), until the address's much higher limit.
  for (let i = 0; i < 20; i++) await attempt(`made-up-${i}@example.com`, 'wrong wrong wrong');
  t.ok((await attempt('pat@example.com', PASSWORD)).tokens?.access_token, 'the owner of a real account still signs in');
  const sprayer = await signInPage();
  const sprayed = await Promise.all(
    Array.from({ length: 100 }, (_, i) => sprayer.post({ email: `spray-${i}@example.com`, password: 'wrong wrong wrong' })),
  );
  t.ok(sprayed.includes(429), 'past its limit the address is refused');
  t.equal((await attempt('pat@example.com', PASSWORD)).refused?.status, 429, 'for every account');
});

t.test(
  'the throttle holds on every node',
  { skip: process.env['DATABASE_URL'] ? false : 'two nodes need one PostgreSQL database' },
  async (t) => {
    const node2 = await startTestServer({ sharedDatabaseUrl: s.folio.config.databaseUrl! });
    t.teardown(() => node2.close());
    const there = await authorize(node2.url, clientId, { email: 'target@example.com', password: PASSWORD });
    t.equal(there.refused?.status, 429, 'the account locked on one node is locked on the other');
  },
);

t.test('an OAuth token works on the resource it was issued for; expired and foreign tokens are told apart', async (t) => {
  // A fresh server: the one above has throttled this client address.
  const s2 = await startTestServer();
  t.teardown(() => s2.close());
  await req(s2, 'POST', '/api/v1/users', { token: s2.adminToken, body: { email: 'aud@example.com', password: PASSWORD } });
  const client = await registerClient(s2.url);
  const login = { email: 'aud@example.com', password: PASSWORD };
  const on = async (token: string) => ({
    rest: (await req(s2, 'GET', '/api/v1/users/me', { token })).status,
    curl: (await req(s2, 'GET', '/curl/whoami', { token })).status,
    mcp: await mcpStatus(s2.url, token),
  });

  const whole = await authorize(s2.url, client, login);
  t.same(await on(whole.tokens!.access_token), { rest: 200, curl: 200, mcp: 200 }, 'no resource named: Folio as a whole');
  const curl = await authorize(s2.url, client, login, { resource: `${s2.url}/curl` });
  t.same(await on(curl.tokens!.access_token), { rest: 401, curl: 200, mcp: 401 }, 'for /curl: curl only');
  const rest = await authorize(s2.url, client, login, { resource: `${s2.url}/api/v1` });
  t.same(await on(rest.tokens!.access_token), { rest: 200, curl: 401, mcp: 401 }, 'for /api/v1: REST only');
  const mcp = await authorize(s2.url, client, login, { resource: `${s2.url}/mcp` });
  t.same(await on(mcp.tokens!.access_token), { rest: 401, curl: 401, mcp: 200 }, 'for /mcp: MCP only');
  const foreign = await req(s2, 'GET', '/api/v1/users/me', { token: mcp.tokens!.access_token });
  t.match(foreign.json().detail, /issued for .*\/mcp, not for .*\/api\/v1.*resource=/, 'the refusal says what to ask for');

  const elsewhere = await authorize(s2.url, client, login, { resource: 'https://evil.example/api' });
  t.match(elsewhere.landed ?? '', /error=invalid_target/, 'another server as the resource: refused');

  // RFC 8252: a native client's loopback redirect URI matches on any port.
  const port = await authorize(s2.url, client, login, { redirect: 'http://127.0.0.1:40123/callback' });
  t.match(port.landed ?? '', /^http:\/\/127\.0\.0\.1:40123\/callback\?code=/, 'another loopback port');
  t.ok(port.tokens?.access_token, 'and the code is exchanged on it');
  const path = await authorize(s2.url, client, login, { redirect: 'http://127.0.0.1:40123/elsewhere' });
  t.equal(path.page.status, 400, 'but the path must match');
  // localhost names loopback too (as mcp-remote registers it), and a web client's https redirect URI.
  const local = await registerClient(s2.url, 'Local', 'http://localhost:3334/oauth/callback');
  const viaName = await authorize(s2.url, local, login, { redirect: 'http://localhost:51234/oauth/callback' });
  t.match(viaName.landed ?? '', /^http:\/\/localhost:51234\/oauth\/callback\?code=/, 'localhost on another port');
  const web = await registerClient(s2.url, 'Web', 'https://app.example/oauth/callback');
  const webFlow = await authorize(s2.url, web, login, { redirect: 'https://app.example/oauth/callback' });
  t.match(webFlow.landed ?? '', /^https:\/\/app\.example\/oauth\/callback\?code=/, 'an https redirect URI');
  const webOther = await authorize(s2.url, web, login, { redirect: 'https://app.example:8443/oauth/callback' });
  t.equal(webOther.page.status, 400, 'whose port is not free: only loopback ports are');

  // Expired: said so, with what to do.
  await s2.folio.db.orm.em
    .fork()
    .execute(
      `update oauth_records set expires_at = now() - interval '1 second', payload = jsonb_set(payload, '{exp}', to_jsonb(1)) where model = 'AccessToken'`,
    );
  // Any change to the user drops what the server cached of their tokens.
  const audId = (await req(s2, 'GET', '/api/v1/users?email=aud@example.com', { token: s2.adminToken })).json().items[0].id;
  await req(s2, 'PATCH', `/api/v1/users/${audId}`, { token: s2.adminToken, body: { name: 'Aud' } });
  const expired = await req(s2, 'GET', '/api/v1/users/me', { token: rest.tokens!.access_token });
  t.equal(expired.status, 401);
  t.match(expired.json().detail, /expired: refresh it/);
  const deactivatedUser = await createUser(s2, 'gone@example.com');
  await req(s2, 'PATCH', `/api/v1/users/${deactivatedUser.id}`, { token: s2.adminToken, body: { active: false } });
  const gone = await req(s2, 'GET', '/api/v1/users/me', { token: deactivatedUser.token });
  t.match(gone.json().detail, /deactivated/);
});
