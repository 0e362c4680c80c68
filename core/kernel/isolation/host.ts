// Folio's side of an isolated plugin: one worker thread per plugin version, with a heap limit, a
// deadline on import, and a CPU deadline (a worker that does not answer a ping for that long is
// computing without a pause: it is stopped, its calls get the timeout answer, and it is started
// again with backoff). A plugin that keeps crashing is disabled, with the reason, for admins.
//
// The registry entry it makes (entry()) is an ordinary PluginEntry whose handlers and visible rule
// send messages: dispatch, the policy and every surface use it as they use an in-process plugin.
import { randomUUID } from 'node:crypto';
import path, { basename } from 'node:path';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { Logger } from 'pino';
import { Aborted, FunctionFailed } from '../../contract/errors.ts';
import { bytes, type Caller, type Context, type PromptContext } from '../../sdk/index.ts';
import { PACKAGE_ROOT, type Config } from '../config.ts';
import { buildPlugin, type PluginEntry } from '../manifest.ts';
import { LoadError, type Bundle } from '../plugin-eval.ts';
import { decodeFromWorker, FUNCTION, type CallId, type FromWorker, type Invalid, type ToWorker, type WireResult } from './protocol.ts';
import { fromWire, toWire } from './wire-error.ts';

const WORKER_URL = new URL('./worker.ts', import.meta.url);

export interface IsolationLimits {
  /** The worker's old-generation heap, in MB: past it the worker dies, not Folio. */
  heapMb: number;
  /** How long the worker may compute without answering Folio (a call, a rule, a timer: anything). */
  cpuTimeoutMs: number;
  /** How long evaluating the plugin's module may take. */
  importTimeoutMs: number;
  /** How long a visible() answer is waited for (the policy hides the namespace after that). */
  visibleTimeoutMs: number;
  /** Crashes within `crashWindowMs` that disable the plugin until its files change. */
  maxCrashes: number;
  crashWindowMs: number;
}

export interface HostEvents {
  /** The worker kept dying: the plugin is no longer served. */
  disabled(reason: string): void;
}

export type IsolationMode = 'worker' | 'in-process';

/** The registry's isolation settings from the configuration. */
export function isolationSettings(config: Config): IsolationLimits & { modeFor(dir: string): IsolationMode } {
  const { mode, plugins, ...limits } = config.isolation;
  const firstParty = path.join(PACKAGE_ROOT, 'plugins');
  return {
    ...limits,
    crashWindowMs: 60_000,
    visibleTimeoutMs: config.limits.visibleTimeoutMs,
    modeFor: (dir) => isolationModeFor({ mode, plugins }, firstParty, dir),
  };
}

/**
 * Where a plugin folder runs: the operator's choice for that folder (by folder name), else the
 * default; `third-party` puts every plugin in a worker except Folio's own (those in `firstParty`).
 */
export function isolationModeFor(
  settings: { mode: IsolationMode | 'third-party'; plugins: Record<string, IsolationMode> },
  firstParty: string,
  dir: string,
): IsolationMode {
  const chosen = settings.plugins[basename(dir)];
  if (chosen) return chosen;
  if (settings.mode !== 'third-party') return settings.mode;
  return path.dirname(dir) === firstParty ? 'in-process' : 'worker';
}

interface PendingCall {
  what: string;
  worker: Worker;
  ctx: Context;
  resolve(v: unknown): void;
  reject(e: Error): void;
  cleanup(): void;
}

interface PendingRule {
  worker: Worker;
  resolve(v: unknown): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
}

/** How long a prompt render that never answers is remembered (the surface answered long before). */
const PROMPT_FORGET_MS = 120_000;

const BLOCKED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}

function resultOf(w: WireResult): unknown {
  switch (w.kind) {
    case 'undefined':
      return undefined;
    case 'text':
      return w.text;
    case 'json':
      return JSON.parse(w.json) as unknown;
    case 'bytes':
      return bytes(w.data, w.contentType, w.filename);
  }
}

// Starting a worker (a V8 isolate, a Node environment, Folio's worker module) is most of the time a
// load takes. One spare is kept started, ahead of need: a load or reload takes it and only sends the
// bundle, and the next spare starts in the background. It holds no plugin and does not keep the
// process alive.
const spares = new Map<number, { worker: Worker; forget: () => void }>();

