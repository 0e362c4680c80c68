import { Migration } from '@mikro-orm/migrations';

// The audit log: one row per recorded event, appended and never changed (retention deletes the
// oldest). No foreign keys: a record outlives the user, token or share it names. `subject_id` is
// the account the event concerns (a user's own security events: GET /users/me/events); `id`
// orders the log and is its paging cursor.
export class Migration20261220000000_audit extends Migration {
  override up(): void {
    this.addSql(`create table audit_events (
      id bigint generated always as identity primary key,
      at timestamptz not null default clock_timestamp(),
      actor_id uuid null,
      actor_email text null,
      subject_id uuid null,
      action text not null,
      outcome text not null default 'success',
      target_type text null,
      target_id text null,
      address text null,
      user_agent text null,
      request_id text null,
      detail jsonb not null default '{}'
    );`);
    this.addSql(`create index audit_events_at_index on audit_events (at);`);
    this.addSql(`create index audit_events_actor_index on audit_events (actor_id, id);`);
    this.addSql(`create index audit_events_subject_index on audit_events (subject_id, id);`);
    this.addSql(`create index audit_events_action_index on audit_events (action, id);`);
    this.addSql(`create index audit_events_target_index on audit_events (target_id, id);`);
  }
}
