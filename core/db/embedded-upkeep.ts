// What autovacuum and the checkpointer do on a PostgreSQL server, for the embedded engine. PGlite is
// one single-user backend: no autovacuum, no checkpointer, and a standalone backend never starts a
// checkpoint because of the WAL it writes. Left alone, every update's old row versions stay on disk
// and every WAL segment stays in pg_wal: one-character appends to a 0.9 MB note grew the data
// directory by ~17 MB each, for good (bench/embedded-disk.ts).
//
// A pass: VACUUM (plain, never FULL) of each table whose dead rows, or whose TOAST table's dead rows,
// pass autovacuum's threshold (50 + 20% of its live rows), one table at a time; then CHECKPOINT,
// after which PostgreSQL removes the WAL segments it no longer needs, keeping at most max_wal_size
// of them (set at start in core/db/pglite-worker.ts). Passes run every `upkeepMinutes`, and sooner
// when the WAL written since the last one passes `upkeepWalMb` (a cheap probe every few seconds),
// which bounds what piles up between two passes by the write volume rather than by the clock.
//
// PGlite runs one statement at a time, so a VACUUM holds every request until it ends. Each
// statement goes through the ORM's one-connection pool as its own query: requests queued behind
// it are served before the pass's next statement.
import type { Logger } from 'pino';
import type { Database } from './database.ts';

export interface UpkeepSettings {
  /** A pass at least this often. */
  upkeepMinutes: number;
  /** A pass as soon as this much WAL has been written since the last one. */
  upkeepWalMb: number;
}

/** What one pass did; the last one is shown in /health. */
export interface UpkeepPass {
  at: string;
  /** Why it ran: the clock, or the WAL written since the pass before. */
  reason: 'interval' | 'wal';
  ms: number;
  /**
   * The tables vacuumed, with the dead rows (their own and their TOAST table's) they had and the
   * time their VACUUM took (with its wait for requests queued before it).
   */
  vacuumed: Array<{ table: string; dead_rows: number; ms: number }>;
  checkpoint_ms: number;
  /** Bytes of the vacuumed tables (with TOAST and indexes) before and after: what VACUUM gave back to the file system. */
  reclaimed_bytes: number;
  /** The database's files, before and after (pg_database_size). */
  database_bytes: { before: number; after: number };
  /** The WAL directory, before and after the checkpoint. */
  wal_bytes: { before: number; after: number };
}

/** Same shape as autovacuum's: 50 rows plus 20% of the table. */
export function needsVacuum(dead: number, live: number): boolean {
  return dead > 50 + 0.2 * live;
}

/** How often the WAL written is looked at, between passes (a single cheap query). */
const PROBE_MS = 2_000;

interface TableStats {
  table: string;
  dead: number;
  live: number;
  toast_dead: number;
  toast_live: number;
  bytes: number;
}

export class EmbeddedUpkeep {
  readonly #db: Database;
  readonly #log: Logger;
  readonly #settings: UpkeepSettings;
  #last: UpkeepPass | null = null;
  #running: Promise<UpkeepPass | null> | null = null;
  #timers: NodeJS.Timeout[] = [];
  #walAtLastPass: bigint | null = null;
  #stopped = false;
  readonly #runs = { interval: 0, wal: 0, failed: 0 };

  constructor(db: Database, settings: UpkeepSettings, log: Logger) {
    this.#db = db;
    this.#settings = settings;
    this.#log = log;
  }

  /** Passes since start: done, by what started them, and failed (for /metrics). */
  get runs(): Readonly<{ interval: number; wal: number; failed: number }> {
    return this.#runs;
  }

  /** The last pass, or null before the first. */
  get last(): UpkeepPass | null {
    return this.#last;
  }

