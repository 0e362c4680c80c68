// Helpers with no Folio import (so the bare Koa baseline does not load Folio's modules):
// child processes over IPC, their CPU from /proc, temp dirs, statistics.
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Node 24 (this process's own binary): children run on exactly the runtime `npm run bench` uses. */
export const NODE = process.execPath;

export function assertNode24(): void {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 24) throw new Error(`the benchmarks need Node 24 (got ${process.version}); run them with npm run bench or npx node`);
}

/**
 * `npm run bench -- --smoke` (CI): every benchmark at tiny sizes, to prove it still runs and
 * reports its figures; those figures mean nothing. run.ts sets BENCH_SMOKE=1 (children inherit it).
 */
export function isSmoke(): boolean {
  return process.env['BENCH_SMOKE'] === '1';
}

/** `full` normally, `quick` with --quick, `smoke` with --smoke. */
export function sized<T>(quick: boolean | undefined, full: T, quickValue: T, smoke: T): T {
  return isSmoke() ? smoke : quick ? quickValue : full;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function progress(msg: string): void {
  process.stderr.write(`[bench] ${msg}\n`);
}

export async function tempDir(prefix: string): Promise<string> {
  return mkdtemp(path.join(tmpdir(), `folio-bench-${prefix}-`));
}

export async function removeDir(dir: string | undefined): Promise<void> {
  if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 3 });
}

// --- child processes -----------------------------------------------------------------------------

export interface Child<Ready> {
  child: ChildProcess;
  /** The first message the child sends (its "ready" message). */
  ready: Promise<Ready>;
  /** Further messages, in order. */
  next(timeoutMs: number): Promise<unknown>;
  /** Asks the child to stop (IPC), waits for it to exit; SIGKILL after `timeoutMs`. */
  stop(timeoutMs?: number): Promise<number | null>;
}

/**
 * Runs `script` in a child process on this same Node 24 binary (`process.execPath`, which is what
 * `npx node` resolves to) with an IPC channel. The child reports with process.send and stops when
 * it gets {cmd:'stop'} or when the channel closes.
 */
export function spawnChild<Ready>(
  script: string,
  args: string[],
  opts: { execArgv?: string[]; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Child<Ready> {
  const child = fork(script, args, {
    execPath: NODE,
    execArgv: opts.execArgv ?? [],
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const queue: unknown[] = [];
  const waiters: Array<(m: unknown) => void> = [];
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exitWaiters: Array<() => void> = [];
  child.on('message', (m) => {
    const w = waiters.shift();
    if (w) w(m);
    else queue.push(m);
  });
  child.on('exit', (code, signal) => {
    exited = { code, signal };
    for (const w of exitWaiters.splice(0)) w();
  });
  const next = (timeoutMs: number): Promise<unknown> => {
    if (queue.length > 0) return Promise.resolve(queue.shift());
    return new Promise((resolve, reject) => {
      const onExit = () => {
        clearTimeout(timer);
        reject(new Error(`${path.basename(script)} exited (code ${exited?.code}, signal ${exited?.signal}) before reporting`));
      };
      const timer = setTimeout(() => {
        const i = waiters.indexOf(done);
        if (i >= 0) waiters.splice(i, 1);
        reject(new Error(`${path.basename(script)} did not report within ${timeoutMs} ms`));
      }, timeoutMs);
      const done = (m: unknown) => {
        clearTimeout(timer);
        const j = exitWaiters.indexOf(onExit);
        if (j >= 0) exitWaiters.splice(j, 1);
        resolve(m);
      };
      waiters.push(done);
      if (exited) onExit();
      else exitWaiters.push(onExit);
    });
  };
  const ready = next(opts.timeoutMs ?? 60_000).then((m) => {
    const msg = m as { error?: string };
    if (msg && typeof msg === 'object' && msg.error) throw new Error(`${path.basename(script)}: ${msg.error}`);
    return m as Ready;
  });
  ready.catch(() => {}); // reported by whoever awaits it
  const stop = async (timeoutMs = 15_000): Promise<number | null> => {
    if (!exited) {
      if (child.connected) child.send({ cmd: 'stop' });
      const gone = new Promise<void>((r) => exitWaiters.push(r));
      const timer = setTimeout(() => {
        if (!exited) child.kill('SIGKILL');
      }, timeoutMs);
      await gone;
      clearTimeout(timer);
    }
    return exited?.code ?? null;
  };
  return { child, ready, next, stop };
}

/** In a child: calls `close` once when the parent says stop, the channel closes, or on SIGTERM/SIGINT. */
export function stopOnParentRequest(close: () => Promise<void>): void {
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    close()
      .catch((err: unknown) => {
        process.stderr.write(`[bench child] close failed: ${(err as Error).stack ?? String(err)}\n`);
        process.exitCode = 1;
      })
      // process.exit (not a natural end) so --cpu-prof is written and no stray handle keeps us up.
      .finally(() => process.exit());
  };
  process.on('message', (m) => {
    if ((m as { cmd?: string })?.cmd === 'stop') stop();
  });
  process.on('disconnect', stop);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

export function send(msg: unknown): void {
  if (process.send) process.send(msg);
}

/** Sends to the parent and resolves once the message is handed over (safe to exit after). */
export function sendAndWait(msg: unknown): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send) return resolve();
    process.send(msg, () => resolve());
  });
}

