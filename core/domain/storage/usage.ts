// One per-user storage quota, shared by every domain that stores a user's bytes (note revisions,
// files, ...). A domain charges what a write adds, and credits what a delete frees, inside the
// transaction of the write itself: the count can never drift from the data, and a write over the
// quota is refused before anything is stored (the transaction rolls back with it).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { StorageSettings } from '../../contract/domain.ts';
import { QuotaExceeded } from '../../contract/errors.ts';

export type { StorageSettings };

export interface StorageUsage {
  /** Bytes stored, per kind ('notes', 'files', ...). */
  byKind: Record<string, number>;
  total: number;
  /** The quota in force; null when there is none. */
  quota: number | null;
}

/**
 * Adds `delta` bytes (negative to free them) to the user's `kind`. A positive delta that would take
 * the user's total over the quota throws QuotaExceeded and changes nothing. Holds a per-user lock
 * until the transaction ends, so two concurrent writes cannot both squeeze under the quota.
 */
export async function chargeStorage(
  em: EntityManager,
  ownerId: string,
  kind: string,
  delta: number,
  settings: StorageSettings,
): Promise<void> {
  if (!Number.isSafeInteger(delta)) throw new TypeError(`storage delta must be an integer, got ${delta}`);
  if (delta === 0) return;
  // One writer per user at a time until this transaction ends: the user's row, locked FOR NO KEY
  // UPDATE, which waits for another charge of the same user but not for the foreign-key checks
  // of the user's ordinary inserts (they take FOR KEY SHARE). Locking only the usage rows would
  // not do: a row another transaction is inserting is invisible here, and both would fit.
  const [user] = await em.execute<{ id: string }[]>(`select id from users where id = ? for no key update`, [ownerId]);
  if (!user) throw new TypeError(`no user ${ownerId} to charge storage to`);
  await em.execute(`insert into storage_usage (owner_id, kind, bytes) values (?, ?, 0) on conflict do nothing`, [ownerId, kind]);
  const held = await em.execute<{ bytes: string }[]>(`select bytes from storage_usage where owner_id = ?`, [ownerId]);
  const total = held.reduce((sum, r) => sum + Number(r.bytes), 0);
  const quota = settings.quotaBytesPerUser;
  if (delta > 0 && quota !== null && total + delta > quota) {
    throw new QuotaExceeded(
      `This would store ${delta} more bytes, but you use ${total} of your ${quota}-byte quota. Delete or purge something (files, notes in the trash), or ask an operator for more space.`,
      { used: total, quota, needed: delta },
    );
  }
  await em.execute(`update storage_usage set bytes = greatest(0, bytes + ?), updated_at = now() where owner_id = ? and kind = ?`, [
    delta,
    ownerId,
    kind,
  ]);
}

/** What the user stores, per kind, and the quota in force. */
export async function storageUsage(em: EntityManager, ownerId: string, settings: StorageSettings): Promise<StorageUsage> {
  const held = await em.execute<{ kind: string; bytes: string }[]>(
    `select kind, bytes from storage_usage where owner_id = ? order by kind`,
    [ownerId],
  );
  const byKind = Object.fromEntries(held.map((r) => [r.kind, Number(r.bytes)]));
  return { byKind, total: held.reduce((sum, r) => sum + Number(r.bytes), 0), quota: settings.quotaBytesPerUser };
}
