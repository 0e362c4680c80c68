import { Migration } from '@mikro-orm/migrations';

// Export and import jobs: one row per job, owned by a user. An export's archive and an import's
// uploaded archive live under the data dir (`archive` names the file) until the row expires.
// exchange_imported remembers what each import wrote, by a hash of the content, so importing the
// same archive again (into the same account) writes nothing new.
export class Migration20261210000000_exchange extends Migration {
  override up(): void {
    this.addSql(`create table exchange_jobs (
      id uuid primary key,
      owner_id uuid not null,
      kind text not null,
      status text not null default 'queued',
      progress integer not null default 0,
      options jsonb not null default '{}',
      archive text null,
      size bigint null,
      counts jsonb not null default '{}',
      report jsonb null,
      error text null,
      job_id text null,
      created_at timestamptz not null default now(),
      finished_at timestamptz null,
      expires_at timestamptz not null,
      constraint exchange_jobs_owner_id_foreign foreign key (owner_id) references users (id) on delete cascade
    );`);
    this.addSql(`create index exchange_jobs_owner_created_index on exchange_jobs (owner_id, created_at desc, id desc);`);
    this.addSql(`create index exchange_jobs_expires_index on exchange_jobs (expires_at);`);
    this.addSql(`create table exchange_imported (
      owner_id uuid not null,
      content_hash text not null,
      kind text not null,
      object_id uuid not null,
      created_at timestamptz not null default now(),
      primary key (owner_id, content_hash),
      constraint exchange_imported_owner_id_foreign foreign key (owner_id) references users (id) on delete cascade
    );`);
  }
}
