// writeResponse, the MCP surface's writer of the transport's Response: a stream whose client is gone
// (even before the writing began) is cancelled, which is how the SDK's transport learns it; one that
// ends within the hold time goes out whole with a Content-Length; one that does not streams.
import t, { type Test } from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Countdowns } from '../../core/surfaces/mcp/countdowns.ts';
import { writeResponse } from '../../core/surfaces/mcp/http-adapter.ts';

const hold = new Countdowns(20, (err) => {
  throw err;
});
const encoder = new TextEncoder();

async function serve(t: Test, handler: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const srv = http.createServer(handler);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    srv.closeAllConnections();
    return new Promise<void>((r) => srv.close(() => r()));
  });
  return `http://127.0.0.1:${(srv.address() as AddressInfo).port}/`;
}

t.test('a client gone before the writing began: the stream is cancelled once the hold time is up', async (t) => {
  let cancelled!: () => void;
  const wasCancelled = new Promise<void>((r) => (cancelled = r));
  const url = await serve(t, (req, res) => {
    res.once('close', () => {
      // Nothing ever comes on this stream (a tool still running): only a cancel ends it.
      const body = new ReadableStream<Uint8Array>({ cancel: () => cancelled() });
      void writeResponse(res, new Response(body, { headers: { 'content-type': 'text/event-stream' } }), hold);
    });
    req.socket.destroy();
  });
  await fetch(url, { method: 'POST', body: '{}' }).catch(() => {});
  await wasCancelled;
  t.pass('cancelled');
});

t.test('ends within the hold time: one answer with a Content-Length', async (t) => {
  const url = await serve(t, (_req, res) => {
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(encoder.encode('id: 1\ndata: \n\n'));
        setTimeout(() => {
          c.enqueue(encoder.encode('event: message\ndata: {"ok":true}\n\n'));
          c.close();
        }, 2);
      },
    });
    void writeResponse(res, new Response(body, { headers: { 'content-type': 'text/event-stream' } }), hold, { 'x-request-id': 'r1' });
  });
  const r = await fetch(url);
  t.equal(r.headers.get('content-length'), String(Buffer.byteLength('id: 1\ndata: \n\nevent: message\ndata: {"ok":true}\n\n')));
  t.equal(r.headers.get('x-request-id'), 'r1', 'the extra headers go with it');
  t.equal(await r.text(), 'id: 1\ndata: \n\nevent: message\ndata: {"ok":true}\n\n');
});

t.test('still open after the hold time: headers and what was held go out, the rest streams', async (t) => {
  let finish!: () => void;
  const url = await serve(t, (_req, res) => {
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(encoder.encode('id: 1\ndata: \n\n'));
        finish = () => {
          c.enqueue(encoder.encode('event: message\ndata: {"late":true}\n\n'));
          c.close();
        };
      },
    });
    void writeResponse(res, new Response(body, { headers: { 'content-type': 'text/event-stream' } }), hold);
  });
  const r = await fetch(url);
  t.equal(r.headers.get('content-length'), null, 'streamed: no length');
  const reader = r.body!.getReader();
  const first = await reader.read();
  t.equal(new TextDecoder().decode(first.value), 'id: 1\ndata: \n\n', 'the held priming event, before the end');
  finish();
  let rest = '';
  for (let c = await reader.read(); !c.done; c = await reader.read()) rest += new TextDecoder().decode(c.value);
  t.equal(rest, 'event: message\ndata: {"late":true}\n\n');
});
