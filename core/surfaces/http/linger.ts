// Lingering close (RFC 9112 §9.6). A connection closed right after an answer while its client is
// still sending (an upload refused mid-body: over the per-file limit, the quota) is reset by the
// kernel as soon as more bytes arrive, and a reset makes the client drop what it had received but
// not yet read: the 413 it was sent is lost, and it sees only "connection reset". So the server's
// side is shut after the answer (FIN), what the client still sends is read and dropped, and the
// connection goes when the client closes its side, or when it has sent nothing for a while, or
// after a bounded time in all. No request that comes on it after the answer is served (the answer
// said Connection: close): isLingering tells the server to drop it.
import type { Socket } from 'node:net';

/** A lingering connection goes after this long without a byte from the client... */
export const LINGER_IDLE_MS = 2000;
/** ...and after this long in all. */
export const LINGER_MAX_MS = 30_000;

const LINGER = Symbol('lingering close');
type Lingering = Socket & { [LINGER]?: 'armed' | 'lingering' };

/**
 * Makes the close of `socket` after its last answer a lingering one. Node's HTTP server ends a
 * connection whose answer said `Connection: close` with socket.destroySoon() (end, then destroy
 * once the end is written): that destroy is what turns late bytes into a reset, so this socket's
 * destroySoon ends and drains instead.
 */
export function lingerOnClose(socket: Socket | null | undefined, idleMs = LINGER_IDLE_MS, maxMs = LINGER_MAX_MS): void {
  const s = socket as Lingering | null | undefined;
  if (!s || s[LINGER]) return;
  s[LINGER] = 'armed';
  s.destroySoon = function lingeringClose(this: Lingering): void {
    if (this.destroyed) return;
    this[LINGER] = 'lingering';
    // Destroyed only once the answer is written out (a destroy drops what is not).
    const go = () => (this.writableFinished ? this.destroy() : this.once('finish', () => this.destroy()));
    let idle = setTimeout(go, idleMs);
    const cap = setTimeout(go, maxMs);
    idle.unref();
    cap.unref();
    const onData = () => {
      clearTimeout(idle);
      idle = setTimeout(go, idleMs);
      idle.unref();
    };
    this.on('data', onData);
    this.once('close', () => {
      clearTimeout(idle);
      clearTimeout(cap);
      this.off('data', onData);
    });
    // The client read the answer and closed its side (or gave up): nothing more to wait for.
    this.once('end', go);
    this.end();
    this.resume();
  };
}

/** Is this connection closing after its last answer? A request read from it then is not served. */
export function isLingering(socket: Socket | null | undefined): boolean {
  return (socket as Lingering | null | undefined)?.[LINGER] === 'lingering';
}
