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
  address(): string;
  readonly req: IncomingMessage;
}

const STORE = new AsyncLocalStorage<RequestContext>();

/** Runs `fn` as the handling of `req`. */
export function withRequest<T>(req: IncomingMessage, address: (req: IncomingMessage) => string, fn: () => T): T {
  const context: RequestContext = {
    requestId: undefined,
    req,
    address: () => address(req),
  };
  return STORE.run(context, fn);
}

/** The request being handled, if any. */
export function currentRequest(): RequestContext | undefined {
  return STORE.getStore();
}
