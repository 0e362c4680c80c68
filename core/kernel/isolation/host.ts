// Folio's side of an isolated plugin: one host process per plugin version (the pattern of VS Code's
// extension host and Grafana's backend plugins), started at load, under a sandbox (sandbox.ts) and
// limits that the OS enforces or Folio checks from outside:
//   - a heap limit (--max-old-space-size) and a resident-memory ceiling for the whole process tree
//     (read from /proc: it sees Buffers and ArrayBuffers, which the heap limit does not);
//   - a CPU deadline: a process that does not answer a ping for that long is computing without a
//     pause, and is killed;
//   - a cap on calls running at once, and a deadline for loading.
// Whatever the plugin does, only its process dies: its calls get a 500 with an error id and the
// reason, it is started again with backoff, and a plugin that keeps dying is disabled with the
// reason, for admins. A process with no call for isolation.idleStopSeconds is stopped, and the
// next call starts it again.
//
// The registry entry it makes (entry()) is an ordinary PluginEntry whose handlers and visible rule
// send messages: dispatch, the policy and every surface use it as they use an in-process plugin.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomInt, randomUUID } from 'node:crypto';
import { traced, tracingOn } from '../../contract/observe.ts';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { constants, tmpdir } from 'node:os';
import path, { basename } from 'node:path';
import type { Socket } from 'node:net';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { Aborted, FunctionFailed, PluginBusy } from '../../contract/errors.ts';
import { bytes, type Caller, type Context, type PromptContext } from '../../sdk/index.ts';
import { PACKAGE_ROOT, type Config, type Grant } from '../config.ts';
import { buildPlugin, type PluginEntry } from '../manifest.ts';
import { LoadError, type Bundle } from '../plugin-eval.ts';
import { grantCapabilities, requestedCapabilities, type CapabilityReport } from './capabilities.ts';
import { Channel } from './channel.ts';
import {
  decodeFromWorker,
  FUNCTION,
  UNCAUGHT_LINE,
  type CallId,
  type FromWorker,
  type Invalid,
  type ToWorker,
  type WireResult,
} from './protocol.ts';
import { launchPlan, sandboxKind, type Protections, type SandboxSetting } from './sandbox.ts';
import { fromWire, toWire } from './wire-error.ts';

export interface IsolationLimits {
  /** The process's JavaScript heap, in MB. */
  heapMb: number;
  /** The process tree's resident memory ceiling, in MB (external memory included). */
  memoryMb: number;
  /** How long the process may compute without answering Folio (a call, a rule, a timer: anything). */
  cpuTimeoutMs: number;
  /** How long evaluating the plugin's module may take. */
  importTimeoutMs: number;
  /** How long a visible() answer is waited for (the policy hides the namespace after that). */
  visibleTimeoutMs: number;
  /** Crashes within `crashWindowMs` that disable the plugin until its files change. */
  maxCrashes: number;
  crashWindowMs: number;
  /** Calls one process runs at once. */
  maxConcurrentCalls: number;
  /** A process with nothing to do for this long is stopped (0: never). */
  idleStopMs: number;
  /** The largest answer a call may send (limits.responseHardCapBytes). */
  maxResultBytes: number;
  sandbox: SandboxSetting;
  /** The operator's grants, by plugin folder name. */
  grants: Record<string, Grant>;
}

export interface HostEvents {
  /** The process kept dying: the plugin is no longer served. */
  disabled(reason: string): void;
  /** The process died and is started again (after a backoff). */
  restarting?(): void;
}

export type IsolationMode = 'process' | 'in-process';

/** The registry's isolation settings from the configuration. */
export function isolationSettings(config: Config): IsolationLimits & { modeFor(dir: string): IsolationMode } {
  const { mode, plugins, idleStopSeconds, ...limits } = config.isolation;
  return {
    ...limits,
    crashWindowMs: 60_000,
    idleStopMs: idleStopSeconds * 1000,
    visibleTimeoutMs: config.limits.visibleTimeoutMs,
    maxResultBytes: config.limits.responseHardCapBytes,
    modeFor: (dir) => isolationModeFor({ mode, plugins }, FIRST_PARTY, dir),
  };
}

/** Where Folio's own plugins live: in the package, under plugins/@folio, where nobody drops a plugin. */
export const FIRST_PARTY = path.join(PACKAGE_ROOT, 'plugins', '@folio');

/**
 * Where a plugin folder runs: the operator's choice for that folder (by folder name), else the
 * default; `third-party` puts every plugin in a process of its own except Folio's own (those in
 * `firstParty`). 'worker' is the former name of 'process'.
 */
