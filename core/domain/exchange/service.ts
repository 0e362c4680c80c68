// Export and import jobs. An export writes the caller's notes and files as a zip under the data
// dir (export.ts); an import reads a zip the caller uploaded (streamed to the data dir with a cap)
// and writes what it holds through the notes and files services (import.ts). Both run on the job
// queue; the row is what the caller sees (status, progress, counts, the import's report), and it,
// with its archive, is deleted keepHours after it finished. Every query is scoped by the acting
// user: another user's job is not found.
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, rm } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { Aborted, Conflict, NotFound, PayloadTooLarge, TooManyQueuedJobs, UnsupportedMediaType } from '../../contract/errors.ts';
import type { UploadBody } from '../../contract/rest.ts';
import type { JobQueue, RunningJob } from '../../db/jobs.ts';
import type { FilesServiceImpl } from '../files/service.ts';
import type { IdentityService } from '../identity/service.ts';
import type { Principal } from '../identity/types.ts';
import { ms, rows } from '../notes/rows.ts';
import type { NotesServiceImpl } from '../notes/service.ts';
import type { NotesService } from '../notes/types.ts';
import * as v from '../notes/validate.ts';
import { ArchiveRefused } from './archive.ts';
import { writeExport } from './export.ts';
import { runImport } from './import.ts';
import type { ExchangeJob, ExchangeKind, ExchangeSettings, ExchangeStatus, ReportEntry } from './types.ts';
import { recordAudit } from '../audit/record.ts';

export const EXCHANGE_JOB = 'exchange';
/** Attempts after the first: the last attempt is number RETRY_LIMIT (counted from 0). */
export const RETRY_LIMIT = 1;
export const JOB_404 = 'no such export or import job. It may not exist, have expired, or belong to another account.';

interface Row {
  id: string;
  owner_id: string;
  kind: ExchangeKind;
  status: ExchangeStatus;
  progress: number;
  options: ExchangeJob['options'];
  archive: string | null;
  size: string | null;
  counts: ExchangeJob['counts'];
  error: string | null;
  job_id: string | null;
  created_ms: number;
  finished_ms: number | null;
  expires_ms: number;
}

const COLUMNS = `id, owner_id, kind, status, progress, options, archive, size, counts, error, job_id,
  ${ms('created_at', 'created_ms')}, ${ms('finished_at', 'finished_ms')}, ${ms('expires_at', 'expires_ms')}`;

const iso = (n: number | null) => (n === null ? null : new Date(n).toISOString());

function toJob(r: Row, report?: ReportEntry[] | null): ExchangeJob {
  return {
    id: r.id,
    kind: r.kind,
    status: r.status,
    progress: r.progress,
    options: r.options,
    counts: r.counts,
    size: r.size === null ? null : Number(r.size),
    error: r.error,
    ...(r.kind === 'import' ? { report: report ?? [] } : {}),
    created_at: iso(r.created_ms)!,
    finished_at: iso(r.finished_ms),
    expires_at: iso(r.expires_ms)!,
  };
}

export interface ExchangeDeps {
  db: { orm: MikroORM };
  jobs: JobQueue;
  notes: NotesService & { inner: NotesService };
  files: FilesServiceImpl;
  identity: IdentityService;
  log: Logger;
  /** Where archives are kept. */
  dir: string;
  folioVersion: string;
  notesChanged: (owner: string) => void;
}

export class ExchangeService {
  readonly #d: ExchangeDeps;
  readonly settings: ExchangeSettings;
  /** Imports whose body is still being received, per user: they count against the queue cap. */
  readonly #uploading = new Map<string, number>();

  constructor(deps: ExchangeDeps, settings: ExchangeSettings) {
    this.#d = deps;
    this.settings = settings;
  }

