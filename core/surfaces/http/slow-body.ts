// A request body must keep coming. Node times out slow headers (server.headersTimeout) but has no
// rule for a body once the headers are in, and its requestTimeout, a bound on the whole request, would
// cut a large upload on a slow line: so a body that trickles (one byte every twenty seconds) held
// its connection, and the route reading it, for as long as the client liked. Here every request that
// declares a body is watched while it is read: no byte for `idleMs`, or, after `graceMs`, fewer
// than `minBytesPerSecond` on average since its headers, and the request is answered 408 (or, when
// an answer is already under way, its connection is closed). Answers are not watched: a long
// download or an MCP event stream is the server sending, which is no client's delay.
//
// Only the time the server waits for the client counts: while it holds body bytes it has not read
// yet (a route still authenticating, or writing what it read to slow storage, with the connection
// paused by backpressure), the client is not the one late.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { REASON } from '../../contract/errors.ts';
import { refuseBody } from './client-errors.ts';

export interface BodyPace {
  /** No byte of the body for this long (while the server waits for one) ends the request. */
  idleMs: number;
  /** After this long... */
  graceMs: number;
  /** ...a body arriving slower than this on average since its headers ends the request. */
  minBytesPerSecond: number;
}

interface Watched {
  req: IncomingMessage;
  res: ServerResponse;
  /** The connection's bytes read when last looked at. */
  seen: number;
  received: number;
  /** Time the server has waited for the client (ms), in all and since its last byte. */
  waited: number;
  idle: number;
}

/** Does the request announce a body (a length above 0, or chunks)? */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** Installs the watch on `server`; call before it takes requests. */
export function watchBodyPace(server: Server, pace: BodyPace): void {
  const watched = new Set<Watched>();
  // Often enough to act within a fraction of the shorter limit; a second at most (as Node's own
  // connection check, one timer for all connections).
  const every = Math.min(1000, Math.max(50, Math.floor(Math.min(pace.idleMs, pace.graceMs) / 5)));
  let timer: NodeJS.Timeout | undefined;
  let last = 0;

  const check = () => {
    const now = performance.now();
    const dt = now - last;
    last = now;
    for (const w of watched) {
      const { req, res } = w;
      const socket = req.socket;
      if (req.complete || req.destroyed || !socket || socket.destroyed || res.writableEnded) {
        watched.delete(w);
        continue;
      }
      // The connection's count goes on whoever reads it (Node's parser reads the socket's handle directly).
      const bytes = socket.bytesRead;
      const delta = bytes - w.seen;
      w.seen = bytes;
      w.received += delta;
      if (delta > 0) w.idle = 0;
      // The server holds unread body bytes: it is the one behind, not the client.
      if (req.readableLength > 0) continue;
      w.waited += dt;
      if (delta === 0) w.idle += dt;
      const slow =
        w.idle >= pace.idleMs
          ? `no byte of the request body for ${Math.round(w.idle / 1000)} s`
          : w.waited >= pace.graceMs && w.received < (pace.minBytesPerSecond * w.waited) / 1000
            ? `the request body came at ${Math.round((w.received * 1000) / w.waited)} bytes/s, under the ${pace.minBytesPerSecond} bytes/s this server waits for`
            : undefined;
      if (slow) {
        watched.delete(w);
        tooSlow(req, res, slow);
      }
    }
    if (watched.size === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  };

  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    if (!hasBody(req)) return;
    const w: Watched = { req, res, seen: req.socket.bytesRead, received: 0, waited: 0, idle: 0 };
    watched.add(w);
    // Answered (or gone): not watched from then on, so the set holds no finished request until the
    // next check (up to a second later) and an idle keep-alive connection keeps none reachable.
    res.once('close', () => watched.delete(w));
    if (!timer) {
      last = performance.now();
      timer = setInterval(check, every);
      timer.unref();
    }
  });
  server.on('close', () => {
    clearInterval(timer);
    watched.clear();
  });
}

/**
 * 408, and the connection closes after it (lingering: core/surfaces/http/linger.ts, as for any
 * answer given before its body was read to its end). The route still reading the body sees the
 * connection go and gives up; its own answer is not sent (one is). When an answer is already under
 * way, the connection is simply closed.
 */
function tooSlow(req: IncomingMessage, res: ServerResponse, why: string): void {
  // The request's log line says why (core/surfaces/http/request-log.ts).
  refuseBody(req, { code: 'ERR_BODY_TOO_SLOW', reason: why });
  if (res.headersSent) {
    req.socket.destroy();
    return;
  }
  const body = `408 ${REASON[408]}: ${why}; the connection is closed. Send the body without long pauses.\n`;
  res
    .writeHead(408, {
      'content-type': 'text/plain; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-store',
      connection: 'close',
    })
    .end(body);
}
