// An MCP client connects with OAuth, end to end, with the MCP SDK's own OAuth client: a 401 on
// /mcp, discovery (protected-resource metadata, then the authorization server's), dynamic client
// registration, authorization code with PKCE through Folio's real sign-in and consent page, the
// token exchange, tools listed and called; then refresh (rotated; a reused refresh token revokes
// the grant), revocation, a deactivated user, and the bad input the server must refuse.
import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, req, createUser } from '../helpers/server.ts';
import { authorize, Browser, LOOPBACK_REDIRECT, MemoryProvider, mcpStatus } from '../helpers/oauth.ts';

const s = await startTestServer();
t.teardown(() => s.close());
const REDIRECT = LOOPBACK_REDIRECT;

const user = await createUser(s, 'oauth-user@example.com');
const provider = new MemoryProvider('Test Agent');

const onMcp = (token: string) => mcpStatus(s.url, token);

async function signIn(authorizationUrl: URL, form: Record<string, string>): Promise<{ page: string; landed: string }> {
  const browser = new Browser(s.url);
  const { res, url } = await browser.follow(authorizationUrl.href);
  const page = await res.text();
  t.equal(res.status, 200, 'the sign-in page');
  t.match(url, /\/oauth\/interaction\//);
  t.equal(res.headers.get('x-frame-options'), 'DENY');
  t.match(res.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
  const posted = await browser.follow(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return { page, landed: posted.url };
}

/** The flow by hand (a native client, loopback redirect, PKCE) with the client the SDK registered. */
async function byHand(form: { email: string; password: string }, opts: { resource?: string; scope?: string } = {}) {
  const flow = await authorize(s.url, provider.info!.client_id, form, opts);
  return { tokens: flow.tokens! };
}

t.test('the MCP SDK client connects with OAuth', async (t) => {
  const prm = await req(s, 'GET', '/.well-known/oauth-protected-resource/mcp');
  const issuer = prm.json().authorization_servers[0];
  t.equal(issuer, `${s.url}/oauth`, 'the resource metadata names the issuer');
  const meta = await req(s, 'GET', '/.well-known/oauth-authorization-server/oauth');
  t.equal(meta.status, 200);
  t.equal(meta.json().issuer, issuer, 'its metadata is at the location derived from the issuer');
  t.same(meta.json().code_challenge_methods_supported, ['S256']);
  // The REST API and the curl surface are resources too, each with its metadata naming the same issuer.
  for (const resource of ['/api/v1', '/curl']) {
    const other = await req(s, 'GET', `/.well-known/oauth-protected-resource${resource}`);
    t.equal(other.status, 200);
    t.same([other.json().resource, other.json().authorization_servers], [`${s.url}${resource}`, [issuer]], `${resource} described`);
  }

  const first = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { authProvider: provider });
  await t.rejects(new Client({ name: 'oauth-test', version: '1.0.0' }).connect(first), /Unauthorized/, 'starts from a 401');
  t.ok(provider.info?.client_id, 'registered itself');
  t.ok(provider.authorizationUrl, 'and was sent to authorize');
  const authUrl = provider.authorizationUrl!;
  t.equal(authUrl.searchParams.get('code_challenge_method'), 'S256');

  // Wrong credentials: the page again, nothing granted.
  const browser = new Browser(s.url);
  const { url: pageUrl, res } = await browser.follow(authUrl.href);
  const html = await res.text();
  t.match(html, /Test Agent/, 'the page names the client');
  t.match(html, /127\.0\.0\.1:53682/, 'and where it sends you back');
  t.match(html, /notes:read/, 'and the scopes asked for');
  t.match(html, /type="password"/);
  t.match(html, />Allow</);
  const wrong = await browser.go(pageUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email: 'oauth-user@example.com', password: 'folio_api_wrong', decision: 'allow' }).toString(),
  });
  t.equal(wrong.status, 401, 'a wrong token is refused on the page');

  const { landed } = await signIn(authUrl, { email: 'oauth-user@example.com', password: user.token, decision: 'allow' });
  const back = new URL(landed);
  t.equal(`${back.origin}${back.pathname}`, REDIRECT, 'back at the client');
  const code = back.searchParams.get('code');
  t.ok(code, 'with a code');
  await first.finishAuth(code!);
  t.ok(provider.saved?.access_token, 'tokens exchanged');
  t.ok(provider.saved?.refresh_token, 'with a refresh token');

  const client = new Client({ name: 'oauth-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { authProvider: provider }));
  const tools = (await client.listTools()).tools.map((x) => x.name);
  t.ok(tools.includes('notetaker__create'), 'tools listed');
  const made = await client.callTool({ name: 'notetaker__create', arguments: { title: 'from an OAuth client' } });
  t.notOk(made.isError, 'and called');
  await client.close();

  // Issued for the MCP resource (the SDK names it): refused on REST and curl, which are other resources.
  const access = provider.saved!.access_token;
  const rest = await req(s, 'GET', '/api/v1/users/me', { token: access });
  t.equal(rest.status, 401, 'an MCP token is not a REST token');
  t.match(rest.json().detail, /issued for .*\/mcp, not for .*\/api\/v1/, 'and the answer says why');
  t.match(rest.headers.get('www-authenticate') ?? '', /invalid_token/);
  t.equal((await req(s, 'GET', '/curl/whoami', { token: access })).status, 401, 'nor a curl token');

  // The user sees the client they authorised; an admin sees it registered.
  const grants = (await req(s, 'GET', '/api/v1/oauth/grants', { token: user.token })).json().items;
  t.equal(grants.length, 1);
  t.equal(grants[0].client_name, 'Test Agent');
  t.same(
    grants[0].scopes,
    ['files:read', 'files:write', 'notes:read', 'notes:write', 'search', 'tokens', 'transcribe', 'transcribe:read'],
    'what the signing-in token allows; admin and users are not granted',
  );
  const clients = (await req(s, 'GET', '/api/v1/oauth/clients', { token: s.adminToken })).json().items;
  t.ok(clients.some((c: { client_id: string }) => c.client_id === provider.info!.client_id));
  t.equal((await req(s, 'GET', '/api/v1/oauth/clients', { token: user.token })).status, 403, 'clients are for admins');
});

t.test('refresh rotates; a reused refresh token revokes the grant; revocation is at once', async (t) => {
  const clientId = provider.info!.client_id;
  const token = (form: Record<string, string>) =>
    fetch(`${s.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: clientId, ...form }).toString(),
    });
  const oldRefresh = provider.saved!.refresh_token!;
  const r1 = await token({ grant_type: 'refresh_token', refresh_token: oldRefresh });
  t.equal(r1.status, 200);
  const fresh = (await r1.json()) as { access_token: string; refresh_token: string };
  t.not(fresh.refresh_token, oldRefresh, 'a new refresh token');
  t.equal(await onMcp(fresh.access_token), 200);

  // Deactivating the user stops the OAuth tokens at once; reactivating does not bring them back
  // (the client signs in again), while the user's API token works again.
  await req(s, 'PATCH', `/api/v1/users/${user.id}`, { token: s.adminToken, body: { active: false } });
  t.equal(await onMcp(fresh.access_token), 401, 'deactivated: refused');
  await req(s, 'PATCH', `/api/v1/users/${user.id}`, { token: s.adminToken, body: { active: true } });
  t.equal(await onMcp(fresh.access_token), 401, 'reactivated: the access token issued before stays refused');
  const revived = await token({ grant_type: 'refresh_token', refresh_token: fresh.refresh_token });
  t.equal(revived.status, 400, 'and so does the refresh token');
  t.equal(((await revived.json()) as { error: string }).error, 'invalid_grant');
  t.equal((await req(s, 'GET', '/api/v1/users/me', { token: user.token })).status, 200, 'the API token works again');
  t.same((await req(s, 'GET', '/api/v1/oauth/grants', { token: user.token })).json().items, [], 'no grant is left');

  const reuse = await token({ grant_type: 'refresh_token', refresh_token: oldRefresh });
  t.equal(reuse.status, 400, 'the old refresh token is refused');
  t.equal(((await reuse.json()) as { error: string }).error, 'invalid_grant');
  t.equal(await onMcp(fresh.access_token), 401, 'and the whole grant is revoked');
  t.equal((await token({ grant_type: 'refresh_token', refresh_token: fresh.refresh_token })).status, 400);
});

t.test('the grant is at most the signing-in token; revocation (RFC 7009) stops it at once', async (t) => {
  // Signed in with a read-only token: the OAuth token reads, and cannot write.
  const reader = await req(s, 'POST', '/api/v1/tokens', {
    token: user.token,
    body: { name: 'reader', scopes: ['notes:read'], expires_in_days: 1 },
  });
  // For the REST API this time (resource /api/v1), signing in with the read-only token as the password.
  const { tokens } = await byHand(
    { email: 'oauth-user@example.com', password: reader.json().token },
    { resource: `${s.url}/api/v1`, scope: 'notes:read notes:write' },
  );
  const access = tokens.access_token;
  t.equal(tokens.scope, 'notes:read', 'granted notes:read only');
  t.equal(await onMcp(access), 401, 'a REST token is not an MCP token');
  t.equal((await req(s, 'GET', '/api/v1/notetaker/notes', { token: access })).status, 200, 'reads');
  const write = await req(s, 'POST', '/api/v1/notetaker/notes', { token: access, body: { title: 'no' } });
  t.equal(write.status, 403, 'a read-only OAuth token cannot write');
  t.same(write.json().missing_scopes, ['notes:write']);
  const revoked = await fetch(`${s.url}/oauth/token/revocation`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: provider.info!.client_id, token: access }).toString(),
  });
  t.equal(revoked.status, 200);
  t.equal((await req(s, 'GET', '/api/v1/users/me', { token: access })).status, 401, 'refused on the next call');
});

t.test("revoking a grant stops its tokens; another user's grant is a 404", async (t) => {
  const auth = new MemoryProvider('Test Agent');
  auth.info = provider.info;
  const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { authProvider: auth });
  await t.rejects(new Client({ name: 'grant', version: '1.0.0' }).connect(transport), /Unauthorized/);
  const { landed } = await signIn(auth.authorizationUrl!, { email: 'oauth-user@example.com', password: user.token, decision: 'allow' });
  await transport.finishAuth(new URL(landed).searchParams.get('code')!);
  const access = auth.saved!.access_token;
  t.equal(await onMcp(access), 200);
  const grant = (await req(s, 'GET', '/api/v1/oauth/grants', { token: user.token })).json().items[0];
  const other = await createUser(s, 'oauth-other@example.com');
  const theirs = await req(s, 'DELETE', `/api/v1/oauth/grants/${grant.id}`, { token: other.token });
  const none = await req(s, 'DELETE', '/api/v1/oauth/grants/no-such-grant', { token: other.token });
  t.equal(theirs.status, 404, "another user's grant");
  t.equal(theirs.text, none.text, 'the same answer as one that does not exist');
  t.equal(await onMcp(access), 200, 'still works');
  t.equal((await req(s, 'DELETE', `/api/v1/oauth/grants/${grant.id}`, { token: user.token })).status, 204);
  t.equal(await onMcp(access), 401, 'revoked at once');
  t.equal((await req(s, 'DELETE', `/api/v1/oauth/grants/${grant.id}`, { token: user.token })).status, 404, 'gone');
});

t.test('deny, a reused code, a wrong PKCE verifier, and bad registrations are refused', async (t) => {
  const auth = new MemoryProvider('Test Agent');
  auth.info = provider.info;
  const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { authProvider: auth });
  await t.rejects(new Client({ name: 'deny', version: '1.0.0' }).connect(transport), /Unauthorized/);
  const denied = await signIn(auth.authorizationUrl!, { decision: 'deny' });
  t.equal(new URL(denied.landed).searchParams.get('error'), 'access_denied', 'deny: back to the client with access_denied');

  const again = new MemoryProvider('Test Agent');
  again.info = provider.info;
  const tr = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { authProvider: again });
  await t.rejects(new Client({ name: 'pkce', version: '1.0.0' }).connect(tr), /Unauthorized/);
  const { landed } = await signIn(again.authorizationUrl!, { email: 'oauth-user@example.com', password: user.token, decision: 'allow' });
  const code = new URL(landed).searchParams.get('code')!;
  const exchange = (verifier: string) =>
    fetch(`${s.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: REDIRECT,
        client_id: provider.info!.client_id,
      }).toString(),
    });
  const wrongVerifier = await exchange('x'.repeat(43));
  t.equal(wrongVerifier.status, 400, 'a wrong PKCE verifier is refused');
  t.equal((await exchange(again.verifier)).status, 200, 'the right one is taken');
  const reused = await exchange(again.verifier);
  t.equal(reused.status, 400, 'a code is good once');
  t.equal(((await reused.json()) as { error: string }).error, 'invalid_grant');

  const register = (body: unknown) =>
    fetch(`${s.url}/oauth/reg`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  for (const uri of ['javascript:alert(1)', 'http://evil.example/cb']) {
    const r = await register({ redirect_uris: [uri], token_endpoint_auth_method: 'none' });
    t.equal(r.status, 400, `registration with ${uri} refused`);
  }
  const noPkce = new URL(`${s.url}/oauth/auth`);
  for (const [k, v] of Object.entries({
    client_id: provider.info!.client_id,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: 'notes:read',
  }))
    noPkce.searchParams.set(k, v);
  const np = await fetch(noPkce, { redirect: 'manual' });
  t.match(np.headers.get('location') ?? '', /error=invalid_request/, 'no PKCE challenge: invalid_request');
  const otherRedirect = new URL(noPkce);
  otherRedirect.searchParams.set('redirect_uri', 'https://evil.example/cb');
  otherRedirect.searchParams.set('code_challenge', 'x'.repeat(43));
  otherRedirect.searchParams.set('code_challenge_method', 'S256');
  const om = await fetch(otherRedirect, { redirect: 'manual' });
  t.equal(om.status, 400, 'an unregistered redirect URI is not redirected to');
});
