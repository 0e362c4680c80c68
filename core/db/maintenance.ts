// Planner statistics for the embedded engine. A PostgreSQL server's autovacuum keeps them fresh;
// PGlite runs as a single backend where autovacuum never runs, so tables stay un-analyzed and the
// planner guesses: at 100k notes a list took 300 ms instead of 2 ms and every search ~550 ms
// (bench/notes.ts). Folio analyzes when the notes table's estimate has drifted from its size.
import type { Database } from './database.ts';

/** Same shape as autovacuum's analyze threshold: 50 rows plus 10% of the table. */
function drifted(estimate: number, actual: number): boolean {
  return estimate < 0 || Math.abs(actual - estimate) > 50 + 0.1 * actual;
}

/** Runs ANALYZE on the embedded engine when its statistics are missing or stale; true if it did. */
export async function refreshPlannerStats(db: Database): Promise<boolean> {
  if (db.engine !== 'pglite') return false;
  const em = db.orm.em.fork();
  const rows = await em.execute<Array<{ estimate: number; actual: number }>>(
    `select c.reltuples::float8 as estimate, (select count(*) from notes)::float8 as actual
       from pg_class c where c.relname = 'notes' and c.relkind = 'r'`,
  );
  const row = rows[0];
  if (row && !drifted(Number(row.estimate), Number(row.actual))) return false;
  await em.execute('analyze');
  return true;
}
