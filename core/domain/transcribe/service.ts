// Transcription jobs: a user's stored audio (one version of one of their files) becomes a
// transcript, and by default a note (source `transcript`, tagged `transcript` and the request's
// tags) the agent can read, search and act on. Jobs run on the queue (core/db/jobs.ts): in the
// server by default, in `npm run worker` processes to scale out; one in flight when a process dies
// is run again after the restart. Every query is scoped by the acting user: another user's job is
// not found. Files are read and notes written through their own services, with their rules.
import type { ResourceEvents } from '../../contract/search.ts';
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { BadArguments, Conflict, EngineUnavailable, NotFound, TooManyQueuedJobs, UnsupportedMediaType } from '../../contract/errors.ts';
import { MICROS, type JobQueue, type PageKey, type RunningJob } from '../../db/jobs.ts';
import type { FilesServiceImpl } from '../files/service.ts';
import type { IdentityService } from '../identity/service.ts';
import type { Principal } from '../identity/types.ts';
import type { NotesService } from '../notes/types.ts';
import { ms, rows } from '../notes/rows.ts';
import * as v from '../notes/validate.ts';
import { EngineFailed, enginesFrom, FormatRefused, probeAudio, type Availability, type Engine } from './engines.ts';
import { refusedType } from './input-formats.ts';
import { FORMAT_TYPES, renderTranscript, transcriptMarkdown } from './formats.ts';
import {
  RESULT_FORMATS,
  type CreateTranscription,
  type EngineName,
  type JobStatus,
  type ResultFormat,
  type TranscribeSettings,
  type Transcription,
  type TranscriptResult,
} from './types.ts';

export const TRANSCRIBE_JOB = 'transcribe';
export const JOB_404 = 'no such transcription job. It may not exist or belong to another account.';
const ENGINES: readonly EngineName[] = ['local', 'openai'];
const LANGUAGE = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;
const PAGE_MAX = 100;

interface Row {
  id: string;
  file_id: string;
  file_version: number;
  status: JobStatus;
  progress: number;
  engine: EngineName;
  model: string | null;
  language: string | null;
  tags: string[];
  to_note: boolean;
  note_id: string | null;
  error: string | null;
  duration: number | null;
  job_id: string | null;
  owner_id: string;
  created_ms: number;
  started_ms: number | null;
  finished_ms: number | null;
}

const COLUMNS = `id, owner_id, file_id, file_version, status, progress, engine, model, language, tags, to_note, note_id, error, duration, job_id,
  ${ms('created_at', 'created_ms')}, ${ms('started_at', 'started_ms')}, ${ms('finished_at', 'finished_ms')}`;

const iso = (n: number | null) => (n === null ? null : new Date(n).toISOString());

function toJob(r: Row): Transcription {
  return {
    id: r.id,
    file_id: r.file_id,
    file_version: r.file_version,
    status: r.status,
    progress: r.progress,
    engine: r.engine,
    model: r.model,
    language: r.language,
    tags: r.tags,
    to_note: r.to_note,
    note_id: r.note_id,
    error: r.error,
    duration: r.duration,
    created_at: iso(r.created_ms)!,
    started_at: iso(r.started_ms),
    finished_at: iso(r.finished_ms),
  };
}

export interface TranscribeDeps {
  db: { orm: MikroORM };
  jobs: JobQueue;
  files: FilesServiceImpl;
  notes: NotesService;
  identity: IdentityService;
  log: Logger;
  /** Where audio is copied while an engine works on it. */
  workDir: string;
  /** Told when a transcript is written or deleted, in that transaction (search listens). */
  events?: ResourceEvents;
}

/** The kind of resource a transcript is, for search. */
export const TRANSCRIPT_KIND = 'transcript';

export class TranscribeService {
  readonly #d: TranscribeDeps;
  readonly #settings: TranscribeSettings;
  readonly #engines: Record<EngineName, Engine>;
  #availability: { at: number; value: Record<EngineName, Availability> } | undefined;

