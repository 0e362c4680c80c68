import { Migration } from '@mikro-orm/migrations';

// When each OAuth record was first stored, to the microsecond: a user's grants are listed newest
// first, and the protocol's own `iat` (whole seconds) ties for two grants made within one second.
export class Migration20261124100000_oauth_created_at extends Migration {
  override up(): void {
    this.addSql(`alter table oauth_records add column created_at timestamptz not null default clock_timestamp();`);
  }
}
