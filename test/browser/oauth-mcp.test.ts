// An MCP client connects with OAuth through a real browser: the MCP SDK's client (its
// OAuthClientProvider) starts from a 401 on /mcp, discovers, registers itself, and sends the person
// to Folio's sign-in and consent pages, which headless Chromium (Debian's, driven by
// playwright-core) fills in and approves as a person would. The browser is sent back to the
// client's loopback address with a code; the client gets tokens, lists tools, renews its access
// token with the refresh token, and is refused once the person revokes the grant.
import t from 'tap';
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MemoryProvider, mcpStatus } from '../helpers/oauth.ts';
import { createUser, req, startTestServer } from '../helpers/server.ts';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const REDIRECT = 'http://127.0.0.1:53682/callback';

if (!existsSync(CHROMIUM)) {
  if (process.env['CI']) t.fail(`${CHROMIUM} is missing: apt-get install -y chromium`);
  else t.plan(0, `${CHROMIUM} is missing: apt-get install -y chromium (or set CHROMIUM_PATH)`);
} else {
  await run();
}

async function run() {
  const s = await startTestServer();
  t.teardown(() => s.close());
  const PASSWORD = 'a long passphrase for the browser';
  // Robin has an API token (for their own settings) and sets a password for signing in.
  const robin = await createUser(s, 'robin@example.com');
  const set = await req(s, 'PUT', '/api/v1/users/me/password', { token: robin.token, body: { password: PASSWORD } });
  if (set.status !== 204) throw new Error(`password: ${set.status} ${set.text}`);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
  });
  t.teardown(() => browser.close());

  t.test('sign in and allow in the browser; tools, refresh, revocation', async (t) => {
    const provider = new MemoryProvider('Browser Agent');
    const first = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { authProvider: provider });
    await t.rejects(new Client({ name: 'browser-oauth', version: '1.0.0' }).connect(first), /Unauthorized/, 'starts from a 401');
    t.ok(provider.authorizationUrl, 'registered and sent the person to authorize');

    const page = await browser.newPage();
    // The client's loopback address: what the browser is sent back to is caught here.
    let landed: URL | undefined;
    await page.route('http://127.0.0.1:53682/**', async (route) => {
      landed = new URL(route.request().url());
      await route.fulfill({ status: 200, contentType: 'text/plain', body: 'back at the client' });
    });
    await page.goto(provider.authorizationUrl!.href, { waitUntil: 'load' });
    t.match(await page.textContent('body'), /Browser Agent/, 'the page names the client');
    await page.getByLabel('Email').fill('robin@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((u) => u.href.startsWith(REDIRECT), { timeout: 30_000 });
    t.ok(landed, 'the browser went back to the client');
    const code = landed!.searchParams.get('code');
    t.ok(code, 'with a code');
    await page.close();

    await first.finishAuth(code!);
    t.ok(provider.saved?.refresh_token, 'tokens, with a refresh token');
    const client = new Client({ name: 'browser-oauth', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { authProvider: provider }));
    t.ok(
      (await client.listTools()).tools.some((x) => x.name === 'notetaker__create'),
      'tools listed',
    );
    await client.close();

    // The access token runs out: the client renews it with the refresh token (rotated) on the 401.
    const before = provider.saved!;
    provider.saved = { ...before, access_token: 'expired-or-garbage' };
    const again = new Client({ name: 'browser-oauth', version: '1.0.0' });
    await again.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { authProvider: provider }));
    t.ok((await again.listTools()).tools.length > 0, 'connected again after a refresh');
    t.not(provider.saved.refresh_token, before.refresh_token, 'the refresh token rotated');
    await again.close();

    // Robin revokes the grant (with their own API token, as from the settings of their account).
    const listed = await req(s, 'GET', '/api/v1/oauth/grants', { token: robin.token });
    t.equal(listed.status, 200, listed.text);
    const grant = listed.json<{ items: Array<{ id: string; client_name: string }> }>().items.find((g) => g.client_name === 'Browser Agent');
    t.ok(grant, 'the grant is listed for Robin');
    const revoked = await req(s, 'DELETE', `/api/v1/oauth/grants/${grant!.id}`, { token: robin.token });
    t.equal(revoked.status, 204, revoked.text);
    t.equal(await mcpStatus(s.url, provider.saved.access_token), 401, 'its access token stops at once');
    const after = new Client({ name: 'browser-oauth', version: '1.0.0' });
    await t.rejects(
      after.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { authProvider: provider })),
      /Unauthorized|grant request is invalid/,
      'and its refresh token renews nothing: the client is refused',
    );
  });
}