export function isolationModeFor(
  settings: { mode: 'process' | 'worker' | 'in-process' | 'third-party'; plugins: Record<string, 'process' | 'worker' | 'in-process'> },
  firstParty: string,
  dir: string,
): IsolationMode {
  const named = (m: 'process' | 'worker' | 'in-process'): IsolationMode => (m === 'in-process' ? 'in-process' : 'process');
  const chosen = settings.plugins[basename(dir)];
  if (chosen) return named(chosen);
  if (settings.mode !== 'third-party') return named(settings.mode);
  return path.dirname(dir) === firstParty ? 'in-process' : 'process';
}

// ---- the trial worker -----------------------------------------------------------------------------
// In-process plugins are first evaluated in one long-lived worker thread, so that a module that never
// finishes loading stops this worker and not Folio. Each trial's module is dropped after it loads.

const TRIAL_URL = new URL('./worker.ts', import.meta.url);
type TrialAnswer = Extract<FromWorker, { type: 'trial-result' }> | Error;
interface TrialWorker {
  worker: Worker;
  seq: number;
  waiting: Map<number, (answer: TrialAnswer) => void>;
}
let trials: TrialWorker | undefined;

function trialWorker(heapMb: number): TrialWorker {
  if (trials) return trials;
  // Folio's own flags and hooks (a test runner's, a profiler's) are not the plugin's.
  const worker = new Worker(TRIAL_URL, { resourceLimits: { maxOldGenerationSizeMb: heapMb }, execArgv: [], name: 'folio plugin trial' });
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

/** Stops the trial worker (when the registry closes). */
export async function stopSpares(): Promise<void> {
  const t = trials;
  trials = undefined;
  await t?.worker.terminate();
}

// ---- the host process -------------------------------------------------------------------------------

interface Proc {
  child: ChildProcess;
  channel: Channel;
  /** Why Folio killed it (a limit), when it did: said instead of the exit code. */
  killedFor: string | undefined;
  /** Folio stopped it on purpose (unload, idle, retire): its exit is not a crash. */
  stopping: boolean;
  stderr: string;
  /** What the process said ended it (an error nobody caught), from its stderr. */
  uncaught: string | undefined;
  /** It said V8 ran out of heap. */
  heapOom: boolean;
  watch: NodeJS.Timeout | undefined;
}

interface PendingCall {
  what: string;
  /** Service requests of this call Folio is running now. */
  services: number;
  proc: Proc;
  ctx: Context;
  resolve(v: unknown): void;
  reject(e: Error): void;
  cleanup(): void;
}

interface PendingRule {
  proc: Proc;
  resolve(v: unknown): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
}

/** How long a prompt render that never answers is remembered (the surface answered long before). */
const PROMPT_FORGET_MS = 120_000;
/** How often a process's resident memory is read. */
const WATCH_MS = 100;
/** The tail of a process's stderr kept to say why it died (V8's heap message is there). */
const STDERR_TAIL = 4096;
/** Lines of a plugin's own output logged per second; the rest are counted, not logged. */
const OUTPUT_PER_SECOND = 50;
/** Service requests one call may have running at once (each holds its answer in Folio until sent). */
const MAX_SERVICES_PER_CALL = 64;

const BLOCKED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
/** Messages whose every field is JSON data, sent as JSON text (channel.ts); the rest in V8's format. */
const AS_JSON = new Set<ToWorker['type']>(['call', 'ping', 'abort', 'visible', 'prompt']);

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

/** The error a process said ended it (UNCAUGHT_LINE), if this output of it says so. */
function uncaughtIn(output: string): string | undefined {
  const at = output.lastIndexOf(UNCAUGHT_LINE);
  if (at < 0) return undefined;
  const line = output.slice(at + UNCAUGHT_LINE.length).split('\n', 1)[0]!;
  return line.slice(0, 600);
}

/** SIGKILL to the process's group (it was started detached: its own group), else to it alone. */
function killGroup(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

const PAGE_KB = 4;

/** A process and its descendants (Linux /proc), at most a few levels and a few hundred. */
export function processTree(pid: number): number[] {
  const out: number[] = [];
  const visit = (p: number, depth: number): void => {
    if (depth > 8 || out.length >= 256) return;
    let children: string;
    try {
      children = readFileSync(`/proc/${p}/task/${p}/children`, 'utf8');
    } catch {
      return;
    }
    out.push(p);
    for (const c of children.split(' ').filter(Boolean)) visit(Number(c), depth + 1);
  };
  visit(pid, 0);
  return out;
}

/** Resident memory of these processes, in MB (statm, read synchronously: a few microseconds each); null when none is left. */
export function rssMb(pids: readonly number[]): number | null {
  let pages = 0;
  let seen = 0;
  for (const p of pids) {
    try {
      pages += Number(readFileSync(`/proc/${p}/statm`, 'utf8').split(' ')[1]);
      seen++;
    } catch {
      // Gone meanwhile.
    }
  }
  return seen === 0 ? null : (pages * PAGE_KB) / 1024;
}

export class PluginHost {
  readonly #bundle: Bundle;
  readonly #limits: IsolationLimits;
  readonly #log: Logger;
  readonly #capabilities: CapabilityReport;
  readonly #sandbox: 'bubblewrap' | 'permission-model';
  #protections: Protections | undefined;
  #scratch: string | undefined;
  #events: HostEvents | undefined;
  /** What the plugin exported, as data (protocol.ts shapeOf). */
  #shape: unknown;
  #namespace: string | undefined;
  /** The process serving now, or the start of the next one; undefined while stopped for idleness. */
  #ready: Promise<Proc> | undefined;
  #proc: Proc | undefined;
  readonly #calls = new Map<CallId, PendingCall>();
  readonly #rules = new Map<number, PendingRule>();
  #seq = 0;
  #crashes: number[] = [];
  #lastCrash: string | undefined;
  #disabled: string | undefined;
  #closed = false;
  #retiring = false;
  #idle: NodeJS.Timeout | undefined;
  // The heartbeat: a ping in flight since `#pingAt`; unanswered for cpuTimeoutMs, the process is killed.
  #heartbeat: NodeJS.Timeout | undefined;
  #pingAt: number | undefined;
  #pingSeq = 0;
  #outputBudget = { second: 0, lines: 0, dropped: 0 };
  /** Calls admitted and not yet answered, including those waiting for the process to start. */
  #admitted = 0;
  /** The last visible() answers, by caller, for a request that finds the process stopped (idle). */
  readonly #visibleSeen = new Map<string, boolean>();

  private constructor(bundle: Bundle, limits: IsolationLimits, log: Logger) {
    this.#bundle = bundle;
    this.#limits = limits;
    this.#log = log;
    this.#capabilities = grantCapabilities(requestedCapabilities(bundle.dir), limits.grants[basename(bundle.dir)]);
    this.#sandbox = sandboxKind(limits.sandbox);
  }

  /** Starts the plugin's process; resolves once it has loaded, or fails (a LoadError) as the load did. */
  static async start(bundle: Bundle, limits: IsolationLimits, log: Logger): Promise<PluginHost> {
    let host: PluginHost;
    try {
      host = new PluginHost(bundle, limits, log);
    } catch (err) {
      throw err instanceof LoadError ? err : new LoadError((err as Error).message);
    }
    try {
      await host.#wake();
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

  /** Degraded: the process was killed or crashed at least once since this version loaded. */
  get health(): { degraded: boolean; lastCrash: string | undefined; disabled: string | undefined } {
    return { degraded: this.#lastCrash !== undefined, lastCrash: this.#lastCrash, disabled: this.#disabled };
  }

  /** Whether its process is up now (false while stopped for idleness, restarting, or disabled). */
  get running(): boolean {
    return this.#proc !== undefined;
  }

  /** What holds around this plugin, and what it asked for and was given: for plugin_status. */
  get sandbox(): {
    kind: Protections['kind'];
    running: boolean;
    pid: number | null;
    holds: string[];
    missing: string[];
    capabilities: CapabilityReport;
  } {
    return {
      kind: this.#sandbox,
      running: this.#proc !== undefined,
      pid: this.#proc?.child.pid ?? null,
      holds: this.#protections?.holds ?? [],
      missing: this.#protections?.missing ?? [],
      capabilities: this.#capabilities,
    };
  }

  /**
   * The registry entry: what the plugin exported, validated here by the same rules as an
   * in-process plugin, with handlers and a rule that send messages to the process.
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
          throw new Error(`${at.join('.')} cannot be called from outside the plugin's process`);
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

  /** Stops the process once the calls it is running have finished (a newer version took over). */
  retire(): void {
    this.#retiring = true;
    if (this.#calls.size === 0) this.close();
  }

  /** Stops the process now; calls still running fail. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#ready = undefined;
    clearTimeout(this.#idle);
    this.#stopHeartbeat();
    const proc = this.#proc;
    this.#proc = undefined;
    this.#fail(proc, (p) => new Aborted(`${p.what} was stopped: its plugin was unloaded`));
    if (proc) this.#stop(proc);
    if (this.#scratch) rmSync(this.#scratch, { recursive: true, force: true });
  }

  // ---- process lifecycle ---------------------------------------------------------------------------

  /** The serving process: the one running, the one starting, or a new one (after an idle stop). */
  #wake(): Promise<Proc> {
    if (this.#disabled) return Promise.reject(new Error(this.#disabled));
    if (this.#closed) return Promise.reject(new Aborted('its plugin was unloaded'));
    if (!this.#ready) {
      const first = this.#shape === undefined;
      const ready = this.#start();
      this.#ready = ready;
      // A start after an idle stop that fails is a crash: counted, and retried with backoff. (A
      // first start that fails is a failed load, which start() reports.)
      ready.catch((err: unknown) => {
        if (first || this.#ready !== ready || this.#closed) return;
        this.#ready = undefined;
        this.#crashed(`failed to start again: ${(err as Error).message}`);
      });
    }
    return this.#ready;
  }

  #stop(proc: Proc): void {
    proc.stopping = true;
    clearInterval(proc.watch);
    proc.channel.close();
    killGroup(proc.child);
  }

  /** Kills a process over a limit; its exit reports `reason`. */
  #kill(proc: Proc, reason: string): void {
    proc.killedFor ??= reason;
    clearInterval(proc.watch);
    killGroup(proc.child);
  }

  #spawn(): Proc {
    this.#scratch ??= mkdtempSync(path.join(tmpdir(), `folio-plugin-${basename(this.#bundle.dir).replace(/[^\w.-]/g, '_')}-`));
    const plan = launchPlan({
      dir: this.#bundle.dir,
      scratch: this.#scratch,
      heapMb: this.#limits.heapMb,
      granted: this.#capabilities.granted,
      sandbox: this.#sandbox,
    });
    this.#protections = plan.protections;
    // Its own process group (detached), so that killing it kills whatever it started too.
    const child = spawn(plan.command, plan.args, {
      env: plan.env,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      cwd: this.#bundle.dir,
      detached: true,
    });
    const maxFrame = this.#maxFrame();
    const proc: Proc = {
      child,
      channel: undefined as unknown as Channel,
      killedFor: undefined,
      stopping: false,
      stderr: '',
      uncaught: undefined,
      heapOom: false,
      watch: undefined,
    };
    proc.channel = new Channel(child.stdio[3] as Socket, maxFrame, {
      message: (raw) => this.#onFrame(proc, raw),
      broken: (reason) => this.#kill(proc, `${reason}; its process was killed`),
    });
    child.stdout?.setEncoding('utf8');
    child.stderr?.setEncoding('utf8');
    child.stdout?.on('data', (s: string) => this.#output('info', s));
    child.stderr?.on('data', (s: string) => {
      // V8's heap message comes before a native stack that can be longer than the tail kept.
      if (/heap out of memory|Reached heap limit/.test(proc.stderr.slice(-64) + s)) proc.heapOom = true;
      proc.stderr = (proc.stderr + s).slice(-STDERR_TAIL);
      // Kept apart from the tail: the error's stack, printed after it, can be longer than the tail.
      proc.uncaught = uncaughtIn(s) ?? proc.uncaught;
      this.#output('warn', s);
    });
    if (child.pid !== undefined) {
      const pid = child.pid;
      const ceiling = this.#limits.memoryMb;
      const adjusted = new Set<number>();
      let pids: number[] = [];
      let tick = 0;
      // Every WATCH_MS while calls run, every tenth tick while idle (a timer of the plugin's can
      // still allocate); the tree is walked again every 20 ticks (it rarely changes).
      proc.watch = setInterval(() => {
        tick++;
        if (this.#calls.size === 0 && tick % 10 !== 0) return;
        if (tick % 20 === 1 || pids.length === 0) {
          pids = processTree(pid);
          // The kernel's OOM killer, if the machine runs out first, is told to take the plugin, not Folio.
          for (const p of pids)
            if (!adjusted.has(p)) {
              adjusted.add(p);
              writeFile(`/proc/${p}/oom_score_adj`, '1000').catch(() => {});
            }
        }
        const mb = rssMb(pids);
        if (mb !== null && mb > ceiling)
          this.#kill(proc, `used ${Math.round(mb)} MB of memory, over its ${ceiling} MB ceiling; its process was killed`);
      }, WATCH_MS);
      proc.watch.unref();
    }
    proc.channel.send({
      type: 'load',
      bundle: this.#bundle,
      allowedHosts: this.#capabilities.granted.network,
      maxResultBytes: this.#limits.maxResultBytes,
      maxFrame,
    } satisfies ToWorker);
    return proc;
  }

  /** The largest frame either way: an answer at the hard cap, as JSON text, with room for its envelope (and the bundle). */
  #maxFrame(): number {
    return Math.max(this.#limits.maxResultBytes * 2 + 1024 * 1024, this.#bundle.code.length * 4 + 1024 * 1024);
  }

  /** A plugin's console output, logged as its own, within a rate (a flood is counted, not logged). */
  #output(level: 'info' | 'warn', s: string): void {
    if (this.#spend()) this.#log[level]({ namespace: this.#namespace, output: s.slice(0, 4096) }, 'isolated plugin output');
  }

  /** One line of the plugin's log budget (ctx.log and its console together); false past it this second. */
  #spend(): boolean {
    const b = this.#outputBudget;
    const second = Math.floor(Date.now() / 1000);
    if (b.second !== second) {
      if (b.dropped)
        this.#log.warn(
          { namespace: this.#namespace, dropped: b.dropped },
          `isolated plugin's log lines over ${OUTPUT_PER_SECOND} a second were dropped`,
        );
      this.#outputBudget = { second, lines: 0, dropped: 0 };
    }
    if (++this.#outputBudget.lines > OUTPUT_PER_SECOND) {
      this.#outputBudget.dropped++;
      return false;
    }
    return true;
  }

  #loading = new WeakMap<Proc, { resolve(shape: unknown): void; reject(err: Error): void }>();

  #onFrame(proc: Proc, raw: unknown): void {
    const m = decodeFromWorker(raw);
    const loading = this.#loading.get(proc);
    if (!loading) return this.#receive(proc, m);
    if (m.type === 'ready') loading.resolve(m.shape);
    else if (m.type === 'load-failed') loading.reject(new LoadError(fromWire(m.error).message));
    else loading.reject(new LoadError(`unexpected first message '${m.type}' from the plugin's process`));
  }

  /**
   * The signal that ended the process, from bubblewrap's exit code: it exits with 128 plus the
   * signal's number when what it ran was killed by one (process.abort(), the kernel's OOM killer).
   */
  #signalOf(code: number | null): string | undefined {
    if (this.#sandbox !== 'bubblewrap' || code === null || code <= 128) return undefined;
    return Object.entries(constants.signals).find(([, n]) => n === code - 128)?.[0];
  }

  /** Starts a process and waits for its plugin to load, within the import deadline. */
  async #start(): Promise<Proc> {
    const proc = this.#spawn();
    const ms = this.#limits.importTimeoutMs;
    const why = (code: number | null, signal: NodeJS.Signals | null): string => {
      if (proc.killedFor) return proc.killedFor;
      if (proc.heapOom) return `ran out of memory (heap limit ${this.#limits.heapMb} MB)`;
      if (proc.uncaught) return `ended on ${proc.uncaught}`;
      // Killed by a signal: what it printed last (a native stack, for an abort) says nothing more.
      const killedBy = signal ?? this.#signalOf(code);
      if (killedBy) return `was killed (${killedBy})`;
      // Else its last line, but not the version Node prints after an error.
      const last = proc.stderr
        .trim()
        .split('\n')
        .filter((l) => l.trim() && !/^Node\.js v\d/.test(l))
        .slice(-1)[0];
      return `exited (code ${code})${last ? `: ${last.slice(0, 500)}` : ''}`;
    };
    proc.child.on('error', (err) => {
      proc.killedFor ??= `could not start: ${err.message}`;
    });
    // 'exit', not 'close': a grandchild holding its pipes open does not keep a dead process serving.
    proc.child.on('exit', (code, signal) => {
      clearInterval(proc.watch);
      proc.channel.close();
      killGroup(proc.child);
      const loading = this.#loading.get(proc);
      if (loading) loading.reject(new LoadError(`its process ${why(code, signal)} while loading`));
      else if (!proc.stopping) this.#died(proc, why(code, signal));
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      const shape = await new Promise<unknown>((resolve, reject) => {
        this.#loading.set(proc, { resolve, reject });
        timer = setTimeout(
          () => reject(new LoadError(`loading did not finish within ${ms} ms (the import deadline); its process was stopped`)),
          ms,
        );
      });
      this.#shape ??= shape;
    } catch (err) {
      this.#stop(proc);
      throw err;
    } finally {
      this.#loading.delete(proc);
      clearTimeout(timer);
    }
    if (this.#closed) {
      this.#stop(proc);
      throw new LoadError('unloaded while starting');
    }
    this.#proc = proc;
    this.#pingAt = undefined;
    this.#startHeartbeat();
    this.#armIdle();
    return proc;
  }

  /** Stops the process after idleStopMs with nothing running; the next call starts it again. */
  #armIdle(): void {
    clearTimeout(this.#idle);
    if (this.#limits.idleStopMs <= 0 || this.#closed) return;
    this.#idle = setTimeout(() => {
      const proc = this.#proc;
      // A ping unanswered: it may be computing in a timer, which the heartbeat decides and reports;
      // stopped now, it would end without a word in plugin_status.
      if (!proc || this.#calls.size > 0 || this.#rules.size > 0 || this.#pingAt !== undefined) return this.#armIdle();
      this.#proc = undefined;
      this.#ready = undefined;
      this.#stopHeartbeat();
      this.#stop(proc);
      this.#log.debug({ namespace: this.#namespace }, 'isolated plugin idle: its process was stopped');
    }, this.#limits.idleStopMs);
    this.#idle.unref();
  }

  #startHeartbeat(): void {
    this.#stopHeartbeat();
    const ms = this.#limits.cpuTimeoutMs;
    const every = Math.max(10, Math.floor(ms / 4));
    let lastTick = performance.now();
    this.#heartbeat = setInterval(() => {
      const proc = this.#proc;
      const now = performance.now();
      // Folio's own thread was late for this tick (busy, or a busy machine): that delay is not the
      // plugin's, so the ping's clock is moved on by it (a pong may be waiting behind this tick).
      const lateBy = now - lastTick - every;
      lastTick = now;
      if (!proc) return;
      if (this.#pingAt !== undefined && lateBy > every) this.#pingAt += lateBy;
      if (this.#pingAt === undefined) {
        this.#pingAt = now;
        // A number the plugin cannot guess, so that it cannot answer for its own process while it spins.
        this.#pingSeq = randomInt(1, 2 ** 47);
        this.#post(proc, { type: 'ping', seq: this.#pingSeq });
      } else if (now - this.#pingAt > ms) {
        this.#kill(proc, `computed for more than ${ms} ms without a pause (the CPU deadline); its process was killed`);
      }
    }, every);
    this.#heartbeat.unref();
  }

  #stopHeartbeat(): void {
    clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
  }

  /**
   * Sends to the process. A call or a service answer that cannot be sent throws to its sender; a
   * ping, an abort or a rule for a process that is gone (its exit not yet seen) is not sent, and
   * must not throw where it is sent from (a timer: that would end Folio).
   */
  #post(proc: Proc, m: ToWorker): void {
    try {
      proc.channel.send(m, AS_JSON.has(m.type));
    } catch (err) {
      if (m.type === 'call' || m.type === 'service-result') throw err;
    }
  }

  /** The process is gone: its calls fail, and it restarts with backoff, or the plugin is disabled. */
  #died(proc: Proc, reason: string): void {
    if (this.#proc !== proc) return;
    this.#proc = undefined;
    this.#stopHeartbeat();
    clearTimeout(this.#idle);
    const errorIds: string[] = [];
    this.#fail(proc, (p) => {
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
    this.#events?.restarting?.();
    const ready = sleep(delay).then(() => {
      if (this.#closed) throw new Error('unloaded');
      return this.#start();
    });
    this.#ready = ready;
    ready.catch((err: unknown) => {
      // A restart that does not load is one more crash, after its own backoff.
      if (this.#closed || this.#proc || this.#ready !== ready) return;
      const why = `failed to restart: ${(err as Error).message}`;
      this.#log.error({ dir: this.#bundle.dir, namespace: this.#namespace }, `isolated plugin ${why}`);
      this.#crashed(why);
    });
  }

  /** Rejects the calls and rules running on `proc` (every one when none is named). */
  #fail(proc: Proc | undefined, error: (p: PendingCall) => Error): void {
    for (const [id, p] of this.#calls)
      if (!proc || p.proc === proc) {
        this.#calls.delete(id);
        p.cleanup();
        p.reject(error(p));
      }
    for (const [id, r] of this.#rules)
      if (!proc || r.proc === proc) {
        this.#rules.delete(id);
        clearTimeout(r.timer);
        r.reject(new Error('the plugin stopped before its rule answered'));
      }
  }

  // ---- calls -----------------------------------------------------------------------------------

  async #call(fn: string, args: Record<string, unknown>, ctx: Context): Promise<unknown> {
    const what = `${this.#namespace}.${fn}`;
    if (this.#disabled) throw new FunctionFailed(`${what} is not available: the plugin was ${this.#disabled}`, randomUUID());
    // Counted from here, not from when the process takes it: calls waiting for a start count too.
    if (this.#admitted >= this.#limits.maxConcurrentCalls)
      throw new PluginBusy(`${what} was not started: its plugin is already running ${this.#admitted} calls, as many as it may at once`, 1);
    this.#admitted++;
    try {
      // The round trip to the plugin's process, as one span when tracing is on.
      return tracingOn
        ? await traced('folio.plugin_host', { 'folio.plugin': this.#namespace ?? '', 'folio.function': what }, () =>
            this.#run(what, fn, args, ctx),
          )
        : await this.#run(what, fn, args, ctx);
    } finally {
      this.#admitted--;
    }
  }

  async #run(what: string, fn: string, args: Record<string, unknown>, ctx: Context): Promise<unknown> {
    const proc = await this.#wake();
    if (ctx.signal.aborted) throw ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error('aborted');
    const id: CallId = randomUUID();
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const reason = ctx.signal.reason instanceof Error ? ctx.signal.reason.message : 'aborted';
        this.#post(proc, { type: 'abort', id, reason });
        this.#settle(id);
        reject(new Error(reason));
      };
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      this.#calls.set(id, {
        what,
        services: 0,
        proc,
        ctx,
        resolve,
        reject,
        cleanup: () => ctx.signal.removeEventListener('abort', onAbort),
      });
      // The caller's surface, as the dispatcher's ctx.ref names functions for it, so hints written in
      // the process name them the same way (describe.ts callRef is the one rule).
      const surface = ctx.ref('a.b') === 'a__b' ? 'mcp' : 'curl';
      try {
        this.#post(proc, { type: 'call', id, fn, args, caller: ctx.caller, budget: ctx.budget, surface });
      } catch (err) {
        this.#settle(id);
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
  }

  /** Forgets a call (answered or abandoned); a retiring version stops when its last call is done. */
  #settle(id: CallId): PendingCall | undefined {
    const p = this.#calls.get(id);
    if (!p) return undefined;
    this.#calls.delete(id);
    p.cleanup();
    if (this.#calls.size === 0) {
      if (this.#retiring) this.close();
      else this.#armIdle();
    }
    return p;
  }

  async #visible(caller: Caller): Promise<unknown> {
    if (this.#disabled) return false;
    const key = `${caller.user.id}\u0000${caller.user.roles.join(',')}\u0000${caller.scopes.join(',')}`;
    if (!this.#proc) {
      // Stopped while idle: the answer this caller last had serves while the process starts (a
      // start takes longer than the policy waits), and a caller never seen is answered hidden.
      this.#wake().catch(() => {});
      return this.#visibleSeen.get(key) ?? false;
    }
    const proc = await this.#wake();
    const id = ++this.#seq;
    const answer = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#rules.delete(id);
        resolve(false);
      }, this.#limits.visibleTimeoutMs);
      timer.unref();
      this.#rules.set(id, { proc, resolve, reject, timer });
      this.#post(proc, { type: 'visible', id, caller });
    });
    if (typeof answer === 'boolean') {
      if (this.#visibleSeen.size >= 10_000) this.#visibleSeen.clear();
      this.#visibleSeen.set(key, answer);
    }
    return answer;
  }

  /**
   * A prompt's render, in the process. The surface's deadline answers the client; the CPU deadline
   * stops a process that spins; this timer only forgets a render that never answers.
   */
  async #prompt(name: string, args: Record<string, string>, ctx: PromptContext): Promise<unknown> {
    if (this.#disabled)
      throw new FunctionFailed(`prompt ${this.#namespace}.${name} is not available: the plugin was ${this.#disabled}`, randomUUID());
    const proc = await this.#wake();
    const id = ++this.#seq;
    const answer = await new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#rules.delete(id);
        reject(new Error(`prompt ${name} did not answer`));
      }, PROMPT_FORGET_MS);
      timer.unref();
      this.#rules.set(id, { proc, resolve, reject, timer });
      const surface = ctx.ref('a.b') === 'a__b' ? 'mcp' : 'curl';
      this.#post(proc, { type: 'prompt', id, name, args, caller: ctx.caller, surface });
    });
    const v = answer as { text: string } | { not: string };
    if ('text' in v) return v.text;
    throw new Error(`prompt ${name} rendered ${v.not}, not a string`);
  }

  // ---- messages from the process -----------------------------------------------------------------
  // Nothing the process sends may throw here: an exception in a message listener would be uncaught
  // and end Folio. Each message is decoded first (protocol.ts), and a message Folio cannot act on,
  // or whose handling throws, fails only the call it names.

  #receive(proc: Proc, m: FromWorker | Invalid): void {
    try {
      if (m.type === 'invalid') this.#unusable(proc, m.id, m.reason);
      else this.#onMessage(proc, m);
    } catch (err) {
      this.#unusable(proc, 'id' in m ? m.id : undefined, 'a message Folio could not act on', err);
    }
  }

  /** A message Folio will not act on: logged with an error id, and the call (or rule) it names fails with that id. */
  #unusable(proc: Proc, id: CallId | number | undefined, reason: string, err?: unknown): void {
    const errorId = randomUUID();
    const p = typeof id === 'string' ? this.#runningOn(proc, id) : undefined;
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
    if (r && r.proc === proc) {
      this.#rules.delete(id as number);
      clearTimeout(r.timer);
      r.reject(new FunctionFailed('the plugin sent an answer Folio could not read', errorId));
    }
  }

  /** The call `id` if this process is running it: what the process says about any other call is not acted on. */
  #runningOn(proc: Proc, id: CallId): PendingCall | undefined {
    const p = this.#calls.get(id);
    return p?.proc === proc ? p : undefined;
  }

  #onMessage(proc: Proc, m: FromWorker): void {
    switch (m.type) {
      case 'pong':
        if (m.seq === this.#pingSeq) this.#pingAt = undefined;
        return;
      case 'result': {
        if (!this.#runningOn(proc, m.id)) return this.#notRunning(m);
        const p = this.#settle(m.id)!;
        if (!m.ok) return p.reject(fromWire(m.error));
        try {
          p.resolve(resultOf(m.value));
        } catch (err) {
          // JSON text that is not JSON: only a hand-made message makes that (the process sends JSON.stringify's).
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
        if (!r || r.proc !== proc) return this.#notRunning(m);
        this.#rules.delete(m.id);
        clearTimeout(r.timer);
        if (m.ok) r.resolve(m.value);
        else r.reject(fromWire(m.error));
        return;
      }
      case 'progress': {
        const p = this.#runningOn(proc, m.id);
        if (!p) return this.#notRunning(m);
        p.ctx.progress(m.progress, m.total, m.message);
        return;
      }
      case 'log': {
        const log = this.#runningOn(proc, m.id)?.ctx.log;
        if (!log) return this.#notRunning(m);
        if (!this.#spend()) return;
        log[m.level]((typeof m.obj === 'object' && m.obj !== null) || typeof m.obj === 'string' ? m.obj : { value: m.obj }, m.msg);
        return;
      }
      case 'service': {
        const p = this.#runningOn(proc, m.id);
        if (!p) {
          this.#notRunning(m);
          const refused = new Aborted('no such call is running in this plugin: a service is used only within the call it was given to');
          return this.#post(proc, { type: 'service-result', id: m.id, seq: m.seq, ok: false, error: toWire(refused) });
        }
        if (p.services >= MAX_SERVICES_PER_CALL) {
          const refused = new Error(`a call may have ${MAX_SERVICES_PER_CALL} service requests running at once; await some first`);
          return this.#post(proc, { type: 'service-result', id: m.id, seq: m.seq, ok: false, error: toWire(refused) });
        }
        p.services++;
        this.#service(proc, p, m)
          .catch((err: unknown) => this.#unusable(proc, m.id, 'a service request Folio could not answer', err))
          .finally(() => p.services--);
        return;
      }
      default:
        // 'ready', 'load-failed', 'trial-result' after loading: not a process's to send now.
        this.#log.warn(
          { dir: this.#bundle.dir, namespace: this.#namespace },
          `isolated plugin ${this.#namespace} sent '${m.type}' out of turn; ignored`,
        );
        return;
    }
  }

  /**
   * A message for a call (or rule) this process is not running: finished, another's, or made up. A
   * late answer after a timeout is ordinary; a service request is not, and says so louder. Never acted on.
   */
  #notRunning(m: Extract<FromWorker, { id: unknown }>): void {
    const level = m.type === 'service' ? 'warn' : 'debug';
    this.#log[level](
      { dir: this.#bundle.dir, namespace: this.#namespace, type: m.type },
      `isolated plugin ${this.#namespace} sent '${m.type}' for a call it is not running; dropped`,
    );
  }

  /**
   * ctx.services.<path>(...args) for a call in the process, run here with the services of that call's
   * caller, as Folio recorded it when the call started (`p`): the message names the call, never the caller.
   */
  async #service(proc: Proc, p: PendingCall, m: Extract<FromWorker, { type: 'service' }>): Promise<void> {
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
      this.#post(proc, answer);
    } catch (err) {
      // A value that cannot cross: the handler gets the error instead.
      this.#post(proc, { type: 'service-result', id: m.id, seq: m.seq, ok: false, error: toWire(err) });
    }
  }
}
