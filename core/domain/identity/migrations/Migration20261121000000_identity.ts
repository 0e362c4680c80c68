import { Migration } from '@mikro-orm/migrations';

// First migration: pg_trgm (for later search migrations, on both PostgreSQL and PGlite) and the
// identity tables. Hand-written SQL; core/domain/identity/entities.ts mirrors these columns.
export class Migration20261121000000_identity extends Migration {
  override up(): void {
    this.addSql(`create extension if not exists pg_trgm;`);

    this.addSql(`
      create table users (
        id uuid not null,
        email text not null,
        name text null,
        roles text[] not null default '{}',
        disabled boolean not null default false,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        constraint users_pkey primary key (id),
        constraint users_email_unique unique (email),
        constraint users_email_check check (email = lower(email))
      );`);

    this.addSql(`
      create table api_tokens (
        id uuid not null,
        user_id uuid not null,
        kind text not null,
        name text null,
        token_hash text not null,
        scopes text[] not null default '{}',
        expires_at timestamptz null,
        last_used_at timestamptz null,
        revoked_at timestamptz null,
        parent_id uuid null,
        created_at timestamptz not null default now(),
        constraint api_tokens_pkey primary key (id),
        constraint api_tokens_token_hash_unique unique (token_hash),
        constraint api_tokens_kind_check check (kind in ('api', 'minted')),
        constraint api_tokens_minted_parent_check check ((kind = 'minted') = (parent_id is not null)),
        constraint api_tokens_user_id_foreign foreign key (user_id) references users (id) on delete cascade,
        constraint api_tokens_parent_id_foreign foreign key (parent_id) references api_tokens (id) on delete cascade
      );`);
    this.addSql(`create index api_tokens_user_id_index on api_tokens (user_id);`);
    this.addSql(`create index api_tokens_parent_id_index on api_tokens (parent_id);`);

    this.addSql(`
      create table namespace_access (
        user_id uuid not null,
        namespace text not null,
        access text not null,
        updated_at timestamptz not null default now(),
        constraint namespace_access_pkey primary key (user_id, namespace),
        constraint namespace_access_access_check check (access in ('enabled', 'disabled')),
        constraint namespace_access_user_id_foreign foreign key (user_id) references users (id) on delete cascade
      );`);
  }

  override down(): void {
    this.addSql(`drop table if exists namespace_access;`);
    this.addSql(`drop table if exists api_tokens;`);
    this.addSql(`drop table if exists users;`);
  }
}
