// The capabilities a handler gets through ctx.services, bound to the acting principal. Each rule
// lives here once: admin-only operations check the role here, not in every plugin that calls them.
import type { Logger } from 'pino';
import type { Principal } from '../domain/identity/types.ts';
import type { IdentityService } from '../domain/identity/service.ts';
import type { Services } from '../sdk/index.ts';
import type { Domain, DomainCaller } from '../contract/domain.ts';
import type { Registry } from './registry.ts';
import type { JobQueue } from '../db/jobs.ts';
import { BadArguments, Forbidden, NotFound } from '../contract/errors.ts';
import { NAMESPACE_RE } from './manifest.ts';
import type { Policy } from './policy.ts';

export interface ServiceDeps {
  identity: IdentityService;
  /** Each domain with its service; those with a `bind` appear as ctx.services.<name>. */
  domains: ReadonlyArray<{ domain: Domain<any, any>; service: unknown }>;
  registry: Registry;
  policy: Policy;
  jobs: JobQueue;
  tokens: { mintDefaultTtlSeconds: number; mintMaxTtlSeconds: number };
}

function requireAdmin(principal: Principal, what: string): void {
  if (!principal.user.roles.includes('admin')) throw new Forbidden(`${what} needs role admin, which this user does not have.`);
}

export function servicesFor(deps: ServiceDeps, principal: Principal, log: Logger): Services {
  let viewer: ReturnType<Policy['viewer']> | undefined;
  const services: Omit<Services, 'notes' | 'identity' | 'files' | 'transcribe' | 'search' | 'catalogue'> = {
    access: {
      async createUser(input) {
        const user = await deps.identity.users.create(principal, input);
        const { token } = await deps.identity.createApiToken(user.id, { name: 'created by admin', scopes: ['*'] });
        return { id: user.id, email: user.email, roles: user.roles, token };
      },
      async setNamespaceAccess({ userId, namespace, access }) {
        requireAdmin(principal, 'setting namespace access');
        if (!NAMESPACE_RE.test(namespace))
          throw new BadArguments(`'${namespace}' is not a namespace name`, [
            { path: 'namespace', message: `must match ${NAMESPACE_RE.source}` },
          ]);
        const user = await deps.identity.getUser(userId);
        if (!user) throw new NotFound(`no user '${userId}'`);
        if (namespace === 'admin' && access === 'disabled' && user.roles.includes('admin'))
          throw new BadArguments('hiding the admin namespace from an admin would lock them out of it; remove their admin role instead', [
            { path: 'namespace', message: 'admin cannot be disabled for an admin' },
          ]);
        await deps.identity.setNamespaceAccess(userId, namespace, access, principal);
        return { user_id: userId, namespace, access };
      },
      async mintToken(ttlSeconds, scopes) {
        if (principal.tokenKind === 'minted') throw new Forbidden('a minted token cannot mint tokens; use your API token.');
        const unknown = (scopes ?? []).filter((s) => typeof s !== 'string' || !deps.policy.scopes.known(s));
        if (unknown.length > 0)
          throw new BadArguments(
            `unknown scope ${unknown.map((s) => JSON.stringify(s)).join(', ')}; GET /api/v1/tokens/scopes lists them`,
            [{ path: 'scopes', message: `unknown: ${unknown.map(String).join(', ')}` }],
          );
        const beyond = (scopes ?? []).filter((s) => !deps.policy.hasScope(principal, s));
        if (beyond.length > 0)
          throw new BadArguments(`a minted token has at most your scopes; yours do not include ${beyond.join(', ')}`, [
            { path: 'scopes', message: `not within your scopes (${principal.scopes.join(' ')})` },
          ]);
        const ttl = ttlSeconds ?? deps.tokens.mintDefaultTtlSeconds;
        if (!Number.isInteger(ttl) || ttl < 1 || ttl > deps.tokens.mintMaxTtlSeconds)
          throw new BadArguments(`ttl_seconds must be an integer from 1 to ${deps.tokens.mintMaxTtlSeconds}`, [
            { path: 'ttl_seconds', message: `must be 1..${deps.tokens.mintMaxTtlSeconds}` },
          ]);
        // Stored and shown as granted: with what each scope implies (notes:write brings notes:read).
        const granted = deps.policy.scopes.expand(scopes ?? principal.scopes);
        const { token, expiresAt } = await deps.identity.mintToken(principal, ttl, granted);
        return { token, expires_at: expiresAt.toISOString(), scopes: granted };
      },
    },
    jobs: {
      async deadLetters(limit) {
        requireAdmin(principal, 'listing failed jobs');
        const letters = await deps.jobs.deadLetters(limit);
        return letters.map((d) => ({
          id: d.id,
          job: d.name,
          job_id: d.jobId,
          data: d.data,
          error: d.error,
          attempts: d.attempts,
          failed_at: d.failedAt.toISOString(),
        }));
      },
      async retryDeadLetter(id) {
        requireAdmin(principal, 'retrying failed jobs');
        if (!(await deps.jobs.retryDeadLetter(id))) throw new NotFound(`no failed job '${id}'`);
        return { id, retried: true };
      },
    },
    pluginStatus() {
      // A refusal rejects, as from the other (async) services, rather than throwing synchronously.
      return new Promise((resolve) => {
        requireAdmin(principal, 'plugin status');
        resolve(deps.registry.status());
      });
    },
  };
  // The catalogue: what this caller may call, found by words; the namespaces they pinned.
  const callable = async () => {
    const v = await (viewer ??= deps.policy.viewer(principal, log));
    return (await deps.policy.namespaces(v)).flatMap((ns) =>
      [...ns.functions.values()].filter((fn) => deps.policy.entitled(principal, fn.requires)).map((fn) => ({ ns, fn })),
    );
  };
  Object.defineProperty(services, 'catalogue', {
    enumerable: true,
    value: {
      async find(query: string, limit: number) {
        const words = query
          .toLowerCase()
          .split(/[^\p{L}\p{N}]+/u)
          .filter((w) => w.length > 1)
          .slice(0, 16);
        const scored = (await callable())
          .map(({ ns, fn }) => {
            const name = `${fn.namespace} ${fn.name.replaceAll('_', ' ')}`.toLowerCase();
            const title = (fn.title ?? '').toLowerCase();
            const text = `${fn.description} ${ns.description}`.toLowerCase();
            const score = words.reduce(
              (n, w) => n + (name.includes(w) ? 3 : 0) + (title.includes(w) ? 2 : 0) + (text.includes(w) ? 1 : 0),
              0,
            );
            return { fn, score };
          })
          .filter((x) => words.length === 0 || x.score > 0)
          .sort((a, b) => b.score - a.score || `${a.fn.namespace}.${a.fn.name}`.localeCompare(`${b.fn.namespace}.${b.fn.name}`));
        return {
          total: scored.length,
          hits: scored.slice(0, limit).map(({ fn }) => ({
            namespace: fn.namespace,
            function: fn.name,
            title: fn.title ?? null,
            description: fn.description,
            args: fn.args,
            annotations: fn.annotations,
          })),
        };
      },
      pins: () => deps.identity.pins(principal.user.id),
      async pin(namespaces: string[]) {
        const v = await (viewer ??= deps.policy.viewer(principal, log));
        const visible = new Set((await deps.policy.namespaces(v)).map((ns) => ns.name));
        const unknown = namespaces.filter((n) => !visible.has(n));
        if (unknown.length > 0)
          throw new BadArguments(`no namespace ${unknown.map((n) => `'${n}'`).join(', ')} here to pin`, [
            { path: 'namespaces', message: `not namespaces you can use: ${unknown.join(', ')}` },
          ]);
        return deps.identity.setPins(principal.user.id, namespaces);
      },
    },
  });
  // Each domain's plugin API (ctx.services.<name>), bound to the caller on first use: most calls
  // touch none. The domain says what each method needs; the policy decides.
  const caller: DomainCaller = {
    principal,
    entitle: (scopes, what) => deps.policy.entitle(principal, { scopes }, what),
    mayRead: async (namespace, scope) => deps.policy.mayRead(await (viewer ??= deps.policy.viewer(principal, log)), namespace, scope),
    groupVisible: async (namespace) => deps.policy.groupVisible(await (viewer ??= deps.policy.viewer(principal, log)), namespace),
  };
  Object.defineProperty(services, BINDING, { value: { caller, bound: new Map() } satisfies Binding });
  for (const [name, get] of domainGetters(deps)) Object.defineProperty(services, name, { get, enumerable: true });
  return services as Services;
}

