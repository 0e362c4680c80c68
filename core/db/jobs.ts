// The background job queue: pg-boss on Folio's own database, behind a small interface.
//
// pg-boss gets no connection of its own: it runs its SQL through the ORM's pool (on PGlite that is
// the one connection to the embedded engine; on PostgreSQL the shared pool), so it works the same
// on both engines and needs no LISTEN connection (workers poll). A domain defines its job kinds
// when its service is made (`define`), enqueues with `send` (inside its own transaction when it
// passes its EntityManager: the job exists only if the transaction commits), and the host starts
// the workers: in `npm start` by default, or in `npm run worker` processes (PostgreSQL only).
//
// Failed runs are retried with exponential backoff; a job that fails every attempt moves to one
// dead-letter queue, which admins list (`deadLetters`) and send back (`retryDeadLetter`). A job
// can be cancelled while queued or running (a running handler sees its signal abort) and reports
// its progress, which `get` returns.
import { PgBoss, fromKysely, type Db as IDatabase, type Job, type JobWithMetadata, type KyselyTransactionLike } from 'pg-boss';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { traced, tracingOn } from '../contract/observe.ts';
import type { Database } from './database.ts';

/** The config's `jobs` section. */
export interface JobsSettings {
  /** Run workers inside the server process (`npm start`); off when `npm run worker` processes do the work. */
  inProcess: boolean;
  /** Jobs of one kind run at once, per process. */
  concurrency: number;
  /** How often an idle worker looks for new jobs, and a running job for its cancellation. */
  pollSeconds: number;
  /** Attempts after the first before a job is dead-lettered. */
  retryLimit: number;
  /** The first retry's delay; each further one doubles (with jitter), up to an hour. */
  retryDelaySeconds: number;
  /** How long dead letters are kept for an admin to look at. */
  deadLetterRetentionDays: number;
}

/** What a running handler gets besides the job's data. */
export interface RunningJob {
  id: string;
  /** 0 on the first attempt, then 1, 2, ... */
  attempt: number;
  /** Aborts when the job is cancelled, times out or the worker stops: stop then. */
  signal: AbortSignal;
  /** Records how far the job is (a fraction 0..1, or any small JSON the caller understands). */
  progress(value: unknown): Promise<void>;
}

export interface JobDefinition<Data extends object> {
  /** The handler's return value (JSON) is kept as the job's output. Throwing fails the attempt. */
  handler(data: Data, job: RunningJob): Promise<unknown>;
  /** Overrides the setting's retry limit for this kind. */
  retryLimit?: number;
  /** How long one attempt may run before it counts as failed (default 15 minutes). */
  expireInSeconds?: number;
  /**
   * A running attempt proves it is alive this often (at least 10 s; the worker does it on its own):
   * one whose process died is retried after this (and the supervisor's next pass, within a minute)
   * instead of only at expireInSeconds. Set for long jobs; it cannot be changed on an existing queue.
   */
  heartbeatSeconds?: number;
  /** Jobs of this kind at once per process, in place of the setting (a CPU-bound kind: 1). */
  concurrency?: number;
  /**
   * How often an idle worker of this kind looks for jobs, in place of the setting: a kind whose
   * effect a user waits for (search indexing) looks more often (at least every 0.5 s).
   */
  pollSeconds?: number;
}

export type JobState = 'created' | 'retry' | 'active' | 'completed' | 'cancelled' | 'failed';

export interface JobInfo {
  id: string;
  name: string;
  state: JobState;
  attempt: number;
  data: unknown;
  /** The last progress reported, null before any. */
  progress: unknown;
  /** What the handler returned (completed), or the error of the last attempt (retry, failed). */
  output: unknown;
  createdAt: Date;
  completedAt: Date | null;
}

export interface DeadLetter {
  /** The dead letter's own id (for retryDeadLetter). */
  id: string;
  /** The queue the job failed on, and its id there. */
  name: string;
  jobId: string;
  data: unknown;
  /** The last attempt's error. */
  error: unknown;
  attempts: number;
  failedAt: Date;
  /** When the failed job was created (its first attempt's queueing), when known. */
  createdAt?: Date;
}

