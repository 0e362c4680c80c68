// The one policy every surface asks, so that a rule cannot hold on one surface and not another:
//   visible?   is this namespace shown to this caller (operator's per-user switch, then its rule)
//   entitled?  does the caller have the roles, and the token the scopes, the operation needs
//   deadline   how long the work may take, and the signal that fires on timeout or when the caller goes
// Curl and MCP ask through the dispatcher (core/kernel/dispatch.ts), the REST API per route
// (core/surfaces/rest/router.ts). The surfaces only translate the typed answers into their shapes.
import { newErrorId } from '../contract/observe.ts';
import type { Logger } from 'pino';
import type { Principal } from '../domain/identity/types.ts';
import type { NotesSummary } from '../domain/notes/types.ts';
import { Aborted, FolioError, Forbidden, FunctionFailed, MissingScope, UnknownName } from '../contract/errors.ts';
import { callerOf, isVisible, type AccessOverrides, type Viewer } from './entitlements.ts';
import type { Registry, NamespaceEntry } from './registry.ts';
import type { Caller } from '../sdk/index.ts';
import type { ScopeCatalogue } from './scopes.ts';

export interface Requirements {
  roles?: readonly string[] | undefined;
  scopes?: readonly string[] | undefined;
}

export interface PolicyDeps {
  registry: Registry;
  scopes: ScopeCatalogue;
  limits: { handlerTimeoutMs: number; visibleTimeoutMs: number };
  /** The per-user namespace switches, read fresh (through a cache the writes invalidate) per request. */
  overrides(userId: string): Promise<AccessOverrides>;
  /** The caller's notes in brief, for visibility rules. */
  notesSummary(userId: string): Promise<NotesSummary>;
  /** The namespaces a user pinned (MCP lists only those tools while there are any). */
  pins?(userId: string): Promise<string[]>;
}

function isThenable<T>(value: Promise<T> | T): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

export function notFoundNamespace(name: string): UnknownName {
  return new UnknownName(`no namespace '${name}' here. GET /curl/help lists the namespaces you can use.`);
}

export class Policy {
  readonly #deps: PolicyDeps;
  readonly #callers = new WeakMap<Principal, { notes: NotesSummary; caller: Caller }>();

  constructor(deps: PolicyDeps) {
    this.#deps = deps;
  }

  get registry(): Registry {
    return this.#deps.registry;
  }

  get scopes(): ScopeCatalogue {
    return this.#deps.scopes;
  }

  /** How long a handler may run before its signal fires and the call fails. */
  get handlerTimeoutMs(): number {
    return this.#deps.limits.handlerTimeoutMs;
  }

