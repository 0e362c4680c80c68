// GET /metrics: Prometheus text, from prom-client, on a registry of this server's own (several
// servers in one process, as in the tests, keep their counts apart). Calls are counted where they
// run (the dispatcher for curl and MCP, the REST framework for REST routes). What needs the
// database (the job queue, storage used) is read in the background, at most once per CACHE_MS and
// only while someone scrapes; a scrape answers with the last values read, so it costs the same with
// 10 or 10,000 users and never waits for the database (but the first). Labels come only from bounded sets: surfaces,
// the registry's function names, REST route templates, error codes, job kinds, storage kinds.
import { bearerIs } from './bearer.ts';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { CallObserver } from '../contract/observe.ts';
import type { Database } from '../db/database.ts';
import type { JobQueue } from '../db/jobs.ts';
import type { EmbeddedUpkeep } from '../db/embedded-upkeep.ts';
import type { Registry as PluginRegistry } from '../kernel/registry.ts';

/** How long the database-backed gauges are reused between scrapes. */
const CACHE_MS = 5_000;
/** A scrape waits this long for them, then answers with the last values it has. */
const QUERY_WAIT_MS = 1_000;

export interface MetricsSources {
  db: Database;
  jobs: JobQueue;
  registry: PluginRegistry;
  upkeep: EmbeddedUpkeep;
  mcpSessions: () => number;
  log: Logger;
}

interface Slow {
  jobs: Awaited<ReturnType<JobQueue['depth']>>;
  storage: Array<{ kind: string; bytes: number }>;
}

/** The pg pool behind the ORM (both engines are reached through one). */
interface PoolStats {
  totalCount?: number;
  idleCount?: number;
  waitingCount?: number;
}

/** The buckets of folio_call_duration_seconds (upper bounds, seconds). */
const DURATION_BUCKETS = [0.001, 0.005, 0.025, 0.1, 0.25, 1, 5, 30];

/**
 * The calls of one (surface, function) as plain numbers, made on its first call: the hot path
 * adds to them, and a scrape turns them into prom-client's samples. prom-client's own labelled
 * children validate and hash their labels on every observation, which cost more than the no-op
 * call they measured.
 */
interface Series {
  labels: { surface: string; function: string };
  /** Observations per bucket (not cumulative); the last one is +Inf. */
  buckets: Float64Array;
  count: number;
  sum: number;
  /** By error code (codes are a bounded set). */
  errors: Map<string, Counter.Internal>;
}

/** One prom-client sample, as a metric's get() gives it to the registry. */
interface Sample {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

/**
 * A metric of the registry whose samples are computed at scrape time from the series (what
 * prom-client's Registry reads of a metric: name, help, type, get()).
 */
function seriesMetric(name: string, help: string, type: 'counter' | 'histogram', samples: () => Sample[], reset: () => void) {
  return {
    name,
    help,
    type,
    aggregator: 'sum' as const,
    get: () => Promise.resolve({ name, help, type, values: samples(), aggregator: 'sum' as const }),
    reset,
  };
}

export class Metrics implements CallObserver {
  readonly registry = new Registry();
  readonly #errors: Counter<'surface' | 'function' | 'code'>;
  /** Series by surface, then function. */
  readonly #series = new Map<string, Map<string, Series>>();
  readonly #sources: MetricsSources;
  #slow: Slow = { jobs: [], storage: [] };
  #slowAt = 0;
  #slowRunning: Promise<void> | undefined;

