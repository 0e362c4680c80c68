import { Migration } from '@mikro-orm/migrations';

// Indexing keeps up with writes: search_pending holds one row per resource waiting to be indexed, so
// a resource written 45 times a second has one index job waiting, not one per write (the job reads
// the resource as it is when it runs: the latest version wins). search_chunks.digest, on a
// resource's first chunk, fingerprints what was indexed: a job that finds the resource unchanged
// writes nothing. \`since\` is when its job was sent: a row still waiting a minute later gets another
// job (the first may have been cancelled or dead-lettered).
export class Migration20261211000000_search_pending extends Migration {
  override up(): void {
    this.addSql(`
      create table search_pending (
        owner_id uuid not null,
        kind text not null,
        resource_id uuid not null,
        since timestamptz not null default now(),
        constraint search_pending_pkey primary key (owner_id, kind, resource_id),
        constraint search_pending_owner_id_foreign foreign key (owner_id) references users (id) on delete cascade
      );`);
    this.addSql(`alter table search_chunks add column digest text null;`);
  }

  override down(): void {
    this.addSql(`alter table search_chunks drop column if exists digest;`);
    this.addSql(`drop table if exists search_pending;`);
  }
}
