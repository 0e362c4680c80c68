// The origin (scheme://host) a request was addressed to, for links in answers when no public URL
// is configured. Koa's `ctx.protocol` reads the request's socket, which Node has already let go
// of when the answer is an error made after the server stopped reading an upload (a 413 while the
// client still sends): then it threw, and the 413 became a 500. The same rules, from whichever of
// the request's or the response's socket is still there.
import type { TLSSocket } from 'node:tls';
import type { Context } from 'koa';

export function protocolOf(ctx: Context): string {
  const socket = (ctx.req.socket ?? ctx.res.socket) as Partial<TLSSocket> | null;
  if (socket?.encrypted) return 'https';
  if (!ctx.app.proxy) return 'http';
  const forwarded = ctx.get('X-Forwarded-Proto');
  return forwarded ? forwarded.split(/\s*,\s*/, 1)[0]! : 'http';
}

/** `scheme://host` as the client addressed it. */
export function requestOrigin(ctx: Context): string {
  return `${protocolOf(ctx)}://${ctx.host}`;
}