// --- processes, from /proc (Linux) ------------------------------------------------------------------

const TICK_US = (() => {
  try {
    return 1e6 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  } catch {
    return 1e4; // 100 Hz, Linux's usual
  }
})();

export function readProc(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null; // gone meanwhile
  }
}

export function childrenOf(pid: number): number[] {
  return (readProc(`/proc/${pid}/task/${pid}/children`) ?? '').split(' ').filter(Boolean).map(Number);
}

export function tree(pid: number): number[] {
  return [pid, ...childrenOf(pid).flatMap(tree)];
}

/**
 * The root of a plugin's process tree: the child of Folio's process started for that folder (bwrap,
 * whose arguments bind the folder; without bubblewrap, env then node, allowed to read it). Folders
 * are named by their real path, as sandbox.ts names them. The node process
 * under bwrap is a grandchild: bwrap forks the PID namespace's first process, which forks node.
 */
export function pluginRoot(folioPid: number, dir: string): number | undefined {
  return childrenOf(folioPid).find((p) =>
    (readProc(`/proc/${p}/cmdline`) ?? '').split('\0').some((arg) => arg === dir || arg.endsWith(`=${dir}`)),
  );
}

/**
 * utime + stime of one process (every thread of it, not its children), in µs, read from outside
 * it: what the server costs the machine, with no help from the server.
 */
export function processCpuUs(pid: number): number {
  const stat = readProc(`/proc/${pid}/stat`);
  if (!stat) return 0;
  // Fields after "pid (comm)": state is field 3, utime 14, stime 15.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * TICK_US;
}

/** utime + stime of every process of the tree (each one's threads included), in µs. */
export function treeCpuUs(root: number): number {
  return tree(root).reduce((a, p) => a + processCpuUs(p), 0);
}

// --- statistics ----------------------------------------------------------------------------------

/** Nearest-rank percentile of `values` (need not be sorted). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function mean(values: number[]): number {
  return values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

export const round = (n: number, digits = 1): number => (Number.isFinite(n) ? Number(n.toFixed(digits)) : n);

export const mb = (bytes: number): number => round(bytes / 1024 / 1024, 1);

/**
 * A measured round cut into slices (bench/call.ts, bench/mcp.ts): each slice's length in whole
 * seconds (autocannon stops on its 1 s tick).
 */
export function sliceSeconds(durationS: number, slices: number): number {
  return Math.max(1, Math.round(durationS / slices));
}

/**
 * The order in which `servers` servers take their turns in each slice of round `round`: the first
 * one alternates from slice to slice (and so from round to round), so drift in the machine's speed
 * weighs on every server alike.
 */
export function turnOrder(servers: number, round: number, slices: number): number[][] {
  return Array.from({ length: slices }, (_, k) => {
    const order = Array.from({ length: servers }, (_, i) => i);
    return (round * slices + k) % 2 === 1 ? order.reverse() : order;
  });
}
