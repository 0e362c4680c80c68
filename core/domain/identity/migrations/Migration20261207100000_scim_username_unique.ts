import { Migration } from '@mikro-orm/migrations';

// A userName an identity provider gave that is not an email address (kept in the SCIM profile) is
// unique without case, as SCIM's userName is (RFC 7643 §4.1.1: uniqueness server, caseExact
// false): providers match users by `userName eq`, so two holders would break their matching. An
// email userName is the account's email, unique already (users_email_unique).
export class Migration20261207100000_scim_username_unique extends Migration {
  override up(): void {
    this.addSql(`create unique index users_scim_username_unique on users (lower(scim->>'userName'));`);
  }

  override down(): void {
    this.addSql(`drop index if exists users_scim_username_unique;`);
  }
}
