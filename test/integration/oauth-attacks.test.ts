// The authorization server against what an attacker tries, beyond the flows oauth-mcp.test.ts
// covers (wrong PKCE verifier, reused code and refresh token, javascript: and http redirect URIs,
// another user's grant): a consent form posted from another site, or without the browser's
// interaction cookie; redirect URIs that are not the registered one (open redirects), with the
// loopback port the one thing that may differ (RFC 8252); oversized and malformed registrations;
// and another user's client as a 404. None of them may end with a code in the attacker's hands.
import t from 'tap';
import { startTestServer, req, call, createUser } from '../helpers/server.ts';
import { authorize, Browser, LOOPBACK_REDIRECT, registerClient } from '../helpers/oauth.ts';
import { createHash, randomBytes } from 'node:crypto';

const s = await startTestServer();
t.teardown(() => s.close());
const user = await createUser(s, 'attacked@example.com');
const clientId = await registerClient(s.url, 'Honest App');

/** Opens the sign-in page for `clientId` in a fresh browser; answers it and the form's URL. */
async function openSignIn(redirect = LOOPBACK_REDIRECT) {
  const verifier = randomBytes(32).toString('base64url');
  const u = new URL(`${s.url}/oauth/auth`);
  for (const [k, v] of Object.entries({
    client_id: clientId,
    redirect_uri: redirect,
    response_type: 'code',
    scope: 'notes:read',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: 'st',
  }))
    u.searchParams.set(k, v);
  const browser = new Browser(s.url);
  const first = await browser.follow(u.href);
  return { browser, first, formUrl: first.url };
}

const form = (decision = 'allow') => new URLSearchParams({ email: 'attacked@example.com', password: user.token, decision }).toString();

t.test('CSRF: a consent posted by another site, or without the interaction cookie, gives no code', async (t) => {
  const { browser, first, formUrl } = await openSignIn();
  t.equal(first.res.status, 200, 'the sign-in page');
  await first.res.text();
  // Another site's page posting the form in the user's browser: the browser sends the cookie (as if
  // SameSite did not stop it) and says where the post comes from.
  for (const headers of [
    { origin: 'https://evil.example' },
    { 'sec-fetch-site': 'cross-site' },
    { 'sec-fetch-site': 'same-site', origin: 'null' },
  ]) {
    const forged = await browser.go(formUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: form(),
    });
    t.equal(forged.status, 403, `a post with ${JSON.stringify(headers)} is refused (${forged.status} ${forged.headers.get('location')})`);
    t.equal(forged.headers.get('location'), null, 'and sends nobody anywhere');
    t.match(await forged.text(), /only be sent from Folio's own sign-in page/);
  }
  // Without the browser's interaction cookie (what a cross-site post carries under SameSite=Lax).
  const cookieless = await fetch(formUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form(),
    redirect: 'manual',
  });
  t.equal(cookieless.status, 400, 'a post without the interaction cookie is refused');
  t.equal(cookieless.headers.get('location'), null);
  await cookieless.text();
  // The real page, posted from Folio's own origin, still works afterwards: nothing was used up.
  const own = await browser.follow(formUrl, {
    method: 'POST',
    // As Chromium sends it from this page (no-referrer makes its Origin "null").
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'null', 'sec-fetch-site': 'same-origin' },
    body: form(),
  });
  t.ok(own.url.startsWith(LOOPBACK_REDIRECT), 'the genuine post lands on the client');
  t.ok(new URL(own.url).searchParams.get('code'), 'with a code');
});

t.test('open redirects: only the registered redirect URI, the loopback port aside', async (t) => {
  for (const redirect of [
    'https://evil.example/callback',
    'http://127.0.0.1:53682/other-path',
    'http://127.0.0.1:53682/callback/../../evil',
    'http://127.0.0.1.evil.example:53682/callback',
    'http://localhost:53682/callback',
    'http://127.0.0.1:53682/callback?next=https://evil.example',
  ]) {
    const u = new URL(`${s.url}/oauth/auth`);
    for (const [k, v] of Object.entries({
      client_id: clientId,
      redirect_uri: redirect,
      response_type: 'code',
      scope: 'notes:read',
      code_challenge: 'x'.repeat(43),
      code_challenge_method: 'S256',
    }))
      u.searchParams.set(k, v);
    const res = await fetch(u, { redirect: 'manual' });
    t.equal(res.status, 400, `${redirect}: refused on Folio's own page`);
    t.equal(res.headers.get('location'), null, `${redirect}: and never redirected to`);
    await res.text();
  }
  // RFC 8252 §7.3: a native app's loopback listener gets whatever port is free.
  const otherPort = await authorize(
    s.url,
    clientId,
    { email: 'attacked@example.com', password: user.token },
    {
      redirect: 'http://127.0.0.1:61999/callback',
      scope: 'notes:read',
    },
  );
  t.ok(otherPort.tokens?.access_token, 'the registered loopback URI on another port works');
});

