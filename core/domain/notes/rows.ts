// Rows as the SQL of the notes domain selects them, and their mapping to the wire shapes. Times are
// selected as epoch milliseconds (stored truncated to the millisecond, so they round-trip exactly
// through cursors) and shown as ISO 8601 UTC strings.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Note, NoteSource, NoteSummary, Revision, RevisionChange, RevisionSummary } from './types.ts';

export const ms = (col: string, as: string) => `(extract(epoch from ${col}) * 1000)::float8 as ${as}`;
/** The database clock, to the millisecond: what every write stamps. */
export const NOW_MS = `date_trunc('milliseconds', clock_timestamp())`;

export const iso = (v: number) => new Date(v).toISOString();

export async function rows<T>(em: EntityManager, sql: string, params: unknown[] = []): Promise<T[]> {
  return await em.execute<T[]>(sql, params);
}

export interface NoteRow {
  id: string;
  title: string;
  body: string;
  tags: string[];
  source: NoteSource;
  version: number;
  created_ms: number;
  updated_ms: number;
  deleted_ms: number | null;
}

export const NOTE_COLUMNS = `id, title, body, tags, source, version, ${ms('created_at', 'created_ms')}, ${ms('updated_at', 'updated_ms')}, ${ms('deleted_at', 'deleted_ms')}`;

export function toNote(r: NoteRow): Note {
  return {
    id: r.id,
    title: r.title,
    body: r.body,
    tags: r.tags,
    source: r.source,
    version: r.version,
    created_at: iso(r.created_ms),
    updated_at: iso(r.updated_ms),
    deleted_at: r.deleted_ms === null ? null : iso(r.deleted_ms),
  };
}

export interface SummaryRow extends Omit<NoteRow, 'body'> {
  excerpt: string;
  body_bytes: number;
}

export const SUMMARY_COLUMNS = `id, title, tags, source, version, excerpt, body_bytes, ${ms('created_at', 'created_ms')}, ${ms('updated_at', 'updated_ms')}, ${ms('deleted_at', 'deleted_ms')}`;

export function toSummary(r: SummaryRow): NoteSummary {
  return {
    id: r.id,
    title: r.title,
    tags: r.tags,
    source: r.source,
    version: r.version,
    created_at: iso(r.created_ms),
    updated_at: iso(r.updated_ms),
    deleted_at: r.deleted_ms === null ? null : iso(r.deleted_ms),
    excerpt: r.excerpt,
    body_bytes: r.body_bytes,
  };
}

export interface RevisionRow {
  note_id: string;
  version: number;
  title: string;
  body?: string;
  tags: string[];
  change: RevisionChange;
  body_bytes: number;
  created_ms: number;
}

export const REVISION_COLUMNS = `note_id, version, title, tags, change, body_bytes, ${ms('created_at', 'created_ms')}`;

export function toRevisionSummary(r: RevisionRow): RevisionSummary {
  return {
    note_id: r.note_id,
    version: r.version,
    title: r.title,
    tags: r.tags,
    change: r.change,
    created_at: iso(r.created_ms),
    body_bytes: r.body_bytes,
  };
}

export function toRevision(r: RevisionRow & { body: string }): Revision {
  return {
    note_id: r.note_id,
    version: r.version,
    title: r.title,
    body: r.body,
    tags: r.tags,
    change: r.change,
    created_at: iso(r.created_ms),
  };
}
