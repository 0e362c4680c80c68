import { Migration } from '@mikro-orm/migrations';

// Passwords for interactive sign-in (argon2id; the hash only), one-time invitation links an admin
// makes for a user to set theirs (stored as the sha-256 of the link's secret, single use), and the
// sign-in throttle's counts.
export class Migration20261125100000_passwords extends Migration {
  override up(): void {
    this.addSql(`alter table users add column password_hash text null, add column password_set_at timestamptz null;`);
    this.addSql(`
      create table user_invitations (
        id uuid not null,
        user_id uuid not null,
        token_hash text not null,
        created_by uuid null,
        expires_at timestamptz not null,
        used_at timestamptz null,
        created_at timestamptz not null default now(),
        constraint user_invitations_pkey primary key (id),
        constraint user_invitations_token_hash_unique unique (token_hash),
        constraint user_invitations_user_id_foreign foreign key (user_id) references users (id) on delete cascade,
        constraint user_invitations_created_by_foreign foreign key (created_by) references users (id) on delete set null
      );`);
    this.addSql(`create index user_invitations_user_id_index on user_invitations (user_id);`);
    // Failed sign-ins per key (an account or a client, as sha-256) in the current window, shared
    // by every node.
    this.addSql(`
      create table sign_in_failures (
        key text not null,
        failures int not null,
        window_ends timestamptz not null,
        constraint sign_in_failures_pkey primary key (key)
      );`);
  }

  override down(): void {
    this.addSql(`drop table if exists sign_in_failures;`);
    this.addSql(`drop table if exists user_invitations;`);
    this.addSql(`alter table users drop column if exists password_hash, drop column if exists password_set_at;`);
  }
}
