// The JSON body reader on real requests: a small body that came with its headers is taken from the
// request's buffer at once; it is the same value a streamed read gives, and the request still ends
// and closes afterwards, as a request read to its end does.
import t, { type Test } from 'tap';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { readJsonRequest } from '../../core/surfaces/http/body.ts';

const limits = { requestBytes: 1 << 20, jsonDepth: 32 };

/** A server that reads each request's body and reports what it read and whether the request ended. */
async function server(t: Test) {
  const seen: Array<{ value: unknown; ended: boolean; closed: boolean }> = [];
  const srv = http.createServer((req, res) => {
    // As the routes do: something awaited before the body is read (a microtask: the body's bytes
    // are in by then, but the parser may not have marked the message complete yet).
    void (async () => {
      await Promise.resolve();
      const entry = { value: undefined as unknown, ended: false, closed: false };
      req.on('end', () => (entry.ended = true));
      req.on('close', () => (entry.closed = true));
      try {
        entry.value = await readJsonRequest(req, limits);
      } catch (err) {
        entry.value = `error: ${(err as Error).message}`;
      }
      seen.push(entry);
      await new Promise((r) => setImmediate(r));
      res.end(JSON.stringify({ ...entry, value: undefined }));
    })();
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => srv.close(() => r())));
  return { port: (srv.address() as AddressInfo).port, seen };
}

/** Sends raw HTTP on one connection and waits for `answers` responses. */
async function raw(port: number, text: string, answers: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(text));
    let out = '';
    s.on('data', (d) => {
      out += d.toString();
      if (out.split('HTTP/1.1 200').length - 1 >= answers && out.endsWith('}')) {
        s.destroy();
        resolve(out);
      }
    });
    s.on('error', reject);
  });
}

const post = (body: string) =>
  `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

t.test('a body sent with its headers: read whole, and the request ends and closes', async (t) => {
  const { port, seen } = await server(t);
  const out = await raw(port, post('{"a":[1,"ü"],"b":{"c":null}}'), 1);
  t.match(out, /"ended":true/, 'ended by the time the answer was made');
  t.same(seen[0]!.value, { a: [1, 'ü'], b: { c: null } });
  t.ok(seen[0]!.closed, 'and closed');
});

t.test('two requests in one packet on a keep-alive connection: each reads its own body', async (t) => {
  const { port, seen } = await server(t);
  await raw(port, post('{"n":1}') + post('{"n":2,"pad":"' + 'x'.repeat(300) + '"}'), 2);
  t.same(
    seen.map((s) => (s.value as { n: number }).n),
    [1, 2],
  );
});

t.test('a chunked body and an empty one', async (t) => {
  const { port, seen } = await server(t);
  const chunked =
    'POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{"k"\r\n4\r\n:"v"\r\n1\r\n}\r\n0\r\n\r\n';
  await raw(port, chunked, 1);
  await raw(port, 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n', 1);
  t.same(seen[0]!.value, { k: 'v' });
  t.equal(seen[1]!.value, undefined, 'no body at all');
});
