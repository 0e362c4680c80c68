// Where revision diffs are computed: one worker thread, started on first use and ended when idle,
// so a diff (bounded by revision-diff.ts to about a second of CPU) never runs on the event loop that
// answers everyone else. Diffs take turns on the thread. A diff that has not answered within its
// deadline (the bounds failed, or the thread is stuck) ends the thread: it fails, the next diff gets
// a new thread. The thread holds the process open only while a diff is in progress.
import { Worker } from 'node:worker_threads';
import type { UnifiedDiff } from './revision-diff.ts';

export interface DiffRequest {
  id: number;
  from: string;
  to: string;
  fromLabel: string;
  toLabel: string;
}
export type DiffReply = ({ id: number } & UnifiedDiff) | { id: number; error: string };

interface Pending {
  resolve(out: UnifiedDiff): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

export class DiffThread {
  readonly #deadlineMs: number;
  readonly #idleMs: number;
  #worker: Worker | undefined;
  #idle: NodeJS.Timeout | undefined;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;

  /** `deadlineMs`: the longest one diff may take, waiting included; `idleMs`: the thread ends after this long unused. */
  constructor(opts: { deadlineMs?: number; idleMs?: number } = {}) {
    this.#deadlineMs = opts.deadlineMs ?? 15_000;
    this.#idleMs = opts.idleMs ?? 30_000;
  }

  diff(from: string, to: string, fromLabel: string, toLabel: string): Promise<UnifiedDiff> {
    const worker = this.#start();
    const id = this.#nextId++;
    return new Promise<UnifiedDiff>((resolve, reject) => {
      const timer = setTimeout(() => this.#end(worker, new Error(`the diff took longer than ${this.#deadlineMs} ms`)), this.#deadlineMs);
      this.#pending.set(id, { resolve, reject, timer });
      worker.postMessage({ id, from, to, fromLabel, toLabel } satisfies DiffRequest);
    });
  }

  #start(): Worker {
    clearTimeout(this.#idle);
    this.#idle = undefined;
    if (this.#worker) {
      this.#worker.ref();
      return this.#worker;
    }
    const worker = new Worker(new URL('./diff-worker.ts', import.meta.url));
    worker.on('message', (reply: DiffReply) => this.#settle(worker, reply));
    worker.on('error', (err: Error) => this.#end(worker, err));
    worker.on('exit', (code) => this.#end(worker, new Error(`the diff thread exited (${code})`)));
    this.#worker = worker;
    return worker;
  }

  #settle(worker: Worker, reply: DiffReply): void {
    const p = this.#pending.get(reply.id);
    if (!p) return;
    this.#pending.delete(reply.id);
    clearTimeout(p.timer);
    if ('error' in reply) p.reject(new Error(reply.error));
    else p.resolve({ diff: reply.diff, coarse: reply.coarse });
    if (this.#pending.size === 0 && this.#worker === worker) {
      worker.unref();
      this.#idle = setTimeout(() => this.#end(worker, new Error('idle')), this.#idleMs).unref();
    }
  }

  #end(worker: Worker, err: Error): void {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    clearTimeout(this.#idle);
    this.#idle = undefined;
    for (const p of this.#pending.values()) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    this.#pending.clear();
    void worker.terminate();
  }
}
