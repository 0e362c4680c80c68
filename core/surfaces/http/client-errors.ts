// Requests Node's HTTP parser refuses: a broken request line or header, a chunk size that is not
// hex, a body that ends before its Content-Length. Left to Node, each gets a bare
// `400 Bad Request` written over whatever the route was answering, and the socket destroyed with
// the error (which Koa then prints, stack and all, to stderr). Here instead:
//
// - the parser failed inside the body of a request a route is handling: the body reader
//   (body.ts) is told and refuses the body, so the route's surface answers as it does any bad
//   body (problem+json, text, JSON-RPC), and the connection closes after that answer; the
//   request's own log line records it;
// - nothing is being handled (the request line or a header is broken): a short, well-formed
//   answer in the format of the surface the path names, and one log line;
// - the client is gone, or an answer is already under way: nothing more is sent.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { REASON } from '../../contract/errors.ts';
import { closeLingering, lingerAfterAnswer } from './linger.ts';
import { safePath } from './redact.ts';

/** An answer written straight to the socket: no request object exists to write it with. */
export interface RawAnswer {
  status: number;
  type: string;
  body: string;
}

export interface ClientErrorOptions {
  log: Logger;
  /** The 400 for a request refused before any route took it, worded by the surface its path names. */
  answer(path: string | undefined, message: string): RawAnswer;
}

interface ParserError extends Error {
  code?: string;
  reason?: string;
  rawPacket?: Buffer;
}

/** What the parser refused, for the answer and the log. */
export interface ClientError {
  code: string | undefined;
  reason: string;
}

const malformed = new WeakMap<IncomingMessage, ClientError>();

// Set on every request whose body is read, and on every connection per request: kept as properties
// of the request and of the connection rather than in WeakMaps keyed by them (a WeakMap entry made
// per request is an ephemeron every young-generation collection has to trace).
const READER = Symbol('malformed body reader');
const ANSWERING = Symbol('request being answered');
type Reading = IncomingMessage & { [READER]?: ((why: string) => void) | undefined };
type Answering = Duplex & { [ANSWERING]?: { req: IncomingMessage; res: ServerResponse } | undefined };

/** Why the parser refused the rest of this request's body, when it did. */
export function malformation(req: IncomingMessage): ClientError | undefined {
  return malformed.get(req);
}

/** The server itself gave up on the request's body (too slow: slow-body.ts): its log line says why. */
export function refuseBody(req: IncomingMessage, why: ClientError): void {
  malformed.set(req, why);
}

/**
 * The response is over ('finish' or 'close'; the request log tells, core/surfaces/http/request-log.ts):
 * its connection lets go of the pair, so that an idle keep-alive connection holds no request or
 * response of the past. (An error of the parser after that is not that request's either way.)
 */
export function answered(socket: Answering | null, res: ServerResponse): void {
  if (socket?.[ANSWERING]?.res === res) socket[ANSWERING] = undefined;
}

/**
 * Calls `fn` if the parser refuses the rest of the body while it is being read (the body never
 * ends then: ending or destroying the request would close the connection before the answer).
 * Returns the unsubscribe.
 */
export function onMalformed(req: IncomingMessage, fn: (why: string) => void): () => void {
  (req as Reading)[READER] = fn;
  return () => {
    if ((req as Reading)[READER] === fn) (req as Reading)[READER] = undefined;
  };
}

/** Errors that mean the other end is gone: there is no one to answer. */
const GONE = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ETIMEDOUT', 'ERR_STREAM_DESTROYED', 'ERR_STREAM_PREMATURE_CLOSE']);

export function isClientGone(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | undefined;
  return (typeof e?.code === 'string' && GONE.has(e.code)) || e?.message === 'aborted';
}

function describe(err: ParserError): string {
  if (err.code === 'HPE_INVALID_EOF_STATE') return 'the connection ended before the whole request was sent';
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'the request headers did not arrive in time';
  const reason = err.reason ?? err.message.replace(/^Parse Error:?\s*/, '');
  return `malformed HTTP: ${reason || 'the parser refused it'}`;
}

/** The path of the request line at the start of the packet the parser refused, when there is one. */
function pathOf(packet: Buffer | undefined): string | undefined {
  const m = packet && /^[A-Z]+ (\/\S*) HTTP\/1\.[01]\r?\n/.exec(packet.subarray(0, 8192).toString('latin1'));
  return m?.[1]?.split('?')[0];
}

function rawResponse(a: RawAnswer, reqId: string): string {
  return [
    `HTTP/1.1 ${a.status} ${REASON[a.status] ?? 'Bad Request'}`,
    `Content-Type: ${a.type}`,
    `Content-Length: ${Buffer.byteLength(a.body)}`,
    'Cache-Control: no-store',
    `X-Request-Id: ${reqId}`,
    'Connection: close',
    '',
    a.body,
  ].join('\r\n');
}

/** Installs the handling on `server`; call before it takes requests. */
export function handleClientErrors(server: Server, opts: ClientErrorOptions): void {
  // The request most recently handed to a route on each connection (socket[ANSWERING]): the one
  // being answered while its response is not finished.
  // llhttp repeats its error for every later chunk on the connection: the first one decides.
  const settled = new WeakSet<Duplex>();

  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    (req.socket as Answering)[ANSWERING] = { req, res };
  });

  server.on('clientError', (err: ParserError, socket: Duplex) => {
    if (settled.has(socket)) return;
    settled.add(socket);
    const current = (socket as Answering)[ANSWERING];
    const handling = current && !current.res.writableFinished ? current : undefined;
    if (isClientGone(err) || !socket.writable) {
      // The request being handled, if any, logs itself (499); an idle connection reset is routine.
      if (!handling) opts.log.debug({ clientError: { code: err.code, message: err.message } }, 'client connection error');
      socket.destroy();
      return;
    }
    const reason = describe(err);
    if (handling && !handling.req.complete && !handling.res.headersSent) {
      // Inside the body of the request being handled: the body reader refuses it (body.ts), the
      // route answers in its surface's format, and the connection closes after that answer.
      malformed.set(handling.req, { code: err.code, reason });
      handling.res.shouldKeepAlive = false;
      (handling.req as Reading)[READER]?.(reason);
      return;
    }
    if (handling) {
      // The next request on the connection is broken while this one is answered: finish this one,
      // then close, lingering (linger.ts): the client may still be sending, and a reset would cost
      // it the answer.
      opts.log.info({ clientError: { code: err.code, reason } }, 'malformed request after the one being answered; closing the connection');
      lingerAfterAnswer(socket);
      if (!handling.res.headersSent) handling.res.shouldKeepAlive = false;
      else handling.res.once('close', () => closeLingering(socket));
      return;
    }
    const path = pathOf(err.rawPacket);
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const answer =
      status === 400
        ? opts.answer(path, reason)
        : { status, type: 'text/plain; charset=utf-8', body: `${status} ${REASON[status] ?? ''}: ${reason}\n` };
    const reqId = randomUUID();
    opts.log.info(
      {
        reqId,
        req: { path: path === undefined ? undefined : safePath(path) },
        res: { statusCode: answer.status },
        clientError: { code: err.code, reason },
      },
      'malformed request refused',
    );
    socket.write(rawResponse(answer, reqId));
    // What the client still sends is read and dropped (not as requests) until it closes, so that the
    // answer reaches it (linger.ts).
    closeLingering(socket);
  });
}