  constructor(deps: TranscribeDeps, settings: TranscribeSettings, engines?: Record<EngineName, Engine>) {
    this.#d = deps;
    this.#settings = settings;
    this.#engines = engines ?? enginesFrom(settings);
  }

  #em() {
    return this.#d.db.orm.em.fork();
  }

  /** Which engines can run here, and why not (for /health, whoami and job creation); checked at most every 30 s. */
  async engines(): Promise<{ default: EngineName; engines: Record<EngineName, Availability> }> {
    const now = Date.now();
    if (!this.#availability || now - this.#availability.at > 30_000) {
      const [local, openai] = await Promise.all([this.#engines.local.available(), this.#engines.openai.available()]);
      this.#availability = { at: now, value: { local, openai } };
    }
    return { default: this.#settings.engine, engines: this.#availability.value };
  }

  async create(p: Principal, input: CreateTranscription): Promise<Transcription> {
    if (!input || typeof input !== 'object') throw new BadArguments('the job needs file_id');
    if (typeof input.file_id !== 'string' || !v.isUuid(input.file_id))
      throw new BadArguments('file_id must be the id of one of your files', [{ path: 'file_id', message: 'must be a file id (a UUID)' }]);
    if (input.version !== undefined && (!Number.isInteger(input.version) || input.version < 1))
      throw new BadArguments('version must be a positive integer', [{ path: 'version', message: 'must be a positive integer' }]);
    if (input.language !== undefined && (typeof input.language !== 'string' || !LANGUAGE.test(input.language)))
      throw new BadArguments('language must be a language code such as en or pt-BR', [{ path: 'language', message: 'a code such as en' }]);
    if (input.engine !== undefined && !ENGINES.includes(input.engine))
      throw new BadArguments(`engine must be one of ${ENGINES.join(', ')}`, [{ path: 'engine', message: ENGINES.join(' or ') }]);
    if (input.to_note !== undefined && typeof input.to_note !== 'boolean')
      throw new BadArguments('to_note must be true or false', [{ path: 'to_note', message: 'must be a boolean' }]);
    if (input.engine !== undefined && input.engine !== this.#settings.engine && !this.#settings.allowEngineChoice)
      throw new BadArguments(`this server transcribes with its ${this.#settings.engine} engine only`, [
        { path: 'engine', message: `only ${this.#settings.engine}` },
      ]);
    const tags = v.optionalTags(input.tags, 'tags') ?? [];
    const engine = input.engine ?? this.#settings.engine;
    // The caller's file (another user's is not found), at the version asked for or the current one.
    const ref = await this.#d.files.content(p, input.file_id, input.version);
    const refused = refusedType(ref.content_type);
    if (refused) throw new UnsupportedMediaType(refused);
    const availability = (await this.engines()).engines[engine];
    if (!availability.ok) throw new EngineUnavailable(`the ${engine} transcription engine is unavailable: ${availability.reason}`);
    const id = randomUUID();
    return this.#em().transactional(async (em) => {
      await this.#withinQueueCap(em, p.user.id, 0);
      const jobId = await this.#d.jobs.send(TRANSCRIBE_JOB, { id }, { em });
      const [row] = await rows<Row>(
        em,
        `insert into transcriptions (id, owner_id, file_id, file_version, engine, language, tags, to_note, job_id, model)
         values (?, ?, ?, ?, ?, ?, array(select jsonb_array_elements_text(?::jsonb)), ?, ?, ?) returning ${COLUMNS}`,
        [
          id,
          p.user.id,
          ref.file_id,
          ref.version,
          engine,
          input.language ?? null,
          JSON.stringify(tags),
          input.to_note ?? true,
          jobId,
          availability.model ?? null,
        ],
      );
      return toJob(row!);
    });
  }

  async get(p: Principal, id: string): Promise<Transcription> {
    return toJob(await this.#row(p.user.id, id));
  }

  async #row(owner: string, id: string): Promise<Row> {
    if (!v.isUuid(id)) throw new NotFound(JOB_404);
    const [row] = await rows<Row>(this.#em(), `select ${COLUMNS} from transcriptions where id = ? and owner_id = ?`, [id, owner]);
    if (!row) throw new NotFound(JOB_404);
    return row;
  }

  /** The caller's jobs, newest first; `cursor` is the last page's next_cursor. */
  async list(
    p: Principal,
    opts: { limit?: number; cursor?: string; status?: JobStatus } = {},
  ): Promise<{ items: Transcription[]; next_cursor: string | null }> {
    const limit = opts.limit ?? 20;
    if (!Number.isInteger(limit) || limit < 1 || limit > PAGE_MAX)
      throw new BadArguments(`limit must be 1 to ${PAGE_MAX}`, [{ path: 'limit', message: `1 to ${PAGE_MAX}` }]);
    const params: unknown[] = [p.user.id];
    let where = 'owner_id = ?';
    if (opts.status !== undefined) {
      where += ' and status = ?';
      params.push(opts.status);
    }
    if (opts.cursor !== undefined) {
      const [msPart, idPart] = Buffer.from(opts.cursor, 'base64url').toString().split('|');
      if (!msPart || !idPart || !v.isUuid(idPart) || !Number.isFinite(Number(msPart)))
        throw new BadArguments('cursor is not one this server gave', [{ path: 'cursor', message: 'use next_cursor as given' }]);
      where += ` and (created_at, id) < (to_timestamp(?::float8 / 1000), ?::uuid)`;
      params.push(Number(msPart), idPart);
    }
    params.push(limit + 1);
    const found = await rows<Row>(
      this.#em(),
      `select ${COLUMNS} from transcriptions where ${where} order by created_at desc, id desc limit ?`,
      params,
    );
    const more = found.length > limit;
    const items = found.slice(0, limit);
    const last = items[items.length - 1];
    return {
      items: items.map(toJob),
      next_cursor: more && last ? Buffer.from(`${last.created_ms}|${last.id}`).toString('base64url') : null,
    };
  }

  /**
   * Every user's jobs in these states, newest first (`before` pages on), with their owner: for operators (the kernel's
   * admin service asks, after its role check). A failed job ends its queue job normally (the
   * failure is the job's answer, not the queue's), so only this table knows it failed.
   */
  async acrossUsers(
    statuses: JobStatus[],
    limit: number,
    before?: PageKey,
  ): Promise<Array<Transcription & { owner_id: string; attempt: number; key: PageKey }>> {
    const found = await rows<Row & { attempt: number; at_us: string }>(
      this.#em(),
      `select ${COLUMNS}, attempt, ${MICROS('created_at')}::text as at_us from transcriptions
        where status = any(?::text[]) and (?::bigint is null or (${MICROS('created_at')}, id) < (?::bigint, ?::uuid))
        order by created_at desc, id desc limit ?`,
      [`{${statuses.join(',')}}`, before?.atUs ?? null, before?.atUs ?? null, before?.id ?? null, limit],
    );
    return found.map((r) => ({ ...toJob(r), owner_id: r.owner_id, attempt: r.attempt, key: { atUs: r.at_us, id: r.id } }));
  }

  /** The owner of a job, for an operator acting on it as its owner would; null when there is none. */
  async ownerOf(id: string): Promise<string | null> {
    if (!v.isUuid(id)) return null;
    const [row] = await rows<{ owner_id: string }>(this.#em(), `select owner_id from transcriptions where id = ?`, [id]);
    return row?.owner_id ?? null;
  }

  /** Stops a queued or running job: the engine is stopped and no note is written. */
  async cancel(p: Principal, id: string): Promise<Transcription> {
    const row = await this.#row(p.user.id, id);
    if (row.status !== 'queued' && row.status !== 'running')
      throw new Conflict(`the job is ${row.status} already; only a queued or running job can be cancelled`, toJob(row));
    const [done] = await rows<Row>(
      this.#em(),
      `update transcriptions set status = 'cancelled', finished_at = now(), error = null
        where id = ? and owner_id = ? and status in ('queued', 'running') returning ${COLUMNS}`,
      [id, p.user.id],
    );
    if (row.job_id) await this.#d.jobs.cancel(TRANSCRIBE_JOB, row.job_id).catch(() => false);
    return toJob(done ?? (await this.#row(p.user.id, id)));
  }

  /**
   * Runs a finished job again (a failed or cancelled one, or a succeeded one with another engine or
   * language; `from` narrows which of those, 409 for another). Its note gets a new version. The job moves from finished to queued in one statement,
   * so however many retries arrive at once one is queued; the others, and a retry racing a delete,
   * are answered from the job as it is then (409 with it, or 404).
   */
  async retry(p: Principal, id: string, from: readonly JobStatus[] = ['succeeded', 'failed', 'cancelled']): Promise<Transcription> {
    const row = await this.#row(p.user.id, id);
    if (row.status === 'queued' || row.status === 'running') throw new Conflict(`the job is ${row.status}; cancel it first`, toJob(row));
    if (!from.includes(row.status))
      throw new Conflict(`the job is ${row.status}; only a ${from.join(' or ')} one is run again here`, toJob(row));
    const availability = (await this.engines()).engines[row.engine];
    if (!availability.ok) throw new EngineUnavailable(`the ${row.engine} transcription engine is unavailable: ${availability.reason}`);
    const again = await this.#em().transactional(async (em) => {
      const [claimed] = await rows<{ id: string }>(
        em,
        `update transcriptions set status = 'queued', progress = 0, error = null, started_at = null, finished_at = null
          where id = ? and owner_id = ? and status = any(?::text[]) returning id`,
        [id, p.user.id, `{${from.join(',')}}`],
      );
      if (!claimed) return null;
      await this.#withinQueueCap(em, p.user.id, 1);
      const jobId = await this.#d.jobs.send(TRANSCRIBE_JOB, { id }, { em });
      const [queued] = await rows<Row>(em, `update transcriptions set job_id = ? where id = ? returning ${COLUMNS}`, [jobId, id]);
      return queued!;
    });
    if (again) return toJob(again);
    // Another request changed it first: a retry (it is queued now), a delete (404 here), a cancel.
    const now = await this.#row(p.user.id, id);
    throw new Conflict(`the job is ${now.status} now: another request changed it while this one was made`, toJob(now));
  }

  /**
   * Refuses one more queued job when the owner has transcribe.maxQueuedPerUser queued or running
   * already (`claimed` of them are this request's own). Creates and retries of one owner pass here
   * one at a time (a lock held to the end of the transaction), so racing requests cannot all slip
   * under the cap.
   */
  async #withinQueueCap(em: EntityManager, owner: string, claimed: number): Promise<void> {
    const cap = this.#settings.maxQueuedPerUser;
    await em.execute(`select pg_advisory_xact_lock(hashtextextended('transcribe-queue:' || ?, 0))`, [owner]);
    const [row] = await rows<{ n: number }>(
      em,
      `select count(*)::int as n from transcriptions where owner_id = ? and status in ('queued', 'running')`,
      [owner],
    );
    const waiting = (row?.n ?? 0) - claimed;
    if (waiting >= cap)
      throw new TooManyQueuedJobs(
        `you have ${waiting} transcription job${waiting === 1 ? '' : 's'} queued or running, and this server takes at most ${cap} per account at a time (transcribe.maxQueuedPerUser); nothing was queued. Wait for one to finish or cancel one, then ask again.`,
        30,
      );
  }

  /** Removes the job and its result (a running one is stopped first); a note it wrote is kept. */
  async delete(p: Principal, id: string): Promise<void> {
    const row = await this.#row(p.user.id, id);
    if (row.status === 'queued' || row.status === 'running') await this.cancel(p, id).catch(() => undefined);
    await this.#em().transactional(async (em) => {
      await em.execute(`delete from transcriptions where id = ? and owner_id = ?`, [id, p.user.id]);
      await this.#d.events?.changed(em, [{ kind: TRANSCRIPT_KIND, owner: p.user.id, id }]);
    });
  }

  /** The transcript of a succeeded job, as txt, srt, vtt or json. */
  async result(
    p: Principal,
    id: string,
    format: ResultFormat = 'json',
  ): Promise<{ contentType: string; text: string; result: TranscriptResult }> {
    if (!RESULT_FORMATS.includes(format))
      throw new BadArguments(`format must be one of ${RESULT_FORMATS.join(', ')}`, [
        { path: 'format', message: RESULT_FORMATS.join(', ') },
      ]);
    const row = await this.#row(p.user.id, id);
    if (row.status !== 'succeeded') throw new Conflict(`the job is ${row.status}: there is no transcript yet`, toJob(row));
    const [r] = await rows<{ result: TranscriptResult }>(this.#em(), `select result from transcriptions where id = ? and owner_id = ?`, [
      id,
      p.user.id,
    ]);
    return { contentType: FORMAT_TYPES[format], text: renderTranscript(r!.result, format), result: r!.result };
  }

  // --- the job -----------------------------------------------------------------------------------

  async #principal(owner: string): Promise<Principal | null> {
    const u = await this.#d.identity.getUser(owner);
    if (!u || u.disabled) return null;
    return {
      user: { id: u.id, email: u.email, name: u.name ?? null, roles: [...u.roles] },
      scopes: ['*'],
      tokenKind: 'api',
      tokenId: `transcription:${owner}`,
      tokenExpiresAt: null,
    };
  }

  async #set(id: string, sql: string, params: unknown[] = []): Promise<void> {
    await this.#em().execute(`update transcriptions set ${sql} where id = ?`, [...params, id]);
  }

  /** The queue's handler: one attempt at one job. A failure a person can act on ends the job; anything else is retried by the queue. */
  async run(data: { id: string }, job: RunningJob): Promise<unknown> {
    const [row] = await rows<Row>(this.#em(), `select ${COLUMNS} from transcriptions where id = ?`, [data.id]);
    if (!row || row.status === 'cancelled' || row.status === 'succeeded' || row.status === 'failed')
      return { skipped: row?.status ?? 'gone' };
    // A queue entry of an earlier run of this job (the row names the one current run): never two at once.
    if (row.job_id !== null && row.job_id !== job.id) return { skipped: 'superseded' };
    // Only from queued (or running, when a process died mid-run): a cancel that came since the read above stays.
    const [started] = await rows<{ id: string }>(
      this.#em(),
      `update transcriptions set status = 'running', started_at = now(), attempt = attempt + 1, error = null
        where id = ? and status in ('queued', 'running') returning id`,
      [row.id],
    );
    if (!started) return { skipped: 'cancelled' };
    const fail = async (message: string) => {
      await this.#set(row.id, `status = 'failed', error = ?, finished_at = now()`, [message]);
      return { failed: message };
    };
    const p = await this.#principal(row.owner_id);
    if (!p) return fail('the account of this job is deactivated');
    const engine = this.#engines[row.engine];
    const availability = await engine.available();
    if (!availability.ok) return fail(`the ${row.engine} engine is unavailable: ${availability.reason}`);

    // The engine's own deadline (a hung engine is stopped), and the job's (a cancel, the worker stopping).
    const timeout = AbortSignal.timeout(this.#settings.timeoutSeconds * 1000);
    const signal = AbortSignal.any([job.signal, timeout]);
    await mkdir(this.#d.workDir, { recursive: true });
    const audio = path.join(this.#d.workDir, `${row.id}-${job.attempt}`);
    let lastProgress = 0;
    const progress = (fraction: number) => {
      const pct = Math.max(0, Math.min(99, Math.round(fraction * 100)));
      if (pct < lastProgress + 5) return;
      lastProgress = pct;
      void job.progress(pct / 100).catch(() => {});
      void this.#set(row.id, `progress = ? `, [pct]).catch(() => {});
    };
    try {
      let ref;
      try {
        ref = await this.#d.files.content(p, row.file_id, row.file_version);
      } catch (err) {
        if (err instanceof NotFound) return fail('the audio file (or that version of it) is gone');
        throw err;
      }
      await pipeline(await this.#d.files.read(ref), createWriteStream(audio), { signal });
      // The length limit, before any transcribing (when ffprobe is here to tell it).
      const seconds = await probeAudio(this.#settings.local.ffprobe, audio, signal).catch((err: unknown) => {
        // A format Folio does not take is refused whatever the engine; an unreadable file is for
        // the local engine (another engine's server may read what ffprobe cannot).
        if (signal.aborted || err instanceof FormatRefused || (err instanceof EngineFailed && row.engine === 'local')) throw err;
        return null;
      });
      if (seconds !== null && seconds > this.#settings.maxSeconds)
        return fail(`the recording is ${Math.round(seconds)} s long, over this server's limit of ${this.#settings.maxSeconds} s`);
      const result = await engine.transcribe({
        file: audio,
        name: ref.name,
        contentType: ref.content_type,
        language: row.language ?? undefined,
        signal,
        progress,
      });
      // Cancelled while the engine worked: nothing is written.
      const [now] = await rows<{ status: JobStatus }>(this.#em(), `select status from transcriptions where id = ?`, [row.id]);
      if (now?.status !== 'running') return { skipped: now?.status ?? 'gone' };
      const { model, ...transcript } = result;
      const noteId = row.to_note ? await this.#writeNote(p, row, transcript, ref.name) : row.note_id;
      await this.#em().transactional(async (em) => {
        await em.execute(
          `update transcriptions set status = 'succeeded', progress = 100, result = ?::jsonb, model = ?, duration = ?,
             language = coalesce(language, ?), note_id = ?, finished_at = now() where id = ?`,
          [JSON.stringify(transcript), model, transcript.duration, transcript.language, noteId, row.id],
        );
        await this.#d.events?.changed(em, [{ kind: TRANSCRIPT_KIND, owner: row.owner_id, id: row.id }]);
      });
      return { chars: transcript.text.length, note_id: noteId };
    } catch (err) {
      if (timeout.aborted && !job.signal.aborted)
        return fail(`the ${row.engine} engine took longer than ${this.#settings.timeoutSeconds} s and was stopped`);
      if (job.signal.aborted) {
        // A cancel (the row says so already) or the worker stopping (the queue runs it again).
        throw err;
      }
      if (err instanceof EngineFailed) return fail(err.message);
      this.#d.log.error({ err, job: row.id }, 'transcription failed');
      await this.#set(row.id, `error = ?`, [`an unexpected error (${(err as Error).message}); it is retried`]).catch(() => {});
      throw err;
    } finally {
      await rm(audio, { force: true });
    }
  }

  /** The transcript as a note: the job's note gets a new version, or a new note is made (once). */
  async #writeNote(p: Principal, row: Row, r: TranscriptResult, fileName: string): Promise<string> {
    const body = transcriptMarkdown(r, fileName);
    const tags = [...new Set(['transcript', ...row.tags])];
    if (row.note_id) {
      try {
        const cur = await this.#d.notes.get(p, row.note_id);
        if (cur.deleted_at === null) {
          await this.#d.notes.update(p, row.note_id, { expected_version: cur.version, body, tags });
          return row.note_id;
        }
      } catch (err) {
        if (!(err instanceof NotFound)) throw err;
      }
    }
    const note = await this.#d.notes.create(p, {
      title: `Transcript: ${fileName}`.slice(0, 200),
      body,
      tags,
      source: 'transcript',
    });
    // Kept at once, so a retry after a crash from here on updates this note instead of making another.
    await this.#set(row.id, `note_id = ?`, [note.id]);
    return note.id;
  }
}
