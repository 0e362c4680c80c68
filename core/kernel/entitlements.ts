// Who sees what. One place for the rule: an operator's per-user toggle beats the namespace's
// own `visible` rule; a rule that throws or hangs hides its namespace (fail closed).
import type { Logger } from 'pino';
import type { Caller } from '../sdk/index.ts';
import type { NotesSummary } from '../domain/notes/types.ts';
import type { Principal } from '../domain/identity/types.ts';
import type { FunctionEntry } from './manifest.ts';
import type { NamespaceEntry, Snapshot } from './registry.ts';
import { Forbidden, UnknownName } from './errors.ts';

export type AccessOverrides = ReadonlyMap<string, 'enabled' | 'disabled'>;

/** A frozen copy: one rule cannot change what another rule, or a handler, sees. */
export function callerOf(principal: Principal, notes: NotesSummary): Caller {
  return Object.freeze({
    notes: Object.freeze({ count: notes.count, tags: Object.freeze({ ...notes.tags }) }),
    user: Object.freeze({ ...principal.user, roles: Object.freeze([...principal.user.roles]) as string[] }),
    scopes: Object.freeze([...principal.scopes]) as string[],
    tokenKind: principal.tokenKind,
  });
}

export interface Viewer {
  principal: Principal;
  caller: Caller;
  overrides: AccessOverrides;
  log: Logger;
  ruleTimeoutMs: number;
}

/** Runs a namespace's rule with a time limit; false on throw, on hang and on a non-boolean. */
async function runRule(entry: NamespaceEntry, viewer: Viewer): Promise<boolean> {
  const rule = entry.visible;
  if (!rule) return true;
  let timer: NodeJS.Timeout | undefined;
  try {
    const verdict = await Promise.race([
      Promise.resolve().then(() => rule(viewer.caller)),
      new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), viewer.ruleTimeoutMs);
      }),
    ]);
    if (verdict === 'timeout') {
      viewer.log.warn({ namespace: entry.name, ms: viewer.ruleTimeoutMs }, 'visible rule timed out; namespace hidden');
      return false;
    }
    if (typeof verdict !== 'boolean')
      viewer.log.warn({ namespace: entry.name, got: typeof verdict }, 'visible rule returned a non-boolean; namespace hidden');
    return verdict === true;
  } catch (err) {
    viewer.log.warn({ namespace: entry.name, err: (err as Error).message }, 'visible rule threw; namespace hidden');
    return false;
  } finally {
    clearTimeout(timer);
  }
}

export async function isVisible(entry: NamespaceEntry, viewer: Viewer): Promise<boolean> {
  const forced = viewer.overrides.get(entry.name);
  if (forced === 'enabled') return true;
  if (forced === 'disabled') return false;
  return runRule(entry, viewer);
}

/** The namespaces this caller may see, in name order. */
export async function visibleNamespaces(snapshot: Snapshot, viewer: Viewer): Promise<NamespaceEntry[]> {
  const entries = [...snapshot.namespaces.values()].sort((a, b) => a.name.localeCompare(b.name));
  const verdicts = await Promise.all(entries.map((e) => isVisible(e, viewer)));
  return entries.filter((_, i) => verdicts[i]);
}

export function notFoundNamespace(name: string): UnknownName {
  return new UnknownName(`no namespace '${name}' here. GET /curl/help lists the namespaces you can use.`);
}

/** The namespace if the caller may see it; the same NotFound whether hidden or absent. */
export async function requireNamespace(snapshot: Snapshot, name: string, viewer: Viewer): Promise<NamespaceEntry> {
  const entry = snapshot.namespaces.get(name);
  if (!entry || !(await isVisible(entry, viewer))) throw notFoundNamespace(name);
  return entry;
}

export function requireFunction(entry: NamespaceEntry, name: string): FunctionEntry {
  const fn = entry.functions.get(name);
  if (!fn) throw new UnknownName(`no function '${entry.name}.${name}' here. GET /curl/help/${entry.name} lists its functions.`);
  return fn;
}

/** Scopes: '*' grants everything; 'notes:*' grants every 'notes:...' scope. */
export function hasScope(granted: readonly string[], wanted: string): boolean {
  return granted.some((g) => g === '*' || g === wanted || (g.endsWith(':*') && wanted.startsWith(g.slice(0, -1))));
}

/** Visible but not entitled -> Forbidden naming exactly what is missing. */
export function assertEntitled(fn: FunctionEntry, principal: Principal): void {
  const missingRoles = (fn.requires.roles ?? []).filter((r) => !principal.user.roles.includes(r));
  const missingScopes = (fn.requires.scopes ?? []).filter((s) => !hasScope(principal.scopes, s));
  if (missingRoles.length === 0 && missingScopes.length === 0) return;
  const missing = [
    ...(missingRoles.length ? [`role ${missingRoles.join(', ')}, which your user does not have`] : []),
    ...(missingScopes.length ? [`scope ${missingScopes.join(', ')}, which this ${principal.tokenKind} token does not carry`] : []),
  ];
  throw new Forbidden(`${fn.namespace}.${fn.name} needs ${missing.join(', and ')}.`);
}
