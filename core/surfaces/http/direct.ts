// Routes served before Koa's middleware chain: a Koa context is made for the request (so the route's
// own code, and every header and answer it makes, is unchanged), then the route runs at once,
// without the OAuth mount, the routers it would otherwise be matched against first, or compose.
// What the chain gives every request is done here the same way: the request log line and
// ctx.state.log (request-log.ts), the last line of defence of core/app.ts (a 500 with an error id,
// no stack), a socket error on the request's line, and Koa's answer of ctx.body.
import { newErrorId } from '../../contract/observe.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { attachLog, beginRequest, requestIdHeader, responseError, watchSocket } from './request-log.ts';

export interface DirectRoute {
  /** Takes the request? Only what the route's Koa path would have answered the same. */
  match(req: IncomingMessage): boolean;
  handle(ctx: Context): Promise<void> | void;
}

/** Statuses whose answer has no body (as Koa's `statuses.empty`). */
const EMPTY = new Set([204, 205, 304]);

/** Koa's respond() for the bodies routes set: none (respond = false), null, a string, a Buffer, JSON. */
function respond(ctx: Context): void {
  if (ctx.respond === false) return;
  const res = ctx.res;
  if (!ctx.writable) {
    res.end();
    return;
  }
  const code = ctx.status;
  if (EMPTY.has(code)) {
    ctx.body = null;
    res.end();
    return;
  }
  let body: unknown = ctx.body;
  if (body === null || body === undefined) {
    const text = ctx.message || String(code);
    if (!res.headersSent) {
      ctx.type = 'text';
      ctx.length = Buffer.byteLength(text);
    }
    res.end(text);
    return;
  }
  if (Buffer.isBuffer(body) || typeof body === 'string') {
    res.end(body);
    return;
  }
  body = JSON.stringify(body);
  if (!res.headersSent) ctx.length = Buffer.byteLength(body as string);
  res.end(body);
}

export function directRoutes(opts: {
  log: Logger;
  context(req: IncomingMessage, res: ServerResponse): Context;
  routes: DirectRoute[];
}): (req: IncomingMessage, res: ServerResponse) => boolean {
  const serve = async (route: DirectRoute, req: IncomingMessage, res: ServerResponse) => {
    res.statusCode = 404; // Koa's start: a route that sets nothing answers 404
    const ctx = opts.context(req, res);
    // X-Request-Id goes on with the answer (a route answering whole with writeHead passes it there:
    // requestIdHeader), so that nothing is set on the response before the route answers.
    const record = beginRequest(opts.log, req, res, () => ({ method: ctx.method, path: ctx.path, querystring: ctx.querystring }), {
      deferIdHeader: true,
    });
    attachLog(ctx, record);
    watchSocket(req.socket, res, opts.log);
    try {
      try {
        await route.handle(ctx);
      } catch (err) {
        // Last line of defence (as in core/app.ts): no framework error page, no stack in a body.
        const errorId = newErrorId();
        record.log.error({ errorId, err }, 'unhandled error');
        ctx.status = 500;
        ctx.type = 'text/plain; charset=utf-8';
        ctx.body = `500 Internal Server Error: error id ${errorId}\n`;
      }
      if (!res.headersSent && !res.hasHeader('x-request-id')) res.setHeader('X-Request-Id', record.id);
      respond(ctx);
    } catch (err) {
      responseError(opts.log, err, res);
      if (!res.headersSent) res.writeHead(500, requestIdHeader(res)).end();
      else res.destroy();
    }
  };
  return (req, res) => {
    for (const route of opts.routes)
      if (route.match(req)) {
        void serve(route, req, res);
        return true;
      }
    return false;
  };
}
