// The SDK's Streamable HTTP transport, with what Folio adds at the JSON-RPC level: it keeps track
// of the requests in flight on it (one session's, or in stateless mode one POST's), so that none
// of their HTTP responses can stay open forever.
//
// The SDK maps each request id to the response stream it came on, keyed by the id alone
// (`_requestToStreamMapping` in webStandardStreamableHttp.js), and ends a stream once every
// request mapped to it has its answer. A second request with an id still in flight overwrites the
// first one's entry: the first answer then goes out on the second request's stream and ends it,
// the second answer finds no stream, and the first request's stream waits forever (the SSE
// keep-alive comments even stop a client's own timeout from firing). So, here:
//
// - a request whose id is in flight on this transport, or repeated within its own batch, is
//   refused before the SDK sees it: -32600 for it on its own HTTP response (a batch is refused
//   whole). An id is in flight from the POST that brings it until its answer goes out, or it is
//   cancelled, or its deadline passes;
// - every POST's requests have a deadline: what is still unanswered then is cancelled (the
//   handler's signal fires, a late answer is dropped) and answered with -32603, which ends the
//   stream;
// - a request the client cancels gets no answer (the spec's rule), so its stream is ended here
//   once the other requests on it, if any, are answered: the SDK would keep it open;
// - params that fail the SDK's schema are answered -32602 with a short message, not -32603
//   with a validation dump (invalid-params.ts).
import {
  WebStandardStreamableHTTPServerTransport,
  type HandleRequestOptions,
  type WebStandardStreamableHTTPServerTransportOptions,
} from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { ErrorCode, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { invalidParams } from './invalid-params.ts';
import type { Countdown, Countdowns } from './countdowns.ts';

export interface FolioTransportOptions extends WebStandardStreamableHTTPServerTransportOptions {
  /** How long the requests of one POST may go unanswered before they are abandoned (shared by the transports of a surface). */
  deadlines: Countdowns;
  log: Logger;
  /**
   * A POST's requests are all settled (answered, cancelled or abandoned at the deadline): its
   * response stream has nothing more to carry.
   */
  onsettled?: () => void;
}

/** A JSON-RPC request as it came in: enough to know it by. */
interface IncomingRequest {
  id: RequestId;
  method: string;
  params?: unknown;
}

/** The requests of one POST, which share its response stream. */
interface Post {
  pending: Set<RequestId>;
  /** One of them was cancelled: it will never be answered, so the stream is ended by hand. */
  cancelled: boolean;
  deadline: Countdown | undefined;
}

interface InFlight {
  request: IncomingRequest;
  post: Post;
}

type SendOptions = Parameters<WebStandardStreamableHTTPServerTransport['send']>[1];

export function isRequest(m: unknown): m is IncomingRequest {
  if (typeof m !== 'object' || m === null) return false;
  const { method, id } = m as { method?: unknown; id?: unknown };
  return typeof method === 'string' && (typeof id === 'string' || typeof id === 'number');
}

/** The request id a notifications/cancelled names, if the message is one. */
export function cancelledId(m: unknown): RequestId | undefined {
  if (typeof m !== 'object' || m === null || (m as { method?: unknown }).method !== 'notifications/cancelled') return undefined;
  const id = (m as { params?: { requestId?: unknown } }).params?.requestId;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/** The id of the request a message answers, if it is an answer (a result or an error). */
function answered(m: JSONRPCMessage): RequestId | undefined {
  return 'result' in m || 'error' in m ? (m as { id?: RequestId }).id : undefined;
}

function isInternalError(m: JSONRPCMessage): boolean {
  return 'error' in m && m.error.code === (ErrorCode.InternalError as number);
}

export class FolioTransport extends WebStandardStreamableHTTPServerTransport {
  readonly #inFlight = new Map<RequestId, InFlight>();
  readonly #deadlines: Countdowns;
  readonly #log: Logger;
  readonly #onsettled: (() => void) | undefined;

  constructor(options: FolioTransportOptions) {
    const { deadlines, log, onsettled, ...sdk } = options;
    super(sdk);
    this.#deadlines = deadlines;
    this.#log = log;
    this.#onsettled = onsettled;
  }

  override async handleRequest(req: Request, options?: HandleRequestOptions): Promise<Response> {
    const body = options?.parsedBody;
    if (req.method !== 'POST' || body === undefined) return super.handleRequest(req, options);
    const messages: unknown[] = Array.isArray(body) ? body : [body];
    const requests = messages.filter(isRequest);
    const refusal = this.#refusal(requests, Array.isArray(body));
    if (refusal) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (this.sessionId !== undefined) headers['mcp-session-id'] = this.sessionId;
      return new Response(JSON.stringify(refusal), { status: 200, headers });
    }
    const post = this.#admit(requests);
    let response: Response;
    try {
      response = await super.handleRequest(req, options);
    } catch (err) {
      this.#forget(post);
      throw err;
    }
    // Refused by the SDK (Accept, content type, session, malformed JSON-RPC...): nothing started.
    if (response.status !== 200 && response.status !== 202) {
      this.#forget(post);
      return response;
    }
    // The server has aborted those handlers by now (it saw the notification first) and will
    // send nothing for them.
    for (const m of messages) {
      const id = cancelledId(m);
      if (id !== undefined) this.#cancelled(id);
    }
    return response;
  }

  override async send(message: JSONRPCMessage, options?: SendOptions): Promise<void> {
    const id = answered(message);
    const entry = id === undefined ? undefined : this.#inFlight.get(id);
    if (id === undefined || !entry) return super.send(message, options);
    const { post, request } = entry;
    this.#inFlight.delete(id);
    post.pending.delete(id);
    // The SDK answers params that fail its schema as an internal error (see invalid-params.ts).
    const why = isInternalError(message) ? invalidParams(request) : undefined;
    const answer: JSONRPCMessage = why ? { jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidParams, message: why } } : message;
    try {
      await super.send(answer, options);
    } finally {
      if (post.pending.size === 0) {
        this.#deadlines.stop(post.deadline);
        // A cancelled request on this stream is never answered: the SDK waits for it still.
        if (post.cancelled) this.closeSSEStream(id);
        this.#onsettled?.();
      }
    }
  }

  /** Is this request id in flight here (admitted, not yet answered or cancelled)? */
  has(id: RequestId): boolean {
    return this.#inFlight.has(id);
  }

  /**
   * A notifications/cancelled for a request on this transport that came in on another HTTP request
   * (stateless mode: each POST has its own transport). The same as if it had come here.
   */
  cancel(id: RequestId, reason: string | undefined): void {
    if (!this.#inFlight.has(id)) return;
    this.onmessage?.({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, ...(reason ? { reason } : {}) } });
    this.#cancelled(id);
  }

  override async close(): Promise<void> {
    for (const { post } of this.#inFlight.values()) this.#deadlines.stop(post.deadline);
    this.#inFlight.clear();
    await super.close();
  }

  #refusal(requests: IncomingRequest[], batch: boolean): JSONRPCMessage | JSONRPCMessage[] | undefined {
    // The common POST: one request, its id not in flight.
    if (requests.length === 0 || (requests.length === 1 && !this.#inFlight.has(requests[0]!.id))) return undefined;
    const why = new Map<RequestId, string>();
    const seen = new Set<RequestId>();
    for (const { id } of requests) {
      if (this.#inFlight.has(id))
        why.set(id, `id ${JSON.stringify(id)} is already in flight on this session; wait for its answer or use another id`);
      else if (seen.has(id)) why.set(id, `id ${JSON.stringify(id)} appears more than once in this batch`);
      seen.add(id);
    }
    if (why.size === 0) return undefined;
    const refuse = (id: RequestId, message: string): JSONRPCMessage => ({
      jsonrpc: '2.0',
      id,
      error: { code: ErrorCode.InvalidRequest, message: `Invalid Request: ${message}` },
    });
    if (!batch) return refuse(requests[0]!.id, why.get(requests[0]!.id)!);
    const first = why.values().next().value!;
    return requests.map(({ id }) => refuse(id, why.get(id) ?? `the batch was refused whole (${first}); nothing in it was run`));
  }

  #admit(requests: IncomingRequest[]): Post {
    const post: Post = { pending: new Set(), cancelled: false, deadline: undefined };
    if (requests.length === 0) return post;
    for (const request of requests) {
      post.pending.add(request.id);
      this.#inFlight.set(request.id, { request, post });
    }
    post.deadline = this.#deadlines.start(() => this.#expire(post));
    return post;
  }

  /** The SDK did not take these requests: they were never in flight. */
  #forget(post: Post): void {
    this.#deadlines.stop(post.deadline);
    for (const id of post.pending) if (this.#inFlight.get(id)?.post === post) this.#inFlight.delete(id);
    post.pending.clear();
  }

  #cancelled(id: RequestId): void {
    const entry = this.#inFlight.get(id);
    if (!entry) return;
    const { post } = entry;
    this.#inFlight.delete(id);
    post.pending.delete(id);
    post.cancelled = true;
    if (post.pending.size === 0) {
      this.#deadlines.stop(post.deadline);
      this.closeSSEStream(id);
      this.#onsettled?.();
    }
  }

  /** The deadline passed: cancel what is unanswered (so a late answer is dropped) and answer it. */
  #expire(post: Post): void {
    const ms = this.#deadlines.ms;
    this.#abandon(post, `no answer within ${ms} ms`, (id, method) =>
      this.#log.warn({ id, method, ms }, 'mcp request unanswered at its deadline: abandoned'),
    );
  }

  /**
   * The server is shutting down: every request still unanswered here is cancelled and answered
   * with an error now, while its answer can still be written (and a stream whose client left gets
   * its end in the stream log rather than none).
   */
  abandonAll(why: string): void {
    const posts = new Set([...this.#inFlight.values()].map((e) => e.post));
    for (const post of posts) this.#abandon(post, why);
  }

  #abandon(post: Post, why: string, note?: (id: RequestId, method: string) => void): void {
    for (const id of [...post.pending]) {
      const entry = this.#inFlight.get(id);
      if (entry?.post !== post) continue;
      note?.(id, entry.request.method);
      // Through the server's own cancellation: the handler's signal fires, its answer is never sent.
      this.onmessage?.({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: why } });
      this.send({
        jsonrpc: '2.0',
        id,
        error: { code: ErrorCode.InternalError, message: `Internal error: ${why}; the request was abandoned` },
      }).catch(() => {
        // The client hung up already: nothing to end.
      });
    }
  }
}
