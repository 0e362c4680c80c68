// The request a piece of work is done for: its id, the client's address and user agent. Entered
// once per HTTP request by the server (core/app.ts); what records who did what (the audit log,
// core/domain/audit/) reads it here rather than having every service pass it down. Work done
// outside a request (jobs, upkeep, the command line) has none.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage } from 'node:http';

export interface RequestContext {
  /** The request's id (X-Request-Id), set once the request log begins. */
  requestId: string | undefined;
  /** The client's address as the server trusts it (forwarding headers only from trusted proxies). */
  address(): string | null;
  /** The client's User-Agent, if it sent one. */
  userAgent(): string | undefined;
  /** Whether this is the handling of `req`. */
  isFor(req: IncomingMessage): boolean;
}

const STORE = new AsyncLocalStorage<RequestContext>();

/**
 * Runs `fn` as the handling of `req`. The request is held weakly: whatever the request's handling
 * leaves behind (a keep-alive socket's timers carry this context on) must not keep it alive.
 */
export function withRequest<T>(req: IncomingMessage, address: (req: IncomingMessage) => string, fn: () => T): T {
  const ref = new WeakRef(req);
  const context: RequestContext = {
    requestId: undefined,
    address: () => {
      const r = ref.deref();
      return r ? address(r) : null;
    },
    userAgent: () => {
      const ua = ref.deref()?.headers['user-agent'];
      return typeof ua === 'string' ? ua : undefined;
    },
    isFor: (r) => ref.deref() === r,
  };
  return STORE.run(context, fn);
}

/** The request being handled, if any. */
export function currentRequest(): RequestContext | undefined {
  return STORE.getStore();
}
