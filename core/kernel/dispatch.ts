// One dispatch path for every surface: visible? entitled? valid? run, encode, within budget?
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { ErrorObject } from 'ajv';
import type { Principal } from '../domain/identity/types.ts';
import type { Services } from '../sdk/index.ts';
import type { NotesSummary } from '../domain/notes/types.ts';
import type { FunctionEntry } from './manifest.ts';
import type { Registry, NamespaceEntry } from './registry.ts';
import { RESERVED_ARGS } from './manifest.ts';
import { Aborted, BadArguments, FolioError, FunctionFailed, type ArgProblem } from './errors.ts';
import {
  assertEntitled,
  callerOf,
  requireFunction,
  requireNamespace,
  visibleNamespaces,
  type AccessOverrides,
  type Viewer,
} from './entitlements.ts';
import { assertWithin, ceilingFor, encode, type Encoded, type Limits } from './limits.ts';

export interface DispatchDeps {
  registry: Registry;
  limits: Limits & { handlerTimeoutMs: number; visibleTimeoutMs: number };
  /** The per-user namespace toggles, read fresh for each request. */
  overrides(userId: string): Promise<AccessOverrides>;
  /** The caller's notes in brief, for entitlement rules; read fresh for each request. */
  notesSummary(userId: string): Promise<NotesSummary>;
  services(principal: Principal, log: Logger): Services;
}

export interface CallRequest {
  principal: Principal;
  namespace: string;
  fn: string;
  /** The parsed body: the keyword arguments, plus max_bytes_llm if the caller sent one. */
  body: unknown;
  /** Fires when the caller goes away (or cancels). */
  signal: AbortSignal;
  log: Logger;
  /** Where the handler's ctx.progress(...) goes, on surfaces that have a progress channel. */
  onProgress?: (p: { progress: number; total?: number; message?: string }) => void;
}

export interface CallOutcome {
  fn: FunctionEntry;
  encoded: Encoded;
}

