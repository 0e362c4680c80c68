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

/**
 * What a namespace's rule answered, within its time limit: shown or hidden, or why it could not
 * answer (it hung, threw, or gave a non-boolean), which hides the namespace (fail closed).
 */
export type RuleVerdict = 'shown' | 'hidden' | 'timed_out' | 'threw' | 'not_boolean';

export async function ruleVerdict(entry: NamespaceEntry, viewer: Viewer): Promise<RuleVerdict> {
  const rule = entry.visible;
  if (!rule) return 'shown';
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
      return 'timed_out';
    }
    if (typeof verdict !== 'boolean') {
      viewer.log.warn({ namespace: entry.name, got: typeof verdict }, 'visible rule returned a non-boolean; namespace hidden');
      return 'not_boolean';
    }
    return verdict ? 'shown' : 'hidden';
  } catch (err) {
    viewer.log.warn({ namespace: entry.name, err: (err as Error).message }, 'visible rule threw; namespace hidden');
    return 'threw';
  } finally {
    clearTimeout(timer);
  }
}

async function runRule(entry: NamespaceEntry, viewer: Viewer): Promise<boolean> {
  return (await ruleVerdict(entry, viewer)) === 'shown';
}

export async function isVisible(entry: NamespaceEntry, viewer: Viewer): Promise<boolean> {
  const forced = viewer.overrides.get(entry.name);
  if (forced === 'enabled') return true;
  if (forced === 'disabled') return false;
  return runRule(entry, viewer);
}
