// Notes tables. The schema is owned by ./migrations/Migration20261122000000_notes.ts; these
// definitions describe the same columns. The service writes with SQL (row locks, tsvector literals,
// counter upserts), so the entities are for the ORM's schema knowledge and ad-hoc reads.
import { randomUUID } from 'node:crypto';
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { User } from '../identity/entities.ts';
import { NOTE_SOURCES } from './types.ts';

export const REVISION_CHANGES = [
  'create',
  'update',
  'append',
  'prepend',
  'replace_section',
  'restore_revision',
  'trash',
  'untrash',
] as const;

export const Note = defineEntity({
  name: 'Note',
  tableName: 'notes',
  properties: {
    id: p
      .uuid()
      .primary()
      .onCreate(() => randomUUID()),
    owner: p.manyToOne(User).fieldName('owner_id').deleteRule('cascade'),
    title: p.text(),
    body: p.text().default('').lazy(),
    tags: p.array().columnType('text[]').default([]),
    source: p.enum(NOTE_SOURCES).columnType('text'),
    version: p.integer().default(1),
    /** UTF-8 length of body, kept with it so lists never read the body. */
    bodyBytes: p.integer().default(0),
    /** The body's first ~200 characters as one plain line. */
    excerpt: p.text().default(''),
    /** The open action items (`- [ ] ...`) of the body, for reports. */
    openItems: p.array().columnType('text[]').default([]),
    /** Built by the service (core/domain/notes/text.ts): folded words, CJK bigrams, weighted. */
    searchVector: p.text().columnType('tsvector').default('').lazy().hidden(),
    createdAt: p.datetime().columnType('timestamptz').defaultRaw('now()'),
    updatedAt: p.datetime().columnType('timestamptz').defaultRaw('now()'),
    /** Set while in the trash. */
    deletedAt: p.datetime().columnType('timestamptz').nullable(),
  },
  checks: [{ name: 'notes_version_check', expression: 'version >= 1' }],
  // Declared so the schema tools know them; the migration creates them.
  indexes: [
    {
      name: 'notes_live_list_index',
      expression: 'create index notes_live_list_index on notes (owner_id, updated_at desc, id desc) where deleted_at is null',
    },
    {
      name: 'notes_trash_list_index',
      expression: 'create index notes_trash_list_index on notes (owner_id, updated_at desc, id desc) where deleted_at is not null',
    },
    {
      name: 'notes_trash_expiry_index',
      expression: 'create index notes_trash_expiry_index on notes (deleted_at) where deleted_at is not null',
    },
    { name: 'notes_search_vector_index', expression: 'create index notes_search_vector_index on notes using gin (search_vector)' },
    { name: 'notes_tags_index', expression: 'create index notes_tags_index on notes using gin (tags)' },
  ],
});
export type Note = InferEntity<typeof Note>;

export const NoteRevision = defineEntity({
  name: 'NoteRevision',
  tableName: 'note_revisions',
  properties: {
    note: p.manyToOne(Note).fieldName('note_id').primary().deleteRule('cascade'),
    version: p.integer().primary(),
    owner: p.manyToOne(User).fieldName('owner_id').deleteRule('cascade'),
    title: p.text(),
    /** The full body, when this revision is a snapshot (core/domain/notes/revision-store.ts). */
    body: p.text().nullable().lazy(),
    /** Otherwise the delta from the previous version's body (core/domain/notes/revision-delta.ts). */
    delta: p.text().nullable().lazy(),
    tags: p.array().columnType('text[]').default([]),
    change: p.enum(REVISION_CHANGES).columnType('text'),
    /** UTF-8 length of this version's body, however it is stored. */
    bodyBytes: p.integer().default(0),
    createdAt: p.datetime().columnType('timestamptz').defaultRaw('now()'),
    /** The snapshot this revision's chain of deltas starts from (its own version for a snapshot). */
    baseVersion: p.integer(),
    /** Bytes of the deltas from that snapshot up to this revision. */
    chainBytes: p.integer().default(0),
    /** What this revision counts against its owner's storage quota. */
    storedBytes: p.integer().default(0),
  },
  primaryKeys: ['note', 'version'],
  checks: [
    { name: 'note_revisions_body_or_delta_check', expression: '(body is null) <> (delta is null)' },
    {
      name: 'note_revisions_base_version_check',
      expression: 'base_version <= version and (body is null or base_version = version)',
    },
  ],
});
export type NoteRevision = InferEntity<typeof NoteRevision>;

/** Distinct words of each user's notes (live and trashed) with how many notes hold them: typo tolerance. */
export const NoteWord = defineEntity({
  name: 'NoteWord',
  tableName: 'note_words',
  properties: {
    owner: p.manyToOne(User).fieldName('owner_id').primary().deleteRule('cascade'),
    word: p.text().primary(),
    notes: p.integer(),
  },
  primaryKeys: ['owner', 'word'],
  indexes: [
    {
      name: 'note_words_word_trgm_index',
      expression: 'create index note_words_word_trgm_index on note_words using gin (word gin_trgm_ops)',
    },
  ],
});
export type NoteWord = InferEntity<typeof NoteWord>;

/** Per-user count of live notes, maintained in the transaction of every write. */
export const NoteStats = defineEntity({
  name: 'NoteStats',
  tableName: 'note_stats',
  properties: {
    owner: p.manyToOne(User).fieldName('owner_id').primary().deleteRule('cascade').updateRule('no action'),
    liveCount: p.integer().default(0),
  },
});
export type NoteStats = InferEntity<typeof NoteStats>;

/** Per-user, per-tag count of live notes, maintained likewise. */
export const NoteTagStats = defineEntity({
  name: 'NoteTagStats',
  tableName: 'note_tag_stats',
  properties: {
    owner: p.manyToOne(User).fieldName('owner_id').primary().deleteRule('cascade'),
    tag: p.text().primary(),
    liveCount: p.integer(),
  },
  primaryKeys: ['owner', 'tag'],
});
export type NoteTagStats = InferEntity<typeof NoteTagStats>;

export const notesEntities = [Note, NoteRevision, NoteWord, NoteStats, NoteTagStats] as const;
