// Where reports are rendered: a small pool of worker threads, so a PDF over thousands of notes (seconds
// of CPU in pdfkit) never runs on the event loop that answers everyone else's requests. The main
// thread still reads the notes (the database work stays where the connection pool is); each fetched
// batch goes to the report's worker as a list of events, and the worker answers with the bytes that
// batch produced (and, for save_as_note, its Markdown copy). A report stays on one worker from start
// to end (a PDF document is state); reports on one worker take turns batch by batch.
//
// Also here: how many reports one user may have rendering at once (ReportSlots). Over the cap the
// answer is 429 too_many_reports, at once: a queue would hold a connection open for a report that
// has not started, and a caller who asked twice by mistake would wait twice as long.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { TooManyReports } from '../../contract/errors.ts';
import type { ReportGroupHead, ReportMeta, ReportNote } from './report-render.ts';
import type { ReportFormat } from './types.ts';

export type RenderEvent =
  { kind: 'start'; meta: ReportMeta } | { kind: 'group'; head: ReportGroupHead } | { kind: 'note'; note: ReportNote } | { kind: 'end' };

/** Main thread -> worker. */
export type RenderRequest =
  | { type: 'open'; id: number; format: ReportFormat; markdownCopy: boolean; creationDate: string; baseUrl?: string }
  | { type: 'step'; id: number; events: RenderEvent[] }
  | { type: 'drop'; id: number };

/** Worker -> main thread: the answer to one step. */
export type RenderReply =
  { type: 'step'; id: number; bytes: Uint8Array | null; markdown: string } | { type: 'error'; id: number; message: string };

export interface StepOutput {
  /** What the report's own format produced for the step (null: nothing yet). */
  bytes: Uint8Array | null;
  /** The Markdown copy's text for the step ('' without a copy). */
  markdown: string;
}

/** One report being rendered on one worker. */
export interface RenderSession {
  /** Renders the events; resolves with what they produced. One step at a time. */
  step(events: RenderEvent[]): Promise<StepOutput>;
  /** Forgets the report on its worker (after the end, or when it is abandoned). Idempotent. */
  close(): void;
}

interface Slot {
  worker: Worker;
  /** Sessions open on this worker. */
  open: number;
  waiting: Map<number, { resolve: (out: StepOutput) => void; reject: (err: Error) => void }>;
  idle: NodeJS.Timeout | undefined;
  dead: Error | undefined;
}

/** Default threads: one core left to the event loop (and the embedded database), at most 4. */
export function defaultRenderThreads(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

export class ReportRenderPool {
  readonly #threads: number;
  readonly #idleMs: number;
  readonly #slots: Slot[] = [];
  #nextId = 1;

  /** `idleMs`: a worker with no report open for this long ends (a new one starts on demand). */
  constructor(opts: { threads?: number | null | undefined; idleMs?: number } = {}) {
    this.#threads = opts.threads ?? defaultRenderThreads();
    this.#idleMs = opts.idleMs ?? 30_000;
    if (!Number.isInteger(this.#threads) || this.#threads < 1) throw new Error('report render threads must be a positive integer');
  }

  open(format: ReportFormat, opts: { markdownCopy: boolean; creationDate: string; baseUrl?: string }): RenderSession {
    const slot = this.#pick();
    const id = this.#nextId++;
    slot.open++;
    this.#busy(slot);
    slot.worker.postMessage({ type: 'open', id, format, ...opts } satisfies RenderRequest);
    let closed = false;
    return {
      step: (events) =>
        new Promise<StepOutput>((resolve, reject) => {
          if (slot.dead) return reject(slot.dead);
          if (closed) return reject(new Error('this report render is closed'));
          slot.waiting.set(id, { resolve, reject });
          slot.worker.postMessage({ type: 'step', id, events } satisfies RenderRequest);
        }),
      close: () => {
        if (closed) return;
        closed = true;
        slot.waiting.delete(id);
        if (!slot.dead) slot.worker.postMessage({ type: 'drop', id } satisfies RenderRequest);
        slot.open--;
        if (slot.open === 0) this.#idle(slot);
      },
    };
  }

  /** Ends every worker (reports in flight fail). */
  async close(): Promise<void> {
    const slots = this.#slots.splice(0);
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  /** The worker with the fewest open reports; a new one while there are fewer than `threads`. */
  #pick(): Slot {
    const least = this.#slots.reduce<Slot | undefined>((best, s) => (!best || s.open < best.open ? s : best), undefined);
    if (least && (least.open === 0 || this.#slots.length >= this.#threads)) return least;
    return this.#spawn();
  }

  #spawn(): Slot {
    const worker = new Worker(new URL('./report-worker.ts', import.meta.url));
    const slot: Slot = { worker, open: 0, waiting: new Map(), idle: undefined, dead: undefined };
    this.#slots.push(slot);
    worker.on('message', (msg: RenderReply) => {
      const w = slot.waiting.get(msg.id);
      if (!w) return;
      slot.waiting.delete(msg.id);
      if (msg.type === 'step') w.resolve({ bytes: msg.bytes, markdown: msg.markdown });
      else w.reject(new Error(`rendering the report failed: ${msg.message}`));
    });
    const fail = (err: Error) => {
      if (slot.dead) return;
      slot.dead = err;
      const i = this.#slots.indexOf(slot);
      if (i >= 0) this.#slots.splice(i, 1);
      if (slot.idle) clearTimeout(slot.idle);
      for (const w of slot.waiting.values()) w.reject(err);
      slot.waiting.clear();
    };
    worker.on('error', (err: Error) => fail(new Error(`the report renderer failed: ${err.message}`, { cause: err })));
    worker.on('exit', (code) => fail(new Error(`the report renderer stopped (exit code ${code})`)));
    return slot;
  }

  #busy(slot: Slot): void {
    if (slot.idle) clearTimeout(slot.idle);
    slot.idle = undefined;
    slot.worker.ref();
  }

  /** No report open: the worker no longer keeps the process alive, and ends after a while. */
  #idle(slot: Slot): void {
    slot.worker.unref();
    slot.idle = setTimeout(() => {
      if (slot.open > 0 || slot.dead) return;
      const i = this.#slots.indexOf(slot);
      if (i >= 0) this.#slots.splice(i, 1);
      void slot.worker.terminate();
    }, this.#idleMs);
    slot.idle.unref();
  }
}

/** Seconds a refused caller is told to wait at least before asking again (Retry-After). */
const RETRY_AFTER_SECONDS = 5;

/** How many reports each user has rendering; over `perUser` a new one is refused. */
export class ReportSlots {
  readonly #perUser: number;
  readonly #held = new Map<string, number>();

  constructor(perUser: number) {
    if (!Number.isInteger(perUser) || perUser < 1) throw new Error('reports per user must be a positive integer');
    this.#perUser = perUser;
  }

  /** Takes one of the user's slots, or throws TooManyReports. Returns the (idempotent) release. */
  take(userId: string): () => void {
    const held = this.#held.get(userId) ?? 0;
    if (held >= this.#perUser)
      throw new TooManyReports(
        `you already have ${held} ${held === 1 ? 'report' : 'reports'} being generated, the most one account may have at a time; nothing was started. Wait for one to finish, then ask again.`,
        RETRY_AFTER_SECONDS,
      );
    this.#held.set(userId, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const n = (this.#held.get(userId) ?? 1) - 1;
      if (n <= 0) this.#held.delete(userId);
      else this.#held.set(userId, n);
    };
  }
}
