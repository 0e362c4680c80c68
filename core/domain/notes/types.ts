// The notes domain's contract: what the REST API, the notetaker plugin and the meetings plugin
// build on. Every method takes the acting principal and is scoped to the notes it owns: another
// user's note is NotFound, by construction (the owner is part of every query's WHERE).
import type { Principal } from '../identity/types.ts';

export type NoteSource = 'manual' | 'agent' | 'transcript' | 'import';
export const NOTE_SOURCES: readonly NoteSource[] = ['manual', 'agent', 'transcript', 'import'];

/** A note as every surface shows it (JSON field names are the wire names). */
export interface Note {
  id: string;
  title: string;
  /** Markdown. */
  body: string;
  tags: string[];
  source: NoteSource;
  /** 1 on create; every change increments it by one. */
  version: number;
  created_at: string;
  updated_at: string;
  /** Set while the note is in the trash. */
  deleted_at: string | null;
}

/** A note without its body, for lists. */
export type NoteSummary = Omit<Note, 'body'> & { excerpt: string; body_bytes: number };

export type RevisionChange = 'create' | 'update' | 'append' | 'prepend' | 'replace_section' | 'restore_revision' | 'trash' | 'untrash';

/** The content of one version of a note, kept when that version was written. */
export interface Revision {
  note_id: string;
  version: number;
  title: string;
  body: string;
  tags: string[];
  change: RevisionChange;
  created_at: string;
}

export type RevisionSummary = Omit<Revision, 'body'> & { body_bytes: number };

export interface Page<T> {
  items: T[];
  /** Opaque; pass back as `cursor` for the next page. Null when there is no more. */
  next_cursor: string | null;
  /** The limit actually used. */
  limit: number;
  /** Present when the requested limit was over the maximum and was lowered to it. */
  limit_clamped_from?: number;
}

export const LIST_LIMIT_DEFAULT = 20;
export const LIST_LIMIT_MAX = 100;

export interface ListOptions {
  limit?: number;
  cursor?: string;
  /** Only notes carrying every one of these tags. */
  tags?: string[];
  /** The trash instead of the live notes. */
  trashed?: boolean;
  /** Only notes whose id starts with this (see validate.idPrefixRange). */
  idPrefix?: string;
}

export interface CreateNote {
  title: string;
  body?: string;
  tags?: string[];
  source?: NoteSource;
}

/** Replacing edits need the version they were based on; a stale one is a Conflict carrying the current note. */
export interface UpdateNote {
  expected_version: number;
  title?: string;
  body?: string;
  tags?: string[];
}

export interface AppendText {
  text: string;
  /** Append at the end of this heading's section instead of the note's end. A missing heading is BadArguments. */
  heading?: string;
}

export interface ReplaceSection {
  expected_version: number;
  /** The heading text (without #), matched case-insensitively after trimming; the first match wins. */
  heading: string;
  /** The new text under the heading (the heading line itself stays). */
  text: string;
}

export interface SearchOptions {
  /** Web-search syntax: words, "quoted phrases", -excluded, OR. Any language. */
  q: string;
  tags?: string[];
  /** ISO date or date-time, inclusive, on updated_at. */
  from?: string;
  to?: string;
  limit?: number;
  cursor?: string;
}

export interface SearchHit {
  id: string;
  title: string;
  tags: string[];
  updated_at: string;
  version: number;
  rank: number;
  /** Matched words wrapped in « » (plain text, safe for any surface). */
  snippet: string;
  /** 'fulltext' for a direct match, 'fuzzy' when found through typo tolerance. */
  match: 'fulltext' | 'fuzzy';
}

/** What the caller stores against the storage quota, in bytes (note revisions, files, ...). */
export interface StorageUse {
  used: number;
  /** The quota in force; null when there is none. */
  quota: number | null;
  /** `used`, per kind of storage: `notes` (revisions as stored), `files`, ... */
  by_kind: Record<string, number>;
}

export interface NotesSummary {
  count: number;
  tags: Record<string, number>;
}

export type ReportGroup = 'day' | 'week' | 'tag';
export type ReportFormat = 'markdown' | 'html' | 'pdf';

export interface ReportOptions {
  q?: string;
  tags?: string[];
  from?: string;
  to?: string;
  group_by: ReportGroup;
  format: ReportFormat;
  title?: string;
  /** Also save the report (markdown) as a new note; its id is reported. */
  save_as_note?: boolean;
}

/** A unified diff from one version of a note to the current one. */
export interface RevisionDiff {
  from_version: number;
  to_version: number;
  diff: string;
  /**
   * True when the versions differ on too many lines for an exact diff within its bounds: the diff
   * then replaces everything between the common first and last lines as one block.
   */
  coarse: boolean;
}

export interface NotesService {
  list(p: Principal, opts?: ListOptions): Promise<Page<NoteSummary>>;
  get(p: Principal, id: string): Promise<Note>;
  create(p: Principal, input: CreateNote): Promise<Note>;
  update(p: Principal, id: string, input: UpdateNote): Promise<Note>;
  append(p: Principal, id: string, input: AppendText): Promise<Note>;
  prepend(p: Principal, id: string, input: AppendText): Promise<Note>;
  replaceSection(p: Principal, id: string, input: ReplaceSection): Promise<Note>;
  /** Moves to the trash (a new version). */
  trash(p: Principal, id: string, expectedVersion?: number): Promise<Note>;
  /** Out of the trash (a new version). */
  untrash(p: Principal, id: string): Promise<Note>;
  /** Gone for good, with its revisions. Only from the trash. */
  purge(p: Principal, id: string): Promise<void>;
  revisions(p: Principal, id: string, opts?: { limit?: number; cursor?: string }): Promise<Page<RevisionSummary>>;
  revision(p: Principal, id: string, version: number): Promise<Revision>;
  /** Unified diff from that revision to the current note. */
  diff(p: Principal, id: string, version: number): Promise<RevisionDiff>;
  /** Makes that revision's content current again, as a new version. */
  restoreRevision(p: Principal, id: string, version: number, expectedVersion?: number): Promise<Note>;
  tags(p: Principal): Promise<Array<{ tag: string; count: number }>>;
  search(p: Principal, opts: SearchOptions): Promise<Page<SearchHit>>;
  /** The caller's storage use against the quota, notes and everything else it counts. */
  storageUse(p: Principal): Promise<StorageUse>;
  /** Count and tag counts of the caller's live notes: cheap enough for every request. */
  summary(userId: string): Promise<NotesSummary>;
  /** Streams the report; never holds every selected note in memory. */
  report(
    p: Principal,
    opts: ReportOptions,
  ): Promise<{ contentType: string; filename: string; stream: AsyncIterable<Uint8Array>; saved_note_id?: Promise<string> }>;
}