t.test('control characters in authorization parameters are a 400 invalid_request, never a 500', async (t) => {
  for (const name of ['state', 'ui_locales', 'login_hint']) {
    for (const value of ['a\u0000b', 'a\u0001b', 'a\u007fb']) {
      const u = new URL(`${s.url}/oauth/auth`);
      for (const [k, v] of Object.entries({
        client_id: clientId,
        redirect_uri: LOOPBACK_REDIRECT,
        response_type: 'code',
        scope: 'notes:read',
        code_challenge: createHash('sha256').update('v'.repeat(43)).digest('base64url'),
        code_challenge_method: 'S256',
        state: 'st',
        [name]: value,
      }))
        u.searchParams.set(k, v);
      const r = await fetch(u, { redirect: 'manual' });
      const what = `${name}=${JSON.stringify(value)}`;
      t.equal(r.status, 400, `${what}: 400`);
      const body = (await r.json()) as { error: string; error_description: string };
      t.equal(body.error, 'invalid_request', `${what}: invalid_request`);
      t.match(body.error_description, new RegExp(name), `${what}: names the parameter`);
    }
  }
  t.equal((await fetch(`${s.url}/health`)).status, 200, 'the server answers on');
});

t.test('registration: bad redirect URIs, oversized and malformed bodies are refused, never a 500', async (t) => {
  const register = (body: string, type = 'application/json') =>
    fetch(`${s.url}/oauth/reg`, { method: 'POST', headers: { 'content-type': type }, body });
  for (const uri of ['data:text/html,hi', 'file:///etc/passwd', 'http://192.168.1.5/cb', 'https://app.example/cb#frag', 'not a uri']) {
    const r = await register(JSON.stringify({ redirect_uris: [uri], token_endpoint_auth_method: 'none' }));
    t.equal(r.status, 400, `${uri} refused`);
    t.equal(((await r.json()) as { error: string }).error, 'invalid_redirect_uri', `${uri}: invalid_redirect_uri`);
  }
  const huge = JSON.stringify({ client_name: 'x'.repeat(2 * 1024 * 1024), redirect_uris: [LOOPBACK_REDIRECT] });
  const big = await register(huge);
  t.ok(big.status === 413 || big.status === 400, `a 2 MiB registration is refused (${big.status})`);
  await big.text();
  const many = await register(JSON.stringify({ redirect_uris: Array.from({ length: 5000 }, (_, i) => `http://127.0.0.1/cb${i}`) }));
  t.ok(many.status >= 400 && many.status < 500, `5,000 redirect URIs are refused (${many.status})`);
  await many.text();
  for (const body of ['{"redirect_uris": ', '[]', '"x"', '{"redirect_uris": "http://127.0.0.1/cb"}']) {
    const r = await register(body);
    t.equal(r.status, 400, `${body} refused`);
    await r.text();
  }
  const deep = await register(`${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`);
  t.ok(deep.status >= 400 && deep.status < 500, `deep nesting refused (${deep.status})`);
  await deep.text();
});

t.test("another user's client registration and grants are not theirs to see", async (t) => {
  const other = await createUser(s, 'other@example.com');
  // The honest user authorises the client; the other user lists their own authorisations.
  const flow = await authorize(s.url, clientId, { email: 'attacked@example.com', password: user.token }, { scope: 'notes:read' });
  t.ok(flow.tokens?.access_token);
  const mine = await req(s, 'GET', '/api/v1/oauth/grants', { token: user.token });
  t.equal(mine.status, 200);
  const grant = (mine.json().items as Array<{ id: string; client_id: string }>).find((g) => g.client_id === clientId);
  t.ok(grant, 'the user sees the client they authorised');
  const theirs = await req(s, 'GET', '/api/v1/oauth/grants', { token: other.token });
  t.notOk(
    (theirs.json().items as Array<{ client_id: string }>).some((g) => g.client_id === clientId),
    'the other user does not',
  );
  const revoke = await req(s, 'DELETE', `/api/v1/oauth/grants/${grant!.id}`, { token: other.token });
  t.equal(revoke.status, 404, "revoking another user's grant is a 404");
  t.equal(
    (await req(s, 'DELETE', `/api/v1/oauth/clients/${clientId}`, { token: other.token })).status,
    403,
    'deleting clients is for admins',
  );
  t.ok(
    (await fetch(`${s.url}/api/v1/notetaker/notes`, { headers: { authorization: `Bearer ${flow.tokens!.access_token}` } })).ok,
    'the grant still works',
  );
});

