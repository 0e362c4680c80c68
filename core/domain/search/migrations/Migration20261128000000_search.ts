import { Migration } from '@mikro-orm/migrations';

// Global search: one index over every kind of resource a domain registers as a source (notes, files,
// transcripts, ...). A resource is cut into chunks of a few thousand characters that overlap, so a
// long document is searchable to its end (PostgreSQL keeps word positions only up to 16,383 per
// vector). Each chunk keeps its text (for snippets) and where its parts start (pages, segment times,
// headings). Rows are written by the search-index job; every read is scoped by owner_id.
// search_words: the distinct words of a user's index, for typo tolerance (pg_trgm).
export class Migration20261128000000_search extends Migration {
  override up(): void {
    this.addSql(`create extension if not exists pg_trgm;`);
    this.addSql(`
      create table search_chunks (
        owner_id uuid not null,
        kind text not null,
        resource_id uuid not null,
        chunk integer not null,
        title text not null,
        tags text[] not null default '{}',
        content_type text null,
        updated_at timestamptz not null,
        text text not null,
        marks jsonb not null default '[]',
        vector tsvector not null,
        constraint search_chunks_pkey primary key (owner_id, kind, resource_id, chunk),
        constraint search_chunks_owner_id_foreign foreign key (owner_id) references users (id) on delete cascade
      );`);
    this.addSql(`create index search_chunks_owner_updated_index on search_chunks (owner_id, updated_at desc);`);
    this.addSql(`create index search_chunks_vector_index on search_chunks using gin (vector);`);
    this.addSql(`create index search_chunks_tags_index on search_chunks using gin (tags);`);
    this.addSql(`
      create table search_words (
        owner_id uuid not null,
        word text not null,
        constraint search_words_pkey primary key (owner_id, word),
        constraint search_words_owner_id_foreign foreign key (owner_id) references users (id) on delete cascade
      );`);
    this.addSql(`create index search_words_word_trgm_index on search_words using gin (word gin_trgm_ops);`);
  }

  override down(): void {
    this.addSql(`drop table if exists search_words;`);
    this.addSql(`drop table if exists search_chunks;`);
  }
}
