import { Migration } from '@mikro-orm/migrations';

// Personal API tokens get a description: name, description, scopes, expiry (GitLab's shape).
export class Migration20261123100000_personal_tokens extends Migration {
  override up(): void {
    this.addSql(`alter table api_tokens add column description text null;`);
  }

  override down(): void {
    this.addSql(`alter table api_tokens drop column description;`);
  }
}
