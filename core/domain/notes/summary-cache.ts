// Every request's entitlement rules see the caller's notes summary (count, tags), so it is read
// on every request. This wrapper keeps it in memory and forgets a user's summary on each of their
// writes, here and, through the change feed, in every other process.
import type { ChangeFeed } from '../../db/change-feed.ts';
import type { Principal } from '../identity/types.ts';
import { LruMap } from '../lru.ts';
import type { NotesService, NotesSummary, ReportOptions } from './types.ts';

const ENTRIES = 10_000;

type Writes = 'create' | 'update' | 'append' | 'prepend' | 'replaceSection' | 'trash' | 'untrash' | 'purge' | 'restoreRevision';
const WRITES: readonly Writes[] = [
  'create',
  'update',
  'append',
  'prepend',
  'replaceSection',
  'trash',
  'untrash',
  'purge',
  'restoreRevision',
];

export interface CachedNotes extends NotesService {
  /** The wrapped service, for what is not per-principal (the trash sweep). */
  readonly inner: NotesService;
}

export function withSummaryCache(inner: NotesService, feed: ChangeFeed): CachedNotes {
  const summaries = new LruMap<string, NotesSummary>(ENTRIES);
  let generation = 0;
  feed.subscribe((change) => {
    generation++;
    if (change === 'all') summaries.clear();
    else if (change.kind === 'notes') summaries.delete(change.userId);
  });
  const changed = (p: Principal) => feed.publish({ kind: 'notes', userId: p.user.id });

  const wrapped: Record<string, unknown> = { inner };
  // Reads pass through unchanged.
  for (const name of ['list', 'get', 'revisions', 'revision', 'diff', 'tags', 'search', 'storageUse'] as const)
    wrapped[name] = (inner[name] as (...a: unknown[]) => unknown).bind(inner);
  for (const name of WRITES) {
    wrapped[name] = async (p: Principal, ...args: unknown[]) => {
      try {
        return await (inner[name] as (...a: unknown[]) => Promise<unknown>).call(inner, p, ...args);
      } finally {
        // Also after a failure: a write that failed late may still have committed.
        changed(p);
      }
    };
  }
  wrapped.report = async (p: Principal, opts: ReportOptions) => {
    const out = await inner.report(p, opts);
    if (out.saved_note_id)
      void out.saved_note_id.then(
        () => changed(p),
        () => {},
      );
    return out;
  };
  wrapped.summary = async (userId: string) => {
    const hit = summaries.get(userId);
    if (hit) return hit;
    const seen = generation;
    const fresh = await inner.summary(userId);
    if (seen === generation) summaries.set(userId, fresh);
    return fresh;
  };
  return wrapped as unknown as CachedNotes;
}
