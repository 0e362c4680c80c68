// Lingering close (RFC 9112 §9.6). A connection closed right after an answer while its client is
// still sending (an upload refused mid-body, a body over the limit refused by its declared length,
// a bad token answered before the body is read) is reset by the kernel as soon as more bytes
// arrive, and a reset makes the client drop what it had received but not yet read: the answer it
// was sent is lost, and it sees only "connection reset" or "broken pipe". So when a connection
// closes after an answer to a request whose body was not read to its end, the server's side is
// shut after the answer (FIN), what the client still sends is read and dropped, and the connection
// goes when the client closes its side, or when it has sent nothing for a while, or after a bounded
// time in all. No request that comes on it after the answer is served (the connection was closing):
// isLingering tells the server to drop it. A connection whose last request was read whole closes
// as Node closes it.
import type { Server, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** A lingering connection goes after this long without a byte from the client... */
export const LINGER_IDLE_MS = 2000;
/** ...and after this long in all. */
export const LINGER_MAX_MS = 30_000;

const LINGER = Symbol('lingering close');
const LAST = Symbol('last request');
const FORCE = Symbol('linger whatever the request');
const CLOSE = Symbol('lingering close of this connection');
type Watched = Socket & { [LINGER]?: true; [LAST]?: ServerResponse | undefined; [FORCE]?: true; [CLOSE]?: () => void };

function lingeringClose(socket: Watched, idleMs: number, maxMs: number, lingering: Set<Socket>): void {
  socket[LINGER] = true;
  lingering.add(socket);
  let going = false;
  // Destroyed only once the answer is written out (a destroy drops what is not).
  const go = () => {
    if (going) return;
    going = true;
    if (socket.writableFinished) socket.destroy();
    else socket.once('finish', () => socket.destroy());
  };
  let idle = setTimeout(go, idleMs);
  const cap = setTimeout(go, maxMs);
  idle.unref();
  cap.unref();
  const onData = () => {
    clearTimeout(idle);
    idle = setTimeout(go, idleMs);
    idle.unref();
  };
  socket.on('data', onData);
  socket.once('close', () => {
    lingering.delete(socket);
    clearTimeout(idle);
    clearTimeout(cap);
    socket.off('data', onData);
  });
  // The client read the answer and closed its side (or gave up): nothing more to wait for.
  socket.once('end', go);
  socket.end();
  socket.resume();
}

/**
 * Every connection of `server` closes lingering when the answer that closes it was given before its
 * request's body was read to its end. Node's HTTP server ends a connection after an answer that
 * closes it with socket.destroySoon() (end, then destroy once the end is written), right after the
 * answer is written: that destroy is what turns late bytes into a reset, so each socket's
 * destroySoon looks at its last request first. A request pipelined behind that answer is not the
 * one answered: the connection is destroyed as before, and that request with it.
 * `requestStarted` must be told of each request as it arrives. Returns what ends the lingering
 * connections at once (the server is shutting down: nothing is waited for).
 */
export function lingerOnUnreadBodies(server: Server, idleMs = LINGER_IDLE_MS, maxMs = LINGER_MAX_MS): { destroyAll(): void } {
  const lingering = new Set<Socket>();
  server.on('connection', (socket: Watched) => {
    socket[LAST] = undefined;
    socket[CLOSE] = () => {
      if (!socket.destroyed && !socket[LINGER]) lingeringClose(socket, idleMs, maxMs, lingering);
    };
    socket.destroySoon = (): void => {
      if (socket.destroyed || socket[LINGER]) return;
      const res = socket[LAST];
      // The client sent what will not be read as a request, or the answer just written is the last
      // request's and that request's body is still coming.
      if (socket[FORCE] || (res?.writableEnded && !res.req.complete)) lingeringClose(socket, idleMs, maxMs, lingering);
      else Socket.prototype.destroySoon.call(socket);
    };
  });
  return {
    destroyAll() {
      for (const socket of lingering) socket.destroy();
    },
  };
}

/** The request now being read from its connection, by its response (what lingerOnUnreadBodies looks at). */
export function requestStarted(res: ServerResponse): void {
  const socket = res.req.socket as Watched | null;
  if (socket) socket[LAST] = res;
}

/**
 * Its answer is over (after Node's own end of the response, which closes the connection if it is
 * to close): the connection lets go of it, so that one kept alive holds none of the past.
 */
export function requestOver(res: ServerResponse): void {
  const socket = res.req.socket as Watched | null;
  if (socket?.[LAST] === res) socket[LAST] = undefined;
}

/**
 * The client sent bytes this server will not read as a request (a malformed one after the one being
 * answered): when Node closes the connection after the answer, it closes lingering.
 */
export function lingerAfterAnswer(socket: Duplex): void {
  (socket as Watched)[FORCE] = true;
}

/** Closes the connection now (its answer is written or being written), lingering if it is one of a server lingerOnUnreadBodies watches. */
export function closeLingering(socket: Duplex): void {
  const close = (socket as Watched)[CLOSE];
  if (close) close();
  else socket.destroy();
}

/** Is this connection closing after its last answer? A request read from it then is not served. */
export function isLingering(socket: Socket | null | undefined): boolean {
  return (socket as Watched | null | undefined)?.[LINGER] === true;
}
