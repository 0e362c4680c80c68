// One log line per request, with a request id the client can quote (X-Request-Id, taken from the
// request when it sends a sane one). Handlers get a child logger carrying the id, made only when
// something logs: the common request logs once, at the end. An error Koa reports about the request
// (the client reset the connection, a streamed body failed) goes on that same line.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import { answered, isClientGone, malformation } from './client-errors.ts';
import { requestOver } from './linger.ts';
import { safePath, safeQuery } from './redact.ts';
import { currentRequest } from '../../contract/request-context.ts';

const SANE_ID = /^[\w.-]{1,128}$/;
/** What requestLog leaves on ctx.state for the middleware and routes after it. */
export interface RequestLogState {
  /** The request's logger: a child carrying the request id. */
  readonly log: Logger;
}

/**
 * Errors reported about a request whose line is not written yet, on its response (a property, not
 * a WeakMap: one entry made and deleted per request kept reallocating the map's table).
 */
const PENDING = Symbol('errors pending');
/** The request's id, on its response (for a line written after the request's own). */
const REQUEST_ID = Symbol('request id');
type Pending = ServerResponse & { [PENDING]?: unknown[] | undefined; [REQUEST_ID]?: string };

/**
 * Koa's `app.on('error')`: the error goes on the request's own line, or, when that is already
 * written (or there is no request), on a line of its own. Never to stderr.
 */
export function requestError(log: Logger, err: unknown, ctx: Context | undefined): void {
  responseError(log, err, ctx?.res);
}

/** requestError for a bare Node response (routes served before Koa report their socket's errors here). */
export function responseError(log: Logger, err: unknown, res: ServerResponse | undefined): void {
  const errors = (res as Pending | undefined)?.[PENDING];
  if (errors) {
    errors.push(err);
    return;
  }
  const reqId = (res as Pending | undefined)?.[REQUEST_ID];
  if (isClientGone(err)) log.debug({ reqId, err: brief(err) }, 'client gone');
  else log.error({ reqId, err }, 'request error');
}

/** The response each connection is answering now, for its socket's one error listener (a property of the socket, set per request). */
const WATCHED = Symbol('response watched for socket errors');
const LISTENING = Symbol('socket error listener set');
type Watched = Socket & { [WATCHED]?: ServerResponse | undefined; [LISTENING]?: true };

/**
 * A socket error while a response is under way goes on that request's line (responseError), as
 * Koa's on-finished does; one listener per connection (set on its first request), not per request.
 * For the routes served before Koa (core/surfaces/http/direct.ts, curl's fast path).
 */
export function watchSocket(socket: Socket, res: ServerResponse, log: Logger): void {
  const watched = socket as Watched;
  if (!watched[LISTENING]) {
    watched[LISTENING] = true;
    socket.on('error', (err: unknown) => {
      const current = watched[WATCHED];
      if (current && !current.writableFinished) responseError(log, err, current);
    });
  }
  watched[WATCHED] = res;
}

/**
 * The response is over ('finish' or 'close'): the socket lets go of it, so that an idle keep-alive
 * connection holds no request or response of the past (a socket error after the answer is no
 * longer that request's: watchSocket ignores it either way).
 */
function unwatch(socket: Watched | null, res: ServerResponse): void {
  if (socket?.[WATCHED] === res) socket[WATCHED] = undefined;
}

function brief(err: unknown): { code?: string; message: string } {
  const e = err as { code?: unknown; message?: unknown } | null;
  return { ...(typeof e?.code === 'string' ? { code: e.code } : {}), message: String(e?.message ?? err) };
}

/** One request's log: its id (already set as X-Request-Id on the response) and its logger. */
export interface RequestRecord {
  readonly id: string;
  /** The request's logger: a child carrying the request id, made on first use. */
  readonly log: Logger;
}

// Per-request objects get their lazy `log` from a getter on a prototype or from one shared getter
// function, never from a getter made per request (an object literal's `get log()` or a
// defineProperty with a new closure). Measured: with getters made per request, every
// young-generation collection found the request's objects alive and promoted them; on a busy server
// a third of everything a request allocated reached the old generation, and collecting it took a
// fifth of the CPU. Why, as far as we can tell: V8 turns such an object into a dictionary-mode one
// and keeps each getter in an accessor record outside the young generation, and that record points
// at the request's closure until a full collection. (bench/README (a), "Per-request getters".)

/**
 * One request's record: the id, and its logger. The logger is handed out at once (a call passes it
 * down to the handler) but the pino child behind it, which carries the request id, is made only
 * when something logs or reads it: most requests never do, and making a child (its bindings
 * serialized) was a visible share of a small call. It is a Proxy of the record whose one handler
 * is shared (nothing is made per request but the record and the proxy); every property read is
 * the child's (a method bound to it), every write goes to the child.
 */