const BINDING = Symbol('binding');

interface Binding {
  caller: DomainCaller;
  /** Each domain's API once bound to this caller. */
  bound: Map<string, unknown>;
}

const getters = new WeakMap<ServiceDeps['domains'], Array<[string, (this: { [BINDING]?: Binding } | undefined) => unknown]>>();

/**
 * One getter per domain for every services object over these domains, bound to the caller on first use
 * through the object it is read on: a getter made per call would give every call's services object
 * hidden classes of its own (see core/surfaces/http/request-log.ts on why that is costly).
 */
function domainGetters(deps: ServiceDeps): Array<[string, (this: { [BINDING]?: Binding } | undefined) => unknown]> {
  let made = getters.get(deps.domains);
  if (made) return made;
  made = [];
  for (const { domain, service } of deps.domains) {
    const bind = domain.bind;
    if (!bind) continue;
    const name = domain.name;
    const group = governingNamespace(domain);
    made.push([
      name,
      function (this: { [BINDING]?: Binding } | undefined) {
        const binding = this?.[BINDING];
        if (!binding) throw new TypeError(`read ctx.services.${name} on ctx.services itself (its getter was moved to another object)`);
        const { caller, bound } = binding;
        if (!bound.has(name)) {
          const api = bind(service, caller) as Record<string, unknown>;
          bound.set(name, group ? gated(api, group, () => caller.groupVisible(group)) : api);
        }
        return bound.get(name);
      },
    ]);
  }
  getters.set(deps.domains, made);
  return made;
}