function newWorker(heapMb: number): Worker {
  return new Worker(WORKER_URL, {
    resourceLimits: { maxOldGenerationSizeMb: heapMb },
    // Folio's own flags and hooks (a test runner's, a profiler's) are not the plugin's.
    execArgv: [],
    name: 'folio plugin',
  });
}

function makeSpare(heapMb: number): void {
  if (spares.has(heapMb)) return;
  const worker = newWorker(heapMb);
  worker.unref();
  const forget = () => {
    if (spares.get(heapMb)?.worker === worker) spares.delete(heapMb);
  };
  worker.on('error', forget);
  worker.on('exit', forget);
  spares.set(heapMb, { worker, forget });
}

function takeSpare(heapMb: number): Worker {
  const spare = spares.get(heapMb);
  spares.delete(heapMb);
  setImmediate(() => makeSpare(heapMb)).unref();
  if (!spare) return newWorker(heapMb);
  spare.worker.off('error', spare.forget);
  spare.worker.off('exit', spare.forget);
  spare.worker.ref();
  return spare.worker;
}

// In-process plugins are first evaluated here, in one long-lived worker, so that a module that never
// finishes loading stops this worker and not Folio. Each trial's module is dropped after it loads.
type TrialAnswer = Extract<FromWorker, { type: 'trial-result' }> | Error;
interface TrialWorker {
  worker: Worker;
  seq: number;
  waiting: Map<number, (answer: TrialAnswer) => void>;
}
let trials: TrialWorker | undefined;

function trialWorker(heapMb: number): TrialWorker {
  if (trials) return trials;
  const worker = newWorker(heapMb);
  worker.unref();
  const t: TrialWorker = { worker, seq: 0, waiting: new Map() };
  let reason: string | undefined;
  // The module being tried runs in this worker too and may post anything: only a well-formed answer counts.
  worker.on('message', (raw: unknown) => {
    const m = decodeFromWorker(raw);
    if (m.type !== 'trial-result') return;
    t.waiting.get(m.id)?.(m);
    t.waiting.delete(m.id);
  });
  worker.on('error', (err: Error) => {
    reason ??= err.message;
  });
  worker.on('exit', (code) => {
    if (trials === t) trials = undefined;
    for (const settle of t.waiting.values()) settle(new LoadError(`its worker ${reason ?? `exited (code ${code})`} while loading`));
    t.waiting.clear();
  });
  trials = t;
  return t;
}

/**
 * Evaluates a bundle in the trial worker within the import deadline; rejects (LoadError) as the
 * load would fail. The worker that missed the deadline is stopped; the next trial starts another.
 */
export async function trialLoad(bundle: Bundle, limits: Pick<IsolationLimits, 'heapMb' | 'importTimeoutMs'>): Promise<void> {
  const t = trialWorker(limits.heapMb);
  const id = ++t.seq;
  const ms = limits.importTimeoutMs;
  let timer: NodeJS.Timeout | undefined;
  t.worker.ref();
  try {
    const answer = await new Promise<TrialAnswer>((resolve) => {
      t.waiting.set(id, resolve);
      timer = setTimeout(() => {
        t.waiting.delete(id);
        if (trials === t) trials = undefined;
        void t.worker.terminate();
        resolve(new LoadError(`loading did not finish within ${ms} ms (the import deadline); its worker was stopped`));
      }, ms);
      t.worker.postMessage({ type: 'trial', id, bundle } satisfies ToWorker);
    });
    if (answer instanceof Error) throw answer;
    if (!answer.ok) throw new LoadError(fromWire(answer.error).message);
  } finally {
    clearTimeout(timer);
    if (t.waiting.size === 0) t.worker.unref();
  }
}

/** Stops the spare and trial workers (when the registry closes). */
export async function stopSpares(): Promise<void> {
  const all = [...[...spares.values()].map((s) => s.worker), ...(trials ? [trials.worker] : [])];
  spares.clear();
  trials = undefined;
  await Promise.all(all.map((w) => w.terminate()));
}

