import { Migration } from '@mikro-orm/migrations';
import { getConstructionPlans } from 'pg-boss';

// pg-boss's own tables (schema `pgboss`), created with Folio's schema rather than on the queue's
// first start, so a new database (and every test's template) has them ready. The SQL is the one the
// installed pg-boss would run itself; later pg-boss versions migrate their tables on start.
export class Migration20261123120000_job_queue extends Migration {
  override up(): void {
    const plan = getConstructionPlans('pgboss').trim();
    // The plan is one BEGIN ... COMMIT block; the migration already runs in a transaction.
    if (!plan.startsWith('BEGIN;') || !plan.endsWith('COMMIT;')) throw new Error('unexpected pg-boss construction plan');
    this.addSql(plan.slice('BEGIN;'.length, -'COMMIT;'.length));
    // Where jobs that failed every attempt go (core/db/jobs.ts: DEAD_LETTERS); 30 days by default.
    this.addSql(
      `select pgboss.create_queue('dead-letters', '{"policy":"standard","retentionSeconds":2592000,"deleteAfterSeconds":2592000}'::jsonb);`,
    );
  }
}

export const JOB_QUEUE_MIGRATION = { name: 'Migration20261123120000_job_queue', class: Migration20261123120000_job_queue };