/**
 * The namespace whose switch governs a domain's data: its one REST group's (notes: notetaker). A
 * domain with several groups (identity) is governed per group by its own namespaces' functions.
 */
function governingNamespace(domain: Domain<any, any>): string | undefined {
  const groups = domain.rest === undefined ? [] : Array.isArray(domain.rest) ? domain.rest : [domain.rest];
  return groups.length === 1 ? groups[0]!.namespace : undefined;
}

/**
 * A domain's plugin API that first asks whether its group is visible to the caller: with notetaker
 * switched off for a user, no namespace reaches their notes through ctx.services.notes either (the
 * meetings plugin did), as no surface does. Hidden reads as absent: NotFound, as on REST.
 */
function gated(api: Record<string, unknown>, namespace: string, visible: () => Promise<boolean>): Record<string, unknown> {
  // Asked once per binding (one call's services), however many methods the handler calls.
  let verdict: Promise<boolean> | undefined;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(api)) {
    // What reads or writes data is async (every binder's methods are: test/unit/services-gate.test.ts
    // holds them to it); a sync member is a pure helper (files.contentUrl formats a URL) and stays.
    if (typeof value !== 'function' || value.constructor.name !== 'AsyncFunction') {
      out[key] = value;
      continue;
    }
    const fn = value as (...args: unknown[]) => unknown;
    out[key] = async (...args: unknown[]) => {
      if (!(await (verdict ??= visible()))) throw new NotFound(`${namespace} is not available to you (switched off for your account)`);
      return fn(...args);
    };
  }
  return out;
}