  /** Everything visibility rules need to know about this caller, read once per request. */
  async viewer(principal: Principal, log: Logger): Promise<Viewer> {
    const [overrides, notes] = await Promise.all([this.#deps.overrides(principal.user.id), this.#deps.notesSummary(principal.user.id)]);
    // The frozen caller is made once per principal and notes summary (both cached objects, replaced
    // on any change), not on every request.
    const made = this.#callers.get(principal);
    let caller: Caller;
    if (made && made.notes === notes) caller = made.caller;
    else this.#callers.set(principal, { notes, caller: (caller = callerOf(principal, notes)) });
    return { principal, caller, overrides, log, ruleTimeoutMs: this.#deps.limits.visibleTimeoutMs };
  }

  /** The namespaces this caller may see, in name order. */
  async namespaces(viewer: Viewer): Promise<NamespaceEntry[]> {
    const entries = [...this.#deps.registry.snapshot.namespaces.values()].sort((a, b) => a.name.localeCompare(b.name));
    const verdicts = await Promise.all(entries.map((e) => isVisible(e, viewer)));
    return entries.filter((_, i) => verdicts[i]);
  }

  /** The namespaces the caller pinned (none: every namespace is listed). */
  async pins(viewer: Viewer): Promise<string[]> {
    return (await this.#deps.pins?.(viewer.principal.user.id)) ?? [];
  }

  /** The namespace if the caller may see it; the same UnknownName whether hidden or absent. */
  async namespace(viewer: Viewer, name: string): Promise<NamespaceEntry> {
    const entry = this.#deps.registry.snapshot.namespaces.get(name);
    if (!entry) throw notFoundNamespace(name);
    // No switch and no rule: visible, without running the rule machinery (isVisible's answer too).
    if (!entry.visible && !viewer.overrides.has(name)) return entry;
    if (!(await isVisible(entry, viewer))) throw notFoundNamespace(name);
    return entry;
  }

  /**
   * Is the namespace a domain's REST group belongs to visible? The operator's switch decides first;
   * then the namespace's own rule, when a plugin of that name is loaded (a domain's group serves
   * without its plugin, as its service does).
   */
  async groupVisible(viewer: Viewer, namespace: string): Promise<boolean> {
    const entry = this.#deps.registry.snapshot.namespaces.get(namespace);
    if (entry) return isVisible(entry, viewer);
    return viewer.overrides.get(namespace) !== 'disabled';
  }

  /**
   * May the caller read what a namespace governs: visible to them, and their token carries `scope`?
   * (Search asks it per kind of resource, so a hidden namespace's resources never appear.)
   */
  async mayRead(viewer: Viewer, namespace: string, scope: string): Promise<boolean> {
    return this.hasScope(viewer.principal, scope) && (await this.groupVisible(viewer, namespace));
  }

  /** Does this token's set of scopes allow `scope`, for this user (a scope may need a role)? */
  hasScope(principal: Principal, scope: string): boolean {
    return this.#deps.scopes.allows(principal.scopes, scope, principal.user.roles);
  }

  #rolesOf(scope: string): string[] {
    return this.#deps.scopes.list().find((d) => d.scope === scope)?.roles ?? [];
  }

  /** Does the caller have every role and scope `requires` names? (entitle without the why.) */
  entitled(principal: Principal, requires: Requirements): boolean {
    return (
      (requires.roles ?? []).every((r) => principal.user.roles.includes(r)) &&
      (requires.scopes ?? []).every((s) => this.hasScope(principal, s))
    );
  }

  /** Visible but not entitled: Forbidden (a role) or MissingScope, naming exactly what is missing. */
  entitle(principal: Principal, requires: Requirements, what: string): void {
    if (!requires.roles?.length && !requires.scopes?.length) return; // nothing to miss
    // A scope the token carries but that needs a role the user lacks is the role's fault.
    const scopeRoles = (requires.scopes ?? []).flatMap((s) => (this.#deps.scopes.allows(principal.scopes, s) ? this.#rolesOf(s) : []));
    const missingRoles = [...new Set([...(requires.roles ?? []), ...scopeRoles])].filter((r) => !principal.user.roles.includes(r));
    const missingScopes = (requires.scopes ?? []).filter((s) => !this.#deps.scopes.allows(principal.scopes, s));
    if (missingRoles.length === 0 && missingScopes.length === 0) return;
    const has = principal.scopes.join(' ') || 'none';
    const missing = [
      ...(missingRoles.length ? [`role ${missingRoles.join(', ')}, which your user does not have`] : []),
      ...(missingScopes.length
        ? [`scope ${missingScopes.join(', ')}, which this ${principal.tokenKind} token does not carry (it has: ${has})`]
        : []),
    ];
    const message = `${what} needs ${missing.join(', and ')}.`;
    // A missing role is the account's; a token with more scopes would not help.
    if (missingRoles.length > 0) throw new Forbidden(message);
    throw new MissingScope(message, missingScopes);
  }

  /**
   * Runs `work` under the call deadline: its signal fires on the timeout and when `gone` fires (the
   * caller went away). A timeout is a FunctionFailed with an error id; a caller gone is Aborted; an
   * error that is not a typed outcome is a FunctionFailed whose cause goes to the log only.
   * `untimed`: no deadline, only the caller going away (an upload takes as long as its bytes do).
   */
  async run<T>(
    what: string,
    gone: AbortSignal,
    log: Logger,
    work: (signal: AbortSignal) => Promise<T> | T,
    opts: { untimed?: boolean } = {},
  ): Promise<T> {
    if (!opts.untimed && !gone.aborted) {
      // The work runs at once: a handler that answers synchronously (no promise) is done before any
      // deadline could matter, so it costs no timer and no listeners.
      const controller = new AbortController();
      let result: Promise<T> | T;
      try {
        result = work(controller.signal);
      } catch (err) {
        throw this.#failure(what, gone, log, err);
      }
      if (!isThenable(result)) return result;
      return this.#race(what, gone, log, controller, result, this.#deps.limits.handlerTimeoutMs);
    }
    const controller = new AbortController();
    if (gone.aborted) controller.abort(gone.reason);
    return this.#race(
      what,
      gone,
      log,
      controller,
      Promise.resolve().then(() => work(controller.signal)),
      opts.untimed ? 2_147_483_647 : this.#deps.limits.handlerTimeoutMs,
    );
  }

  /** What an error out of the work becomes (not a timeout): Aborted, the typed outcome, or a FunctionFailed. */
  #failure(what: string, gone: AbortSignal, log: Logger, err: unknown): Error {
    if (gone.aborted) return new Aborted('the caller went away');
    if (err instanceof FolioError) return err;
    const errorId = newErrorId();
    log.error({ errorId, what, err }, 'raised');
    return new FunctionFailed(`${what} raised an error`, errorId, err);
  }

  /** Waits for `running` under the deadline `ms`; `controller`'s signal is the one the work got. */
  async #race<T>(
    what: string,
    gone: AbortSignal,
    log: Logger,
    controller: AbortController,
    running: Promise<T> | T,
    ms: number,
  ): Promise<T> {
    // One controller and one timer per call, both gone when the call ends (AbortSignal.timeout
    // would keep a timer and its error alive for the full timeout after every call).
    const signal = controller.signal;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`timed out after ${ms} ms`));
    }, ms);
    const onGone = () => controller.abort(gone.reason);
    if (gone.aborted) onGone();
    else gone.addEventListener('abort', onGone, { once: true });
    let onAbort: (() => void) | undefined;
    try {
      return await Promise.race([
        running,
        new Promise<never>((_, reject) => {
          onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted', { cause: signal.reason }));
          if (signal.aborted) onAbort();
          else signal.addEventListener('abort', onAbort, { once: true });
        }),
      ]);
    } catch (err) {
      if (timedOut) {
        const errorId = newErrorId();
        log.error({ errorId, what, ms }, 'timed out');
        throw new FunctionFailed(`${what} did not finish within ${ms} ms`, errorId);
      }
      throw this.#failure(what, gone, log, err);
    } finally {
      clearTimeout(timer);
      gone.removeEventListener('abort', onGone);
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }
}
