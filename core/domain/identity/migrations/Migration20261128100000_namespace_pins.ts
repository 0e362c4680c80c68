import { Migration } from '@mikro-orm/migrations';

// The namespaces a user pinned: with any pinned, MCP lists only their tools (and the catalogue
// tools, which find and pin the others). A choice of the user's, unlike namespace_access (the
// operator's switches).
export class Migration20261128100000_namespace_pins extends Migration {
  override up(): void {
    this.addSql(`
      create table namespace_pins (
        user_id uuid not null,
        namespace text not null,
        created_at timestamptz not null default now(),
        constraint namespace_pins_pkey primary key (user_id, namespace),
        constraint namespace_pins_user_id_foreign foreign key (user_id) references users (id) on delete cascade
      );`);
  }

  override down(): void {
    this.addSql(`drop table if exists namespace_pins;`);
  }
}