class LazyRecord implements RequestRecord {
  readonly id: string;
  readonly #parent: Logger;
  #child: Logger | undefined;
  #lazy: Logger | undefined;
  constructor(id: string, parent: Logger) {
    this.id = id;
    this.#parent = parent;
  }
  child(): Logger {
    return (this.#child ??= this.#parent.child({ reqId: this.id }));
  }
  get log(): Logger {
    return (this.#lazy ??= new Proxy(this, LAZY_LOGGER) as unknown as Logger);
  }
}

const LAZY_LOGGER: ProxyHandler<LazyRecord> = {
  get(record, prop) {
    const logger = record.child();
    const value = Reflect.get(logger, prop, logger) as unknown;
    return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(logger) : value;
  },
  set(record, prop, value) {
    return Reflect.set(record.child(), prop, value);
  },
  has(record, prop) {
    return Reflect.has(record.child(), prop);
  },
  getPrototypeOf(record) {
    return Reflect.getPrototypeOf(record.child());
  },
};

const RECORD = Symbol('request record');

/** The one getter of every ctx.state.log: the record's logger. */
function stateLog(this: { [RECORD]: RequestRecord }): Logger {
  return this[RECORD].log;
}

/** ctx.state.log, the request's logger made on first use (an own, enumerable property, as before). */
export function attachLog(ctx: Context, record: RequestRecord): void {
  const state = ctx.state as { [RECORD]?: RequestRecord };
  Object.defineProperty(state, RECORD, { value: record, configurable: true });
  Object.defineProperty(state, 'log', { get: stateLog, configurable: true, enumerable: true });
}

/** Responses whose 5xx answer is the caller's own limit (callersOwn): logged at info. */
const callersOutcome = new WeakSet<ServerResponse>();

/** The answer on this response is an outcome the caller brought about (see callersOwn in core/contract/errors.ts). */
export function markCallersOutcome(res: ServerResponse): void {
  callersOutcome.add(res);
}

/**
 * Starts the log of one request on a bare Node request/response (the Koa middleware below, and the
 * routes served before Koa: core/surfaces/http/direct.ts, curl's fast path). `what` is read when
 * the line is written: method, path and raw query string as they are then.
 *
 * X-Request-Id is set on the response at once, unless `deferIdHeader`: then whoever answers puts it
 * on (requestIdHeader, or `setHeader` before a Koa-style answer). A header set before
 * `res.writeHead(status, headers)` sends every one of those headers through `setHeader` too (Node's
 * "progressive" path, a few microseconds a response); an answer written whole in one writeHead
 * (the MCP surface's) passes it there instead.
 */
export function beginRequest(
  log: Logger,
  req: IncomingMessage,
  res: ServerResponse,
  what: () => { method: string; path: string; querystring: string },
  opts: { deferIdHeader?: boolean } = {},
): RequestRecord {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && SANE_ID.test(given) ? given : randomUUID();
  if (!opts.deferIdHeader) res.setHeader('X-Request-Id', id);
  const context = currentRequest();
  if (context?.isFor(req)) context.requestId = id;
  (res as Pending)[REQUEST_ID] = id;
  const started = performance.now();
  const errors: unknown[] = [];
  (res as Pending)[PENDING] = errors;
  let logged = false;
  const done = () => {
    if (logged) return;
    logged = true;
    (res as Pending)[PENDING] = undefined;
    // Over: the connection lets go of this request and response (it may idle, kept alive, for long).
    unwatch(req.socket, res);
    answered(req.socket, res);
    requestOver(res);
    const status = res.writableFinished ? res.statusCode : 499;
    // A client that went away is the 499; anything else Koa reported is the server's failure.
    const failure = errors.length === 0 ? undefined : errors.find((e) => !isClientGone(e));
    const gone = errors.length === 0 ? undefined : errors.find((e) => isClientGone(e));
    const clientError = malformation(req);
    // A request the client broke off or malformed (the parser says so) failed by the client's doing.
    const level = (status >= 500 && !callersOutcome.has(res)) || (failure !== undefined && !clientError) ? 'error' : 'info';
    if (!log.isLevelEnabled(level)) return; // nothing would be written: no line to make
    const { method, path, querystring } = what();
    const line = {
      reqId: id,
      req: { method, path: safePath(path), query: safeQuery(querystring) },
      res: { statusCode: status },
      responseTime: Math.round((performance.now() - started) * 10) / 10,
      ...(clientError ? { clientError } : {}),
      ...(failure !== undefined ? { err: failure } : gone !== undefined ? { err: brief(gone) } : {}),
    };
    if (level === 'error') log.error(line, 'request failed');
    else log.info(line, 'request completed');
  };
  // Plain listeners (done runs once): no once-wrappers to make per request. The line is written at
  // 'finish', so an error reported about the request after its answer went out gets a line of its own.
  res.on('finish', done);
  res.on('close', done);
  return new LazyRecord(id, log);
}

/**
 * The X-Request-Id header a response still lacks ({} once it has one, or when no request log began
 * on it): what an answer written with `res.writeHead(status, headers)` adds to its headers.
 */
export function requestIdHeader(res: ServerResponse): Record<string, string> {
  const id = (res as Pending)[REQUEST_ID];
  return id === undefined || res.hasHeader('x-request-id') ? {} : { 'x-request-id': id };
}

export function requestLog(log: Logger) {
  return async (ctx: Context, next: Next) => {
    const record = beginRequest(log, ctx.req, ctx.res, () => ({ method: ctx.method, path: ctx.path, querystring: ctx.querystring }));
    attachLog(ctx, record);
    await next();
  };
}
