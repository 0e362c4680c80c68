// How note revisions are kept: each one stores its title and tags, and its body either as a full
// snapshot or as a delta against the version before it (./revision-delta.ts). A write stores a
// snapshot when the note is created, when the chain of deltas since the last snapshot reaches
// SNAPSHOT_EVERY revisions, or when the chain's deltas together would be as large as the body
// itself; otherwise a delta. Reading any revision applies at most SNAPSHOT_EVERY - 1 deltas.
//
// What a revision costs against the user's storage quota is what it stores, in UTF-8 bytes: its
// title, its tags and its snapshot or delta (stored_bytes; the database's own compression and row
// overhead aside). A one-character append to a 1 MiB note costs a few dozen bytes, plus 1/SNAPSHOT_EVERY
// of a snapshot.
import type { EntityManager } from '@mikro-orm/postgresql';
import { applyDeltas, diffBodies, encodeDelta } from './revision-delta.ts';
import { rows } from './rows.ts';

/** The longest chain of deltas after a snapshot, snapshot included. */
export const SNAPSHOT_EVERY = 200;

/** Where the previous revision's chain stands (absent for a note's first revision). */
export interface ChainState {
  /** The version of the snapshot the previous revision's chain starts from. */
  base_version: number;
  /** Bytes of the deltas stored since that snapshot. */
  chain_bytes: number;
}

/** What a new revision stores. */
export interface StoredRevision {
  /** True: the revision stores the full body. False: `delta`, against the previous version's body. */
  snapshot: boolean;
  delta: string | null;
  base_version: number;
  chain_bytes: number;
  /** What the revision costs against the quota. */
  stored_bytes: number;
}

export function metaBytes(title: string, tags: readonly string[]): number {
  let n = Buffer.byteLength(title);
  for (const t of tags) n += Buffer.byteLength(t);
  return n;
}

/**
 * How to store `version`, whose body is `body`, after the previous version's `prevBody`
 * (`prev` null: the first revision, or a history that cannot take a delta).
 */
export function planRevision(
  version: number,
  prev: ChainState | null,
  prevBody: string,
  next: { title: string; tags: readonly string[]; body: string },
): StoredRevision {
  const meta = metaBytes(next.title, next.tags);
  const bodyBytes = Buffer.byteLength(next.body);
  if (prev && version - prev.base_version < SNAPSHOT_EVERY) {
    const delta = encodeDelta(diffBodies(prevBody, next.body));
    const deltaBytes = Buffer.byteLength(delta);
    const chain = prev.chain_bytes + deltaBytes;
    if (chain < bodyBytes) {
      return { snapshot: false, delta, base_version: prev.base_version, chain_bytes: chain, stored_bytes: meta + deltaBytes };
    }
  }
  return { snapshot: true, delta: null, base_version: version, chain_bytes: 0, stored_bytes: meta + bodyBytes };
}

/** Where the chain of a note's revision `version` stands, for `planRevision`; null if there is none. */
export async function chainState(em: EntityManager, noteId: string, version: number): Promise<ChainState | null> {
  const [r] = await rows<ChainState>(em, `select base_version, chain_bytes from note_revisions where note_id = ? and version = ?`, [
    noteId,
    version,
  ]);
  return r ?? null;
}

/**
 * The body of one revision: its chain read in one query, from the snapshot it starts from to the
 * version itself. Null when the note (of this owner) has no such version.
 */
export async function revisionBody(em: EntityManager, noteId: string, ownerId: string, version: number): Promise<string | null> {
  const chain = await rows<{ version: number; body: string | null; delta: string | null }>(
    em,
    `select version, body, delta from note_revisions
      where note_id = ? and owner_id = ? and version <= ?
        and version >= (select base_version from note_revisions where note_id = ? and owner_id = ? and version = ?)
      order by version`,
    [noteId, ownerId, version, noteId, ownerId, version],
  );
  const [first] = chain;
  if (!first) return null;
  if (first.body === null || chain[chain.length - 1]!.version !== version || chain.length !== version - first.version + 1)
    throw new Error(`the stored history of note ${noteId} is broken before version ${version}`);
  return applyDeltas(
    first.body,
    chain.slice(1).map((r) => r.delta ?? ''),
  );
}
