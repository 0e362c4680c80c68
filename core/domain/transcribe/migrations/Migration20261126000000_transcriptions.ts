import { Migration } from '@mikro-orm/migrations';

// Transcription jobs: one row per job, owned by a user, over one version of one of their files.
// The queue (pg-boss) runs it; this row is what the user sees: status, progress, the result, the
// note it wrote. A re-run writes a new version of the same note (note_id is kept).
export class Migration20261126000000_transcriptions extends Migration {
  override up(): void {
    this.addSql(`create table transcriptions (
      id uuid primary key,
      owner_id uuid not null,
      file_id uuid not null,
      file_version integer not null,
      status text not null default 'queued',
      progress integer not null default 0,
      engine text not null,
      model text null,
      language text null,
      tags text[] not null default '{}',
      to_note boolean not null default true,
      note_id uuid null,
      error text null,
      duration double precision null,
      result jsonb null,
      job_id text null,
      attempt integer not null default 0,
      created_at timestamptz not null default now(),
      started_at timestamptz null,
      finished_at timestamptz null,
      constraint transcriptions_owner_id_foreign foreign key (owner_id) references users (id) on delete cascade
    );`);
    this.addSql(`create index transcriptions_owner_created_index on transcriptions (owner_id, created_at desc, id desc);`);
  }
}
