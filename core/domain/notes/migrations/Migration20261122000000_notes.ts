import { Migration } from '@mikro-orm/migrations';

// Notes, their revisions, and what search and summaries need. core/domain/notes/entities.ts mirrors
// these columns. Indexes are for 100k notes per user: lists walk (owner_id, updated_at desc, id desc);
// search uses the GIN on search_vector (built by the service: folded words + CJK bigrams, 'simple'
// semantics, no dictionary); typo tolerance uses the trigram GIN on note_words; tag filters the GIN
// on tags; summaries read two small per-user tables by primary key.
export class Migration20261122000000_notes extends Migration {
  override up(): void {
    this.addSql(`create extension if not exists pg_trgm;`);

    this.addSql(`
      create table notes (
        id uuid not null,
        owner_id uuid not null,
        title text not null,
        body text not null default '',
        tags text[] not null default '{}',
        source text not null,
        version integer not null default 1,
        body_bytes integer not null default 0,
        excerpt text not null default '',
        open_items text[] not null default '{}',
        search_vector tsvector not null default '',
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        deleted_at timestamptz null,
        constraint notes_pkey primary key (id),
        constraint notes_source_check check (source in ('manual', 'agent', 'transcript', 'import')),
        constraint notes_version_check check (version >= 1),
        constraint notes_owner_id_foreign foreign key (owner_id) references users (id) on delete cascade
      );`);
    this.addSql(`create index notes_live_list_index on notes (owner_id, updated_at desc, id desc) where deleted_at is null;`);
    this.addSql(`create index notes_trash_list_index on notes (owner_id, updated_at desc, id desc) where deleted_at is not null;`);
    this.addSql(`create index notes_trash_expiry_index on notes (deleted_at) where deleted_at is not null;`);
    this.addSql(`create index notes_search_vector_index on notes using gin (search_vector);`);
    this.addSql(`create index notes_tags_index on notes using gin (tags);`);

    this.addSql(`
      create table note_revisions (
        note_id uuid not null,
        version integer not null,
        owner_id uuid not null,
        title text not null,
        body text not null,
        tags text[] not null default '{}',
        change text not null,
        body_bytes integer not null default 0,
        created_at timestamptz not null default now(),
        constraint note_revisions_pkey primary key (note_id, version),
        constraint note_revisions_change_check check (change in ('create', 'update', 'append', 'prepend', 'replace_section', 'restore_revision', 'trash', 'untrash')),
        constraint note_revisions_note_id_foreign foreign key (note_id) references notes (id) on delete cascade,
        constraint note_revisions_owner_id_foreign foreign key (owner_id) references users (id) on delete cascade
      );`);

    this.addSql(`
      create table note_words (
        owner_id uuid not null,
        word text not null,
        notes integer not null,
        constraint note_words_pkey primary key (owner_id, word),
        constraint note_words_owner_id_foreign foreign key (owner_id) references users (id) on delete cascade
      );`);
    this.addSql(`create index note_words_word_trgm_index on note_words using gin (word gin_trgm_ops);`);

    this.addSql(`
      create table note_stats (
        owner_id uuid not null,
        live_count integer not null default 0,
        constraint note_stats_pkey primary key (owner_id),
        constraint note_stats_owner_id_foreign foreign key (owner_id) references users (id) on delete cascade
      );`);

    this.addSql(`
      create table note_tag_stats (
        owner_id uuid not null,
        tag text not null,
        live_count integer not null,
        constraint note_tag_stats_pkey primary key (owner_id, tag),
        constraint note_tag_stats_owner_id_foreign foreign key (owner_id) references users (id) on delete cascade
      );`);
  }

  override down(): void {
    this.addSql(`drop table if exists note_tag_stats;`);
    this.addSql(`drop table if exists note_stats;`);
    this.addSql(`drop table if exists note_words;`);
    this.addSql(`drop table if exists note_revisions;`);
    this.addSql(`drop table if exists notes;`);
  }
}
