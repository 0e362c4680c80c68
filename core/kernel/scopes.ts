// Token scopes: the catalogue the domains define, and the one rule for what a set of granted scopes
// allows. '*' grants everything; 'notes:*' grants every 'notes:...' scope; a scope grants the scopes
// it implies ('notes:write' implies 'notes:read': every write answers with what it wrote, so a
// write-only token would read through its own answers anyway; the catalogue says so instead).
// A scope that names roles works only for a user who has them: '*' on a user without the role
// admin does not reach the admin-only scopes, so a token never grants more than its user has.
import type { ScopeDefinition, ScopeRules } from '../contract/domain.ts';

export class ScopeCatalogue implements ScopeRules {
  readonly #defs: ReadonlyMap<string, ScopeDefinition>;

  constructor(defs: Iterable<[string, ScopeDefinition]>) {
    this.#defs = new Map(defs);
  }

  /** Every scope with its description, what it implies and the roles it needs, in name order. */
  list(): Array<{ scope: string; description: string; implies: string[]; roles: string[] }> {
    return [...this.#defs.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([scope, d]) => ({ scope, description: d.description, implies: d.implies ?? [], roles: d.roles ?? [] }));
  }

  /** '*', a catalogued scope, or '<prefix>:*' when some catalogued scope has that prefix. */
  known(scope: string): boolean {
    if (scope === '*' || this.#defs.has(scope)) return true;
    if (!scope.endsWith(':*')) return false;
    const prefix = scope.slice(0, -1);
    return [...this.#defs.keys()].some((s) => s.startsWith(prefix));
  }

  /** The scopes as granted: each with everything it implies, transitively, without duplicates. */
  expand(scopes: readonly string[]): string[] {
    const out: string[] = [];
    const visit = (s: string) => {
      if (out.includes(s)) return;
      out.push(s);
      for (const i of this.#defs.get(s)?.implies ?? []) visit(i);
    };
    for (const s of scopes) visit(s);
    return out;
  }

  /**
   * Does holding `granted` allow `wanted`? With `roles` (the user's), a scope that needs roles is
   * allowed only when the user has them all; without, the roles are not looked at.
   */
  allows(granted: readonly string[], wanted: string, roles?: readonly string[]): boolean {
    if (roles && !(this.#defs.get(wanted)?.roles ?? []).every((r) => roles.includes(r))) return false;
    return this.expand(granted).some((g) => g === '*' || g === wanted || (g.endsWith(':*') && wanted.startsWith(g.slice(0, -1))));
  }
}
