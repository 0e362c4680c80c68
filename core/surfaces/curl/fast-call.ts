// POST /curl/call/{namespace}/{function}, the call every agent makes most, served on the bare Node
// request before Koa: no context object, no middleware chain, no router matching. What the Koa
// route in routes.ts does, step for step and with the same answers (status, headers, text), the
// same request log line (core/surfaces/http/request-log.ts) and the same last line of defence as
// core/app.ts. Only the plain form is taken here: a path of simple names without a query string;
// anything else (a query string, escapes, a trailing slash, other methods) goes to Koa as before.
import { newErrorId } from '../../contract/observe.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { NO_QUERY, type Authenticator } from '../../kernel/auth.ts';
import type { Dispatcher } from '../../kernel/dispatch.ts';
import { readJsonRequest, type BodyLimits } from '../http/body.ts';
import { errorAnswer } from '../http/error-text.ts';
import { beginRequest, markCallersOutcome, watchSocket } from '../http/request-log.ts';
import { callersOwn } from '../../contract/errors.ts';
import { DOWNLOAD_HEADERS } from './respond.ts';

export interface FastCallDeps {
  dispatcher: Dispatcher;
  auth: Authenticator;
  limits: BodyLimits;
  log: Logger;
  /** A Koa context on this request, for the rare answer Koa words best (an attachment's headers). */
  koaContext(req: IncomingMessage, res: ServerResponse): Context;
}

const CALL_URL = /^\/curl\/call\/([A-Za-z0-9_-]+)\/([A-Za-z0-9_-]+)$/;
const TEXT = 'text/plain; charset=utf-8';

/** Writes a whole answer at once, as Koa's respond does for a string or Buffer body. */
function send(
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  contentType: string,
  body: string | Buffer,
  size = typeof body === 'string' ? Buffer.byteLength(body) : body.length,
): void {
  if (res.headersSent) return;
  res.statusCode = status;
  for (const name in headers) res.setHeader(name, headers[name]!);
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', size);
  if (res.writableEnded || res.socket?.writable === false) res.end();
  else res.end(body);
}

/** The curl surface's error answer (respond.ts sendError), on the bare response. */
function sendError(res: ServerResponse, err: unknown, log: Logger): void {
  const answer = errorAnswer(err, log);
  if (callersOwn(err)) markCallersOutcome(res);
  if (answer.aborted) return send(res, answer.status, answer.headers, TEXT, '');
  send(res, answer.status, answer.headers, TEXT, answer.text.endsWith('\n') ? answer.text : `${answer.text}\n`);
}

/** Returns the route: true when it took the request (and answers it), false to leave it to Koa. */
export function fastCallRoute(deps: FastCallDeps): (req: IncomingMessage, res: ServerResponse) => boolean {
  const serve = async (req: IncomingMessage, res: ServerResponse, url: string, namespace: string, fn: string) => {
    const record = beginRequest(deps.log, req, res, () => ({ method: 'POST', path: url, querystring: '' }));
    // What Koa reports about a request (on-finished): a socket error while it is under way goes on its line.
    watchSocket(req.socket, res, deps.log);
    const log = record.log;
    try {
      try {
        const principal = await deps.auth.authenticate(req.headers.authorization || undefined, NO_QUERY);
        const body = await readJsonRequest(req, deps.limits);
        const gone = new AbortController();
        const onClose = () => {
          if (!res.writableFinished) gone.abort(new Error('client closed the connection'));
        };
        res.on('close', onClose);
        try {
          const { fn: entry, encoded } = await deps.dispatcher.call({ principal, namespace, fn, body, signal: gone.signal, log });
          if (encoded.kind === 'bytes') {
            // Koa's attachment() words Content-Disposition; the rest as below.
            const ctx = deps.koaContext(req, res);
            ctx.status = 200;
            ctx.attachment(encoded.filename ?? `${entry.namespace}-${entry.name}`, { type: 'attachment' });
            ctx.set(DOWNLOAD_HEADERS);
            ctx.body = encoded.body;
            ctx.set('Content-Type', encoded.contentType);
            if (res.socket?.writable === false) res.end();
            else res.end(encoded.body);
          } else send(res, 200, {}, encoded.contentType, encoded.text ?? encoded.body, encoded.size);
        } finally {
          res.off('close', onClose);
        }
      } catch (err) {
        sendError(res, err, log);
      }
    } catch (err) {
      // Last line of defence (as in core/app.ts): no stack in a body.
      const errorId = newErrorId();
      log.error({ errorId, err }, 'unhandled error');
      send(res, 500, {}, TEXT, `500 Internal Server Error: error id ${errorId}\n`);
    }
  };

  return (req, res) => {
    const url = req.url;
    if (req.method !== 'POST' || url === undefined || !url.startsWith('/curl/call/')) return false;
    const m = CALL_URL.exec(url);
    if (!m) return false;
    void serve(req, res, url, m[1]!, m[2]!);
    return true;
  };
}
