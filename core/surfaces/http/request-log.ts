// One log line per request, with a request id the client can quote (X-Request-Id, taken from the
// request when it sends a sane one). Handlers get a child logger carrying the id, made only when
// something logs: the common request logs once, at the end.
import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';

const SANE_ID = /^[\w.-]{1,128}$/;
/** Query parameters whose values never reach the log (a token sent in the URL is refused, but logged it would leak). */
const SECRET_PARAMS = /^(access_token|token|api_key|apikey|bearer|auth|code|password)$/i;

function safeQuery(ctx: Context): string | undefined {
  if (!ctx.querystring) return undefined;
  const params = new URLSearchParams(ctx.querystring);
  for (const key of [...params.keys()]) if (SECRET_PARAMS.test(key)) params.set(key, '[redacted]');
  return params.toString();
}

/** What requestLog leaves on ctx.state for the middleware and routes after it. */
export interface RequestLogState {
  /** The request's logger: a child carrying the request id. */
  readonly log: Logger;
}

export function requestLog(log: Logger) {
  return async (ctx: Context, next: Next) => {
    const given = ctx.get('x-request-id');
    const id = SANE_ID.test(given) ? given : randomUUID();
    ctx.set('X-Request-Id', id);
    const started = performance.now();
    let child: Logger | undefined;
    Object.defineProperty(ctx.state, 'log', { get: () => (child ??= log.child({ reqId: id })), configurable: true, enumerable: true });
    let logged = false;
    const done = () => {
      if (logged) return;
      logged = true;
      const status = ctx.res.writableFinished ? ctx.status : 499;
      const line = {
        reqId: id,
        req: { method: ctx.method, path: ctx.path, query: safeQuery(ctx) },
        res: { statusCode: status },
        responseTime: Math.round((performance.now() - started) * 10) / 10,
      };
      if (status >= 500) log.error(line, 'request failed');
      else log.info(line, 'request completed');
    };
    ctx.res.once('finish', done);
    ctx.res.once('close', done);
    await next();
  };
}
