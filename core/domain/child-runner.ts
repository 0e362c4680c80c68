// Runs untrusted-input work (a document parser, later a plugin) in a child process whose limits the
// OS enforces, so that no input can stall or kill the server: a worker thread's heap limit is best
// effort (nodejs/node#47224) and memory outside the heap (Buffers, ArrayBuffers, native allocations)
// escapes it entirely.
//
// One long-lived child per runner serves one message at a time (the next waits its turn): starting
// Node and loading a parser costs more than most extractions, so the child is kept between messages
// and ended after `idleMs` without work; a child that dies is started again for the next message.
// The child is `node --max-old-space-size=<memoryMb> child-runner-entry.ts <module>`, with the
// server's own Node binary (type stripping included) and an empty environment (it needs no secret).
// Around each message, three limits hold; past any, the child is killed (SIGKILL) and the message
// rejects with ChildLimitExceeded saying which:
//   - the heap flag above (V8 aborts the child, and its stderr says so);
//   - its resident memory (VmRSS, read from /proc a few times a second: Linux), over memoryMb;
//   - wall-clock time, over timeoutMs.
// The module's default export takes the message and returns (or resolves to) the answer; both are
// structured-cloned (Uint8Array and Buffers pass as bytes). A throw rejects with ChildFailed.
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

export interface ChildLimits {
  /** The child's heap (--max-old-space-size) and resident memory (RSS), in MB. */
  memoryMb: number;
  /** How long one message may take once sent (a new child's start is bounded apart, at 30 s or this). */
  timeoutMs: number;
}

/** The child went over a limit and was killed; `message` says which, for a person to read. */
export class ChildLimitExceeded extends Error {
  override name = 'ChildLimitExceeded';
  readonly limit: 'memory' | 'time';
  constructor(limit: 'memory' | 'time', message: string) {
    super(message);
    this.limit = limit;
  }
}

/** The module threw (its message is kept), or the child stopped for another reason. */
export class ChildFailed extends Error {
  override name = 'ChildFailed';
}

type ToChild = { id: number; input: unknown };
type FromChild = { type: 'ready' } | { id: number; output: unknown } | { id: number; error: string };

const ENTRY = new URL('./child-runner-entry.ts', import.meta.url);
/** The most a new child may take to start (load its module), when the message's own limit is shorter. */
const START_MS = 30_000;
/** How often a busy child's resident memory is read. */
const WATCH_MS = 100;
/** Where there is no /proc (not Linux), the heap flag and the timeout still hold; resident memory is not watched. */
const CAN_WATCH_RSS = existsSync('/proc/self/status');
/** The tail of the child's stderr kept to tell a heap overflow from another crash. */
const STDERR_TAIL = 4096;

interface Live {
  proc: ChildProcess;
  ready: Promise<void>;
  /** Set once it has exited (or failed to start): the error a message in flight gets. */
  gone: Error | undefined;
  /** Why we killed it, when we did. */
  killedFor: Error | undefined;
  stderr: string;
  onExit: Set<(err: Error) => void>;
}

export class ChildRunner<In, Out> {
  readonly #module: string;
  readonly #label: string;
  readonly #limits: ChildLimits;
  readonly #idleMs: number;
  #child: Live | undefined;
  #idle: NodeJS.Timeout | undefined;
  /** Messages run one after another: each waits for the one before. */
  #turn: Promise<unknown> = Promise.resolve();
  #nextId = 1;

  /**
   * `module`: the file whose default export handles a message. `label` names the work in the
   * reasons given ("extraction used more than 256 MB").
   */
  constructor(opts: { module: URL; label: string; limits: ChildLimits; idleMs?: number }) {
    this.#module = opts.module.href;
    this.#label = opts.label;
    this.#limits = opts.limits;
    this.#idleMs = opts.idleMs ?? 30_000;
  }

  /** Runs one message in the child (after those already queued); `signal` kills the child if it is still at it. */
  run(input: In, opts: { signal?: AbortSignal } = {}): Promise<Out> {
    const mine = this.#turn.then(() => this.#runOne(input, opts.signal));
    this.#turn = mine.catch(() => {});
    return mine;
  }

  /** Ends the child; messages in flight reject. Later runs start a new one. */
  close(): void {
    this.#stop(new ChildFailed(`the ${this.#label} process was stopped`));
  }

