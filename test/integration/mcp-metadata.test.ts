// The protected-resource metadata (RFC 9728) names the resource /mcp is. Without a configured
// public URL it is made from the Host header, so it answers only the Hosts /mcp answers; with one,
// it is the public URL's, whatever the Host says.
import t from 'tap';
import http from 'node:http';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const PATHS = ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp'];

/** GET with node:http, so Host can be anything. */
function get(server: TestServer, path: string, host: string): Promise<{ status: number; type: string; body: any }> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const r = http.request({ host: url.hostname, port: url.port, path, method: 'GET', headers: { host } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'] ?? '', body: JSON.parse(text) }));
    });
    r.on('error', reject);
    r.end();
  });
}

t.test('no public URL: the allowed Hosts get their own resource, any other Host is refused like /mcp', async (t) => {
  const s = await startTestServer({
    overrides: { publicUrl: null, mcp: { mode: 'stateful', allowedOrigins: [], allowedHosts: ['folio.internal'] } },
  });
  t.teardown(() => s.close());
  const port = new URL(s.url).port;
  for (const p of PATHS) {
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, 'folio.internal']) {
      const r = await get(s, p, host);
      t.equal(r.status, 200, `${p}, Host ${host}`);
      t.equal(r.body.resource, `http://${host}/mcp`);
    }
    for (const host of ['evil.example', 'evil.example:3000', 'localhost.evil.example']) {
      const r = await get(s, p, host);
      t.equal(r.status, 403, `${p}, Host ${host} is refused`);
      t.match(r.type, /^application\/json/);
      t.match(r.body, { jsonrpc: '2.0', error: { code: -32000, message: /Host/ } }, 'as /mcp refuses it');
      t.notOk(r.body.resource, 'no resource made from that Host');
      const mcp = await new Promise<number>((resolve, reject) => {
        const url = new URL(s.url);
        const q = http.request({ host: url.hostname, port: url.port, path: '/mcp', method: 'POST', headers: { host } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        q.on('error', reject);
        q.end('{}');
      });
      t.equal(mcp, 403, `/mcp refuses Host ${host} too`);
    }
  }
});

t.test('a public URL: the resource is always the public URL, whatever the Host', async (t) => {
  const s = await startTestServer({ overrides: { publicUrl: 'https://notes.example.com/' } });
  t.teardown(() => s.close());
  for (const p of PATHS) {
    for (const host of ['evil.example', 'localhost', 'notes.example.com']) {
      const r = await get(s, p, host);
      t.equal(r.status, 200, `${p}, Host ${host}`);
      t.equal(r.body.resource, 'https://notes.example.com/mcp');
    }
  }
});
