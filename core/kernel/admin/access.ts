// Who can reach which namespace, for operators: a user's effective access per namespace with where
// the answer comes from, setting it (by user id or email), and the users x namespaces matrix. The
// rule itself is the policy's (core/kernel/entitlements.ts); this only asks it for another user.
import type { Logger } from 'pino';
import type { IdentityService } from '../../domain/identity/service.ts';
import type { Principal, NamespaceAccessSetting } from '../../domain/identity/types.ts';
import { BadArguments, Forbidden, NotFound } from '../../contract/errors.ts';
import { NAMESPACE_RE } from '../manifest.ts';
import type { Policy } from '../policy.ts';
import { ruleVerdict } from '../entitlements.ts';
import type { NamespaceAccessView, UserAccess } from '../../sdk/index.ts';
import { closestNames } from './closest.ts';
import { isUuid } from '../../domain/notes/validate.ts';
import { textProblem } from '../../contract/text.ts';

export type AccessSource = NamespaceAccessView['source'];

export const MATRIX_LIMIT_DEFAULT = 50;
export const MATRIX_LIMIT_MAX = 200;
/** Users whose access a matrix page reads at once. */
const MATRIX_CONCURRENCY = 16;
export const ADMIN_USER_404 = 'no such user.';

export function requireAdmin(principal: Principal, what: string): void {
  if (!principal.user.roles.includes('admin')) throw new Forbidden(`${what} needs role admin, which this user does not have.`);
}

export interface AccessDeps {
  identity: IdentityService;
  policy: Policy;
  log: Logger;
}

export class NamespaceAccessAdmin {
  readonly #d: AccessDeps;

  constructor(deps: AccessDeps) {
    this.#d = deps;
  }

  /**
   * The user by id or by email; a shape that is neither (another system's id), or a string no email
   * can be (a NUL, a lone surrogate: PostgreSQL cannot even compare it), is as unknown: 404.
   */
  async user(ref: string) {
    const byId: boolean = isUuid(ref);
    const user = byId
      ? await this.#d.identity.getUser(ref)
      : ref.includes('@') && textProblem(ref) === undefined
        ? await this.#d.identity.findUserByEmail(ref)
        : null;
    if (!user) throw new NotFound(ADMIN_USER_404);
    return user;
  }

  /** The namespaces this server serves now, in name order. */
  known(): string[] {
    return [...this.#d.policy.registry.snapshot.namespaces.keys()].sort();
  }

  /** Refuses a name that is not a namespace served here, naming the closest ones. */
  checkNamespace(namespace: string): void {
    const known = this.known();
    if (known.includes(namespace)) return;
    const near = closestNames(namespace, known);
    const hint = near.length > 0 ? `; the closest: ${near.join(', ')}` : `; namespaces here: ${known.join(', ')}`;
    const shape = NAMESPACE_RE.test(namespace) ? 'no namespace' : 'not a namespace name:';
    throw new BadArguments(`${shape} ${JSON.stringify(namespace.slice(0, 64))} on this server${hint}`, [
      { path: '/namespace', message: near.length > 0 ? `unknown; did you mean ${near.join(' or ')}?` : 'unknown namespace' },
    ]);
  }

  async get(principal: Principal, ref: string): Promise<UserAccess> {
    requireAdmin(principal, 'reading namespace access');
    return this.#of(await this.user(ref));
  }

  async set(principal: Principal, ref: string, namespace: string, access: NamespaceAccessSetting): Promise<UserAccess> {
    requireAdmin(principal, 'setting namespace access');
    if (access !== 'enabled' && access !== 'disabled' && access !== 'default')
      throw new BadArguments("access must be 'enabled', 'disabled' or 'default'", [
        { path: '/access', message: "must be 'enabled', 'disabled' or 'default'" },
      ]);
    // Forgetting a switch is allowed for a namespace gone since (it would otherwise stay forever).
    const user = await this.user(ref);
    const stale = access === 'default' && (await this.#d.identity.namespaceAccess(user.id)).has(namespace);
    if (!stale) this.checkNamespace(namespace);
    if (namespace === 'admin' && access === 'disabled' && user.roles.includes('admin'))
      throw new BadArguments('hiding the admin namespace from an admin would lock them out of it; remove their admin role instead', [
        { path: '/namespace', message: 'admin cannot be disabled for an admin' },
      ]);
    await this.#d.identity.setNamespaceAccess(user.id, namespace, access, principal);
    return this.#of(user);
  }

  /** A page of users (email order) with each one's access to every namespace. */
  async matrix(
    principal: Principal,
    opts: { limit?: number | undefined; cursor?: string | undefined },
  ): Promise<{ namespaces: string[]; items: UserAccess[]; next_cursor: string | null; limit: number }> {
    requireAdmin(principal, 'reading namespace access');
    const page = await this.#d.identity.users.list(principal, {
      limit: Math.min(opts.limit ?? MATRIX_LIMIT_DEFAULT, MATRIX_LIMIT_MAX),
      cursor: opts.cursor,
    });
    // A few users at a time: a `visible` rule that hangs costs its time limit per user, and a page
    // read one user after another would outlast the request's own time limit.
    const rows = new Array<UserAccess | null>(page.items.length).fill(null);
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < page.items.length; i = next++) {
        const user = await this.#d.identity.getUser(page.items[i]!.id);
        if (user) rows[i] = await this.#of(user);
      }
    };
    await Promise.all(Array.from({ length: Math.min(MATRIX_CONCURRENCY, page.items.length) }, worker));
    const items = rows.filter((r): r is UserAccess => r !== null);
    return { namespaces: this.known(), items, next_cursor: page.next_cursor, limit: page.limit };
  }

  async #of(user: {
    id: string;
    email: string;
    name?: string | null | undefined;
    roles: string[];
    disabled?: boolean;
  }): Promise<UserAccess> {
    // The user as a full API token of theirs would be: what a `visible` rule is asked about.
    const principal: Principal = {
      user: { id: user.id, email: user.email, name: user.name ?? null, roles: [...user.roles] },
      scopes: ['*'],
      tokenKind: 'api',
      tokenId: '',
      tokenExpiresAt: null,
    };
    const viewer = await this.#d.policy.viewer(principal, this.#d.log);
    const entries = this.#d.policy.registry.snapshot.namespaces;
    const names = [...new Set([...entries.keys(), ...viewer.overrides.keys()])].sort();
    const namespaces = await Promise.all(
      names.map(async (namespace): Promise<NamespaceAccessView> => {
        const sw = viewer.overrides.get(namespace) ?? null;
        const entry = entries.get(namespace);
        if (!entry) return { namespace, enabled: false, source: 'switch', switch: sw, loaded: false, rule_failed: null };
        if (sw) return { namespace, enabled: sw === 'enabled', source: 'switch', switch: sw, loaded: true, rule_failed: null };
        if (!entry.visible) return { namespace, enabled: true, source: 'default', switch: null, loaded: true, rule_failed: null };
        const verdict = await ruleVerdict(entry, viewer);
        const failed = verdict === 'shown' || verdict === 'hidden' ? null : verdict;
        return { namespace, enabled: verdict === 'shown', source: 'visible', switch: null, loaded: true, rule_failed: failed };
      }),
    );
    return {
      user: { id: user.id, email: user.email, name: user.name ?? null, roles: [...user.roles], active: !user.disabled },
      namespaces,
    };
  }
}