  constructor(sources: MetricsSources) {
    this.#sources = sources;
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'folio_' });
    const all = () => [...this.#series.values()].flatMap((m) => [...m.values()]);
    // registry.resetMetrics() empties both series metrics (they share the series) and the errors.
    const reset = () => this.#series.clear();
    this.registry.registerMetric(
      seriesMetric(
        'folio_calls_total',
        'Calls answered, by surface (curl, mcp, rest) and function (ns.fn, a REST route, or unknown).',
        'counter',
        () => all().map((x) => ({ labels: x.labels, value: x.count })),
        reset,
      ) as unknown as Counter,
    );
    this.#errors = new Counter({
      name: 'folio_call_errors_total',
      help: 'Calls that ended in an error, by surface, function and the error code the caller got.',
      labelNames: ['surface', 'function', 'code'],
      registers,
    });
    // Eight buckets, chosen for calls (a no-op answers in well under a millisecond, a slow plugin
    // call in seconds): each bucket is a line per series in every scrape.
    const name = 'folio_call_duration_seconds';
    this.registry.registerMetric(
      seriesMetric(
        name,
        'Time from the call reaching the dispatcher (or the REST route) to its answer being ready.',
        'histogram',
        () =>
          all().flatMap((x) => {
            const out: Sample[] = [];
            let acc = 0;
            for (let i = 0; i <= DURATION_BUCKETS.length; i++) {
              acc += x.buckets[i]!;
              out.push({ metricName: `${name}_bucket`, labels: { le: DURATION_BUCKETS[i] ?? '+Inf', ...x.labels }, value: acc });
            }
            out.push(
              { metricName: `${name}_sum`, labels: x.labels, value: x.sum },
              { metricName: `${name}_count`, labels: x.labels, value: x.count },
            );
            return out;
          }),
        reset,
      ) as unknown as Histogram,
    );
    const src = sources;
    new Gauge({
      name: 'folio_mcp_sessions',
      help: 'Open MCP sessions on this node.',
      registers,
      collect() {
        this.set(src.mcpSessions());
      },
    });
    let restartsSeen = 0;
    new Gauge({
      name: 'folio_plugin_hosts_running',
      help: 'Isolated plugins whose process is up now (an idle one is stopped until its next call).',
      registers,
      collect() {
        this.set(src.registry.hosts().running);
      },
    });
    new Counter({
      name: 'folio_plugin_host_restarts_total',
      help: "Restarts of isolated plugins' processes after a crash.",
      registers,
      collect() {
        const total = src.registry.hosts().restarts;
        if (total > restartsSeen) this.inc(total - restartsSeen);
        restartsSeen = total;
      },
    });
    new Gauge({
      name: 'folio_plugins_disabled',
      help: 'Plugins taken out of service for crashing again and again (until a file of theirs changes).',
      registers,
      collect() {
        this.set(src.registry.hosts().disabled);
      },
    });
    new Gauge({
      name: 'folio_db_pool_connections',
      help: 'Connections of the database pool, by state (in_use, idle).',
      labelNames: ['state'],
      registers,
      collect: async () => {
        const pool = await this.#pool();
        if (!pool) return;
        const total = pool.totalCount ?? 0;
        const idle = pool.idleCount ?? 0;
        pools.set({ state: 'in_use' }, total - idle);
        pools.set({ state: 'idle' }, idle);
      },
    });
    const pools = this.registry.getSingleMetric('folio_db_pool_connections') as Gauge<'state'>;
    new Gauge({
      name: 'folio_db_pool_waiting',
      help: 'Queries waiting for a connection of the database pool.',
      registers,
      collect: async () => {
        const pool = await this.#pool();
        if (pool) waiting.set(pool.waitingCount ?? 0);
      },
    });
    const waiting = this.registry.getSingleMetric('folio_db_pool_waiting') as Gauge;
    const slow = () => this.#readSlow();
    const jobGauge = (name: string, help: string, value: (j: Slow['jobs'][number]) => number) => {
      const g: Gauge<'kind'> = new Gauge({
        name,
        help,
        labelNames: ['kind'],
        registers,
        async collect() {
          const s = await slow();
          g.reset();
          for (const j of s.jobs) g.set({ kind: j.name }, value(j));
        },
      });
    };
    jobGauge('folio_jobs_queued', 'Jobs waiting to run (new or to retry), by kind.', (j) => j.queued);
    jobGauge('folio_jobs_active', 'Jobs running now on any node, by kind.', (j) => j.active);
    jobGauge('folio_jobs_oldest_queued_seconds', 'Age of the oldest waiting job, by kind (0 when none waits).', (j) => j.oldestSeconds);
    const storage: Gauge<'kind'> = new Gauge({
      name: 'folio_storage_used_bytes',
      help: "Bytes counted against users' quotas, all users together, by kind (notes, files, uploads).",
      labelNames: ['kind'],
      registers,
      async collect() {
        const s = await slow();
        storage.reset();
        for (const k of s.storage) storage.set({ kind: k.kind }, k.bytes);
      },
    });
    const seen = { interval: 0, wal: 0, failed: 0 };
    const upkeep: Counter<'reason'> = new Counter({
      name: 'folio_embedded_upkeep_runs_total',
      help: 'Vacuum and checkpoint passes of the embedded database, by what started them (interval, wal); failed ones as failed.',
      labelNames: ['reason'],
      registers,
      collect() {
        for (const reason of ['interval', 'wal', 'failed'] as const) {
          const now = src.upkeep.runs[reason];
          if (now > seen[reason]) upkeep.inc({ reason }, now - seen[reason]);
          seen[reason] = now;
          if (now === 0) upkeep.inc({ reason }, 0);
        }
      },
    });
  }

  /** Per call: two map lookups and a few additions (no string built, no label object). */
  called(surface: string, fn: string, code: string, seconds: number): void {
    // A duration that is not a number (never from performance.now()) would make _sum NaN for good.
    if (!(seconds >= 0)) seconds = 0;
    let bySurface = this.#series.get(surface);
    if (!bySurface) this.#series.set(surface, (bySurface = new Map<string, Series>()));
    let x = bySurface.get(fn);
    if (!x) {
      x = {
        labels: { surface, function: fn },
        buckets: new Float64Array(DURATION_BUCKETS.length + 1),
        count: 0,
        sum: 0,
        errors: new Map(),
      };
      bySurface.set(fn, x);
    }
    let i = 0;
    while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]!) i++;
    x.buckets[i]!++;
    x.count++;
    x.sum += seconds;
    if (code !== 'ok') {
      let e = x.errors.get(code);
      if (!e) x.errors.set(code, (e = this.#errors.labels(surface, fn, code)));
      e.inc();
    }
  }

  async #pool(): Promise<PoolStats | undefined> {
    try {
      return await this.#sources.db.orm.em.getConnection().getNativeClient();
    } catch {
      return undefined;
    }
  }

  /**
   * The database-backed values. A scrape never waits for the database once they were read: it
   * gets the last values and, when they are older than CACHE_MS, starts a new read for the next
   * scrape. Only the very first read is waited for (QUERY_WAIT_MS at most); prime() starts it early.
   */
  async #readSlow(): Promise<Slow> {
    const stale = Date.now() - this.#slowAt >= CACHE_MS;
    if (stale) this.prime();
    if (this.#slowAt === 0 && this.#slowRunning) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.#slowRunning, new Promise((resolve) => (timer = setTimeout(resolve, QUERY_WAIT_MS)))]);
      clearTimeout(timer);
    }
    return this.#slow;
  }

  /** Starts a read of the database-backed values, unless one runs. */
  prime(): void {
    this.#slowRunning ??= this.#query()
      .then((s) => {
        this.#slow = s;
        this.#slowAt = Date.now();
      })
      .catch((err: unknown) => this.#sources.log.warn({ err }, 'metrics: the job queue and storage figures could not be read'))
      .finally(() => {
        this.#slowRunning = undefined;
      });
  }

  async #query(): Promise<Slow> {
    const { db, jobs } = this.#sources;
    const [depth, storage] = await Promise.all([
      jobs.depth(),
      db.orm.em
        .fork()
        .execute<Array<{ kind: string; bytes: string }>>(`select kind, sum(bytes)::text as bytes from storage_usage group by kind`),
    ]);
    return { jobs: depth, storage: storage.map((r) => ({ kind: r.kind, bytes: Number(r.bytes) })) };
  }
}

/** The Koa route: 401 without credentials and 403 with the wrong ones when a token is set. */
export function metricsRoute(metrics: Metrics, token: string | null) {
  return async (ctx: Context) => {
    ctx.set('Cache-Control', 'no-store');
    if (token) {
      const authorization = ctx.get('authorization');
      if (!authorization) {
        ctx.set('WWW-Authenticate', 'Bearer realm="metrics"');
        ctx.status = 401;
        ctx.type = 'text/plain; charset=utf-8';
        ctx.body = '401 Unauthorized: /metrics needs Authorization: Bearer <METRICS_TOKEN>\n';
        return;
      }
      if (!bearerIs(authorization, token)) {
        ctx.status = 403;
        ctx.type = 'text/plain; charset=utf-8';
        ctx.body = '403 Forbidden: that is not the metrics token\n';
        return;
      }
    }
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  };
}
