// Forwarding headers (X-Forwarded-For/-Proto/-Host) count only on a connection from a configured
// proxy (http.trustedProxies): the share-link throttle then keys on the forwarded client, links in
// answers use the forwarded origin; from anyone else they are ignored. With a public URL, the
// authorization server's endpoints are always under it. Tests connect from 127.0.0.1.
import t from 'tap';
import { startTestServer, createUser, req, type TestServer } from '../helpers/server.ts';

const trusting = await startTestServer({ overrides: { http: { trustedProxies: ['127.0.0.1'] } } });
const plain = await startTestServer();
t.teardown(() => Promise.all([trusting.close(), plain.close()]));

async function passwordLink(s: TestServer, headers: Record<string, string> = {}) {
  const u = await createUser(s, `owner-${Math.random().toString(36).slice(2)}@example.com`);
  const up = await fetch(`${s.url}/api/v1/filedb/files?name=f.txt`, {
    method: 'POST',
    headers: { authorization: `Bearer ${u.token}` },
    body: 'data',
  });
  const made = await fetch(`${s.url}/api/v1/filedb/files/${((await up.json()) as { id: string }).id}/shares`, {
    method: 'POST',
    headers: { authorization: `Bearer ${u.token}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ password: 'the password' }),
  });
  return (await made.json()) as { url: string; token: string };
}
/** The link's status for a password sent as if from `client` (X-Forwarded-For). */
const tryAs = async (s: TestServer, token: string, client: string, password = 'wrong') =>
  (await fetch(`${s.url}/s/${token}`, { headers: { 'x-share-password': password, 'x-forwarded-for': client } })).status;

t.test('from a trusted proxy: each forwarded client has its own allowance on a link, the link its total', async (t) => {
  const link = await passwordLink(trusting);
  for (let i = 0; i < 5; i++) t.equal(await tryAs(trusting, link.token, '198.51.100.1'), 401);
  t.equal(await tryAs(trusting, link.token, '198.51.100.1'), 429, 'one client is refused after 5');
  t.equal(await tryAs(trusting, link.token, '6.6.6.6, 198.51.100.1'), 429, 'what the client writes to the left changes nothing');
  t.equal(await tryAs(trusting, link.token, '198.51.100.2'), 401, 'another client is still checked');
  for (let i = 0; i < 4; i++) await tryAs(trusting, link.token, '198.51.100.2');
  t.equal(await tryAs(trusting, link.token, '198.51.100.3', 'the password'), 429, 'after 10 on the link, everyone waits');
});

t.test('from any other peer the header is ignored: the connection is the client', async (t) => {
  const link = await passwordLink(plain);
  for (let i = 0; i < 5; i++) t.equal(await tryAs(plain, link.token, `198.51.100.${10 + i}`), 401);
  t.equal(await tryAs(plain, link.token, '198.51.100.99'), 429, 'a new X-Forwarded-For is not a new client');
});

t.test('links in answers use the forwarded origin only from a trusted proxy', async (t) => {
  const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'notes.example.org' };
  t.match((await passwordLink(trusting, forwarded)).url, /^https:\/\/notes\.example\.org\/s\//);
  t.match((await passwordLink(plain, forwarded)).url, new RegExp(`^${plain.url}/s/`));
});

t.test('with a public URL the authorization server names only it, whatever the headers', async (t) => {
  const s = await startTestServer({ overrides: { publicUrl: 'https://notes.example.com' } });
  t.teardown(() => s.close());
  const meta = await req(s, 'GET', '/.well-known/oauth-authorization-server/oauth', {
    headers: { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' },
  });
  t.equal(meta.status, 200);
  t.equal(meta.json().issuer, 'https://notes.example.com/oauth');
  t.equal(meta.json().authorization_endpoint, 'https://notes.example.com/oauth/auth');
  t.equal(meta.json().token_endpoint, 'https://notes.example.com/oauth/token');
});
