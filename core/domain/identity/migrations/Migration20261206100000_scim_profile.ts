import { Migration } from '@mikro-orm/migrations';

// What an identity provider sends about a user over SCIM that Folio's account has no column for
// (externalId, name parts, nickName, title, the enterprise extension, ...): kept as sent, so it is
// echoed back and can be filtered on. Null for users no provider has provisioned.
export class Migration20261206100000_scim_profile extends Migration {
  override up(): void {
    this.addSql(`alter table users add column scim jsonb null;`);
  }

  override down(): void {
    this.addSql(`alter table users drop column if exists scim;`);
  }
}
