// Client ID metadata documents: a client whose client_id is the https URL of its metadata, with no
// registration. Fetched once and cached; refused from private addresses unless allowed; refused
// when too large, not JSON, or not naming itself. A real https server on loopback serves them.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import t from 'tap';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';
import { startTestServer, req } from '../helpers/server.ts';
import { authorize, LOOPBACK_REDIRECT, mcpStatus } from '../helpers/oauth.ts';

const TLS = path.join(PACKAGE_ROOT, 'test/fixtures/tls');
const hits = new Map<string, number>();
const docs = new Map<string, () => { status?: number; body: string; headers?: Record<string, string> }>();
const host = https.createServer(
  { key: readFileSync(path.join(TLS, 'key.pem')), cert: readFileSync(path.join(TLS, 'cert.pem')) },
  (r, res) => {
    const path = r.url ?? '';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const doc = docs.get(path)?.();
    if (!doc) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(doc.status ?? 200, { 'content-type': 'application/json', ...doc.headers }).end(doc.body);
  },
);
await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
t.teardown(() => new Promise<void>((resolve) => host.close(() => resolve())));
const origin = `https://127.0.0.1:${(host.address() as AddressInfo).port}`;

const metadata = (id: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    client_id: id,
    client_name: 'Metadata Agent',
    redirect_uris: [LOOPBACK_REDIRECT],
    token_endpoint_auth_method: 'none',
    ...extra,
  });
const GOOD = `${origin}/agent.json`;
docs.set('/agent.json', () => ({ body: metadata(GOOD), headers: { 'cache-control': 'max-age=600' } }));
docs.set('/big.json', () => ({ body: metadata(`${origin}/big.json`, { padding: 'x'.repeat(8 * 1024) }) }));
docs.set('/other.json', () => ({ body: metadata('https://someone-else.example/agent.json') }));
docs.set('/junk.json', () => ({ body: 'not json' }));
docs.set('/moved.json', () => ({ status: 302, body: '', headers: { location: '/agent.json' } }));

const login = { email: 'meta@example.com', password: 'a long enough password' };

t.test('by default private addresses are not fetched', async (t) => {
  const s = await startTestServer();
  t.teardown(() => s.close());
  const meta = (await req(s, 'GET', '/.well-known/oauth-authorization-server/oauth')).json();
  t.equal(meta.client_id_metadata_document_supported, true, 'discovery says client ID metadata documents are supported');
  await req(s, 'POST', '/api/v1/users', { token: s.adminToken, body: { ...login } });
  const before = hits.get('/agent.json') ?? 0;
  const flow = await authorize(s.url, GOOD, login);
  t.equal(flow.page.status, 400, 'the authorization request is refused');
  t.match(flow.page.html, /invalid_client/);
  t.equal(hits.get('/agent.json') ?? 0, before, 'and nothing was fetched from the loopback address');
});

t.test('allowed: a client connects by its metadata URL, fetched once; bad documents are refused', async (t) => {
  const s = await startTestServer({
    overrides: { identity: { clientMetadataPrivateNetworks: true, clientMetadataCaFile: path.join(TLS, 'cert.pem') } },
  });
  t.teardown(() => s.close());
  await req(s, 'POST', '/api/v1/users', { token: s.adminToken, body: { ...login } });
  hits.clear();
  const flow = await authorize(s.url, GOOD, login, { resource: `${s.url}/mcp` });
  t.match(flow.page.html, /Metadata Agent/, 'the page names the client from its document');
  t.match(flow.page.html, /published by <strong>127\.0\.0\.1:\d+<\/strong>/, 'and the host that publishes it');
  t.ok(flow.tokens?.access_token, 'signed in, code exchanged with the URL as client_id');
  t.equal(await mcpStatus(s.url, flow.tokens!.access_token), 200, 'the token works on /mcp');
  const again = await authorize(s.url, GOOD, login, { resource: `${s.url}/mcp` });
  t.ok(again.tokens?.access_token, 'a second time');
  t.equal(hits.get('/agent.json'), 1, 'the document was fetched once (cached)');

  for (const [doc, why] of [
    ['/big.json', 'larger than the size limit'],
    ['/other.json', 'naming another client_id'],
    ['/junk.json', 'not JSON'],
    ['/moved.json', 'a redirect (not followed)'],
    ['/missing.json', 'not found'],
  ]) {
    const bad = await authorize(s.url, `${origin}${doc}`, login);
    t.equal(bad.page.status, 400, `a document ${why} is refused`);
  }
  t.equal(hits.get('/agent.json'), 1, 'the redirect was not followed');
  const plain = await authorize(s.url, `http://127.0.0.1:1/agent.json`, login);
  t.equal(plain.page.status, 400, 'an http:// client_id is no metadata URL: an unknown client');
});
