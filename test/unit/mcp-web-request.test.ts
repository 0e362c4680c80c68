// webRequest: the Node request as the web-standard Request the SDK's transport reads. It must answer
// what a real Request would: headers case-insensitively, repeated ones joined, and anything else
// (a property the transport does not read today) from a real Request made on first use.
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { webRequest } from '../../core/surfaces/mcp/http-adapter.ts';

/** A real request through node:http, seen by the server as webRequest makes it. */
async function seen(headers: Array<[string, string]>, inspect: (r: Request) => unknown): Promise<unknown> {
  let out: unknown;
  const server = http.createServer((req, res) => {
    out = inspect(webRequest(req, `http://127.0.0.1${req.url ?? '/'}`));
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve, reject) => {
    // A raw header list (so a header can repeat): Node adds no Host to it.
    const req = http.request(
      {
        port,
        host: '127.0.0.1',
        path: '/mcp?x=1',
        method: 'POST',
        headers: [['Host', '127.0.0.1'], ...headers, ['Content-Length', '0']].flat(),
      },
      (res) => {
        res.resume();
        res.on('end', resolve);
      },
    );
    req.on('error', reject);
    req.end();
  });
  await new Promise<void>((r) => server.close(() => r()));
  return out;
}

t.test('method, url and headers as a Request gives them', async (t) => {
  const out = (await seen(
    [
      ['Accept', 'application/json, text/event-stream'],
      ['Mcp-Session-Id', 'abc'],
      ['X-Many', 'one'],
      ['X-Many', 'two'],
    ],
    (r) => ({
      method: r.method,
      url: r.url,
      isRequest: r instanceof Request,
      accept: r.headers.get('ACCEPT'),
      session: r.headers.get('mcp-session-id'),
      many: r.headers.get('x-many'),
      missing: r.headers.get('last-event-id'),
      has: [r.headers.has('Mcp-Session-Id'), r.headers.has('nope')],
      entries: Object.fromEntries(r.headers.entries()),
    }),
  )) as Record<string, any>;
  t.equal(out.method, 'POST');
  t.equal(out.isRequest, true, 'instanceof Request');
  t.equal(out.url, 'http://127.0.0.1/mcp?x=1');
  t.equal(out.accept, 'application/json, text/event-stream', 'case-insensitive');
  t.equal(out.session, 'abc');
  t.equal(out.many, 'one, two', 'repeated headers joined as the Headers API does');
  t.equal(out.missing, null, 'an absent header is null, as in the Headers API');
  t.same(out.has, [true, false]);
  t.equal(out.entries['mcp-session-id'], 'abc', 'entries with lower-case names');
  t.equal(out.entries['x-many'], 'one, two');
});

t.test('anything else comes from a real Request', async (t) => {
  const out = (await seen([['X-A', '1']], (r) => ({
    signal: r.signal instanceof AbortSignal,
    clone: r.clone().headers.get('x-a'),
    cache: r.cache,
  }))) as Record<string, unknown>;
  t.same(out, { signal: true, clone: '1', cache: 'default' });
});