t.test('the database holds no usable token, code or registration access token', async (t) => {
  // Whoever reads the database (a backup, a replica) must find nothing a client could present.
  const reg = await fetch(`${s.url}/oauth/reg`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Stored App', redirect_uris: [LOOPBACK_REDIRECT], token_endpoint_auth_method: 'none' }),
  });
  const { client_id, registration_access_token } = (await reg.json()) as { client_id: string; registration_access_token: string };
  const flow = await authorize(
    s.url,
    client_id,
    { email: 'attacked@example.com', password: user.token },
    { scope: 'notes:read offline_access' },
  );
  const code = new URL(flow.landed!).searchParams.get('code')!;
  const first = flow.tokens!;
  t.ok(code && first.access_token && first.refresh_token, 'a code, an access and a refresh token');
  t.equal((await req(s, 'GET', '/api/v1/users/me', { token: first.access_token })).status, 200, 'the access token works');
  const token = (form: Record<string, string>) =>
    fetch(`${s.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id, ...form }).toString(),
    });
  const refreshed = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token! });
  t.equal(refreshed.status, 200, 'the refresh token works');
  const second = (await refreshed.json()) as { access_token: string; refresh_token: string };

  const rows = await s.folio.db.orm.em
    .fork()
    .execute<Array<{ model: string; text: string }>>(`select model, payload::text as text from oauth_records`);
  t.ok(rows.some((r) => r.model === 'AccessToken') && rows.some((r) => r.model === 'RefreshToken'), 'the tokens are stored');
  const secrets = {
    code,
    registration_access_token,
    ...Object.fromEntries(
      Object.entries({ first, second }).flatMap(([k, v]) => [
        [`${k} access`, v.access_token],
        [`${k} refresh`, v.refresh_token!],
      ]),
    ),
  };
  for (const [what, secret] of Object.entries(secrets)) {
    t.same(
      rows.filter((r) => r.text.includes(secret)).map((r) => r.model),
      [],
      `no record holds the ${what}`,
    );
  }

  // Everything found by its secret still works: the token, client management, revocation.
  t.equal((await req(s, 'GET', '/api/v1/users/me', { token: second.access_token })).status, 200, 'the new access token works');
  const managed = await fetch(`${s.url}/oauth/reg/${encodeURIComponent(client_id)}`, {
    headers: { authorization: `Bearer ${registration_access_token}` },
  });
  t.equal(managed.status, 200, 'the registration access token reads the client');
  await managed.body?.cancel();
  const revoke = await fetch(`${s.url}/oauth/token/revocation`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id, token: second.access_token }).toString(),
  });
  t.equal(revoke.status, 200);
  await revoke.body?.cancel();
  t.equal((await req(s, 'GET', '/api/v1/users/me', { token: second.access_token })).status, 401, 'a revoked access token is refused');
  const again = await token({ grant_type: 'refresh_token', refresh_token: second.refresh_token });
  t.equal(again.status, 400, 'and its grant with it: the refresh token too');
  t.equal(((await again.json()) as { error: string }).error, 'invalid_grant');
});

t.test('an access token stored before its secret left the payload still works', async (t) => {
  // As rows were written before: the raw token in payload.jti (the migration strips it from them).
  const raw = randomBytes(32).toString('base64url');
  const exp = Math.floor(Date.now() / 1000) + 600;
  const grantId = `g-old-${raw.slice(0, 8)}`;
  const em = s.folio.db.orm.em.fork();
  await s.folio.identity.oauth.adapter('Grant').upsert(grantId, { kind: 'Grant', jti: grantId, accountId: user.id, clientId, exp }, 600);
  await em.execute(
    `insert into oauth_records (model, id, payload, grant_id, expires_at) values ('AccessToken', ?, ?::jsonb, ?, now() + interval '10 minutes')`,
    [
      createHash('sha256').update(raw).digest('hex'),
      JSON.stringify({
        kind: 'AccessToken',
        jti: raw,
        aud: s.url,
        accountId: user.id,
        clientId,
        grantId,
        scope: 'notes:read',
        exp,
        iat: exp - 600,
      }),
      grantId,
    ],
  );
  t.equal((await s.folio.identity.oauth.adapter('AccessToken').find(raw))?.['jti'], raw, 'found with its value');
  t.equal((await req(s, 'GET', '/api/v1/users/me', { token: raw })).status, 200, 'and it authenticates');
});

t.test('expired OAuth records are purged after a day; live ones stay', async (t) => {
  const store = s.folio.identity.oauth.adapter('AccessToken');
  const payload = (jti: string) => ({ kind: 'AccessToken', jti, accountId: user.id, clientId, grantId: `g-${jti}` });
  await store.upsert('long-gone', payload('long-gone'), -2 * 24 * 3600);
  await store.upsert('just-expired', payload('just-expired'), -60);
  await store.upsert('alive', payload('alive'), 3600);
  const purged = await s.folio.identity.oauth.purgeExpired();
  t.ok(purged >= 1, `purged ${purged}`);
  const left = await s.folio.db.orm.em
    .fork()
    .execute<Array<{ n: number }>>(
      `select count(*)::int as n from oauth_records where model = 'AccessToken' and grant_id in ('g-long-gone', 'g-just-expired', 'g-alive')`,
    );
  t.equal(left[0]!.n, 2, 'the one expired two days ago is gone; the one expired a minute ago and the live one are kept');
  t.ok(await store.find('alive'), 'the live token is still found');
  t.equal(await store.find('just-expired'), undefined, 'an expired one is not found, purged or not');
});

t.test('client metadata holding NUL is a 400 invalid_request, not a database error', async (t) => {
  const r = await fetch(`${s.url}/oauth/reg`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'a\u0000b', redirect_uris: [LOOPBACK_REDIRECT], token_endpoint_auth_method: 'none' }),
  });
  t.equal(r.status, 400);
  t.equal(((await r.json()) as { error: string }).error, 'invalid_request');
});

t.test('a registration flood: bounded per address, unused clients expire, the admin list is paged', async (t) => {
  const before = (await req(s, 'GET', '/api/v1/oauth/clients?limit=100', { token: s.adminToken })).json().items.length;
  // Last in this file: every registration from this address so far counted towards the limit.
  let refused: Response | null = null;
  let made = 0;
  for (let i = 0; i < 25 && !refused; i++) {
    const r = await fetch(`${s.url}/oauth/reg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: `flood ${i}`, redirect_uris: [LOOPBACK_REDIRECT], token_endpoint_auth_method: 'none' }),
    });
    if (r.status === 429) refused = r;
    else {
      t.equal(r.status, 201, `registration ${i}`);
      made++;
      await r.text();
    }
  }
  t.ok(refused, `refused after ${made} registrations`);
  t.ok(made <= 20, 'at most 20 an hour from one address');
  t.ok(Number(refused?.headers.get('retry-after')) > 0, 'with Retry-After');
  t.equal(((await refused?.json()) as { error: string }).error, 'temporarily_unavailable', "in OAuth's error shape");
  for (const spelling of ['/oauth/reg/', '/oauth/REG', '/oauth//reg']) {
    const r = await fetch(`${s.url}${spelling}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'x', redirect_uris: [LOOPBACK_REDIRECT], token_endpoint_auth_method: 'none' }),
    });
    t.equal(r.status, 429, `${spelling}: the provider's router takes it for /reg, so the limit holds there too`);
    await r.text();
  }
  t.equal((await fetch(`${s.url}/health`)).status, 200, 'the server answers on');

  // The admin's list comes a page at a time, over REST and curl alike.
  const first = (await req(s, 'GET', '/api/v1/oauth/clients?limit=2', { token: s.adminToken })).json();
  t.equal(first.items.length, 2);
  t.ok(first.next_cursor, 'a next page');
  const second = (
    await req(s, 'GET', `/api/v1/oauth/clients?limit=2&cursor=${encodeURIComponent(first.next_cursor)}`, { token: s.adminToken })
  ).json();
  t.equal(second.items.length, 2);
  t.notSame(
    second.items.map((c: { client_id: string }) => c.client_id),
    first.items.map((c: { client_id: string }) => c.client_id),
    'the next page holds other clients',
  );
  const viaCurl = await call(s, s.adminToken, 'oauth', 'clients', { limit: 3 });
  t.equal(viaCurl.status, 200, viaCurl.text);
  t.equal(viaCurl.json().items.length, 3, 'curl pages too');
  t.equal((await req(s, 'GET', '/api/v1/oauth/clients?cursor=nonsense', { token: s.adminToken })).status, 400, 'a made-up cursor');

  // Clients nobody authorised go once they are older than the setting (7 days); the used one stays.
  await s.folio.db.orm.em.fork().execute(`update oauth_records set created_at = now() - interval '8 days' where model = 'Client'`);
  const gone = await s.folio.identity.oauth.purgeUnusedClients();
  t.ok(gone >= made, `deleted ${gone} unused clients`);
  const left = (await req(s, 'GET', '/api/v1/oauth/clients?limit=100', { token: s.adminToken })).json().items;
  t.ok(left.length < before + made, 'the flood is gone');
  t.ok(
    left.some((c: { client_id: string }) => c.client_id === clientId),
    'the client a user authorised is kept',
  );
});
