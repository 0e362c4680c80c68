// The origin (scheme://host) a request was addressed to, for links in answers when no public URL
// is configured. The app's ctx.protocol and ctx.host are Folio's own (./client-address.ts):
// X-Forwarded-Proto/-Host count only from a trusted proxy, and the protocol is read from whichever
// of the request's or the response's socket is still there (Koa's threw when Node had let go of the
// request's, answering after the server stopped reading an upload: a 413 became a 500).
import type { Context } from 'koa';

/** `scheme://host` as the client addressed it. */
export function requestOrigin(ctx: Context): string {
  return `${ctx.protocol}://${ctx.host}`;
}
