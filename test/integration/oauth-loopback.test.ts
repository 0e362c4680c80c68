// With no PUBLIC_URL, Folio answers at its address and at that address's loopback aliases: an MCP
// client pointed at http://localhost:PORT/mcp (what a newcomer types after `npm start`) and one
// pointed at http://127.0.0.1:PORT/mcp both get through the whole OAuth flow, as mcp-remote drives
// it with the MCP SDK: a 401, the protected-resource metadata of the origin it used, dynamic client
// registration, authorization with `resource` set to that metadata's resource, the token exchange,
// a tool call. Folio answers on [::1] as well as on 127.0.0.1, so no other local process can hold
// one of those names. When one does, or a PUBLIC_URL is configured, nothing is widened.
import t from 'tap';
import { createServer } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, createUser } from '../helpers/server.ts';
import { authorize, Browser, MemoryProvider, registerClient } from '../helpers/oauth.ts';

const s = await startTestServer();
t.teardown(() => s.close());
const port = new URL(s.url).port;
const user = await createUser(s, 'loopback-user@example.com');

for (const host of ['localhost', '127.0.0.1']) {
  t.test(`an MCP client at http://${host}:PORT/mcp connects with OAuth`, async (t) => {
    const origin = `http://${host}:${port}`;
    const prm = (await (await fetch(`${origin}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<string, unknown>;
    t.equal(prm['resource'], `${origin}/mcp`, 'the metadata names the origin the client used');

    const auth = new MemoryProvider(`Agent at ${host}`);
    const first = new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { authProvider: auth });
    await t.rejects(new Client({ name: 'loopback', version: '1.0.0' }).connect(first), /Unauthorized/, 'starts from a 401');
    t.ok(auth.info?.client_id, 'registered itself');
    const authUrl = auth.authorizationUrl!;
    t.equal(authUrl.searchParams.get('resource'), `${origin}/mcp`, 'asks for the resource as the metadata named it');

    const browser = new Browser(s.url);
    const { res, url } = await browser.follow(authUrl.href);
    t.equal(res.status, 200, 'the sign-in page, not invalid_target');
    await res.body?.cancel();
    const posted = await browser.post(url, { email: 'loopback-user@example.com', password: user.token, decision: 'allow' });
    const code = new URL(posted.url).searchParams.get('code');
    t.ok(code, `back at the client with a code (${posted.url})`);
    await first.finishAuth(code!);
    t.ok(auth.saved?.access_token, 'tokens exchanged');

    const client = new Client({ name: 'loopback', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { authProvider: auth }));
    const made = await client.callTool({ name: 'notetaker__create', arguments: { title: `made at ${host}` } });
    t.notOk(made.isError, 'a tool called');
    await client.close();

    // The token is for Folio's MCP resource, whichever name the client used: it works at the other.
    const other = host === 'localhost' ? '127.0.0.1' : 'localhost';
    const again = new Client({ name: 'loopback', version: '1.0.0' });
    await again.connect(new StreamableHTTPClientTransport(new URL(`http://${other}:${port}/mcp`), { authProvider: auth }));
    t.ok((await again.listTools()).tools.length > 0, `and the token works at ${other} too`);
    await again.close();
  });
}

t.test('only loopback names are aliases', async (t) => {
  const clientId = await registerClient(s.url);
  for (const resource of [`http://example.com:${port}/mcp`, `http://localhost:1/mcp`, `https://localhost:${port}/mcp`]) {
    const flow = await authorize(s.url, clientId, { email: 'loopback-user@example.com', password: user.token }, { resource });
    const landed = flow.landed ? new URL(flow.landed) : null;
    t.equal(landed?.searchParams.get('error') ?? flow.page.html, 'invalid_target', `${resource} is not Folio`);
    t.equal(flow.tokens, null);
  }
});

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const p = (probe.address() as { port: number }).port;
      probe.close(() => resolve(p));
    });
  });

t.test('Folio itself answers at [::1] on its port', async (t) => {
  const health = await fetch(`http://[::1]:${port}/health`).catch((e: Error) => e);
  if (health instanceof Error) return void t.pass('no IPv6 on this machine: nothing to check');
  t.equal(health.status, 200, 'no other process can listen there');
});

t.test('when another process holds [::1] at the port, no alias is accepted', async (t) => {
  const free = await freePort();
  const squatter = createServer((socket) => socket.end());
  const bound = await new Promise<boolean>((resolve) => {
    squatter.once('error', () => resolve(false));
    squatter.listen({ port: free, host: '::1', ipv6Only: true }, () => resolve(true));
  });
  if (!bound) return void t.pass('no IPv6 on this machine: nothing to check');
  t.teardown(() => new Promise<void>((resolve) => squatter.close(() => resolve())));
  const shared = await startTestServer({ overrides: { port: free } });
  t.teardown(() => shared.close());
  const someone = await createUser(shared, 'shared@example.com');
  const clientId = await registerClient(shared.url);
  const form = { email: 'shared@example.com', password: someone.token };
  for (const host of ['localhost', '[::1]']) {
    const alias = await authorize(shared.url, clientId, form, { resource: `http://${host}:${free}/mcp` });
    t.equal(new URL(alias.landed!).searchParams.get('error'), 'invalid_target', `${host} is refused: it may not be Folio`);
    t.equal(alias.tokens, null);
  }
  const own = await authorize(shared.url, clientId, form, { resource: `http://127.0.0.1:${free}/mcp` });
  t.ok(own.tokens?.access_token, 'the address Folio listens on is served');
});

t.test('a configured PUBLIC_URL is not widened to its loopback aliases', async (t) => {
  const free = await freePort();
  const pinned = await startTestServer({ overrides: { port: free, publicUrl: `http://127.0.0.1:${free}` } });
  t.teardown(() => pinned.close());
  const someone = await createUser(pinned, 'pinned@example.com');
  const clientId = await registerClient(pinned.url);
  const form = { email: 'pinned@example.com', password: someone.token };
  const alias = await authorize(pinned.url, clientId, form, { resource: `http://localhost:${free}/mcp` });
  t.equal(new URL(alias.landed!).searchParams.get('error'), 'invalid_target', 'localhost is refused');
  const own = await authorize(pinned.url, clientId, form, { resource: `http://127.0.0.1:${free}/mcp` });
  t.ok(own.tokens?.access_token, 'the public URL itself is served');
});
