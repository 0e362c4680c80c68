import { Migration } from '@mikro-orm/migrations';

// Resumable uploads in progress, one row each, for the quota: an upload holds its declared length
// of its owner's quota (storage_usage kind 'uploads') from its creation until it becomes a file, is
// cancelled or expires; the row says what to give back. core/domain/files/entities.ts mirrors it.
export class Migration20261203000000_file_uploads extends Migration {
  override up(): void {
    this.addSql(`
      create table file_uploads (
        id uuid not null,
        owner_id uuid not null,
        length bigint not null,
        created_at timestamptz not null default now(),
        constraint file_uploads_pkey primary key (id),
        constraint file_uploads_owner_id_foreign foreign key (owner_id) references users (id) on delete cascade,
        constraint file_uploads_length_check check (length >= 0)
      );`);
    this.addSql(`create index file_uploads_owner_id_index on file_uploads (owner_id);`);
  }
}
