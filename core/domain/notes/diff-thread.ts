// Where revision diffs are computed: one worker thread, started on first use and ended when idle,
// so a diff (bounded by revision-diff.ts to about a second of CPU) never runs on the event loop that
// answers everyone else. Diffs wait their turn here and go to the thread one at a time; a diff that
// has not answered within its deadline once sent (the bounds failed, or the thread is stuck) ends
// the thread and fails alone: the next diff gets a new thread. Over `maxWaiting` waiting diffs, a
// new one is refused with a 429 at once rather than queued behind seconds of work.
// The thread holds the process open only while a diff is in progress.
import { Worker } from 'node:worker_threads';
import { TooManyRequests } from '../../contract/errors.ts';
import type { UnifiedDiff } from './revision-diff.ts';

export interface DiffRequest {
  id: number;
  from: string;
  to: string;
  fromLabel: string;
  toLabel: string;
}
export type DiffReply = ({ id: number } & UnifiedDiff) | { id: number; error: string };

interface Job {
  request: DiffRequest;
  resolve(out: UnifiedDiff): void;
  reject(err: Error): void;
}

export class DiffThread {
  readonly #deadlineMs: number;
  readonly #idleMs: number;
  readonly #maxWaiting: number;
  #worker: Worker | undefined;
  #idle: NodeJS.Timeout | undefined;
  readonly #waiting: Job[] = [];
  #running: { job: Job; timer: NodeJS.Timeout } | undefined;
  #nextId = 1;

  /** `deadlineMs`: the longest one diff may run; `idleMs`: the thread ends after this long unused. */
  constructor(opts: { deadlineMs?: number; idleMs?: number; maxWaiting?: number } = {}) {
    this.#deadlineMs = opts.deadlineMs ?? 10_000;
    this.#idleMs = opts.idleMs ?? 30_000;
    this.#maxWaiting = opts.maxWaiting ?? 32;
  }

  diff(from: string, to: string, fromLabel: string, toLabel: string): Promise<UnifiedDiff> {
    if (this.#waiting.length >= this.#maxWaiting) throw new TooManyRequests('too many diffs are being computed; try again shortly', 2);
    return new Promise<UnifiedDiff>((resolve, reject) => {
      this.#waiting.push({ request: { id: this.#nextId++, from, to, fromLabel, toLabel }, resolve, reject });
      this.#next();
    });
  }

  #next(): void {
    if (this.#running) return;
    const job = this.#waiting.shift();
    if (!job) {
      this.#rest();
      return;
    }
    const worker = this.#start();
    const timer = setTimeout(() => this.#end(worker, new Error(`the diff took longer than ${this.#deadlineMs} ms`)), this.#deadlineMs);
    this.#running = { job, timer };
    worker.postMessage(job.request);
  }

  #start(): Worker {
    clearTimeout(this.#idle);
    this.#idle = undefined;
    if (this.#worker) {
      this.#worker.ref();
      return this.#worker;
    }
    const worker = new Worker(new URL('./diff-worker.ts', import.meta.url));
    worker.on('message', (reply: DiffReply) => this.#settle(reply));
    worker.on('error', (err: Error) => this.#end(worker, err));
    worker.on('exit', (code) => this.#end(worker, new Error(`the diff thread exited (${code})`)));
    this.#worker = worker;
    return worker;
  }

  /** No diff waiting: the thread lets the process go, and ends after a while. */
  #rest(): void {
    const worker = this.#worker;
    if (!worker || this.#idle) return;
    worker.unref();
    this.#idle = setTimeout(() => this.#end(worker, new Error('idle')), this.#idleMs).unref();
  }

  #settle(reply: DiffReply): void {
    const running = this.#running;
    if (!running || running.job.request.id !== reply.id) return;
    this.#running = undefined;
    clearTimeout(running.timer);
    if ('error' in reply) running.job.reject(new Error(reply.error));
    else running.job.resolve({ diff: reply.diff, coarse: reply.coarse });
    this.#next();
  }

  /** The thread is gone (or must go): the diff it was running fails; the waiting ones get a new thread. */
  #end(worker: Worker, err: Error): void {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    clearTimeout(this.#idle);
    this.#idle = undefined;
    void worker.terminate();
    const running = this.#running;
    this.#running = undefined;
    if (running) {
      clearTimeout(running.timer);
      running.job.reject(err);
    }
    this.#next();
  }
}
