import { Migration } from '@mikro-orm/migrations';

// The OAuth authorization server's records (clients, grants, sessions, codes, access and refresh
// tokens, interactions), one table keyed by model and the sha-256 of the id: a stolen copy of the
// table holds no usable token. Also its signing and cookie keys (model FolioKeys).
export class Migration20261123110000_oauth extends Migration {
  override up(): void {
    this.addSql(`
      create table oauth_records (
        model text not null,
        id text not null,
        payload jsonb not null,
        grant_id text null,
        uid text null,
        user_code text null,
        expires_at timestamptz null,
        consumed_at timestamptz null,
        constraint oauth_records_pkey primary key (model, id)
      );`);
    this.addSql(`create index oauth_records_grant_id_index on oauth_records (grant_id);`);
    this.addSql(`create index oauth_records_uid_index on oauth_records (uid);`);
  }

  override down(): void {
    this.addSql(`drop table if exists oauth_records;`);
  }
}