/** Where a newest-first page of jobs goes on from: a creation time (microseconds since the epoch) and an id. */
export interface PageKey {
  atUs: string;
  id: string;
}

/** A timestamp column as whole microseconds since the epoch, exact (a JavaScript Date keeps milliseconds). */
export const MICROS = (column: string) => `(extract(epoch from ${column}) * 1000000)::bigint`;

export interface SendOptions {
  /** Enqueue in this EntityManager's transaction: the job exists only if it commits. */
  em?: EntityManager;
  /** Do not start before this many seconds from now. */
  delaySeconds?: number;
  /** At most one queued job with this key per kind (a second send returns null). */
  singletonKey?: string;
}

const SCHEMA = 'pgboss';
/** Where jobs that failed every attempt go. */
export const DEAD_LETTERS = 'dead-letters';
const NAME_RE = /^[a-z][a-z0-9-]{0,62}$/;

export class JobQueue {
  readonly #db: Database;
  readonly #log: Logger;
  readonly #settings: JobsSettings;
  readonly #defs = new Map<string, JobDefinition<any>>();
  #boss: PgBoss | undefined;
  #starting: Promise<void> | undefined;
  #stopping: Promise<void> | undefined;
  /** Progress writes and cancellation checks in flight, awaited on stop. */
  readonly #pending = new Set<Promise<unknown>>();

  constructor(opts: { db: Database; log: Logger; settings: JobsSettings }) {
    this.#db = opts.db;
    this.#log = opts.log;
    this.#settings = opts.settings;
  }