  async #runOne(input: In, signal: AbortSignal | undefined): Promise<Out> {
    signal?.throwIfAborted();
    if (this.#idle) clearTimeout(this.#idle);
    this.#idle = undefined;
    const child = this.#child && !this.#child.gone ? this.#child : this.#spawn();
    hold(child.proc, true);
    const { memoryMb, timeoutMs } = this.#limits;
    let timer: NodeJS.Timeout | undefined;
    let watch: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    let onExit: ((err: Error) => void) | undefined;
    let onMessage: ((msg: FromChild) => void) | undefined;
    try {
      return await new Promise<Out>((resolve, reject) => {
        onExit = reject;
        child.onExit.add(onExit);
        const kill = (why: Error) => {
          child.killedFor ??= why;
          child.proc.kill('SIGKILL');
        };
        // A new child's start is bounded on its own (a busy machine is slow to start Node; that is not
        // the message's doing); the message's time counts from when it is sent.
        const overTime = (ms: number) => () => kill(new ChildLimitExceeded('time', `${this.#label} took longer than ${fmtSeconds(ms)}`));
        timer = setTimeout(overTime(Math.max(timeoutMs, START_MS)), Math.max(timeoutMs, START_MS));
        if (CAN_WATCH_RSS) {
          watch = setInterval(() => {
            void rssMb(child.proc.pid).then((mb) => {
              if (mb !== null && mb > memoryMb) kill(new ChildLimitExceeded('memory', `${this.#label} used more than ${memoryMb} MB`));
            });
          }, WATCH_MS);
        }
        if (signal) {
          onAbort = () => kill(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
          signal.addEventListener('abort', onAbort, { once: true });
        }
        const id = this.#nextId++;
        onMessage = (msg: FromChild) => {
          if (!('id' in msg) || msg.id !== id) return;
          if ('error' in msg) reject(new ChildFailed(msg.error));
          else resolve(msg.output as Out);
        };
        child.proc.on('message', onMessage);
        child.ready.then(
          () => {
            clearTimeout(timer);
            timer = setTimeout(overTime(timeoutMs), timeoutMs);
            child.proc.send({ id, input } satisfies ToChild, (err) => err && !child.gone && kill(err));
          },
          () => {}, // the exit handler rejects
        );
      });
    } finally {
      clearTimeout(timer);
      clearInterval(watch);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
      if (onExit) child.onExit.delete(onExit);
      if (onMessage) child.proc.off('message', onMessage);
      if (!child.gone) this.#rest(child);
    }
  }

  #spawn(): Live {
    const proc = fork(new URL(ENTRY), [this.#module], {
      execPath: process.execPath,
      // Not the parent's flags (a test runner's loaders, an --inspect port): only the heap limit.
      execArgv: [`--max-old-space-size=${this.#limits.memoryMb}`],
      env: childEnv(),
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    let ready!: () => void;
    const live: Live = {
      proc,
      ready: new Promise<void>((r) => (ready = r)),
      gone: undefined,
      killedFor: undefined,
      stderr: '',
      onExit: new Set(),
    };
    this.#child = live;
    proc.stderr?.setEncoding('utf8');
    proc.stderr?.on('data', (s: string) => (live.stderr = (live.stderr + s).slice(-STDERR_TAIL)));
    proc.on('message', (msg: FromChild) => 'type' in msg && msg.type === 'ready' && ready());
    const ended = (err: Error) => {
      if (live.gone) return;
      live.gone = err;
      if (this.#child === live) this.#child = undefined;
      for (const f of live.onExit) f(err);
    };
    proc.on('error', (err) => ended(live.killedFor ?? new ChildFailed(`the ${this.#label} process could not start: ${err.message}`)));
    // 'close' (not 'exit'): stderr is read to its end, so a heap overflow's message is there.
    proc.on('close', (code, sig) => ended(live.killedFor ?? this.#exitReason(live.stderr, code, sig)));
    live.ready.catch(() => {});
    return live;
  }

  #exitReason(stderr: string, code: number | null, signal: NodeJS.Signals | null): Error {
    if (/heap out of memory|Allocation failed|Reached heap limit/i.test(stderr))
      return new ChildLimitExceeded('memory', `${this.#label} used more than ${this.#limits.memoryMb} MB`);
    return new ChildFailed(`the ${this.#label} process stopped (${signal ? `signal ${signal}` : `exit code ${code}`})`);
  }

  /** Between messages the child does not keep the server alive, and ends after idleMs. */
  #rest(child: Live): void {
    hold(child.proc, false);
    if (this.#idle) clearTimeout(this.#idle);
    this.#idle = setTimeout(() => {
      if (this.#child === child) this.#stop(new ChildFailed(`the ${this.#label} process was idle`));
    }, this.#idleMs);
    this.#idle.unref();
  }

  #stop(why: Error): void {
    const child = this.#child;
    if (this.#idle) clearTimeout(this.#idle);
    this.#idle = undefined;
    if (!child || child.gone) return;
    child.killedFor ??= why;
    child.proc.kill('SIGKILL');
  }
}

/** Whether the child (its process, IPC channel and stderr pipe) keeps the parent's event loop alive. */
function hold(proc: ChildProcess, on: boolean): void {
  const handles = [proc, proc.channel, proc.stderr as unknown as { ref(): void; unref(): void } | null];
  for (const h of handles) {
    if (h && on) h.ref();
    else if (h) h.unref();
  }
}

/** Only what Node itself uses: the compile cache, where one is set. */
function childEnv(): NodeJS.ProcessEnv {
  const cache = process.env['NODE_COMPILE_CACHE'];
  return cache ? { NODE_COMPILE_CACHE: cache } : {};
}

/** The process's resident memory in MB; null when it cannot be read (no /proc, or it is gone). */
async function rssMb(pid: number | undefined): Promise<number | null> {
  if (pid === undefined) return null;
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
    return kb === undefined ? null : Number(kb) / 1024;
  } catch {
    return null;
  }
}

function fmtSeconds(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}
