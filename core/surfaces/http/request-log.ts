// One log line per request, with a request id the client can quote (X-Request-Id, taken from the
// request when it sends a sane one). Handlers get a child logger carrying the id, made only when
// something logs: the common request logs once, at the end. An error Koa reports about the request
// (the client reset the connection, a streamed body failed) goes on that same line.
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import { isClientGone, malformation } from './client-errors.ts';

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

/** Errors reported about a request whose line is not written yet, by its response. */
const pending = new WeakMap<ServerResponse, unknown[]>();

/**
 * Koa's `app.on('error')`: the error goes on the request's own line, or, when that is already
 * written (or there is no request), on a line of its own. Never to stderr.
 */
export function requestError(log: Logger, err: unknown, ctx: Context | undefined): void {
  const errors = ctx && pending.get(ctx.res);
  if (errors) {
    errors.push(err);
    return;
  }
  const reqId = ctx?.response.get('X-Request-Id') || undefined;
  if (isClientGone(err)) log.debug({ reqId, err: brief(err) }, 'client gone');
  else log.error({ reqId, err }, 'request error');
}

function brief(err: unknown): { code?: string; message: string } {
  const e = err as { code?: unknown; message?: unknown } | null;
  return { ...(typeof e?.code === 'string' ? { code: e.code } : {}), message: String(e?.message ?? err) };
}

export function requestLog(log: Logger) {
  return async (ctx: Context, next: Next) => {
    const given = ctx.get('x-request-id');
    const id = SANE_ID.test(given) ? given : randomUUID();
    ctx.set('X-Request-Id', id);
    const started = performance.now();
    let child: Logger | undefined;
    Object.defineProperty(ctx.state, 'log', { get: () => (child ??= log.child({ reqId: id })), configurable: true, enumerable: true });
    const errors: unknown[] = [];
    pending.set(ctx.res, errors);
    let logged = false;
    const done = () => {
      if (logged) return;
      logged = true;
      pending.delete(ctx.res);
      const status = ctx.res.writableFinished ? ctx.status : 499;
      // A client that went away is the 499; anything else Koa reported is the server's failure.
      const failure = errors.find((e) => !isClientGone(e));
      const gone = errors.find((e) => isClientGone(e));
      const clientError = malformation(ctx.req);
      const line = {
        reqId: id,
        req: { method: ctx.method, path: ctx.path, query: safeQuery(ctx) },
        res: { statusCode: status },
        responseTime: Math.round((performance.now() - started) * 10) / 10,
        ...(clientError ? { clientError } : {}),
        ...(failure !== undefined ? { err: failure } : gone !== undefined ? { err: brief(gone) } : {}),
      };
      if (status >= 500 || failure !== undefined) log.error(line, 'request failed');
      else log.info(line, 'request completed');
    };
    ctx.res.once('finish', done);
    ctx.res.once('close', done);
    await next();
  };
}
