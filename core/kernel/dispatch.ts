// The curl and MCP call path: resolve the function, ask the policy (visible? entitled? deadline),
// validate, run, encode, keep within the byte budget. The REST API asks the same policy per route.
import type { Logger } from 'pino';
import type { ErrorObject } from 'ajv';
import type { Principal } from '../domain/identity/types.ts';
import type { Context as HandlerContext, Services } from '../sdk/index.ts';
import type { FunctionEntry } from './manifest.ts';
import type { Registry, NamespaceEntry } from './registry.ts';
import { RESERVED_ARGS } from './manifest.ts';
import { BadArguments, ERROR_CODES, FunctionFailed, UnknownName, type ArgProblem, type ErrorCode } from '../contract/errors.ts';
import type { AuditService } from '../domain/audit/service.ts';
import type { Viewer } from './entitlements.ts';
import type { Policy } from './policy.ts';
import { assertWithin, ceilingFor, encode, type Encoded, type Limits } from './limits.ts';
import { callRef, helpRef, type Surface } from './describe.ts';
import { newErrorId, traced, tracingOn, type CallObserver } from '../contract/observe.ts';

export interface DispatchDeps {
  policy: Policy;
  limits: Limits;
  services(principal: Principal, log: Logger): Services;
  /** Counts and times every call (the /metrics endpoint); none when metrics are off. */
  observer?: CallObserver | undefined;
  /** The audit log's record of every call (audit.toolCalls); none when it is off. */
  callLog?: Pick<AuditService, 'recordCall'> | undefined;
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
  /** Who reads the answer: hints name routes on curl, tools on MCP (ctx.ref). Default curl. */
  surface?: Surface;
  /** Where the handler's ctx.progress(...) goes, on surfaces that have a progress channel. */
  onProgress?: (p: { progress: number; total?: number; message?: string }) => void;
}

export interface CallOutcome {
  fn: FunctionEntry;
  encoded: Encoded;
}

/** The stable code of an outcome: a typed error's, else `internal`. */
function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return err instanceof Error && typeof code === 'string' && /^[a-z_]{1,40}$/.test(code) ? code : 'internal';
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

const SERVICES = Symbol('services');

/** The one getter of every handler context's `services` (see core/surfaces/http/request-log.ts on why not one per call). */
function servicesGetter(this: { [SERVICES]?: () => Services } | undefined): Services {
  const services = this?.[SERVICES];
  if (!services) throw new TypeError('read ctx.services on the ctx a handler was given (its getter was moved to another object)');
  return services();
}

/** A handler's ctx: `services` an own, enumerable property made on first read (most calls touch none). */
function handlerContext(fields: Omit<HandlerContext, 'services'>, services: () => Services): HandlerContext {
  const ctx = fields as HandlerContext & { [SERVICES]?: () => Services };
  Object.defineProperty(ctx, SERVICES, { value: services });
  Object.defineProperty(ctx, 'services', { get: servicesGetter, enumerable: true, configurable: true });
  return ctx;
}

export class Dispatcher {
  readonly #deps: DispatchDeps;

  constructor(deps: DispatchDeps) {
    this.#deps = deps;
  }

  get registry(): Registry {
    return this.#deps.policy.registry;
  }

  get policy(): Policy {
    return this.#deps.policy;
  }

  viewer(principal: Principal, log: Logger): Promise<Viewer> {
    return this.#deps.policy.viewer(principal, log);
  }

  namespaces(viewer: Viewer): Promise<NamespaceEntry[]> {
    return this.#deps.policy.namespaces(viewer);
  }

  namespace(viewer: Viewer, name: string): Promise<NamespaceEntry> {
    return this.#deps.policy.namespace(viewer, name);
  }

  async function(viewer: Viewer, ns: string, name: string): Promise<FunctionEntry> {
    const entry = await this.namespace(viewer, ns);
    const fn = entry.functions.get(name);
    if (!fn) throw new UnknownName(`no function '${entry.name}.${name}' here. GET /curl/help/${entry.name} lists its functions.`);
    return fn;
  }