function problemsOf(errors: ErrorObject[] | null | undefined): ArgProblem[] {
  return (errors ?? []).map((e) => {
    const p = e.params as Record<string, unknown>;
    const base = e.instancePath.replace(/^\//, '').replaceAll('/', '.');
    if (e.keyword === 'required') return { path: [base, p.missingProperty].filter(Boolean).join('.'), message: 'is required' };
    if (e.keyword === 'additionalProperties')
      return { path: [base, p.additionalProperty].filter(Boolean).join('.'), message: 'is not an argument of this function' };
    return { path: base || '(body)', message: e.message ?? 'is not valid' };
  });
}

export class Dispatcher {
  readonly #deps: DispatchDeps;

  constructor(deps: DispatchDeps) {
    this.#deps = deps;
  }

  get registry(): Registry {
    return this.#deps.registry;
  }

  async viewer(principal: Principal, log: Logger): Promise<Viewer> {
    const [overrides, notes] = await Promise.all([this.#deps.overrides(principal.user.id), this.#deps.notesSummary(principal.user.id)]);
    return {
      principal,
      caller: callerOf(principal, notes),
      overrides,
      log,
      ruleTimeoutMs: this.#deps.limits.visibleTimeoutMs,
    };
  }

  async namespaces(viewer: Viewer): Promise<NamespaceEntry[]> {
    return visibleNamespaces(this.#deps.registry.snapshot, viewer);
  }

  async namespace(viewer: Viewer, name: string): Promise<NamespaceEntry> {
    return requireNamespace(this.#deps.registry.snapshot, name, viewer);
  }

  async function(viewer: Viewer, ns: string, fn: string): Promise<FunctionEntry> {
    return requireFunction(await this.namespace(viewer, ns), fn);
  }

  /** The byte ceiling of a function before any per-call lowering. */
  ceiling(fn: FunctionEntry): number {
    return ceilingFor(this.#deps.limits, fn.maxBytes, undefined);
  }

  async call(req: CallRequest): Promise<CallOutcome> {
    const viewer = await this.viewer(req.principal, req.log);
    // Resolve against one snapshot: the call finishes on the version it started with.
    const fn = await this.function(viewer, req.namespace, req.fn);
    assertEntitled(fn, req.principal);

    const { args, ceiling } = this.#arguments(fn, req.body);

    // One controller and one timer per call, both gone when the call ends (AbortSignal.timeout
    // would keep a timer and its error alive for the full timeout after every call).
    const controller = new AbortController();
    const signal = controller.signal;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`timed out after ${this.#deps.limits.handlerTimeoutMs} ms`));
    }, this.#deps.limits.handlerTimeoutMs);
    const onGone = () => controller.abort(req.signal.reason);
    if (req.signal.aborted) onGone();
    else req.signal.addEventListener('abort', onGone, { once: true });
    const onProgress = req.onProgress;
    const progress = (progress: number, total?: number, message?: string): void => {
      // A no-op without a channel, once the call is aborted, and for values that are not numbers.
      if (!onProgress || signal.aborted || typeof progress !== 'number' || !Number.isFinite(progress)) return;
      try {
        onProgress({
          progress,
          ...(typeof total === 'number' && Number.isFinite(total) ? { total } : {}),
          ...(typeof message === 'string' ? { message } : {}),
        });
      } catch (err) {
        req.log.warn({ err, fn: `${fn.namespace}.${fn.name}` }, 'progress could not be reported');
      }
    };
    const ctx = {
      caller: viewer.caller,
      signal,
      log: req.log,
      services: this.#deps.services(req.principal, req.log),
      progress,
      budget: ceiling,
    };
    let result: unknown;
    let onAbort: (() => void) | undefined;
    try {
      result = await Promise.race([
        Promise.resolve().then(() => fn.handler(args, ctx)),
        new Promise<never>((_, reject) => {
          onAbort = () => reject(signal.reason);
          if (signal.aborted) onAbort();
          else signal.addEventListener('abort', onAbort, { once: true });
        }),
      ]);
    } catch (err) {
      if (timedOut) {
        const errorId = randomUUID();
        req.log.error({ errorId, fn: `${fn.namespace}.${fn.name}`, ms: this.#deps.limits.handlerTimeoutMs }, 'handler timed out');
        throw new FunctionFailed(`${fn.namespace}.${fn.name} did not finish within ${this.#deps.limits.handlerTimeoutMs} ms`, errorId);
      }
      if (req.signal.aborted) throw new Aborted('the caller went away');
      if (err instanceof BadArguments) {
        // A handler or service refusing an argument: print how to call the function, too.
        err.signature ??= fn.signature;
        err.help ??= `/curl/help/${fn.namespace}/${fn.name}`;
      }
      if (err instanceof FolioError) throw err;
      const errorId = randomUUID();
      req.log.error({ errorId, fn: `${fn.namespace}.${fn.name}`, err }, 'handler raised');
      throw new FunctionFailed(`${fn.namespace}.${fn.name} raised an error`, errorId, err);
    } finally {
      clearTimeout(timer);
      req.signal.removeEventListener('abort', onGone);
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
    let encoded: Encoded;
    try {
      encoded = encode(result);
    } catch (err) {
      const errorId = randomUUID();
      req.log.error({ errorId, fn: `${fn.namespace}.${fn.name}`, err }, 'result could not be encoded');
      throw new FunctionFailed(`${fn.namespace}.${fn.name} returned a value that is not JSON`, errorId, err);
    }
    assertWithin(encoded, ceiling, `${fn.namespace}.${fn.name}`, `GET /curl/help/${fn.namespace}/${fn.name}`);
    return { fn, encoded };
  }

  /** Body -> validated arguments and this call's byte ceiling; a 400 carries the signature. */
  #arguments(fn: FunctionEntry, rawBody: unknown): { args: Record<string, unknown>; ceiling: number } {
    try {
      const body = rawBody ?? {};
      if (typeof body !== 'object' || Array.isArray(body) || body === null)
        throw new BadArguments(
          `the body must be a JSON object of keyword arguments; got ${Array.isArray(body) ? 'an array' : typeof body === 'object' ? 'null' : typeof body}`,
          [{ path: '(body)', message: 'must be a JSON object' }],
        );
      const args = { ...(body as Record<string, unknown>) };
      const requested = args.max_bytes_llm;
      delete args.max_bytes_llm;
      const ceiling = ceilingFor(this.#deps.limits, fn.maxBytes, requested);
      const reserved = [...RESERVED_ARGS].filter((k) => k !== 'max_bytes_llm' && k in args);
      if (reserved.length > 0)
        throw new BadArguments(
          `the server supplies the user; do not send ${reserved.map((r) => `'${r}'`).join(' or ')}`,
          reserved.map((r) => ({ path: r, message: 'the server supplies the user' })),
        );
      if (!fn.validate(args))
        throw new BadArguments(`${fn.namespace}.${fn.name} will not take these arguments`, problemsOf(fn.validate.errors));
      return { args, ceiling };
    } catch (err) {
      if (err instanceof BadArguments) {
        err.signature = fn.signature;
        err.help = `/curl/help/${fn.namespace}/${fn.name}`;
      }
      throw err;
    }
  }
}
