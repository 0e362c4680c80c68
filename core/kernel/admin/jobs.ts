// Background work for operators: what is queued, running, failed (with the reason) and in the dead
// letters, across every kind and every user; retry and cancel. Transcriptions are read from their
// own table: a failed one ends its queue job normally, so the queue alone never lists it.
import type { JobQueue, PageKey } from '../../db/jobs.ts';
import type { TranscribeService } from '../../domain/transcribe/service.ts';
import type { Principal } from '../../domain/identity/types.ts';
import { BadArguments, NotFound } from '../../contract/errors.ts';
import type { AdminJob } from '../../sdk/index.ts';
import { requireAdmin } from './access.ts';
import { isUuid } from '../../domain/notes/validate.ts';

export type AdminJobState = AdminJob['state'];

export const JOB_LIST_DEFAULT = 50;
export const JOB_LIST_MAX = 200;
export const ADMIN_JOB_404 = 'no failed job (nor a queued or running one, to cancel) with that id.';

function reasonOf(error: unknown): string | null {
  if (error === null || error === undefined) return null;
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && 'message' in error && typeof error.message === 'string') return error.message;
  return JSON.stringify(error).slice(0, 2000);
}

export class JobsAdmin {
  readonly #jobs: JobQueue;
  readonly #transcribe: TranscribeService;
  readonly #kind: string;

  constructor(jobs: JobQueue, transcribe: TranscribeService, transcribeKind: string) {
    this.#jobs = jobs;
    this.#transcribe = transcribe;
    this.#kind = transcribeKind;
  }

  /**
   * Jobs newest first (by when each was created), all sources merged; `cursor` is the previous
   * page's next_cursor. Each source is asked for one more than the page past the cursor, so a
   * backlog of one kind never hides a newer job of another.
   */
  async list(
    principal: Principal,
    opts: { state?: AdminJobState | undefined; limit?: number | undefined; cursor?: string | undefined },
  ): Promise<{ items: AdminJob[]; next_cursor: string | null; limit: number }> {
    requireAdmin(principal, 'listing jobs');
    const limit = Math.min(opts.limit ?? JOB_LIST_DEFAULT, JOB_LIST_MAX);
    const before = opts.cursor === undefined ? undefined : fromCursor(opts.cursor);
    const state = opts.state;
    const out: Array<AdminJob & { key: PageKey }> = [];
    if (state !== 'failed') {
      const pending = await this.#jobs.pending({ state, limit: limit + 1, except: [this.#kind], before });
      for (const j of pending)
        out.push({
          id: j.id,
          kind: j.name,
          source: 'queue',
          state: j.state === 'active' ? 'running' : 'queued',
          owner_id: null,
          reason: reasonOf(j.output),
          attempts: j.attempt + (j.state === 'active' ? 1 : 0),
          created_at: j.createdAt.toISOString(),
          finished_at: null,
          key: j.key,
        });
    }
    if (state === undefined || state === 'failed')
      for (const d of await this.#jobs.deadLetterPage({ limit: limit + 1, before }))
        out.push({
          id: d.id,
          kind: d.name,
          source: 'dead_letter',
          state: 'failed',
          owner_id: null,
          reason: reasonOf(d.error),
          attempts: d.attempts,
          created_at: (d.createdAt ?? d.failedAt).toISOString(),
          finished_at: d.failedAt.toISOString(),
          job_id: d.jobId,
          data: d.data,
          key: d.key,
        });
    const statuses = state === undefined ? (['queued', 'running', 'failed'] as const) : ([state] as const);
    for (const t of await this.#transcribe.acrossUsers([...statuses], limit + 1, before))
      out.push({
        id: t.id,
        kind: this.#kind,
        source: 'transcription',
        state: t.status as AdminJobState,
        owner_id: t.owner_id,
        reason: t.error,
        attempts: t.attempt,
        created_at: t.created_at,
        finished_at: t.finished_at,
        job_id: t.id,
        data: { owner_id: t.owner_id, file_id: t.file_id },
        key: t.key,
      });
    out.sort((a, b) => newerFirst(a.key, b.key));
    const page = out.slice(0, limit);
    const last = page.at(-1);
    return {
      items: page.map(({ key: _, ...job }) => job),
      next_cursor: out.length > limit && last ? Buffer.from(`${last.key.atUs}|${last.key.id}`).toString('base64url') : null,
      limit,
    };
  }

  /**
   * Runs a failed job again: a dead letter goes back to its queue, a failed or cancelled
   * transcription is queued again. A succeeded (or queued, running) transcription is a 409: running
   * it again would write a new version of someone's note, which is theirs to ask for.
   */
  async retry(principal: Principal, id: string): Promise<{ id: string; retried: true }> {
    requireAdmin(principal, 'retrying jobs');
    checkId(id);
    const owner = await this.#transcribe.ownerOf(id);
    if (owner) {
      await this.#transcribe.retry(asOwner(owner), id, ['failed', 'cancelled']);
      return { id, retried: true };
    }
    if (!(await this.#jobs.retryDeadLetter(id))) throw new NotFound(ADMIN_JOB_404);
    return { id, retried: true };
  }

  /** Stops a queued or running job (a transcription, or a queue job of another kind). */
  async cancel(principal: Principal, id: string): Promise<{ id: string; cancelled: true }> {
    requireAdmin(principal, 'cancelling jobs');
    checkId(id);
    const owner = await this.#transcribe.ownerOf(id);
    if (owner) {
      await this.#transcribe.cancel(asOwner(owner), id);
      return { id, cancelled: true };
    }
    const [found] = await this.#jobs.pending({ limit: 1, except: [this.#kind], id });
    if (!found || !(await this.#jobs.cancel(found.name, id))) throw new NotFound(ADMIN_JOB_404);
    return { id, cancelled: true };
  }
}

function newerFirst(a: PageKey, b: PageKey): number {
  const at = BigInt(b.atUs) - BigInt(a.atUs);
  return at !== 0n ? (at > 0n ? 1 : -1) : b.id < a.id ? -1 : b.id > a.id ? 1 : 0;
}

function fromCursor(cursor: string): PageKey {
  const [atUs = '', id = ''] = Buffer.from(cursor, 'base64url').toString().split('|');
  if (!/^-?\d{1,19}$/.test(atUs) || !isUuid(id))
    throw new BadArguments('cursor is not one this server gave', [{ path: '/cursor', message: 'use next_cursor as given' }]);
  return { atUs, id: id.toLowerCase() };
}

function checkId(id: string): void {
  if (!isUuid(id)) throw new NotFound(ADMIN_JOB_404);
}

/** The owner as the transcription service scopes its queries: an operator acts on the job as they would. */
function asOwner(userId: string): Principal {
  return { user: { id: userId, email: '', name: null, roles: [] }, scopes: ['*'], tokenKind: 'api', tokenId: '', tokenExpiresAt: null };
}
