import { Migration } from '@mikro-orm/migrations';

// Bytes each user stores, one row per kind of storage (note revisions, file blobs, ...). The quota
// is checked against the sum of a user's rows; core/domain/storage/usage.ts keeps them current
// inside the same transaction as the write they count.
export class Migration20261123000000_storage_usage extends Migration {
  override up(): void {
    this.addSql(`
      create table storage_usage (
        owner_id uuid not null,
        kind text not null,
        bytes bigint not null default 0,
        updated_at timestamptz not null default now(),
        constraint storage_usage_pkey primary key (owner_id, kind),
        constraint storage_usage_bytes_check check (bytes >= 0),
        constraint storage_usage_kind_check check (kind ~ '^[a-z][a-z0-9_]{0,31}$'),
        constraint storage_usage_owner_id_foreign foreign key (owner_id) references users (id) on delete cascade
      );`);
  }
}
