// CORS for the REST API (/api/v1) and the curl surface (/curl): a page on another origin, calling
// with a bearer token, passes the browser's preflight and reads the answer, when its origin is in
// `http.allowedOrigins` (CORS_ALLOWED_ORIGINS; none by default, and '*' for any). No cookies are
// involved (Folio authenticates with Authorization: Bearer), so no Allow-Credentials. /mcp keeps
// its own Origin rule (mcp.allowedOrigins, core/surfaces/mcp/).
//
// It runs on the bare Node request, before Koa: the curl call and POST /mcp are served before Koa's
// middleware (core/surfaces/curl/fast-call.ts), and their answers need the headers too. Headers set
// here stay on the response whatever answers it (Koa and the fast paths only add theirs).
// @koa/cors would see only what reaches Koa.
import type { IncomingMessage, ServerResponse } from 'node:http';

const METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';
/** What a browser app sends: the token, JSON, conditional requests, ranges, and tus's headers. */
const ALLOW_HEADERS = [
  'Authorization',
  'Content-Type',
  'If-Match',
  'If-None-Match',
  'Range',
  'X-Share-Password',
  'X-Request-Id',
  'Tus-Resumable',
  'Upload-Length',
  'Upload-Metadata',
  'Upload-Offset',
  'Upload-Defer-Length',
  'Upload-Concat',
  'X-HTTP-Method-Override',
].join(', ');
/** What a browser app may read from an answer besides the CORS-safelisted headers. */
const EXPOSE_HEADERS = [
  'Location',
  'ETag',
  'Retry-After',
  'Content-Range',
  'Content-Disposition',
  'Content-Length',
  'WWW-Authenticate',
  'X-Request-Id',
  'X-Folio-Size',
  'X-Folio-Ceiling',
  'Tus-Resumable',
  'Tus-Version',
  'Tus-Extension',
  'Tus-Max-Size',
  'Upload-Offset',
  'Upload-Length',
  'Upload-Expires',
  'Upload-Metadata',
  'Folio-File-Id',
].join(', ');
/** How long a browser may keep a preflight's answer (Chromium caps it at 2 hours). */
const MAX_AGE_SECONDS = 7200;

const SURFACE = /^\/(api\/v1|curl)(\/|\?|$)/;

/**
 * Returns a handler for every request: it adds the CORS headers an allowed origin gets, and answers
 * its preflights itself (true: answered). Without allowed origins it does nothing at all.
 */
export function corsHandler(allowedOrigins: readonly string[]): (req: IncomingMessage, res: ServerResponse) => boolean {
  if (allowedOrigins.length === 0) return () => false;
  const any = allowedOrigins.includes('*');
  const allowed = new Set(allowedOrigins.map((o) => o.toLowerCase()));
  return (req, res) => {
    if (!SURFACE.test(req.url ?? '')) return false;
    // The answer depends on the Origin: a cache must not give one origin's answer to another.
    res.setHeader('Vary', 'Origin');
    const origin = req.headers.origin;
    if (origin === undefined || !(any || allowed.has(origin.toLowerCase()))) return false;
    res.setHeader('Access-Control-Allow-Origin', any ? '*' : origin);
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
      res.writeHead(204, {
        'Access-Control-Allow-Methods': METHODS,
        'Access-Control-Allow-Headers': ALLOW_HEADERS,
        'Access-Control-Max-Age': String(MAX_AGE_SECONDS),
        Vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
        'Content-Length': '0',
      });
      res.end();
      return true;
    }
    res.setHeader('Access-Control-Expose-Headers', EXPOSE_HEADERS);
    return false;
  };
}
