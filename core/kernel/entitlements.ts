// Who sees what (core/kernel/policy.ts asks this). One place for the rule: an operator's per-user toggle beats the namespace's
// own `visible` rule; a rule that throws or hangs hides its namespace (fail closed).
import type { Logger } from 'pino';
import type { Caller } from '../sdk/index.ts';
import type { NotesSummary } from '../domain/notes/types.ts';
import type { Principal } from '../domain/identity/types.ts';
import type { NamespaceEntry } from './registry.ts';

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