  /** Declares a kind of job and its handler. Before `start`. */
  define<Data extends object>(name: string, def: JobDefinition<Data>): void {
    if (!NAME_RE.test(name) || name === DEAD_LETTERS) throw new Error(`job name '${name}' is not allowed`);
    if (this.#defs.has(name)) throw new Error(`job '${name}' is defined twice`);
    if (this.#starting) throw new Error(`job '${name}' defined after the queue started`);
    this.#defs.set(name, def);
  }

  get names(): string[] {
    return [...this.#defs.keys()];
  }

  /**
   * Installs or upgrades pg-boss's tables (schema `pgboss`), creates a queue per defined kind, and
   * with `work` runs their handlers in this process.
   */
  start(opts: { work: boolean }): Promise<void> {
    this.#starting ??= this.#start(opts.work);
    return this.#starting;
  }

  async #start(work: boolean): Promise<void> {
    const pool = await this.#db.orm.em.getConnection().getNativeClient();
    const executor: IDatabase = {
      // Without values pg uses the simple protocol, which takes pg-boss's multi-statement blocks.
      executeSql: async (text: string, values?: unknown[]) => {
        const res = (await (values?.length ? pool.query(text, values) : pool.query(text))) as unknown;
        // A multi-statement text answers one result per statement; pg-boss unwraps those itself.
        return res as { rows: any[] };
      },
    };
    const s = this.#settings;
    const boss = new PgBoss({
      db: executor,
      backend: this.#db.engine === 'pglite' ? 'pglite' : 'postgres',
      schema: SCHEMA,
      // The maintenance timers run where workers run (a sending-only process, or one with no kinds
      // of job, needs none: on PGlite they would only compete for its one connection).
      supervise: work && this.#defs.size > 0,
      schedule: false,
      registerInstance: false,
      openTelemetry: { enabled: false },
    });
    boss.on('error', (err: unknown) => this.#log.error({ err }, 'job queue error'));
    boss.on('warning', (warning: unknown) => this.#log.warn({ warning }, 'job queue warning'));
    this.#boss = boss;
    await boss.start();
    const existing = new Map((await boss.getQueues()).map((q) => [q.name, q]));
    // The dead-letter queue is made by the migration; its retention follows the setting.
    const retention = { retentionSeconds: s.deadLetterRetentionDays * 86_400, deleteAfterSeconds: s.deadLetterRetentionDays * 86_400 };
    const dead = existing.get(DEAD_LETTERS);
    if (!dead) await boss.createQueue(DEAD_LETTERS, retention);
    else if (dead.retentionSeconds !== retention.retentionSeconds) await boss.updateQueue(DEAD_LETTERS, retention);
    for (const [name, def] of this.#defs) {
      const options = {
        retryLimit: def.retryLimit ?? s.retryLimit,
        retryDelay: s.retryDelaySeconds,
        retryBackoff: true,
        retryDelayMax: 3600,
        expireInSeconds: def.expireInSeconds ?? 900,
        deadLetter: DEAD_LETTERS,
      };
      const queue = existing.get(name);
      // Creating a queue costs a few DDL-like statements: only when it is new or its options changed.
      if (!queue) await boss.createQueue(name, { ...options, ...(def.heartbeatSeconds ? { heartbeatSeconds: def.heartbeatSeconds } : {}) });
      else if (Object.entries(options).some(([k, v]) => queue[k as keyof typeof queue] !== v)) await boss.updateQueue(name, options);
    }
    if (!work) return;
    for (const [name, def] of this.#defs) {
      await boss.work<object>(
        name,
        {
          localConcurrency: def.concurrency ?? s.concurrency,
          pollingIntervalSeconds: Math.max(0.5, Math.min(def.pollSeconds ?? s.pollSeconds, s.pollSeconds)),
          batchSize: 1,
        },
        async ([job]) => this.#run(name, def, job!),
      );
    }
    this.#log.info({ kinds: this.names, concurrency: s.concurrency }, 'job workers started');
  }

  async #run(name: string, def: JobDefinition<any>, job: Job<object>): Promise<unknown> {
    const boss = this.#boss!;
    const cancelled = new AbortController();
    // pg-boss aborts job.signal when the attempt times out or the worker stops; a cancel() from
    // anywhere is seen by looking at the job's state now and then.
    const watch = setInterval(() => {
      void this.#track(
        boss.getJobById(name, job.id).then(
          (j) => {
            if (j?.state === 'cancelled') cancelled.abort(new Error(`job ${job.id} was cancelled`));
          },
          () => {},
        ),
      );
    }, this.#settings.pollSeconds * 1000);
    watch.unref();
    const running: RunningJob = {
      id: job.id,
      attempt: job.retryCount,
      signal: AbortSignal.any([job.signal, cancelled.signal]),
      progress: (value) =>
        this.#track(
          pool(this.#db).then((p) =>
            p.query(
              `update ${SCHEMA}.job set output = jsonb_build_object('progress', $3::jsonb) where name = $1 and id = $2 and state = 'active'`,
              [name, job.id, JSON.stringify(value ?? null)],
            ),
          ),
        ).then(() => {}),
    };
    try {
      const result = tracingOn
        ? await traced('folio.job', { 'folio.job': name, 'folio.attempt': job.retryCount }, () => def.handler(job.data, running))
        : await def.handler(job.data, running);
      return result ?? null;
    } catch (err) {
      this.#log.warn({ err, job: { name, id: job.id, attempt: job.retryCount } }, 'job attempt failed');
      throw err;
    } finally {
      clearInterval(watch);
    }
  }

  #track<T>(p: Promise<T>): Promise<T> {
    this.#pending.add(p);
    void p.finally(() => this.#pending.delete(p)).catch(() => {});
    return p;
  }

  #started(): PgBoss {
    if (!this.#boss || this.#stopping) throw new Error('the job queue is not running');
    return this.#boss;
  }

  /** Enqueues a job; returns its id (null when a job with the same singletonKey is already queued). */
  async send(name: string, data: object, opts: SendOptions = {}): Promise<string | null> {
    if (!this.#defs.has(name)) throw new Error(`no job '${name}' is defined`);
    await this.#starting;
    // The caller's transaction, as the ORM holds it (a Kysely transaction): pg-boss's insert runs on
    // that connection, with its own $n parameters (the ORM's execute() would format `?` instead).
    const tx = opts.em?.getTransactionContext<KyselyTransactionLike>();
    const db: IDatabase | undefined = tx ? fromKysely(tx) : undefined;
    return this.#started().send(name, data, {
      ...(db ? { db } : {}),
      ...(opts.delaySeconds ? { startAfter: opts.delaySeconds } : {}),
      ...(opts.singletonKey ? { singletonKey: opts.singletonKey } : {}),
    });
  }

  async get(name: string, id: string): Promise<JobInfo | null> {
    await this.#starting;
    const job = await this.#started().getJobById(name, id);
    return job ? info(job as JobWithMetadata<object>) : null;
  }

  /** Cancels a queued or running job; false when it had already finished (or is unknown). */
  async cancel(name: string, id: string): Promise<boolean> {
    await this.#starting;
    const res = (await this.#started().cancel(name, id)) as { affected?: number };
    return (res.affected ?? 0) > 0;
  }

  /**
   * Per kind: jobs waiting (created or to retry, due or not), running, and the age in seconds of
   * the oldest waiting one. One aggregate over pg-boss's job table (for /metrics).
   */
  async depth(): Promise<Array<{ name: string; queued: number; active: number; oldestSeconds: number }>> {
    const p = await pool(this.#db);
    const res = await p.query<{ name: string; queued: string; active: string; oldest: number | null }>(
      `select name,
              count(*) filter (where state in ('created', 'retry'))::text as queued,
              count(*) filter (where state = 'active')::text as active,
              extract(epoch from now() - min(created_on) filter (where state in ('created', 'retry')))::float8 as oldest
         from ${SCHEMA}.job
        where state in ('created', 'retry', 'active')
        group by name`,
    );
    return res.rows.map((r) => ({ name: r.name, queued: Number(r.queued), active: Number(r.active), oldestSeconds: r.oldest ?? 0 }));
  }

  /**
   * Jobs waiting (created or to retry) or running, newest first, of every kind but `except` (a
   * kind whose own table tells more, transcriptions) and the dead letters; `before` pages on from a
   * (creation time in microseconds since the epoch, id) key. For operators.
   */
  async pending(opts: {
    state?: 'queued' | 'running' | undefined;
    limit: number;
    except?: string[];
    id?: string;
    before?: PageKey | undefined;
  }): Promise<Array<JobInfo & { key: PageKey }>> {
    const p = await pool(this.#db);
    const states = opts.state === 'queued' ? ['created', 'retry'] : opts.state === 'running' ? ['active'] : ['created', 'retry', 'active'];
    const res = await p.query<{
      id: string;
      name: string;
      state: JobState;
      retry_count: number;
      data: unknown;
      output: unknown;
      created_on: string;
      at_us: string;
    }>(
      `select id, name, state, retry_count, data, output, created_on::text as created_on, ${MICROS('created_on')} as at_us
         from ${SCHEMA}.job
        where state::text = any($1::text[]) and name <> all($2::text[]) and ($4::uuid is null or id = $4::uuid)
          and ($5::bigint is null or (${MICROS('created_on')}, id) < ($5::bigint, $6::uuid))
        order by created_on desc, id desc
        limit $3`,
      [states, [DEAD_LETTERS, ...(opts.except ?? [])], opts.limit, opts.id ?? null, opts.before?.atUs ?? null, opts.before?.id ?? null],
    );
    return res.rows.map((r) => ({
      id: r.id,
      name: r.name,
      state: r.state,
      attempt: r.retry_count,
      data: r.data,
      progress: null,
      // A job to retry carries the error of its last attempt.
      output: r.state === 'retry' ? unwrap(r.output) : null,
      createdAt: new Date(r.created_on),
      completedAt: null,
      key: { atUs: r.at_us, id: r.id },
    }));
  }

  /**
   * Dead letters, newest first by when the failed job was created (`before` pages on, as for
   * `pending`), each with the failed job's id, data and creation time. For operators.
   */
  async deadLetterPage(opts: { limit: number; before?: PageKey | undefined }): Promise<Array<DeadLetter & { key: PageKey }>> {
    await this.#starting;
    const p = await pool(this.#db);
    const at = 'coalesce(source_created_on, created_on)';
    const res = await p.query<{
      id: string;
      source_name: string | null;
      source_id: string | null;
      data: unknown;
      source_output: unknown;
      source_retry_count: number | null;
      created_on: string;
      source_created_on: string;
      at_us: string;
    }>(
      `select id, source_name, source_id, data, source_output, source_retry_count, created_on::text as created_on,
              ${at}::text as source_created_on, ${MICROS(at)} as at_us
         from ${SCHEMA}.job
        where name = $1 and ($3::bigint is null or (${MICROS(at)}, id) < ($3::bigint, $4::uuid))
        order by ${at} desc, id desc
        limit $2`,
      [DEAD_LETTERS, opts.limit, opts.before?.atUs ?? null, opts.before?.id ?? null],
    );
    return res.rows.map((r) => ({
      id: r.id,
      name: r.source_name ?? '',
      jobId: r.source_id ?? '',
      data: r.data,
      error: unwrap(r.source_output),
      attempts: (r.source_retry_count ?? 0) + 1,
      failedAt: new Date(r.created_on),
      createdAt: new Date(r.source_created_on),
      key: { atUs: r.at_us, id: r.id },
    }));
  }

  /** Jobs that failed every attempt, oldest first. */
  async deadLetters(limit = 100): Promise<DeadLetter[]> {
    await this.#starting;
    const jobs = await this.#started().findJobs<object>(DEAD_LETTERS, { limit });
    return jobs.map((j) => ({
      id: j.id,
      name: j.sourceName ?? '',
      jobId: j.sourceId ?? '',
      data: j.data,
      error: unwrap(j.sourceOutput),
      attempts: (j.sourceRetryCount ?? 0) + 1,
      failedAt: new Date(j.createdOn),
    }));
  }

  /** Sends a dead letter back to its queue as a fresh job; false when there is no such dead letter. */
  async retryDeadLetter(id: string): Promise<boolean> {
    await this.#starting;
    return (await this.#started().redrive(DEAD_LETTERS, { ids: [id] })) > 0;
  }

  /**
   * Stops fetching, gives running handlers up to `graceMs` to finish (then aborts their signals),
   * and ends pg-boss's timers. The database stays open: the host closes it after. Idempotent.
   */
  stop(graceMs = 5000): Promise<void> {
    this.#stopping ??= (async () => {
      await this.#starting?.catch(() => {});
      const boss = this.#boss;
      if (!boss) return;
      // Bounded: a worker whose fetch was lost while the database hung would hold the stop (and the
      // host's close) forever; its job is retried by the next worker, like any interrupted one.
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), graceMs + 2000).unref()));
      const outcome = await Promise.race([
        boss.stop({ graceful: true, timeout: graceMs, close: true }).then(() => Promise.allSettled([...this.#pending])),
        bound,
      ]);
      clearTimeout(timer);
      if (outcome === 'timeout') this.#log.warn({ graceMs }, 'the job queue did not stop in time; going on with the close');
    })();
    return this.#stopping;
  }
}

function pool(db: Database) {
  return db.orm.em.getConnection().getNativeClient();
}

/** pg-boss keeps a thrown error as { value: ... } or as the serialized error; either way, the useful part. */
function unwrap(output: unknown): unknown {
  if (output && typeof output === 'object' && 'value' in output && Object.keys(output).length === 1) return output.value;
  return output ?? null;
}

function info(job: JobWithMetadata<object>): JobInfo {
  const output = job.output as Record<string, unknown> | null;
  const progress = job.state === 'active' && output && 'progress' in output ? output.progress : null;
  return {
    id: job.id,
    name: job.name,
    state: job.state,
    attempt: job.retryCount,
    data: job.data,
    progress,
    output: job.state === 'active' ? null : unwrap(output),
    // The ORM's pool leaves timestamps as text.
    createdAt: new Date(job.createdOn),
    completedAt: job.completedOn ? new Date(job.completedOn) : null,
  };
}
