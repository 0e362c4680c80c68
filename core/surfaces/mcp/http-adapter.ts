// Node <-> web-standard glue for the SDK's WebStandardStreamableHTTPServerTransport (the transport
// itself: sessions, JSON-RPC framing, SSE). It replaces the SDK's stock Node wrapper, which goes
// through @hono/node-server, for one reason: a quick answer (most tools/call) goes out as one
// write with a Content-Length instead of headers, a chunk and a terminator written separately,
// which on a busy server is a large share of a call's cost (see docs/mcp.md, Performance).
// Streams that stay open (the GET notification stream, a call reporting progress) stream as ever.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Countdown, Countdowns } from './countdowns.ts';

/** Node's header value as the Headers API gives it: repeated headers joined by ", ". */
const joined = (v: string | string[] | undefined): string | null => (v === undefined ? null : Array.isArray(v) ? v.join(', ') : v);

/**
 * The request's headers as the transport reads them (`get`, `has`, `entries`, ...), straight from
 * Node's parsed headers instead of copied into a Headers object one by one. Where Node's parsing
 * differs from the Headers API (a repeated Host, Content-Type or Authorization keeps its first
 * value; repeated Cookie headers are joined with "; "), what the transport reads is the same as
 * what Folio's own checks read (Koa's view of the same headers).
 */
class NodeHeaders {
  readonly #headers: IncomingMessage['headers'];
  constructor(headers: IncomingMessage['headers']) {
    this.#headers = headers;
  }
  get(name: string): string | null {
    return joined(this.#headers[name.toLowerCase()]);
  }
  has(name: string): boolean {
    return this.#headers[name.toLowerCase()] !== undefined;
  }
  /** The pairs as an array (the transport reads them all, once per POST: a plain loop, no generator). */
  #pairs(): Array<[string, string]> {
    const out: Array<[string, string]> = [];
    const headers = this.#headers;
    for (const key in headers) {
      const value = joined(headers[key]);
      if (value !== null) out.push([key, value]);
    }
    return out;
  }
  entries(): IterableIterator<[string, string]> {
    return this.#pairs()[Symbol.iterator]();
  }
  keys(): IterableIterator<string> {
    const keys = this.#pairs().map(([key]) => key);
    return keys[Symbol.iterator]();
  }
  values(): IterableIterator<string> {
    const values = this.#pairs().map(([, value]) => value);
    return values[Symbol.iterator]();
  }
  forEach(fn: (value: string, key: string, parent: Headers) => void): void {
    for (const [key, value] of this.entries()) fn(value, key, this as unknown as Headers);
  }
  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
}

/**
 * The Node request as the web-standard Request the transport takes. It carries no body: POST
 * bodies are read and parsed before and handed over as `parsedBody`. What the transport reads
 * (method, url, headers) is served from the Node request as it is; anything else a later SDK
 * might read makes a real Request on first use (as @hono/node-server's request does), so nothing
 * is lost, only the copying of every header into a Headers object on every call is saved.
 */
export function webRequest(req: IncomingMessage, url: string): Request {
  let real: Request | undefined;
  const materialize = (): Request => {
    if (!real) {
      const headers = new Headers();
      const raw = req.rawHeaders;
      for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
      real = new Request(url, { method: req.method ?? 'GET', headers });
    }
    return real;
  };
  const light = { method: req.method ?? 'GET', url, headers: new NodeHeaders(req.headers) };
  return new Proxy(light, {
    // `instanceof Request` holds, as for the real one.
    getPrototypeOf: () => Request.prototype,
    get(target, prop) {
      if (prop === 'method' || prop === 'url' || prop === 'headers') return target[prop];
      const value = Reflect.get(materialize(), prop) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(materialize()) : value;
    },
  }) as unknown as Request;
}

function headersOf(response: Response, extra?: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  response.headers.forEach((value, key) => {
    out[key] = value;
  });
  return extra ? Object.assign(out, extra) : out;
}

/** Resolves when the response takes writes again ('drain') or is gone ('close'). */
export function drained(res: ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const go = () => {
      res.off('drain', go);
      res.off('close', go);
      resolve();
    };
    res.once('drain', go);
    res.once('close', go);
  });
}

/** The transport's chunks are encoded text (TextEncoder): decoding them back loses nothing (a BOM included). */
const UTF8 = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * How long a POST's answer may be held back to go out in one write, by default (`mcp.holdMs`). A
 * stream that has not ended by then (a call reporting progress, a slow tool) starts streaming, with
 * what was held first.
 */
export const HOLD_MS = 20;

/**
 * Writes the transport's Response to the Node response. With `hold` (countdowns of the hold time):
 * collect the chunks (the SDK's priming event that gives the stream an id, then the answer) and,
 * if the stream ends before the countdown runs out, send them whole with a Content-Length in one
 * write: on a busy server each write is a system call that costs as much as a good share of a
 * call. Without (a GET stream), or once the hold time has passed, the headers and every chunk go
 * out as they come. The client hanging up cancels the stream, which is how the transport learns a
 * stream is gone.
 */
export async function writeResponse(
  res: ServerResponse,
  response: Response,
  hold: Countdowns | undefined,
  extraHeaders?: Record<string, string>,
): Promise<void> {
  const body = response.body;
  if (!body) {
    res.writeHead(response.status, headersOf(response, extraHeaders));
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
  let countdown: Countdown | undefined;
  // Read to its end? If not (the client went away, even before this began), the stream is
  // cancelled on the way out: that is how the transport learns it is gone.
  let finished = false;
  try {
    // The chunks so far while the answer may still go out whole; undefined once it streams.
    let held: Uint8Array[] | undefined;
    const startStreaming = () => {
      const chunks = held ?? [];
      held = undefined;
      res.writeHead(response.status, headersOf(response, extraHeaders));
      for (const c of chunks) res.write(c);
      if (chunks.length === 0) res.flushHeaders();
    };
    if (hold) {
      held = [];
      // The hold time passed with the stream still open: what is held goes out, the rest streams.
      countdown = hold.start(() => {
        if (!held) return;
        // Gone already (even before this began): cancelling is how the transport learns it.
        if (!open()) return cancel();
        try {
          startStreaming();
        } catch {
          res.destroy();
        }
      });
    } else startStreaming();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) finished = true;
      if (!open()) return;
      if (done) break;
      if (held) {
        held.push(value);
        continue;
      }
      if (!res.write(value)) await drained(res);
    }
    if (held) {
      // Ended within the hold time: headers and body in one write.
      let text = '';
      let bytes = 0;
      for (const c of held) {
        text += UTF8.decode(c);
        bytes += c.byteLength;
      }
      const headers = headersOf(response, extraHeaders);
      headers['content-length'] = String(bytes);
      res.writeHead(response.status, headers);
      // As a string: Node sends headers and body in one write (a Buffer body goes as a second chunk).
      res.end(text);
      return;
    }
    if (open()) res.end();
  } catch {
    res.destroy();
  } finally {
    hold?.stop(countdown);
    res.off('close', cancel);
    if (!finished) cancel();
  }
}