  /**
   * The function at once when nothing about its namespace needs deciding (no switch for this caller,
   * no visibility rule) and it exists; undefined sends the caller through function() (rules, and
   * every refusal, are decided there).
   */
  #plainly(viewer: Viewer, ns: string, name: string): FunctionEntry | undefined {
    const entry = this.registry.snapshot.namespaces.get(ns);
    if (!entry || entry.visible || viewer.overrides.has(ns)) return undefined;
    return entry.functions.get(name);
  }

  /** The byte ceiling of a function before any per-call lowering. */
  ceiling(fn: FunctionEntry): number {
    return ceilingFor(this.#deps.limits, fn.maxBytes, undefined);
  }

  /** Every curl and MCP call: counted and timed here when metrics are on, in a span when tracing is. */
  call(req: CallRequest): Promise<CallOutcome> {
    const observer = this.#deps.observer;
    const callLog = this.#deps.callLog;
    if (!observer && !tracingOn && !callLog) return this.#call(req);
    return this.#observed(req, observer, callLog);
  }

  async #observed(req: CallRequest, observer: CallObserver | undefined, callLog: DispatchDeps['callLog']): Promise<CallOutcome> {
    const started = performance.now();
    const surface = req.surface ?? 'curl';
    // Only names the registry has: a made-up name must not make a series of its own.
    const known = this.registry.snapshot.namespaces.get(req.namespace)?.functions.has(req.fn) === true;
    const label = known ? `${req.namespace}.${req.fn}` : 'unknown';
    let code = 'ok';
    let resultBytes = 0;
    try {
      const outcome = tracingOn
        ? await traced('folio.dispatch', { 'folio.surface': surface, 'folio.function': label }, () => this.#call(req))
        : await this.#call(req);
      resultBytes = outcome.encoded.size;
      return outcome;
    } catch (err) {
      code = codeOf(err);
      throw err;
    } finally {
      const seconds = (performance.now() - started) / 1000;
      observer?.called(surface, label, code, seconds);
      callLog?.recordCall({
        principal: req.principal,
        surface,
        namespace: req.namespace,
        fn: req.fn,
        outcome: code,
        status: code === 'ok' ? 200 : (ERROR_CODES[code as ErrorCode]?.status ?? 500),
        durationMs: seconds * 1000,
        // The size of the arguments, never the arguments.
        argumentBytes: req.body === undefined ? 0 : Buffer.byteLength(JSON.stringify(req.body) ?? ''),
        resultBytes,
      });
    }
  }

  async #call(req: CallRequest): Promise<CallOutcome> {
    const policy = this.#deps.policy;
    const surface = req.surface ?? 'curl';
    const decide = async () => {
      const viewer = await policy.viewer(req.principal, req.log);
      // Resolve against one snapshot: the call finishes on the version it started with.
      const fn = this.#plainly(viewer, req.namespace, req.fn) ?? (await this.function(viewer, req.namespace, req.fn));
      // How errors name the function: as the caller calls it.
      const what = callRef(surface, `${fn.namespace}.${fn.name}`);
      policy.entitle(req.principal, fn.requires, what);
      return { viewer, fn, what };
    };
    const { viewer, fn, what } = tracingOn ? await traced('folio.policy', {}, decide) : await decide();

    const { args, ceiling } = this.#arguments(fn, req.body, what);
    // The services are made on first use (ctx.services): most calls touch none.
    let services: Services | undefined;
    const servicesOf = () => (services ??= this.#deps.services(req.principal, req.log));
    let result: unknown;
    try {
      result = await policy.run(what, req.signal, req.log, (signal) => {
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
            req.log.warn({ err, fn: what }, 'progress could not be reported');
          }
        };
        const ref = (name: string, refArgs?: Record<string, unknown>) => callRef(surface, name, refArgs);
        return fn.handler(
          args,
          handlerContext(
            { caller: viewer.caller, signal, log: req.log, progress, budget: ceiling, ref, fetch: globalThis.fetch },
            servicesOf,
          ),
        );
      });
    } catch (err) {
      if (err instanceof BadArguments) {
        // A handler or service refusing an argument: print how to call the function, too.
        err.signature ??= fn.signature;
        err.help ??= `/curl/help/${fn.namespace}/${fn.name}`;
      }
      throw err;
    }
    let encoded: Encoded;
    try {
      encoded = encode(result);
    } catch (err) {
      const errorId = newErrorId();
      req.log.error({ errorId, fn: what, err }, 'result could not be encoded');
      throw new FunctionFailed(`${what} returned a value that is not JSON`, errorId, err);
    }
    assertWithin(encoded, ceiling, what, helpRef(surface, fn.namespace, fn.name));
    return { fn, encoded };
  }
  /** Body -> validated arguments and this call's byte ceiling; a 400 carries the signature. */
  #arguments(fn: FunctionEntry, rawBody: unknown, what: string): { args: Record<string, unknown>; ceiling: number } {
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
      const reserved: string[] = [];
      for (const k of RESERVED_ARGS) if (k !== 'max_bytes_llm' && k in args) reserved.push(k);
      if (reserved.length > 0)
        throw new BadArguments(
          `the server supplies the user; do not send ${reserved.map((r) => `'${r}'`).join(' or ')}`,
          reserved.map((r) => ({ path: r, message: 'the server supplies the user' })),
        );
      if (!fn.validate(args)) throw new BadArguments(`${what} will not take these arguments`, problemsOf(fn.validate.errors));
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