  /** Starts the timers (the embedded engine only; on a PostgreSQL server the server does this). */
  start(): void {
    if (this.#db.engine !== 'pglite') return;
    const every = setInterval(() => void this.run('interval'), this.#settings.upkeepMinutes * 60_000);
    const probe = setInterval(() => void this.#probe(), Math.min(PROBE_MS, this.#settings.upkeepMinutes * 60_000));
    every.unref();
    probe.unref();
    this.#timers.push(every, probe);
  }

  /** Stops the timers and waits for a pass in flight (a little: one stuck on a hung database must not hold a close up). */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const t of this.#timers) clearInterval(t);
    if (this.#running) await Promise.race([this.#running, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
  }

  /** One pass now (or the one in flight); null when stopped or on a PostgreSQL server. Never throws. */
  run(reason: UpkeepPass['reason'] = 'interval'): Promise<UpkeepPass | null> {
    if (this.#stopped || this.#db.engine !== 'pglite') return Promise.resolve(null);
    this.#running ??= this.#pass(reason)
      .then((pass) => {
        this.#runs[reason]++;
        return pass;
      })
      .catch((err: unknown) => {
        this.#runs.failed++;
        this.#log.error({ err }, 'embedded database upkeep failed');
        return null;
      })
      .finally(() => {
        this.#running = null;
      });
    return this.#running;
  }

  async #probe(): Promise<void> {
    if (this.#running || this.#stopped) return;
    try {
      const lsn = await this.#walPosition();
      if (this.#walAtLastPass === null) this.#walAtLastPass = lsn;
      else if (lsn - this.#walAtLastPass > BigInt(this.#settings.upkeepWalMb) * 1024n * 1024n) await this.run('wal');
    } catch {
      // The database is closing or busy past the pool's timeout: the next probe tries again.
    }
  }

  async #walPosition(): Promise<bigint> {
    const [row] = await this.#db.orm.em
      .fork()
      .execute<Array<{ lsn: string }>>(`select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text as lsn`);
    return BigInt(row?.lsn ?? '0');
  }

  async #pass(reason: UpkeepPass['reason']): Promise<UpkeepPass> {
    const em = this.#db.orm.em.fork();
    const started = performance.now();
    const timed = async (work: () => Promise<unknown>): Promise<number> => {
      const t = performance.now();
      await work();
      return Math.round(performance.now() - t);
    };
    const sizes = async () => {
      const [row] = await em.execute<Array<{ db: string; wal: string }>>(
        `select pg_database_size(current_database())::text as db, (select coalesce(sum(size), 0) from pg_ls_waldir())::text as wal`,
      );
      return { db: Number(row?.db ?? 0), wal: Number(row?.wal ?? 0) };
    };
    const before = await sizes();
    // Every table but TOAST tables (vacuumed with theirs), the catalogue's included, as autovacuum does.
    const tables = await em.execute<TableStats[]>(
      `select format('%I.%I', s.schemaname, s.relname) as "table",
                s.n_dead_tup::float8 as dead, s.n_live_tup::float8 as live,
                coalesce(t.n_dead_tup, 0)::float8 as toast_dead, coalesce(t.n_live_tup, 0)::float8 as toast_live,
                pg_total_relation_size(c.oid)::float8 as bytes
           from pg_stat_all_tables s
           join pg_class c on c.oid = s.relid
           left join pg_stat_all_tables t on t.relid = c.reltoastrelid
          where c.relkind in ('r', 'm') and s.schemaname not in ('pg_toast', 'information_schema')
          order by s.n_dead_tup + coalesce(t.n_dead_tup, 0) desc`,
    );
    const due = tables.filter((t) => needsVacuum(t.dead, t.live) || needsVacuum(t.toast_dead, t.toast_live));
    const vacuumed: UpkeepPass['vacuumed'] = [];
    let reclaimed = 0;
    for (const t of due) {
      if (this.#stopped) break;
      // Its own statement, so what queued behind the one before runs first. Only the part past the
      // threshold: a large note's edits leave dead rows mostly in the TOAST table, whose VACUUM does
      // not walk the notes table's indexes (the whole-body GIN among them).
      const main = needsVacuum(t.dead, t.live);
      const toast = needsVacuum(t.toast_dead, t.toast_live);
      const options = main && toast ? '' : main ? '(process_toast false) ' : '(process_main false) ';
      const ms = await timed(() => em.execute(`vacuum ${options}${t.table}`));
      const [after] = await em.execute<Array<{ bytes: number }>>(`select pg_total_relation_size(?::regclass)::float8 as bytes`, [t.table]);
      reclaimed += Math.max(0, t.bytes - Number(after?.bytes ?? t.bytes));
      vacuumed.push({ table: t.table, dead_rows: t.dead + t.toast_dead, ms });
    }
    // The checkpoint lets PostgreSQL drop (or recycle, within max_wal_size) the WAL written before it.
    const checkpointMs = await timed(() => em.execute('checkpoint'));
    const after = await sizes();
    this.#walAtLastPass = await this.#walPosition();
    const pass: UpkeepPass = {
      at: new Date().toISOString(),
      reason,
      ms: Math.round(performance.now() - started),
      vacuumed,
      checkpoint_ms: checkpointMs,
      reclaimed_bytes: reclaimed,
      database_bytes: { before: before.db, after: after.db },
      wal_bytes: { before: before.wal, after: after.wal },
    };
    this.#last = pass;
    this.#log.info(
      {
        reason,
        tables: vacuumed.map((v) => `${v.table} (${v.ms} ms)`),
        deadRows: vacuumed.reduce((n, v) => n + v.dead_rows, 0),
        reclaimedBytes: reclaimed,
        databaseBytes: pass.database_bytes,
        walBytes: pass.wal_bytes,
        ms: pass.ms,
        checkpointMs,
      },
      'embedded database upkeep: vacuum and checkpoint',
    );
    return pass;
  }
}