  #em() {
    return this.#d.db.orm.em.fork();
  }

  async createExport(p: Principal, opts: { revisions?: boolean; files?: boolean }): Promise<ExchangeJob> {
    const options = { revisions: opts.revisions === true, files: opts.files !== false };
    await this.#queueCap(p.user.id);
    return this.#enqueue(p, 'export', options, null, null);
  }

  /** Streams the upload to disk (refused past maxImportBytes), then queues its import. */
  async createImport(p: Principal, upload: UploadBody, signal: AbortSignal): Promise<ExchangeJob> {
    const type = (upload.contentType ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/zip' && type !== 'application/x-zip-compressed' && type !== 'application/octet-stream') {
      upload.stream.resume();
      throw new UnsupportedMediaType('an import takes a zip archive: send it with Content-Type: application/zip');
    }
    const max = this.settings.maxImportBytes;
    if (upload.length !== undefined && upload.length > max) {
      upload.stream.resume();
      throw new PayloadTooLarge(`the archive is ${upload.length} bytes, over this server's limit of ${max} (exchange.maxImportBytes)`);
    }
    const owner = p.user.id;
    // Counted before the body is read, so one account cannot stream many uploads at once.
    this.#uploading.set(owner, (this.#uploading.get(owner) ?? 0) + 1);
    let counted = true;
    const uncount = () => {
      if (!counted) return;
      counted = false;
      const n = (this.#uploading.get(owner) ?? 1) - 1;
      if (n > 0) this.#uploading.set(owner, n);
      else this.#uploading.delete(owner);
    };
    try {
      await this.#queueCap(owner, undefined, 1);
      await mkdir(this.#d.dir, { recursive: true });
    } catch (err) {
      uncount();
      upload.stream.resume();
      throw err;
    }
    const id = randomUUID();
    const file = path.join(this.#d.dir, `${id}.import.zip`);
    let size = 0;
    const cap = new Transform({
      transform(chunk: Buffer, _e, done) {
        size += chunk.length;
        if (size > max)
          done(
            new PayloadTooLarge(`the archive passed this server's limit of ${max} bytes (exchange.maxImportBytes); nothing was imported`),
          );
        else done(null, chunk);
      },
    });
    try {
      await pipeline(upload.stream, cap, createWriteStream(file), { signal });
    } catch (err) {
      uncount();
      await rm(file, { force: true });
      upload.stream.resume();
      if (err instanceof PayloadTooLarge) throw err;
      if (signal.aborted) throw new Aborted('the upload ended before all its bytes arrived; nothing was imported.');
      throw err;
    }
    uncount();
    try {
      return await this.#enqueue(p, 'import', {}, file, size, id);
    } catch (err) {
      await rm(file, { force: true });
      throw err;
    }
  }

  /**
   * Refuses when the caller has as many jobs queued or running as the cap, counting the uploads
   * they are sending (less `self`, the caller's own). Outside a transaction (no `em`), rows whose
   * queue job ended without finishing are failed first, so they never hold the caller back.
   */
  async #queueCap(owner: string, em?: EntityManager, self = 0): Promise<void> {
    const count = async () => {
      const [row] = await rows<{ n: number }>(
        em ?? this.#em(),
        `select count(*)::int as n from exchange_jobs where owner_id = ? and status in ('queued', 'running')`,
        [owner],
      );
      return (row?.n ?? 0) + (this.#uploading.get(owner) ?? 0) - self;
    };
    const cap = this.settings.maxQueuedPerUser;
    let n = await count();
    if (n >= cap && !em && (await this.sweepDead(owner)) > 0) n = await count();
    if (n >= cap)
      throw new TooManyQueuedJobs(
        `you have ${n} export or import jobs queued, running or uploading, and this server takes at most ${cap} per account at a time (exchange.maxQueuedPerUser); wait for one to finish.`,
        10,
      );
  }

  /**
   * Fails the rows still queued or running whose queue job is gone, failed or cancelled (its last
   * attempt ended without finishing: cancelled, over its time limit, the worker stopped), with a
   * reason, and deletes their archives. Returns how many.
   */
  async sweepDead(owner?: string): Promise<number> {
    const live = await rows<{ id: string; job_id: string | null; archive: string | null }>(
      this.#em(),
      `select id, job_id, archive from exchange_jobs where status in ('queued', 'running')${owner ? ' and owner_id = ?' : ''}`,
      owner ? [owner] : [],
    );
    let n = 0;
    for (const r of live) {
      let why: string;
      if (r.job_id === null) why = 'the job was never queued';
      else {
        const j = await this.#d.jobs.get(EXCHANGE_JOB, r.job_id).catch(() => undefined);
        if (j === undefined) continue; // the queue did not answer: ask again next time
        if (j && (j.state === 'created' || j.state === 'retry' || j.state === 'active')) continue;
        why =
          j === null
            ? 'the job is gone from the queue (the server stopped while it ran?)'
            : j.state === 'cancelled'
              ? 'the job was cancelled'
              : j.state === 'failed'
                ? 'the job stopped without finishing (over its time limit, or the server stopped)'
                : 'the job ended without recording its result';
      }
      if (await this.#abandon(r.id, r.archive, `${why}; nothing more will happen: start it again`)) n++;
    }
    return n;
  }

  /** Marks a job that will not finish as failed and deletes its archive; false when it had finished. */
  async #abandon(id: string, archive: string | null, reason: string): Promise<boolean> {
    const [row] = await rows<{ id: string }>(
      this.#em(),
      `update exchange_jobs set status = 'failed', error = ?, archive = null, finished_at = now(),
              expires_at = now() + make_interval(hours => ?)
        where id = ? and status in ('queued', 'running') returning id`,
      [reason, this.settings.keepHours, id],
    );
    if (!row) return false;
    if (archive) await rm(archive, { force: true });
    await rm(path.join(this.#d.dir, `${id}.export.zip`), { force: true });
    return true;
  }

  async #enqueue(
    p: Principal,
    kind: ExchangeKind,
    options: ExchangeJob['options'],
    archive: string | null,
    size: number | null,
    id: string = randomUUID(),
  ): Promise<ExchangeJob> {
    return this.#em().transactional(async (em) => {
      await em.execute(`select pg_advisory_xact_lock(hashtextextended('exchange-queue:' || ?, 0))`, [p.user.id]);
      await this.#queueCap(p.user.id, em);
      const jobId = await this.#d.jobs.send(EXCHANGE_JOB, { id }, { em });
      const [row] = await rows<Row>(
        em,
        `insert into exchange_jobs (id, owner_id, kind, options, archive, size, job_id, expires_at)
         values (?, ?, ?, ?::jsonb, ?, ?, ?, now() + make_interval(hours => ?)) returning ${COLUMNS}`,
        [id, p.user.id, kind, JSON.stringify(options), archive, size, jobId, this.settings.keepHours],
      );
      if (kind === 'export') await recordAudit(em, { action: 'export.created', actor: p, target: { type: 'export', id }, detail: options });
      return toJob(row!);
    });
  }

  async #row(owner: string, id: string, kind: ExchangeKind): Promise<Row> {
    if (!v.isUuid(id)) throw new NotFound(JOB_404);
    const [row] = await rows<Row>(this.#em(), `select ${COLUMNS} from exchange_jobs where id = ? and owner_id = ? and kind = ?`, [
      id,
      owner,
      kind,
    ]);
    if (!row) throw new NotFound(JOB_404);
    return row;
  }

  async get(p: Principal, id: string, kind: ExchangeKind): Promise<ExchangeJob> {
    const row = await this.#row(p.user.id, id, kind);
    if (kind !== 'import') return toJob(row);
    const [r] = await rows<{ report: ReportEntry[] | null }>(this.#em(), `select report from exchange_jobs where id = ? and owner_id = ?`, [
      id,
      p.user.id,
    ]);
    return toJob(row, r?.report);
  }

  /** The archive of a succeeded export. */
  async archive(p: Principal, id: string): Promise<{ size: number; stream: Readable; filename: string }> {
    const row = await this.#row(p.user.id, id, 'export');
    if (row.status !== 'succeeded' || !row.archive) throw new Conflict(`the export is ${row.status}: there is no archive yet`, toJob(row));
    const day = new Date(row.created_ms).toISOString().slice(0, 10);
    // Opened before any header is sent: a missing file is a clear 404, not a reset connection.
    const fh = await open(row.archive, 'r').catch(() => null);
    if (!fh) throw new NotFound('the archive of this export is no longer on the server (deleted or lost); start a new export.');
    const size = (await fh.stat()).size;
    return { size, stream: fh.createReadStream(), filename: `folio-export-${day}.zip` };
  }

  // --- the job -----------------------------------------------------------------------------------

  async #principal(owner: string): Promise<Principal | null> {
    const u = await this.#d.identity.getUser(owner);
    if (!u || u.disabled) return null;
    return {
      user: { id: u.id, email: u.email, name: u.name ?? null, roles: [...u.roles] },
      scopes: ['*'],
      tokenKind: 'api',
      tokenId: `exchange:${owner}`,
      tokenExpiresAt: null,
    };
  }

  async #set(id: string, sql: string, params: unknown[] = []): Promise<void> {
    await this.#em().execute(`update exchange_jobs set ${sql} where id = ?`, [...params, id]);
  }

  async run(data: { id: string }, job: RunningJob): Promise<unknown> {
    const [row] = await rows<Row>(this.#em(), `select ${COLUMNS} from exchange_jobs where id = ?`, [data.id]);
    if (!row || row.status === 'succeeded' || row.status === 'failed') return { skipped: row?.status ?? 'gone' };
    await this.#set(row.id, `status = 'running', error = null`);
    const fail = async (message: string) => {
      await this.#set(row.id, `status = 'failed', error = ?, finished_at = now(), expires_at = now() + make_interval(hours => ?)`, [
        message,
        this.settings.keepHours,
      ]);
      return { failed: message };
    };
    const p = await this.#principal(row.owner_id);
    if (!p) return fail('the account of this job is deactivated');
    let last = 0;
    const progress = (fraction: number) => {
      const pct = Math.max(0, Math.min(99, Math.floor(fraction * 100)));
      if (pct <= last) return;
      last = pct;
      void this.#set(row.id, `progress = ?`, [pct]).catch(() => {});
    };
    const done = `status = 'succeeded', progress = 100, finished_at = now(), expires_at = now() + make_interval(hours => ?)`;
    if (row.kind === 'export') {
      await mkdir(this.#d.dir, { recursive: true });
      const file = path.join(this.#d.dir, `${row.id}.export.zip`);
      try {
        const out = await writeExport(
          { em: () => this.#em(), notes: this.#d.notes, files: this.#d.files, folioVersion: this.#d.folioVersion },
          p,
          { revisions: row.options.revisions === true, files: row.options.files !== false },
          file,
          progress,
          job.signal,
        );
        await this.#set(row.id, `${done}, archive = ?, size = ?, counts = ?::jsonb`, [
          this.settings.keepHours,
          file,
          out.size,
          JSON.stringify(out.counts),
        ]);
        await this.#dropOlderExports(row.owner_id, row.id);
        return out.counts;
      } catch (err) {
        await rm(file, { force: true });
        if (job.signal.aborted) return this.#stopped(row, job, err);
        this.#d.log.error({ err, job: row.id }, 'export failed');
        return fail(`the export failed: ${(err as Error).message}`);
      }
    }
    try {
      const report = await runImport(
        {
          em: () => this.#em(),
          notes: this.#d.notes.inner as NotesServiceImpl,
          files: this.#d.files,
          notesChanged: this.#d.notesChanged,
        },
        p,
        row.archive!,
        this.settings,
        progress,
        job.signal,
      );
      const counts = {
        imported: report.filter((r) => r.status === 'imported').length,
        skipped: report.filter((r) => r.status === 'skipped').length,
        failed: report.filter((r) => r.status === 'failed').length,
      };
      await this.#set(row.id, `${done}, counts = ?::jsonb, report = ?::jsonb`, [
        this.settings.keepHours,
        JSON.stringify(counts),
        JSON.stringify(report),
      ]);
      await rm(row.archive!, { force: true });
      return counts;
    } catch (err) {
      if (job.signal.aborted) return this.#stopped(row, job, err);
      if (!(err instanceof ArchiveRefused)) this.#d.log.error({ err, job: row.id }, 'import failed');
      await rm(row.archive!, { force: true });
      return fail(err instanceof ArchiveRefused ? err.message : `the import failed: ${(err as Error).message}`);
    }
  }

  /** An attempt stopped before it finished: retried, or on the last attempt the job fails. */
  async #stopped(row: Row, job: RunningJob, err: unknown): Promise<never> {
    if (job.attempt >= RETRY_LIMIT)
      await this.#abandon(
        row.id,
        row.archive,
        'the job was stopped before it finished (cancelled, over its time limit, or the server stopped)',
      );
    throw err;
  }

  /** One finished export per account is kept: the older ones, and their archives, go. */
  async #dropOlderExports(owner: string, newest: string): Promise<void> {
    const gone = await rows<{ archive: string | null }>(
      this.#em(),
      `delete from exchange_jobs where owner_id = ? and kind = 'export' and status in ('succeeded', 'failed') and id <> ? returning archive`,
      [owner, newest],
    );
    for (const g of gone) if (g.archive) await rm(g.archive, { force: true });
  }

  /** Deletes jobs past their expiry, with their archives. */
  async purgeExpired(): Promise<number> {
    const gone = await rows<{ archive: string | null }>(
      this.#em(),
      `delete from exchange_jobs where expires_at < now() and status in ('succeeded', 'failed') returning archive`,
    );
    for (const g of gone) if (g.archive) await rm(g.archive, { force: true });
    return gone.length;
  }
}
