// The search tables. The schema is owned by ./migrations/; these definitions describe the same
// columns for the ORM's schema knowledge (the indexer and queries use SQL, scoped by owner).
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { User } from '../identity/entities.ts';

export const SearchChunk = defineEntity({
  name: 'SearchChunk',
  tableName: 'search_chunks',
  properties: {
    owner: p.manyToOne(User).fieldName('owner_id').primary().deleteRule('cascade'),
    kind: p.text().primary(),
    resourceId: p.uuid().primary(),
    chunk: p.integer().primary(),
    title: p.text(),
    tags: p.array().columnType('text[]').default([]),
    contentType: p.text().nullable(),
    updatedAt: p.datetime().columnType('timestamptz'),
    text: p.text().lazy(),
    marks: p.json<unknown>().default('[]'),
    vector: p.text().columnType('tsvector').lazy().hidden(),
    /** On chunk 0: a fingerprint of the resource as indexed (a job finding it unchanged writes nothing). */
    digest: p.text().nullable(),
  },
  primaryKeys: ['owner', 'kind', 'resourceId', 'chunk'],
  indexes: [
    {
      name: 'search_chunks_owner_updated_index',
      expression: 'create index search_chunks_owner_updated_index on search_chunks (owner_id, updated_at desc)',
    },
    { name: 'search_chunks_vector_index', expression: 'create index search_chunks_vector_index on search_chunks using gin (vector)' },
    { name: 'search_chunks_tags_index', expression: 'create index search_chunks_tags_index on search_chunks using gin (tags)' },
  ],
});
export type SearchChunk = InferEntity<typeof SearchChunk>;

export const SearchWord = defineEntity({
  name: 'SearchWord',
  tableName: 'search_words',
  properties: {
    owner: p.manyToOne(User).fieldName('owner_id').primary().deleteRule('cascade'),
    word: p.text().primary(),
  },
  primaryKeys: ['owner', 'word'],
  indexes: [
    {
      name: 'search_words_word_trgm_index',
      expression: 'create index search_words_word_trgm_index on search_words using gin (word gin_trgm_ops)',
    },
  ],
});
export type SearchWord = InferEntity<typeof SearchWord>;

/** A resource waiting for its index job: at most one row, and so one job, per resource. */
export const SearchPending = defineEntity({
  name: 'SearchPending',
  tableName: 'search_pending',
  properties: {
    owner: p.manyToOne(User).fieldName('owner_id').primary().deleteRule('cascade'),
    kind: p.text().primary(),
    resourceId: p.uuid().primary(),
    /** When its job was sent: a row waiting long after that gets another job. */
    since: p.datetime().columnType('timestamptz').defaultRaw('now()'),
  },
  primaryKeys: ['owner', 'kind', 'resourceId'],
});
export type SearchPending = InferEntity<typeof SearchPending>;

export const searchEntities = [SearchChunk, SearchWord, SearchPending] as const;
