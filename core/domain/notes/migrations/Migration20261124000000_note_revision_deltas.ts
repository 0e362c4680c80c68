import { Migration } from '@mikro-orm/migrations';
import { planRevision, type ChainState } from '../revision-store.ts';

/** Revisions read at a time while converting one note's history. */
const BATCH = 50;

// Revisions stop being full copies: a revision's body is a snapshot (body) or a delta against the
// version before it (delta), see core/domain/notes/revision-store.ts. base_version is the snapshot
// its chain starts from, chain_bytes the deltas since that snapshot, stored_bytes what the revision
// counts against its owner's storage quota. Existing histories are converted note by note, each
// revision's content kept exactly, and every user's usage of kind 'notes' is set to what their
// revisions now store.
export class Migration20261124000000_note_revision_deltas extends Migration {
  override async up(): Promise<void> {
    await this.execute(`
      alter table note_revisions
        alter column body drop not null,
        add column delta text null,
        add column base_version integer null,
        add column chain_bytes integer not null default 0,
        add column stored_bytes integer not null default 0`);
    // Every revision a snapshot first (what they are today), then the histories that can take deltas.
    await this.execute(`
      update note_revisions set base_version = version, chain_bytes = 0,
             stored_bytes = octet_length(title) + octet_length(body)
                            + coalesce((select sum(octet_length(t)) from unnest(tags) t), 0)`);
    const notes = await this.execute(`select note_id from note_revisions group by note_id having count(*) > 1 order by note_id`);
    for (const { note_id } of notes as Array<{ note_id: string }>) await this.#convert(note_id);

    await this.execute(`
      alter table note_revisions
        alter column base_version set not null,
        add constraint note_revisions_body_or_delta_check check ((body is null) <> (delta is null)),
        add constraint note_revisions_base_version_check check (base_version <= version and (body is null or base_version = version))`);
    await this.execute(`
      insert into storage_usage (owner_id, kind, bytes)
      select owner_id, 'notes', sum(stored_bytes) from note_revisions group by owner_id
      on conflict (owner_id, kind) do update set bytes = excluded.bytes, updated_at = now()`);
  }

  async #convert(noteId: string): Promise<void> {
    let prevBody = '';
    let prev: ChainState | null = null;
    let after = 0;
    for (;;) {
      const batch = (await this.execute(
        `select version, title, tags, body from note_revisions where note_id = ? and version > ? order by version limit ?`,
        [noteId, after, BATCH],
      )) as Array<{ version: number; title: string; tags: string[]; body: string }>;
      if (batch.length === 0) return;
      const deltas: Array<{ version: number; delta: string; base: number; chain: number; stored: number }> = [];
      for (const r of batch) {
        // A gap in the versions (never written by Folio, but cheap to respect) starts a new chain.
        const plan = planRevision(r.version, prev && r.version === after + 1 ? prev : null, prevBody, r);
        if (!plan.snapshot)
          deltas.push({
            version: r.version,
            delta: plan.delta!,
            base: plan.base_version,
            chain: plan.chain_bytes,
            stored: plan.stored_bytes,
          });
        prev = { base_version: plan.base_version, chain_bytes: plan.chain_bytes };
        prevBody = r.body;
        after = r.version;
      }
      if (deltas.length > 0) {
        await this.execute(
          `update note_revisions r set body = null, delta = d.delta, base_version = d.base, chain_bytes = d.chain, stored_bytes = d.stored
             from unnest(array[?]::int[], array[?]::text[], array[?]::int[], array[?]::int[], array[?]::int[]) as d(version, delta, base, chain, stored)
            where r.note_id = ? and r.version = d.version`,
          [
            deltas.map((d) => d.version),
            deltas.map((d) => d.delta),
            deltas.map((d) => d.base),
            deltas.map((d) => d.chain),
            deltas.map((d) => d.stored),
            noteId,
          ],
        );
      }
    }
  }

  override down(): void {
    throw new Error('the revision delta migration cannot be undone: restore a backup taken before it');
  }
}