export class PluginHost {
  readonly #bundle: Bundle;
  readonly #limits: IsolationLimits;
  readonly #log: Logger;
  #events: HostEvents | undefined;
  /** What the plugin exported, as data (protocol.ts shapeOf). */
  #shape: unknown;
  #namespace: string | undefined;
  /** The worker serving now, or the start of the next one while it restarts. */
  #ready: Promise<Worker>;
  #worker: Worker | undefined;
  readonly #calls = new Map<CallId, PendingCall>();
  readonly #rules = new Map<number, PendingRule>();
  #seq = 0;
  #crashes: number[] = [];
  #lastCrash: string | undefined;
  #disabled: string | undefined;
  #closed = false;
  #retiring = false;
  readonly #stopping = new WeakSet<Worker>();
  /** Each worker's private port: all Folio says to the worker, and all it takes from it once loaded. */
  readonly #ports = new WeakMap<Worker, MessagePort>();
  // The heartbeat: a ping in flight since `#pingAt`; unanswered for cpuTimeoutMs, the worker is stopped.
  #heartbeat: NodeJS.Timeout | undefined;
  #pingAt: number | undefined;
  #pingSeq = 0;

  private constructor(bundle: Bundle, limits: IsolationLimits, log: Logger) {
    this.#bundle = bundle;
    this.#limits = limits;
    this.#log = log;
    this.#ready = this.#start();
  }

  /** Starts the plugin's worker; resolves once it has loaded, or fails (a LoadError) as the load did. */
  static async start(bundle: Bundle, limits: IsolationLimits, log: Logger): Promise<PluginHost> {
    const host = new PluginHost(bundle, limits, log);
    try {
      await host.#ready;
    } catch (err) {
      host.close();
      throw err;
    }
    return host;
  }

  /** Where crashes and a disabling are reported (the registry, once this version serves). */
  listen(events: HostEvents): void {
    this.#events = events;
  }

