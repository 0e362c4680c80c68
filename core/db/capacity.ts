// What the embedded engine serves within Folio's latency targets. PGlite is one PostgreSQL backend
// in this process: no parallel workers, no autovacuum, one connection. The benchmarks measured it
// within the targets (search p95 < 100 ms) up to a size per user (bench/notes.ts: 100k notes;
// bench/search.ts: the global search index of 10k notes + 1k files + 100 transcripts). Past that,
// a person's searches get slower than promised and the operator should move to a PostgreSQL
// server: this check tells them, in the log and in /health, naming the figures and the way out.
// A PostgreSQL server is never flagged (its limits are the server's own).
import type { Database } from './database.ts';

export interface EmbeddedLimits {
  /** Live notes of one user. */
  notesPerUser: number;
  /** Rows of one user's global search index (chunks of notes, files, transcripts). */
  searchChunksPerUser: number;
}

export interface CapacityReport {
  status: 'ok' | 'over';
  /** The largest user's figures, against the limits. */
  largest: { notes: number; search_chunks: number };
  limits: { notes_per_user: number; search_chunks_per_user: number };
  /** How many users are over either limit. */
  users_over: number;
  /** What to do, when over. */
  advice?: string;
  checked_at: string;
}

const ADVICE =
  'some users have more data than the embedded database serves within its latency targets; set DATABASE_URL to a PostgreSQL server (see README: Production)';

/** The embedded engine's capacity now; null on a PostgreSQL server. */
export async function embeddedCapacity(db: Database, limits: EmbeddedLimits): Promise<CapacityReport | null> {
  if (db.engine !== 'pglite') return null;
  const em = db.orm.em.fork();
  // note_stats keeps each user's live count; the index is counted per user (one pass over an index).
  const [row] = await em.execute<Array<{ notes: number; chunks: number; over: number }>>(
    `with n as (select owner_id, live_count::int8 as notes from note_stats),
          c as (select owner_id, count(*)::int8 as chunks from search_chunks group by owner_id),
          u as (select coalesce(n.owner_id, c.owner_id) as owner_id, coalesce(n.notes, 0) as notes, coalesce(c.chunks, 0) as chunks
                  from n full join c on c.owner_id = n.owner_id)
     select coalesce(max(notes), 0)::float8 as notes, coalesce(max(chunks), 0)::float8 as chunks,
            count(*) filter (where notes > ? or chunks > ?)::float8 as over
       from u`,
    [limits.notesPerUser, limits.searchChunksPerUser],
  );
  const over = Number(row?.over ?? 0);
  return {
    status: over > 0 ? 'over' : 'ok',
    largest: { notes: Number(row?.notes ?? 0), search_chunks: Number(row?.chunks ?? 0) },
    limits: { notes_per_user: limits.notesPerUser, search_chunks_per_user: limits.searchChunksPerUser },
    users_over: over,
    ...(over > 0 ? { advice: ADVICE } : {}),
    checked_at: new Date().toISOString(),
  };
}

/** What /health (public) shows: whether to act and why; the largest user's figures stay in the log. */
export function forHealth(report: CapacityReport): Omit<CapacityReport, 'largest'> {
  const { largest: _largest, ...shown } = report;
  return shown;
}
