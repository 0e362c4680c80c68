import { Migration } from '@mikro-orm/migrations';

// Files, their versions and their share links. core/domain/files/entities.ts mirrors these columns.
// A file's bytes are a content-addressed blob (sha256) in the blob store; every version keeps its
// own sha256, so restoring a version is a new row pointing at an existing blob. A file may be
// attached to one note (set null when the note is purged). A share link stores only the sha256 of
// its token, never the token.
export class Migration20261124000000_files extends Migration {
  override up(): void {
    this.addSql(`
      create table files (
        id uuid not null,
        owner_id uuid not null,
        name text not null,
        folder text not null default '',
        content_type text not null,
        size bigint not null,
        sha256 text not null,
        version integer not null default 1,
        note_id uuid null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        deleted_at timestamptz null,
        constraint files_pkey primary key (id),
        constraint files_owner_id_foreign foreign key (owner_id) references users (id) on delete cascade,
        constraint files_note_id_foreign foreign key (note_id) references notes (id) on delete set null
      );`);
    this.addSql(`create index files_live_list_index on files (owner_id, updated_at desc, id desc) where deleted_at is null;`);
    this.addSql(`create index files_trash_list_index on files (owner_id, updated_at desc, id desc) where deleted_at is not null;`);
    this.addSql(`create index files_note_index on files (note_id) where note_id is not null;`);
    this.addSql(`create index files_sha256_index on files (sha256);`);

    this.addSql(`
      create table file_versions (
        file_id uuid not null,
        version integer not null,
        owner_id uuid not null,
        name text not null,
        content_type text not null,
        size bigint not null,
        sha256 text not null,
        change text not null,
        created_at timestamptz not null default now(),
        constraint file_versions_pkey primary key (file_id, version),
        constraint file_versions_file_id_foreign foreign key (file_id) references files (id) on delete cascade,
        constraint file_versions_owner_id_foreign foreign key (owner_id) references users (id) on delete cascade
      );`);
    this.addSql(`create index file_versions_sha256_index on file_versions (sha256);`);

    this.addSql(`
      create table file_shares (
        id uuid not null,
        owner_id uuid not null,
        file_id uuid not null,
        version integer null,
        token_hash text not null,
        label text not null default '',
        password_hash text null,
        expires_at timestamptz null,
        max_downloads integer null,
        downloads integer not null default 0,
        last_access_at timestamptz null,
        revoked_at timestamptz null,
        created_at timestamptz not null default now(),
        constraint file_shares_pkey primary key (id),
        constraint file_shares_token_hash_unique unique (token_hash),
        constraint file_shares_owner_id_foreign foreign key (owner_id) references users (id) on delete cascade,
        constraint file_shares_file_id_foreign foreign key (file_id) references files (id) on delete cascade
      );`);
    this.addSql(`create index file_shares_owner_index on file_shares (owner_id, created_at desc);`);
  }
}
