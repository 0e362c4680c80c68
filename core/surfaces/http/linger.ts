// Lingering close (RFC 9112 §9.6). A connection closed right after an answer while its client is
// still sending (an upload refused mid-body: over the per-file limit, the quota) is reset by the
// kernel as soon as more bytes arrive, and a reset makes the client drop what it had received but
// not yet read: the 413 it was sent is lost, and it sees only "connection reset". So the server's
// side is shut after the answer (FIN), what the client still sends is read and dropped, and the
// connection goes when the client closes its side, or after a bounded time.
import type { Socket } from 'node:net';

/** How long a refused upload's connection may go on draining after its answer. */
export const LINGER_MS = 2000;

const LINGERING = Symbol('lingering close');
type Lingering = Socket & { [LINGERING]?: true };

/**
 * Makes the close of `socket` after its last answer a lingering one. Node's HTTP server ends a
 * connection whose answer said `Connection: close` with socket.destroySoon() (end, then destroy
 * once the end is written): that destroy is what turns late bytes into a reset, so this socket's
 * destroySoon ends and drains instead.
 */
export function lingerOnClose(socket: Socket | null | undefined, ms = LINGER_MS): void {
  if (!socket || (socket as Lingering)[LINGERING]) return;
  (socket as Lingering)[LINGERING] = true;
  socket.destroySoon = function lingeringClose(this: Socket): void {
    if (this.destroyed) return;
    const timer = setTimeout(() => this.destroy(), ms);
    timer.unref();
    this.once('close', () => clearTimeout(timer));
    // The client read the answer and closed its side (or gave up): nothing more to wait for.
    this.once('end', () => this.destroy());
    this.end();
    this.resume();
  };
}
