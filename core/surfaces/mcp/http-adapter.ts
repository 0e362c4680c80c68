// Node <-> web-standard glue for the SDK's WebStandardStreamableHTTPServerTransport (the transport
// itself: sessions, JSON-RPC framing, SSE). It replaces the SDK's stock Node wrapper, which goes
// through @hono/node-server, for one reason: a quick answer (most tools/call) goes out as one
// write with a Content-Length instead of headers, a chunk and a terminator written separately,
// which on a busy server is a large share of a call's cost (see docs/mcp.md, Performance).
// Streams that stay open (the GET notification stream, a call reporting progress) stream as ever.
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The Node request as the web-standard Request the transport takes. It carries no body: POST
 * bodies are read and parsed before and handed over as `parsedBody`.
 */
export function webRequest(req: IncomingMessage, url: string): Request {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  return new Request(url, { method: req.method ?? 'GET', headers });
}

function headersOf(response: Response, extra?: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  response.headers.forEach((value, key) => {
    out[key] = value;
  });
  return extra ? Object.assign(out, extra) : out;
}

/** The transport's chunks are encoded text (TextEncoder): decoding them back loses nothing. */
const UTF8 = new TextDecoder();

const nextMacrotask = () => new Promise<undefined>((resolve) => setImmediate(() => resolve(undefined)));

/**
 * Writes the transport's Response to the Node response. `hold`: wait for the first chunk before
 * sending anything, and if the stream ends right after it, send it whole with a Content-Length.
 * Without `hold` (a GET stream) the headers go out at once. The client hanging up cancels the
 * stream, which is how the transport learns a stream is gone.
 */
export async function writeResponse(res: ServerResponse, response: Response, hold: boolean): Promise<void> {
  const body = response.body;
  if (!body) {
    res.writeHead(response.status, headersOf(response));
    res.end();
    return;
  }
  // Node's Response types its body as ReadableStream<any>; the transport writes bytes.
  const reader = (body as ReadableStream<Uint8Array>).getReader();
  const cancel = () => {
    reader.cancel().catch(() => {});
  };
  res.once('close', cancel);
  const open = () => !res.destroyed && !res.writableEnded;
  try {
    let pending = reader.read();
    if (hold) {
      const first = await pending;
      if (!open()) return;
      if (first.done) {
        res.writeHead(response.status, headersOf(response, { 'content-length': '0' }));
        res.end();
        return;
      }
      pending = reader.read();
      // The transport closes a request's stream as soon as its answer is written: give it a turn.
      const next = await Promise.race([pending, nextMacrotask()]);
      if (!open()) return;
      if (next?.done) {
        res.writeHead(response.status, headersOf(response, { 'content-length': String(first.value.byteLength) }));
        // As a string: Node sends headers and body in one write (a Buffer body goes as a second chunk).
        res.end(UTF8.decode(first.value));
        return;
      }
      res.writeHead(response.status, headersOf(response));
      res.write(first.value);
      if (next) {
        res.write(next.value);
        pending = reader.read();
      }
    } else {
      res.writeHead(response.status, headersOf(response));
      res.flushHeaders();
    }
    for (;;) {
      const { done, value } = await pending;
      if (done || !open()) break;
      if (!res.write(value))
        await new Promise<void>((resolve) => {
          const go = () => {
            res.off('drain', go);
            res.off('close', go);
            resolve();
          };
          res.once('drain', go);
          res.once('close', go);
        });
      pending = reader.read();
    }
    if (open()) res.end();
  } catch {
    res.destroy();
  } finally {
    res.off('close', cancel);
  }
}