  /** Degraded: the worker was stopped or crashed at least once since this version loaded. */
  get health(): { degraded: boolean; lastCrash: string | undefined; disabled: string | undefined } {
    return { degraded: this.#lastCrash !== undefined, lastCrash: this.#lastCrash, disabled: this.#disabled };
  }

  /**
   * The registry entry: what the plugin exported, validated here by the same rules as an
   * in-process plugin, with handlers and a rule that send messages to the worker.
   */
  entry(): PluginEntry {
    const shape = this.#shape;
    const fns = isObject(shape) && isObject(shape.functions) ? shape.functions : {};
    const withProxies = (v: unknown, at: string[]): unknown => {
      if (v === FUNCTION) {
        if (at.length === 1 && at[0] === 'visible') return (caller: Caller) => this.#visible(caller);
        if (at.length === 3 && at[0] === 'prompts' && at[2] === 'render') {
          const name = at[1]!;
          return (args: Record<string, string>, ctx: PromptContext) => this.#prompt(name, args, ctx);
        }
        if (at.length === 3 && at[0] === 'functions' && at[2] === 'handler' && Object.hasOwn(fns, at[1]!)) {
          const fn = at[1]!;
          return (args: Record<string, unknown>, ctx: Context) => this.#call(fn, args, ctx);
        }
        return () => {
          throw new Error(`${at.join('.')} cannot be called from outside the plugin's worker`);
        };
      }
      if (Array.isArray(v)) return v.map((x, i) => withProxies(x, [...at, String(i)]));
      if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, withProxies(x, [...at, k])]));
      return v;
    };
    const plugin = buildPlugin(withProxies(shape, []), this.#bundle.version);
    this.#namespace = plugin.namespace;
    return plugin;
  }

  /** Stops the worker once the calls it is running have finished (a newer version took over). */
  retire(): void {
    this.#retiring = true;
    if (this.#calls.size === 0) this.close();
  }

  /** Stops the worker now; calls still running fail. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopHeartbeat();
    const worker = this.#worker;
    this.#worker = undefined;
    this.#fail(worker, (p) => new Aborted(`${p.what} was stopped: its plugin was unloaded`));
    if (worker) {
      this.#stopping.add(worker);
      void worker.terminate();
    }
  }

  // ---- worker lifecycle ------------------------------------------------------------------------

  #spawn(): { worker: Worker; port: MessagePort } {
    const worker = takeSpare(this.#limits.heapMb);
    const { port1, port2 } = new MessageChannel();
    worker.postMessage({ type: 'load', bundle: this.#bundle, port: port2 } satisfies ToWorker, [port2]);
    this.#ports.set(worker, port1);
    return { worker, port: port1 };
  }

  /** A message to the worker's own module, on its private port. */
  #post(worker: Worker, m: ToWorker): void {
    this.#ports.get(worker)?.postMessage(m);
  }

  /** Spawns a worker and waits for its plugin to load, within the import deadline. */
  async #start(): Promise<Worker> {
    const { worker, port } = this.#spawn();
    const ms = this.#limits.importTimeoutMs;
    // One set of listeners for the worker's whole life (an 'error' without a listener would throw here).
    let loading: { resolve(shape: unknown): void; reject(err: Error): void } | undefined;
    let reason: string | undefined;
    port.on('message', (raw: unknown) => {
      const m = decodeFromWorker(raw);
      if (!loading) return this.#receive(worker, m);
      if (m.type === 'ready') loading.resolve(m.shape);
      else loading.reject(new LoadError(`unexpected first message '${m.type}' from the plugin's worker`));
    });
    // parentPort, which the plugin's code can reach too: only a failed load is said there (see worker.ts).
    let ignored = false;
    worker.on('message', (raw: unknown) => {
      const m = decodeFromWorker(raw);
      if (loading && m.type === 'load-failed') return loading.reject(new LoadError(fromWire(m.error).message));
      if (ignored) return;
      ignored = true;
      this.#log.warn(
        { dir: this.#bundle.dir, namespace: this.#namespace },
        `isolated plugin ${this.#namespace ?? this.#bundle.dir} posted on its worker's parentPort; such messages are ignored`,
      );
    });
    worker.on('error', (err: Error) => {
      reason ??= this.#deathReason(err);
    });
    worker.on('exit', (code) => {
      port.close();
      if (loading) loading.reject(new LoadError(`its worker ${reason ?? `exited (code ${code})`} while loading`));
      else if (!this.#stopping.has(worker)) this.#died(worker, reason ?? `exited (code ${code})`);
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      const shape = await new Promise<unknown>((resolve, reject) => {
        loading = { resolve, reject };
        timer = setTimeout(
          () => reject(new LoadError(`loading did not finish within ${ms} ms (the import deadline); its worker was stopped`)),
          ms,
        );
      });
      this.#shape ??= shape;
    } catch (err) {
      this.#stopping.add(worker);
      void worker.terminate();
      throw err;
    } finally {
      loading = undefined;
      clearTimeout(timer);
    }
    if (this.#closed) {
      this.#stopping.add(worker);
      void worker.terminate();
      throw new LoadError('unloaded while starting');
    }
    this.#worker = worker;
    this.#pingAt = undefined;
    this.#startHeartbeat();
    return worker;
  }

  #deathReason(err: Error): string {
    if ((err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') return `ran out of memory (heap limit ${this.#limits.heapMb} MB)`;
    return `crashed: ${err.message}`;
  }

  #startHeartbeat(): void {
    this.#stopHeartbeat();
    const ms = this.#limits.cpuTimeoutMs;
    const every = Math.max(10, Math.floor(ms / 4));
    let lastTick = performance.now();
    this.#heartbeat = setInterval(() => {
      const worker = this.#worker;
      const now = performance.now();
      // Folio's own thread was late for this tick (busy, or a busy machine): that delay is not the
      // worker's, so the ping's clock is moved on by it (a pong may be waiting behind this tick).
      const lateBy = now - lastTick - every;
      lastTick = now;
      if (!worker) return;
      if (this.#pingAt !== undefined && lateBy > every) this.#pingAt += lateBy;
      if (this.#pingAt === undefined) {
        this.#pingAt = now;
        this.#post(worker, { type: 'ping', seq: ++this.#pingSeq } satisfies ToWorker);
      } else if (now - this.#pingAt > ms) {
        this.#stopping.add(worker);
        void worker.terminate();
        this.#died(worker, `computed for more than ${ms} ms without a pause (the CPU deadline); its worker was stopped`);
      }
    }, every);
    this.#heartbeat.unref();
  }

  #stopHeartbeat(): void {
    clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
  }

  /** The worker is gone: its calls fail, and it restarts with backoff, or the plugin is disabled. */
  #died(worker: Worker, reason: string): void {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    this.#stopHeartbeat();
    const errorIds: string[] = [];
    this.#fail(worker, (p) => {
      const errorId = randomUUID();
      errorIds.push(errorId);
      return new FunctionFailed(`${p.what} did not finish: the plugin ${reason}`, errorId);
    });
    this.#log.error({ dir: this.#bundle.dir, namespace: this.#namespace, errorIds }, `isolated plugin ${reason}`);
    this.#crashed(reason);
  }

  /** Counts a crash; restarts after a backoff, or disables the plugin when it keeps crashing. */
  #crashed(reason: string): void {
    const now = Date.now();
    this.#crashes = [...this.#crashes.filter((t) => now - t < this.#limits.crashWindowMs), now];
    this.#lastCrash = `${new Date(now).toISOString()}: ${reason}`;
    if (this.#closed || this.#retiring) return this.close();
    if (this.#crashes.length >= this.#limits.maxCrashes) {
      this.#disabled = `disabled after ${this.#crashes.length} crashes within ${Math.round(this.#limits.crashWindowMs / 1000)} s (last: ${reason}); change a file of the plugin to load it again`;
      this.#ready = Promise.reject(new Error(this.#disabled));
      this.#ready.catch(() => {});
      this.close();
      this.#events?.disabled(this.#disabled);
      return;
    }
    const delay = 100 * 2 ** (this.#crashes.length - 1);
    this.#ready = sleep(delay).then(() => {
      if (this.#closed) throw new Error('unloaded');
      return this.#start();
    });
    this.#ready.catch((err: unknown) => {
      // A restart that does not load is one more crash, after its own backoff.
      if (this.#closed || this.#worker) return;
      const why = `failed to restart: ${(err as Error).message}`;
      this.#log.error({ dir: this.#bundle.dir, namespace: this.#namespace }, `isolated plugin ${why}`);
      this.#crashed(why);
    });
  }

  /** Rejects the calls and rules running on `worker`. */
  #fail(worker: Worker | undefined, error: (p: PendingCall) => Error): void {
    for (const [id, p] of this.#calls)
      if (!worker || p.worker === worker) {
        this.#calls.delete(id);
        p.cleanup();
        p.reject(error(p));
      }
    for (const [id, r] of this.#rules)
      if (!worker || r.worker === worker) {
        this.#rules.delete(id);
        clearTimeout(r.timer);
        r.reject(new Error('the plugin stopped before its rule answered'));
      }
  }

  // ---- calls -----------------------------------------------------------------------------------

  async #call(fn: string, args: Record<string, unknown>, ctx: Context): Promise<unknown> {
    const what = `${this.#namespace}.${fn}`;
    if (this.#disabled) throw new FunctionFailed(`${what} is not available: the plugin was ${this.#disabled}`, randomUUID());
    const worker = await this.#ready;
    if (ctx.signal.aborted) throw ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error('aborted');
    const id: CallId = randomUUID();
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const reason = ctx.signal.reason instanceof Error ? ctx.signal.reason.message : 'aborted';
        this.#post(worker, { type: 'abort', id, reason } satisfies ToWorker);
        this.#settle(id);
        reject(new Error(reason));
      };
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      this.#calls.set(id, { what, worker, ctx, resolve, reject, cleanup: () => ctx.signal.removeEventListener('abort', onAbort) });
      // The caller's surface, as the dispatcher's ctx.ref names functions for it, so hints written in
      // the worker name them the same way (describe.ts callRef is the one rule).
      const surface = ctx.ref('a.b') === 'a__b' ? 'mcp' : 'curl';
      this.#post(worker, { type: 'call', id, fn, args, caller: ctx.caller, budget: ctx.budget, surface } satisfies ToWorker);
    });
  }

  /** Forgets a call (answered or abandoned); a retiring version stops when its last call is done. */
  #settle(id: CallId): PendingCall | undefined {
    const p = this.#calls.get(id);
    if (!p) return undefined;
    this.#calls.delete(id);
    p.cleanup();
    if (this.#retiring && this.#calls.size === 0) this.close();
    return p;
  }

  async #visible(caller: Caller): Promise<unknown> {
    if (this.#disabled) return false;
    const worker = await this.#ready;
    const id = ++this.#seq;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#rules.delete(id);
        resolve(false);
      }, this.#limits.visibleTimeoutMs);
      timer.unref();
      this.#rules.set(id, { worker, resolve, reject, timer });
      this.#post(worker, { type: 'visible', id, caller } satisfies ToWorker);
    });
  }

  /**
   * A prompt's render, in the worker. The surface's deadline answers the client; the CPU deadline
   * stops a worker that spins; this timer only forgets a render that never answers.
   */
  async #prompt(name: string, args: Record<string, string>, ctx: PromptContext): Promise<unknown> {
    if (this.#disabled)
      throw new FunctionFailed(`prompt ${this.#namespace}.${name} is not available: the plugin was ${this.#disabled}`, randomUUID());
    const worker = await this.#ready;
    const id = ++this.#seq;
    const answer = await new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#rules.delete(id);
        reject(new Error(`prompt ${name} did not answer`));
      }, PROMPT_FORGET_MS);
      timer.unref();
      this.#rules.set(id, { worker, resolve, reject, timer });
      const surface = ctx.ref('a.b') === 'a__b' ? 'mcp' : 'curl';
      this.#post(worker, { type: 'prompt', id, name, args, caller: ctx.caller, surface } satisfies ToWorker);
    });
    const v = answer as { text: string } | { not: string };
    if ('text' in v) return v.text;
    throw new Error(`prompt ${name} rendered ${v.not}, not a string`);
  }

  // ---- messages from the worker ---------------------------------------------------------------
  // Nothing the worker sends may throw here: an exception in a message listener would be uncaught and
  // end the process. Each message is decoded first (protocol.ts), and a message Folio cannot act on,
  // or whose handling throws, fails only the call it names.

  #receive(worker: Worker, m: FromWorker | Invalid): void {
    try {
      if (m.type === 'invalid') this.#unusable(worker, m.id, m.reason);
      else this.#onMessage(worker, m);
    } catch (err) {
      this.#unusable(worker, 'id' in m ? m.id : undefined, 'a message Folio could not act on', err);
    }
  }

  /** A message Folio will not act on: logged with an error id, and the call (or rule) it names fails with that id. */
  #unusable(worker: Worker, id: CallId | number | undefined, reason: string, err?: unknown): void {
    const errorId = randomUUID();
    const p = typeof id === 'string' ? this.#runningOn(worker, id) : undefined;
    this.#log.error(
      { errorId, dir: this.#bundle.dir, namespace: this.#namespace, ...(p ? { fn: p.what } : {}), ...(err ? { err } : {}) },
      `isolated plugin ${this.#namespace} sent ${reason}`,
    );
    if (p) {
      this.#settle(id as CallId);
      p.reject(new FunctionFailed(`${p.what} failed: its plugin sent an answer Folio could not read`, errorId));
      return;
    }
    const r = typeof id === 'number' ? this.#rules.get(id) : undefined;
    if (r && r.worker === worker) {
      this.#rules.delete(id as number);
      clearTimeout(r.timer);
      r.reject(new FunctionFailed('the plugin sent an answer Folio could not read', errorId));
    }
  }

  /** The call `id` if this worker is running it: what the worker says about any other call is not acted on. */
  #runningOn(worker: Worker, id: CallId): PendingCall | undefined {
    const p = this.#calls.get(id);
    return p?.worker === worker ? p : undefined;
  }

  #onMessage(worker: Worker, m: FromWorker): void {
    switch (m.type) {
      case 'pong':
        if (m.seq === this.#pingSeq) this.#pingAt = undefined;
        return;
      case 'result': {
        if (!this.#runningOn(worker, m.id)) return this.#notRunning(m);
        const p = this.#settle(m.id)!;
        if (!m.ok) return p.reject(fromWire(m.error));
        try {
          p.resolve(resultOf(m.value));
        } catch (err) {
          // JSON text that is not JSON: only a raw message makes that (the worker sends JSON.stringify's).
          const errorId = randomUUID();
          this.#log.error(
            { errorId, err, fn: p.what, namespace: this.#namespace },
            `isolated plugin ${this.#namespace} sent a result that is not JSON`,
          );
          p.reject(new FunctionFailed(`${p.what} failed: its plugin sent an answer Folio could not read`, errorId));
        }
        return;
      }
      case 'prompt-result':
      case 'visible-result': {
        const r = this.#rules.get(m.id);
        if (!r || r.worker !== worker) return this.#notRunning(m);
        this.#rules.delete(m.id);
        clearTimeout(r.timer);
        if (m.ok) r.resolve(m.value);
        else r.reject(fromWire(m.error));
        return;
      }
      case 'progress': {
        const p = this.#runningOn(worker, m.id);
        if (!p) return this.#notRunning(m);
        p.ctx.progress(m.progress, m.total, m.message);
        return;
      }
      case 'log': {
        const log = this.#runningOn(worker, m.id)?.ctx.log ?? this.#log;
        log[m.level]((typeof m.obj === 'object' && m.obj !== null) || typeof m.obj === 'string' ? m.obj : { value: m.obj }, m.msg);
        return;
      }
      case 'service': {
        const p = this.#runningOn(worker, m.id);
        if (!p) {
          this.#notRunning(m);
          const refused = new Aborted('no such call is running in this plugin: a service is used only within the call it was given to');
          return this.#post(worker, { type: 'service-result', id: m.id, seq: m.seq, ok: false, error: toWire(refused) });
        }
        this.#service(worker, p, m).catch((err: unknown) => this.#unusable(worker, m.id, 'a service request Folio could not answer', err));
        return;
      }
      default:
        // 'ready', 'load-failed', 'trial-result' after loading: not a worker's to send now.
        this.#log.warn(
          { dir: this.#bundle.dir, namespace: this.#namespace },
          `isolated plugin ${this.#namespace} sent '${m.type}' out of turn; ignored`,
        );
        return;
    }
  }

  /**
   * A message for a call (or rule) this worker is not running: finished, another's, or made up. A late
   * answer after a timeout is ordinary; a service request is not, and says so louder. Never acted on.
   */
  #notRunning(m: Extract<FromWorker, { id: unknown }>): void {
    const level = m.type === 'service' ? 'warn' : 'debug';
    this.#log[level](
      { dir: this.#bundle.dir, namespace: this.#namespace, type: m.type },
      `isolated plugin ${this.#namespace} sent '${m.type}' for a call it is not running; dropped`,
    );
  }

  /**
   * ctx.services.<path>(...args) for a call in the worker, run here with the services of that call's
   * caller, as Folio recorded it when the call started (`p`): the message names the call, never the caller.
   */
  async #service(worker: Worker, p: PendingCall, m: Extract<FromWorker, { type: 'service' }>): Promise<void> {
    let answer: ToWorker;
    try {
      let target: unknown = p.ctx.services;
      let self: unknown = undefined;
      for (const key of m.path) {
        if (BLOCKED_KEYS.has(key) || target === null || (typeof target !== 'object' && typeof target !== 'function'))
          throw new TypeError(`ctx.services.${m.path.join('.')} is not a service`);
        self = target;
        target = (target as Record<string, unknown>)[key];
      }
      if (typeof target !== 'function') throw new TypeError(`ctx.services.${m.path.join('.')} is not a function`);
      const value: unknown = await (target as (...a: unknown[]) => unknown).apply(self, m.args);
      answer = { type: 'service-result', id: m.id, seq: m.seq, ok: true, value };
    } catch (err) {
      answer = { type: 'service-result', id: m.id, seq: m.seq, ok: false, error: toWire(err) };
    }
    try {
      this.#post(worker, answer);
    } catch (err) {
      // A value that cannot be cloned: the handler gets the error instead.
      this.#post(worker, { type: 'service-result', id: m.id, seq: m.seq, ok: false, error: toWire(err) });
    }
  }
}
