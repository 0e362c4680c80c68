// The MCP surface: /mcp over Streamable HTTP (the official SDK's transport), the same registry and
// dispatch as the curl surface. HTTP concerns live here: Host/Origin checks, bearer auth (the
// curl surface's Authenticator), protocol version, sessions bound to their user, stateless mode.
import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import type { ServerResponse } from 'node:http';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { isInitializeRequest, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../../domain/identity/types.ts';
import { queryOf, type Authenticator } from '../../kernel/auth.ts';
import type { Dispatcher } from '../../kernel/dispatch.ts';
import { BadArguments, PayloadTooLarge, Unauthenticated } from '../../contract/errors.ts';
import { readJsonBody, type BodyLimits } from '../http/body.ts';
import { HOLD_MS, webRequest, writeResponse } from './http-adapter.ts';
import { authInfoFor, buildServer, type RequestCaller, type ServerDeps } from './server.ts';
import { SessionStore, type Session } from './sessions.ts';
import { cancelledId, FolioTransport, isRequest } from './transport.ts';
import { SessionEventStore } from './event-store.ts';
import { Countdowns } from './countdowns.ts';
import { DetachableStream, parseEventId, resumeStream } from './stream-resume.ts';
import type { StreamLog } from '../../db/stream-log.ts';
import type { Signals } from '../../db/change-feed.ts';
import {
  corsHeaders,
  hostAllowed,
  METADATA_PATH,
  originAllowed,
  preflightHeaders,
  protectedResourceMetadata,
  RESOURCE_PATHS,
  wwwAuthenticate,
  type OriginPolicy,
} from './security.ts';
import { requestOrigin } from '../http/origin.ts';
import { requestIdHeader } from '../http/request-log.ts';

export interface McpDeps {
  dispatcher: Dispatcher;
  auth: Authenticator;
  version: string;
  publicUrl: string | null;
  mode: 'stateful' | 'stateless';
  allowedOrigins: string[];
  allowedHosts: string[];
  limits: BodyLimits;
  log: Logger;
  /** The authorization server that issues tokens for /mcp, once it runs. */
  oauth?: () => { issuer: string; scopes: string[] } | null;
  /** Quiet time before list_changed goes out; default 100 ms. */
  notifyDebounceMs?: number;
  /** Idle sessions (no request, no open stream) are closed after this; default 30 minutes. */
  sessionIdleMs?: number;
  /** Sessions one user may hold; the oldest idle one goes first; default 32. */
  maxSessionsPerUser?: number;
  /**
   * How long the requests of one POST may go unanswered before they are abandoned (and their
   * response stream ends); null: the handler timeout plus DEADLINE_MARGIN_MS.
   */
  streamDeadlineMs?: number | null;
  /** How long a POST's answer may be held back to go out whole; default HOLD_MS (20), 0: stream at once. */
  holdMs?: number;
  /**
   * Stateless mode: where the events of a response stream whose client went away are kept, so the
   * client resumes it on any node (without it, a client going away cancels its calls).
   */
  streams?: StreamLog;
  /** Stateless mode: how a cancel reaches a request running on another node. */
  signals?: Signals;
}

export interface McpSurface {
  router: Router;
  /** The /mcp route itself (core/app.ts also serves POST /mcp with it before the other routes). */
  handle(ctx: Context): Promise<void>;
  /** Something about this user changed (namespace access, their notes): their sessions re-check their lists. */
  accessChanged(userId: string): void;
  /** Anything may have changed (a change feed reconnected): every session re-checks. */
  everyoneChanged(): void;
  /** Open sessions, for tests and metrics. */
  readonly sessionCount: number;
  close(): Promise<void>;
  /**
   * Resolves once the events of streams whose client went away are written (bounded wait): call
   * after the HTTP server has let its connections go (which may detach more) and before the
   * database closes.
   */
  drained(): Promise<void>;
}

/** The methods /mcp answers in each mode. */
const STATEFUL_METHODS: readonly string[] = ['GET', 'POST', 'DELETE'];
const STATELESS_METHODS: readonly string[] = ['POST'];

// The JSON-RPC envelope ({ params: { arguments: ... } }) sits on top of the arguments.
const ENVELOPE_DEPTH = 3;

/** The signals that carry a stateless cancel, and a request to write a stream to the log, to the other nodes. */
const CANCEL_SIGNAL = 'mcp-cancel';
const FLUSH_SIGNAL = 'mcp-flush';
/** Cancels of one POST carried to the other nodes. */
const MAX_CANCELS_SIGNALLED = 50;
/** Finished streams a node remembers, so that resuming one is answered at once (about 100 bytes each). */
const MAX_FINISHED_REMEMBERED = 4096;
/** Resumed streams one user may have open on one node. */
const MAX_RESUMING_PER_USER = 16;
/** How often each node sweeps expired stream events (stateless mode). */
const SWEEP_EVERY_MS = 60_000;

// A call's handler is stopped at the handler timeout; this covers what comes before and after it
// (visibility rules, encoding). A request still unanswered after both is abandoned.
const DEADLINE_MARGIN_MS = 5000;

function jsonRpcError(ctx: Context, status: number, code: number, message: string): void {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = { jsonrpc: '2.0', error: { code, message }, id: null };
}

const sessionNotFound = (ctx: Context) =>
  // The same answer for an unknown, expired, deleted or another user's session: a session id
  // confirms nothing to someone it does not belong to (the spec's "start a new session" signal).
  jsonRpcError(ctx, 404, -32001, 'Session not found: initialize a new session');

/**
 * Who makes an MCP request, and its logger made on first use: a getter on the prototype, not one
 * per request (see core/surfaces/http/request-log.ts on why).
 */
class ContextCaller implements RequestCaller {
  readonly principal: Principal;
  readonly #log: () => Logger;
  constructor(principal: Principal, log: () => Logger) {
    this.principal = principal;
    this.#log = log;
  }
  get log(): Logger {
    return this.#log();
  }
}

export function mcpSurface(deps: McpDeps): McpSurface {
  const log = deps.log.child({ component: 'mcp' });
  const stateful = deps.mode === 'stateful';
  const policy: OriginPolicy = { allowedHosts: deps.allowedHosts, allowedOrigins: deps.allowedOrigins, publicUrl: deps.publicUrl };
  const serverDeps: ServerDeps = { dispatcher: deps.dispatcher, version: deps.version, stateful };
  const bodyLimits: BodyLimits = { requestBytes: deps.limits.requestBytes, jsonDepth: deps.limits.jsonDepth + ENVELOPE_DEPTH };
  const deadlineMs = deps.streamDeadlineMs ?? deps.dispatcher.policy.handlerTimeoutMs + DEADLINE_MARGIN_MS;
  const holdMs = deps.holdMs ?? HOLD_MS;
  const onTimerError = (err: unknown) => log.error({ err }, 'mcp timer callback failed');
  // A POST's answer held back to go out whole; the deadline of a POST's requests (transport.ts).
  const holds = holdMs > 0 ? new Countdowns(holdMs, onTimerError) : undefined;
  const deadlines = new Countdowns(deadlineMs, onTimerError);
  const store = new SessionStore({
    dispatcher: deps.dispatcher,
    log,
    debounceMs: deps.notifyDebounceMs ?? 100,
    idleMs: deps.sessionIdleMs ?? 30 * 60_000,
    maxPerUser: deps.maxSessionsPerUser ?? 32,
  });
  const unsubscribe = stateful ? deps.dispatcher.registry.onChange(() => store.registryChanged()) : () => {};
  const base = (ctx: Context) => (deps.publicUrl ?? requestOrigin(ctx)).replace(/\/+$/, '');
  const router = new Router();

  const metadata = (ctx: Context, resourcePath: (typeof RESOURCE_PATHS)[number] = '/mcp') => {
    // Without a public URL the resource is made from Host: only a Host /mcp answers may name it.
    const host = ctx.get('host') || undefined;
    if (!deps.publicUrl && !hostAllowed(host, policy))
      return jsonRpcError(ctx, 403, -32000, `Forbidden: this server does not answer to Host '${host ?? ''}' (see mcp.allowedHosts)`);
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = protectedResourceMetadata(base(ctx), deps.version, deps.oauth?.() ?? null, resourcePath);
  };
  router.get(METADATA_PATH, (ctx) => metadata(ctx));
  // RFC 9728 §3.1: the path of the resource goes after the well-known suffix. The REST API and the
  // curl surface are resources too (a token names the one it is for), described here alike.
  for (const resourcePath of RESOURCE_PATHS) router.get(`${METADATA_PATH}${resourcePath}`, (ctx) => metadata(ctx, resourcePath));

  const handle = async (ctx: Context): Promise<void> => {
    // The request's logger is made on first use (most requests log once, at the end).
    const reqLog = (): Logger => (ctx.state.log as Logger | undefined) ?? log;
    const host = ctx.get('host') || undefined;
    const origin = ctx.get('origin') || undefined;
    // DNS rebinding: a page on evil.example resolving to 127.0.0.1 carries its own Host/Origin.
    if (!hostAllowed(host, policy))
      return jsonRpcError(ctx, 403, -32000, `Forbidden: this server does not answer to Host '${host ?? ''}' (see mcp.allowedHosts)`);
    if (!originAllowed(origin, host, policy))
      return jsonRpcError(ctx, 403, -32000, `Forbidden: requests from Origin '${origin}' are not allowed (see mcp.allowedOrigins)`);
    if (origin) ctx.set(corsHeaders(origin));
    if (ctx.method === 'OPTIONS' && origin) {
      ctx.set(preflightHeaders(origin));
      ctx.status = 204;
      return;
    }

    const version = ctx.get('mcp-protocol-version');
    if (version && !SUPPORTED_PROTOCOL_VERSIONS.includes(version))
      return jsonRpcError(
        ctx,
        400,
        -32000,
        `Bad Request: unsupported MCP-Protocol-Version '${version}' (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
      );

    let principal: Principal;
    try {
      principal = await deps.auth.authenticate(ctx.get('authorization') || undefined, queryOf(ctx.querystring));
    } catch (err) {
      if (!(err instanceof Unauthenticated)) throw err;
      ctx.set('WWW-Authenticate', wwwAuthenticate(base(ctx), err.bearerError));
      return jsonRpcError(ctx, 401, -32001, `401 Unauthorized: ${err.message}`);
    }

    const lastEventId = ctx.get('last-event-id');
    if (!stateful && ctx.method === 'GET' && lastEventId && deps.streams) return resumeStateless(ctx, lastEventId, principal.user.id);

    const allowed = stateful ? STATEFUL_METHODS : STATELESS_METHODS;
    if (!allowed.includes(ctx.method)) {
      ctx.set('Allow', allowed.join(', '));
      const why = stateful
        ? ''
        : ' (stateless mode: no sessions, no server-sent stream; GET only resumes a response stream, with Last-Event-ID)';
      return jsonRpcError(ctx, 405, -32000, `Method not allowed: ${ctx.method} /mcp${why}`);
    }

    let body: unknown;
    if (ctx.method === 'POST') {
      try {
        body = await readJsonBody(ctx, bodyLimits);
      } catch (err) {
        if (err instanceof PayloadTooLarge) return jsonRpcError(ctx, 413, -32000, `413 Content Too Large: ${err.message}`);
        // Valid JSON holding a string Folio cannot keep as text (a NUL, a lone surrogate): the
        // message parsed, its params did not pass.
        if (err instanceof BadArguments && err.problems.some((p) => p.path !== '(body)'))
          return jsonRpcError(ctx, 400, -32602, `Invalid params: ${err.message}`);
        return jsonRpcError(ctx, 400, -32700, `Parse error: ${(err as Error).message}`);
      }
      if (body === undefined) return jsonRpcError(ctx, 400, -32700, 'Parse error: the body is empty; send a JSON-RPC message');
    }

    const authInfo = authInfoFor(new ContextCaller(principal, reqLog));

    if (!stateful) return serveStateless(ctx, body, authInfo, reqLog, principal);

    const sessionId = ctx.get('mcp-session-id') || undefined;
    if (sessionId) {
      const session = store.get(sessionId);
      if (!session || session.userId !== principal.user.id) return sessionNotFound(ctx);
      store.touch(session, principal);
      if (ctx.method === 'GET') {
        store.streamOpened(session);
        // A stream outlives no token: at expiry it ends, and the client's reconnect must authenticate.
        const left = principal.tokenExpiresAt ? principal.tokenExpiresAt.getTime() - Date.now() : Infinity;
        const expiry = left < 2 ** 31 - 1 ? setTimeout(() => session.transport.closeStandaloneSSEStream(), Math.max(0, left)) : undefined;
        expiry?.unref();
        ctx.res.once('close', () => {
          clearTimeout(expiry);
          store.streamClosed(session);
        });
      }
      return handOver(ctx, session.transport, body, authInfo, reqLog);
    }
    const initializing =
      ctx.method === 'POST' && (Array.isArray(body) ? body.some((m) => isInitializeRequest(m)) : isInitializeRequest(body));
    if (!initializing) return jsonRpcError(ctx, 400, -32000, 'Bad Request: Mcp-Session-Id header is required (initialize first)');
    return openSession(ctx, body, authInfo, principal, reqLog);
  };
  router.all('/mcp', handle);

  async function handOver(ctx: Context, transport: FolioTransport, body: unknown, authInfo: AuthInfo, reqLog: () => Logger) {
    ctx.respond = false;
    try {
      const response = await transport.handleRequest(webRequest(ctx.req, `${requestOrigin(ctx)}${ctx.url}`), {
        parsedBody: body,
        authInfo,
      });
      // Headers Koa set (CORS) went on through setHeader already; X-Request-Id comes with the answer.
      await writeResponse(ctx.res, response, ctx.method === 'POST' ? holds : undefined, requestIdHeader(ctx.res));
    } catch (err) {
      reqLog().error({ err }, 'mcp transport failed');
      if (!ctx.res.headersSent) {
        ctx.res.writeHead(500, { 'content-type': 'application/json', ...requestIdHeader(ctx.res) });
        ctx.res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }));
      } else ctx.res.destroy();
    }
  }

  async function openSession(ctx: Context, body: unknown, authInfo: AuthInfo, principal: Principal, reqLog: () => Logger) {
    const session = { userId: principal.user.id, principal, lastSeen: Date.now(), streams: 0 } as Session;
    session.seenTools = undefined;
    session.seenResources = undefined;
    session.missedTools = false;
    session.missedResources = false;
    session.transport = new FolioTransport({
      deadlines,
      log,
      sessionIdGenerator: () => randomUUID(),
      // Event ids on every SSE event; a client reconnecting with Last-Event-ID gets what it missed.
      eventStore: new SessionEventStore(),
      onsessioninitialized: (id) => {
        session.id = id;
        store.add(session);
        reqLog().info({ session: id.slice(0, 8), user: principal.user.id }, 'mcp session opened');
      },
    });
    // Set before connect: the Server chains its own close handling after this one.
    session.transport.onclose = () => store.remove(session);
    session.server = buildServer(serverDeps, store.hooks(session));
    await session.server.connect(session.transport);
    await handOver(ctx, session.transport, body, authInfo, reqLog);
    // Refused before it began (bad Accept, content type, ...): nothing to keep.
    if (session.transport.sessionId === undefined) await session.server.close();
  }

  // Stateless mode: each POST has its own transport, so a notifications/cancelled (which a client
  // sends on a POST of its own) would reach nothing. The requests in flight on this node, by the
  // token that sent them and their id, let it reach the one it names; ids this node does not run
  // are signalled to the other nodes (PostgreSQL's NOTIFY), which look among theirs the same way.
  // By token, not by user: one user's two clients (a desktop app and an editor) number their
  // requests alike, and a cancel from one must not reach the other's call on another node.
  const inFlight = new Map<string, Set<FolioTransport>>();
  const flightKey = (tokenId: string, id: string | number) => `${tokenId}\u0000${typeof id}:${id}`;

  /** Cancels the request this token has in flight on this node with that id; false if there is none. */
  function cancelHere(tokenId: string, id: string | number, reason: string | undefined, reqLog: () => Logger): boolean {
    const holders = [...(inFlight.get(flightKey(tokenId, id)) ?? [])].filter((tr) => tr.has(id));
    // Two requests of one token with the same id in flight: which one is meant is unknowable.
    if (holders.length > 1) reqLog().info({ id }, 'mcp cancel ambiguous (same id in flight twice for this token): ignored');
    if (holders.length !== 1) return holders.length > 1;
    holders[0]!.cancel(id, reason);
    return true;
  }

  function forwardCancels(messages: unknown[], tokenId: string, reqLog: () => Logger): void {
    const elsewhere: Array<{ id: string | number }> = [];
    for (const m of messages) {
      const id = cancelledId(m);
      if (id === undefined) continue;
      const given = (m as { params?: { reason?: unknown } }).params?.reason;
      const reason = typeof given === 'string' ? given.slice(0, 200) : undefined;
      if (!cancelHere(tokenId, id, reason, reqLog) && String(id).length <= 64) elsewhere.push({ id });
    }
    // One NOTIFY per POST (its payload is at most 8000 bytes: ids only, up to 50 of them).
    if (elsewhere.length > 0) deps.signals?.send(CANCEL_SIGNAL, { tokenId, cancels: elsewhere.slice(0, MAX_CANCELS_SIGNALLED) });
  }

  // A stream whose client went away, still running: a clean shutdown lets their writes finish.
  const detached = new Set<DetachableStream>();
  // Every stateless exchange not yet over: a shutdown answers what they still owe.
  const running = new Set<FolioTransport>();
  // Streams of this node read whole by their client, lately (by id, the user's): a resumption of one
  // is told at once that nothing is left, not made to wait for a log it was never written to.
  const finished = new Map<string, string>();
  const noteFinished = (streamId: string, userId: string) => {
    finished.set(streamId, userId);
    if (finished.size > MAX_FINISHED_REMEMBERED) finished.delete(finished.keys().next().value!);
  };
  // This node's stateless streams whose response is not out yet, by stream id: a resumption that
  // finds one of them missing from the log (its client reconnected before this node saw it leave,
  // or its connection hangs half-open) has it written there.
  const live = new Map<string, { stream: DetachableStream; userId: string; res: ServerResponse }>();

  function flushHere(userId: string, streamId: string): boolean {
    const entry = live.get(streamId);
    if (!entry || entry.userId !== userId) return false;
    entry.stream.detach();
    detached.add(entry.stream);
    // The client is back on another request: this one's connection is stale.
    entry.res.destroy();
    return true;
  }

  const unlisten = stateful
    ? () => {}
    : (() => {
        const offCancel =
          deps.signals?.on(CANCEL_SIGNAL, (data) => {
            const { tokenId, cancels } = (data ?? {}) as { tokenId?: unknown; cancels?: unknown };
            if (typeof tokenId !== 'string' || !Array.isArray(cancels)) return;
            for (const c of cancels.slice(0, MAX_CANCELS_SIGNALLED) as Array<{ id?: unknown }>)
              if (typeof c?.id === 'string' || typeof c?.id === 'number')
                cancelHere(tokenId, c.id, 'cancelled by the client (through another node)', () => log);
          }) ?? (() => {});
        const offFlush =
          deps.signals?.on(FLUSH_SIGNAL, (data) => {
            const { userId, stream } = (data ?? {}) as { userId?: unknown; stream?: unknown };
            if (typeof userId === 'string' && typeof stream === 'string') flushHere(userId, stream);
          }) ?? (() => {});
        return () => {
          offCancel();
          offFlush();
        };
      })();
  // Expired stream events go, on every node's own schedule (any node may do it; doing it twice is harmless).
  const sweeper =
    !stateful && deps.streams
      ? setInterval(() => {
          void deps.streams!.sweep().catch((err: unknown) => log.warn({ err }, 'mcp stream log sweep failed'));
        }, SWEEP_EVERY_MS)
      : undefined;
  sweeper?.unref();

  async function serveStateless(ctx: Context, body: unknown, authInfo: AuthInfo, reqLog: () => Logger, principal: Principal) {
    const userId = principal.user.id;
    const server = buildServer(serverDeps);
    const messages: unknown[] = Array.isArray(body) ? body : [body];
    forwardCancels(messages, principal.tokenId, reqLog);
    const keys = messages.filter(isRequest).map((m) => flightKey(principal.tokenId, m.id));
    const stream = deps.streams && keys.length > 0 ? new DetachableStream(deps.streams, userId, log) : undefined;
    let settled = false;
    let released = false;
    // The exchange is over: the handlers' signals fire (if still running) and everything is dropped.
    const release = () => {
      if (released) return;
      released = true;
      for (const key of keys) {
        const set = inFlight.get(key);
        set?.delete(transport);
        if (set?.size === 0) inFlight.delete(key);
      }
      running.delete(transport);
      void server.close().catch(() => {});
      if (stream) void stream.settled().then(() => detached.delete(stream));
    };
    // No sessionIdGenerator: stateless. With a stream log, every event gets an id to resume from.
    const transport = new FolioTransport({
      deadlines,
      log,
      ...(stream ? { eventStore: stream } : {}),
      onsettled: () => {
        settled = true;
        stream?.end();
        if (stream?.detached) release();
      },
    });
    for (const key of keys) {
      let set = inFlight.get(key);
      if (!set) inFlight.set(key, (set = new Set()));
      set.add(transport);
    }
    running.add(transport);
    // Until the response has closed (for a complete answer, right after it was handed to the
    // connection), the stream's events are held for a resumption that asks for them.
    if (stream) live.set(stream.id, { stream, userId, res: ctx.res });
    ctx.res.once('close', () => {
      if (stream) live.delete(stream.id);
      // Gone after it was given an event id, before its answer was out: the call goes on (or is
      // over) and its events are kept for the client's GET with Last-Event-ID (the spec: a
      // disconnect is not a cancel). Gone before that (nothing to resume from), it was the
      // client's way to cancel.
      if (stream && (stream.detached || (stream.resumable && ctx.res.headersSent && !ctx.res.writableFinished))) {
        if (!stream.detached) {
          stream.detach();
          detached.add(stream);
          reqLog().info({ stream: stream.id.slice(0, 8) }, 'mcp client left mid-stream: the call goes on, resumable with Last-Event-ID');
        }
        if (settled) release();
        return;
      }
      if (stream?.resumable && settled) noteFinished(stream.id, userId);
      release();
    });
    await server.connect(transport);
    await handOver(ctx, transport, body, authInfo, reqLog);
  }

  // Resumptions open on this node: per user (bounded), and per stream (a newer one replaces an older).
  const resumingByUser = new Map<string, number>();
  const resumingStream = new Map<string, ServerResponse>();

  /** GET /mcp with Last-Event-ID in stateless mode: the rest of a response stream, from the stream log. */
  async function resumeStateless(ctx: Context, lastEventId: string, userId: string) {
    if (!ctx.get('accept').includes('text/event-stream'))
      return jsonRpcError(ctx, 406, -32000, 'Not Acceptable: Client must accept text/event-stream');
    const at = parseEventId(lastEventId);
    const unknown = `Bad Request: no stream of yours holds event '${lastEventId.slice(0, 80)}' (unknown, or older than the resumption window)`;
    if (!at) return jsonRpcError(ctx, 400, -32000, unknown);
    const open = resumingByUser.get(userId) ?? 0;
    const mine = `${userId}:${at.stream}`;
    if (open >= MAX_RESUMING_PER_USER && !resumingStream.has(mine))
      return jsonRpcError(ctx, 429, -32000, `Too Many Requests: ${open} resumed streams open for you on this node; close one first`);
    resumingStream.get(mine)?.destroy();
    resumingStream.set(mine, ctx.res);
    resumingByUser.set(userId, (resumingByUser.get(userId) ?? 0) + 1);
    ctx.res.once('close', () => {
      if (resumingStream.get(mine) === ctx.res) resumingStream.delete(mine);
      const n = (resumingByUser.get(userId) ?? 1) - 1;
      if (n > 0) resumingByUser.set(userId, n);
      else resumingByUser.delete(userId);
    });
    ctx.respond = false;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(ctx.response.headers)) if (v !== undefined) headers[k] = String(v);
    const version = ctx.get('mcp-protocol-version');
    const outcome = await resumeStream(ctx.res, {
      log: deps.streams!,
      userId,
      stream: at.stream,
      seq: at.seq,
      echo: version >= '2025-11-25',
      deadlineMs,
      headers,
      logger: log,
      finished: () => finished.get(at.stream) === userId,
      missing: () => {
        if (!flushHere(userId, at.stream)) deps.signals?.send(FLUSH_SIGNAL, { userId, stream: at.stream });
      },
    });
    if (outcome !== 'served' && !ctx.res.headersSent && !ctx.res.destroyed) {
      const [status, message] =
        outcome === 'unknown' ? [400, unknown] : [503, 'Service Unavailable: the stream could not be read; try again'];
      const body = JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
      ctx.res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
      ctx.res.end(body);
    }
  }

  return {
    router,
    handle,
    accessChanged: (userId: string) => {
      if (stateful) store.accessChanged(userId);
    },
    everyoneChanged: () => {
      if (stateful) store.registryChanged();
    },
    // eslint-disable-next-line no-restricted-syntax -- one object per server, made at start, not per call
    get sessionCount() {
      return store.size;
    },
    async close() {
      unsubscribe();
      unlisten();
      clearInterval(sweeper);
      for (const transport of running) transport.abandonAll('the server is shutting down');
      await store.close();
    },
    async drained() {
      await Promise.race([Promise.all([...detached].map((d) => d.settled())), new Promise((r) => setTimeout(r, 2000).unref())]);
    },
  };
}
