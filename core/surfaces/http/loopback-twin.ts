// Folio on one loopback address also answers on the other at the same port (127.0.0.1 and [::1]),
// so that every loopback name of its address (localhost, 127.0.0.1, [::1]) reaches Folio and no
// other local process: only then may OAuth take those names as aliases of Folio's own address
// (core/surfaces/oauth/provider.ts). The twin's connections are handed to the main server, which
// serves, watches and closes them like its own.
import { createServer, type Server } from 'node:net';
import type http from 'node:http';
import type { Logger } from 'pino';

export interface LoopbackTwin {
  /** Whether every loopback name of the address reaches Folio (the aliases are safe to accept). */
  aliases: boolean;
  close(): Promise<void>;
}

const TWIN: Record<string, string> = { '127.0.0.1': '::1', '::1': '127.0.0.1' };

/** Listens on the other loopback address of the one `server` listens on, when it is one. */
export async function listenOnLoopbackTwin(server: http.Server, log: Logger): Promise<LoopbackTwin> {
  const addr = server.address();
  const twin = addr && typeof addr === 'object' ? TWIN[addr.address] : undefined;
  if (!addr || typeof addr !== 'object' || !twin) return { aliases: false, close: async () => {} };
  const net: Server = createServer((socket) => server.emit('connection', socket));
  const error = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
    net.once('error', resolve);
    net.listen({ port: addr.port, host: twin, ipv6Only: twin === '::1' }, () => resolve(null));
  });
  if (!error) return { aliases: true, close: () => new Promise((resolve) => net.close(() => resolve())) };
  // No such address on this machine (no IPv6): no other process can listen on it either.
  if (error.code === 'EADDRNOTAVAIL' || error.code === 'EAFNOSUPPORT') return { aliases: true, close: async () => {} };
  log.warn(
    { err: error, address: twin, port: addr.port },
    'another process listens on the other loopback address at this port: OAuth accepts only the exact address (set PUBLIC_URL)',
  );
  return { aliases: false, close: async () => {} };
}
