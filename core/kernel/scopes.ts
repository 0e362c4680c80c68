// Token scopes: the catalogue the domains define, and the one rule for what a set of granted scopes
// allows. '*' grants everything; 'notes:*' grants every 'notes:...' scope; a scope grants the scopes
// it implies ('notes:write' implies 'notes:read': every write answers with what it wrote, so a
// write-only token would read through its own answers anyway; the catalogue says so instead).
import type { ScopeDefinition } from '../contract/domain.ts';

export class ScopeCatalogue {
  readonly #defs: ReadonlyMap<string, ScopeDefinition>;

  constructor(defs: Iterable<[string, ScopeDefinition]>) {
    this.#defs = new Map(defs);
  }

  /** Every scope with its description and what it implies, in name order. */
  list(): Array<{ scope: string; description: string; implies: string[] }> {
    return [...this.#defs.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([scope, d]) => ({ scope, description: d.description, implies: d.implies ?? [] }));
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

  /** Does holding `granted` allow `wanted`? */
  allows(granted: readonly string[], wanted: string): boolean {
    return this.expand(granted).some((g) => g === '*' || g === wanted || (g.endsWith(':*') && wanted.startsWith(g.slice(0, -1))));
  }
}
