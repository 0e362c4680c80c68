// (c) Memory across reloads: does the heap stay bounded when one plugin is reloaded hundreds of
// times and every reload is a new version? Each version carries a ~200 KB string constant, so a
// retained old version (its source and its constant) would show as ~400 KB per reload.
//
// Child processes (each `node --expose-gc bench/memory.ts --child=...`, on this Node 24 binary),
// one after the other, all on exactly the same module texts:
//   folio: write the new index.mjs, await folio.registry.reload(dir) (the watcher is off), then
//          call the function over HTTP once and check that the new version answers (the plugin
//          runs in-process, on the heap measured here);
//   naive: write the same text, then `await import(file + '?v=' + i)` and call the handler. Node
//          never unloads an ES module, so every version stays reachable from the module map: the
//          baseline that motivates Folio's loader (esbuild bundle + vm.compileFunction).
// Both run twice: with Node's default flags (as Folio runs), and with --no-compilation-cache. V8
// keeps every distinct compiled script (source and code) in an isolate-wide compilation cache that
// it empties only when the heap nears its limit, and with default flags that cache alone grows by
// one version per reload; the second run shows what the code itself keeps reachable. (Folio's
// loader now turns the cache off itself, so both folio runs should agree.)
// Before each measurement: gc() three times. Figures after `warmup` reloads are the "start".
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isSmoke, mb, progress, removeDir, round, sendAndWait, sized, spawnChild, tempDir } from './util.ts';

/** Bounded: later heap growth under this many KB per reload (a retained version costs >= 200 KB). */
export const BOUNDED_KB_PER_RELOAD = 10;
const CONSTANT_CHARS = 200_000;

export interface MemoryOptions {
  quick: boolean;
}

export interface MemPoint {
  reloads: number;
  heapUsedMB: number;
  rssMB: number;
  externalMB: number;
}

export interface MemorySeries {
  mode: 'folio' | 'naive';
  /** Extra V8 flags of this child ([] = Node's defaults, as Folio runs in production). */
  v8Flags: string[];
  points: MemPoint[];
  /** heapUsed growth from start to the last point, per reload. */
  heapGrowthKBPerReload: number;
  /** The same over the later part only (second checkpoint to the last). */
  lateHeapGrowthKBPerReload: number;
  rssGrowthKBPerReload: number;
  msPerReload: number;
  mismatches: number;
  bounded: boolean;
}

export interface MemoryResult {
  settings: { warmup: number; reloads: number; checkpoints: number[]; constantKB: number; boundedKBPerReload: number };
  /** folio and naive with default flags, then both again with --no-compilation-cache (diagnostic). */
  series: MemorySeries[];
  verdict: {
    /** Folio as it runs (default V8 flags). */
    folioBounded: boolean;
    /** Folio with V8's compilation cache off: what Folio's registry and loader themselves retain. */
    /** Not measured in a smoke run (no run with the compilation cache off). */
    folioBoundedWithoutCompilationCache: boolean | null;
    naiveBounded: boolean;
  };
}

// --- the module text of version v ---------------------------------------------------------------

let base: string | undefined;
function constantBody(): string {
  if (base) return base;
  // Deterministic pseudo-random text, so no two versions share a constant and nothing compresses.
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  let x = 0x2545f491;
  const out: string[] = [];
  for (let i = 0; i < CONSTANT_CHARS; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out.push(alphabet[(x >>> 0) % alphabet.length]!);
  }
  return (base = out.join(''));
}

export function memSource(v: number): string {
  return `// version ${v}
const BIG = ${JSON.stringify(`v${v}:` + constantBody())};
export default {
  namespace: 'mem',
  description: 'Memory benchmark plugin: a new version with a 200 KB constant each time.',
  catalogue: 'public',
  functions: {
    version: {
      description: 'Which version is serving, and the size of its constant.',
      handler: () => ({ v: ${v}, size: BIG.length }),
    },
  },
};
`;
}

// --- the child -----------------------------------------------------------------------------------

async function measure(reloads: number): Promise<MemPoint> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('gc() is not exposed: run with --expose-gc');
  // fetch() records a PerformanceResourceTiming per request (up to 250): the bench client's, not Folio's.
  performance.clearResourceTimings();
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  const m = process.memoryUsage();
  return { reloads, heapUsedMB: mb(m.heapUsed), rssMB: mb(m.rss), externalMB: mb(m.external) };
}

async function child(mode: 'folio' | 'naive', warmup: number, checkpoints: number[], scratch: string): Promise<MemorySeries> {
  const total = checkpoints[checkpoints.length - 1]!;
  const points: MemPoint[] = [];
  let mismatches = 0;
  let reloadMs = 0;
  try {
    let step: (v: number) => Promise<void>;
    let close = async () => {};
    if (mode === 'folio') {
      const { ADMIN_TOKEN, callFn, startBenchFolio } = await import('./lib.ts');
      const dir = path.join(scratch, 'plugins', 'mem');
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, 'index.mjs'), memSource(0));
      const dataDir = path.join(scratch, 'data');
      await mkdir(dataDir);
      // The loader's memory on Folio's own heap: the plugin runs in-process. (An isolated plugin's
      // versions live and die with their workers: test/integration/isolation.test.ts.)
      const b = await startBenchFolio({
        plugins: [path.join(scratch, 'plugins')],
        watch: false,
        dataDir,
        overrides: { isolation: { mode: 'in-process' } },
      });
      close = () => b.close();
      step = async (v) => {
        await writeFile(path.join(dir, 'index.mjs'), memSource(v));
        await b.folio.registry.reload(dir);
        const r = await callFn(b.url, ADMIN_TOKEN, 'mem', 'version');
        const got = r.status === 200 ? (JSON.parse(r.text) as { v: number; size: number }) : undefined;
        if (got?.v !== v || got.size !== CONSTANT_CHARS + `v${v}:`.length) mismatches++;
      };
    } else {
      const file = path.join(scratch, 'mem.mjs');
      step = async (v) => {
        await writeFile(file, memSource(v));
        const mod = (await import(`${pathToFileURL(file).href}?v=${v}`)) as {
          default: { functions: { version: { handler: () => { v: number } } } };
        };
        if (mod.default.functions.version.handler().v !== v) mismatches++;
      };
    }
    try {
      let v = 0;
      for (let i = 0; i < warmup; i++) await step(++v);
      points.push(await measure(0));
      for (let done = 1; done <= total; done++) {
        const t0 = performance.now();
        await step(++v);
        reloadMs += performance.now() - t0;
        if (checkpoints.includes(done)) points.push(await measure(done));
      }
    } finally {
      await close();
    }
  } finally {
    await removeDir(scratch);
  }
  const first = points[0]!;
  const last = points[points.length - 1]!;
  const second = points[1] ?? first;
  const perReload = (a: MemPoint, b: MemPoint, k: 'heapUsedMB' | 'rssMB') =>
    b.reloads === a.reloads ? 0 : round(((b[k] - a[k]) * 1024) / (b.reloads - a.reloads), 1);
  const late = perReload(second, last, 'heapUsedMB');
  return {
    mode,
    v8Flags: process.execArgv.filter((a) => a !== '--expose-gc'),
    points,
    heapGrowthKBPerReload: perReload(first, last, 'heapUsedMB'),
    lateHeapGrowthKBPerReload: late,
    rssGrowthKBPerReload: perReload(first, last, 'rssMB'),
    msPerReload: round(reloadMs / total, 1),
    mismatches,
    bounded: late < BOUNDED_KB_PER_RELOAD,
  };
}

// --- the parent ----------------------------------------------------------------------------------

export async function runMemory(opts: MemoryOptions): Promise<MemoryResult> {
  const warmup = sized(opts.quick, 20, 20, 3);
  const checkpoints = sized(opts.quick, [100, 250, 500], [50, 100, 200], [5, 10]);
  const runs: Array<{ mode: 'folio' | 'naive'; flags: string[] }> = [
    { mode: 'folio', flags: [] },
    { mode: 'naive', flags: [] },
    // Diagnostic: V8 keeps every distinct compiled script (source and code) in an isolate-wide
    // compilation cache that it empties only near the heap limit. Without it, what is left is
    // what the code itself keeps reachable.
    ...(isSmoke()
      ? []
      : [
          { mode: 'folio' as const, flags: ['--no-compilation-cache'] },
          { mode: 'naive' as const, flags: ['--no-compilation-cache'] },
        ]),
  ];
  const series: MemorySeries[] = [];
  for (const { mode, flags } of runs) {
    const name = `${mode}${flags.length ? ` ${flags.join(' ')}` : ''}`;
    progress(`memory: ${name}: ${warmup} warm-up + ${checkpoints.at(-1)} reloads in a child process (--expose-gc)`);
    // Made and removed here, so nothing stays behind even if the child has to be killed.
    const scratch = await tempDir(`memory-${mode}`);
    const c = spawnChild<{ series: MemorySeries }>(
      import.meta.filename,
      [`--child=${mode}`, `--dir=${scratch}`, `--warmup=${warmup}`, `--checkpoints=${checkpoints.join(',')}`],
      { execArgv: ['--expose-gc', ...flags], timeoutMs: 15 * 60_000 },
    );
    try {
      const { series: s } = await c.ready;
      progress(
        `memory: ${name}: heap ${s.points[0]!.heapUsedMB} -> ${s.points.at(-1)!.heapUsedMB} MB (${s.heapGrowthKBPerReload} KB/reload), ${s.msPerReload} ms/reload`,
      );
      series.push(s);
    } finally {
      await c.stop(30_000);
      await removeDir(scratch);
    }
  }
  const find = (mode: string, cache: boolean) =>
    series.find((s) => s.mode === mode && s.v8Flags.includes('--no-compilation-cache') !== cache);
  return {
    settings: {
      warmup,
      reloads: checkpoints.at(-1)!,
      checkpoints,
      constantKB: CONSTANT_CHARS / 1000,
      boundedKBPerReload: BOUNDED_KB_PER_RELOAD,
    },
    series,
    verdict: {
      folioBounded: find('folio', true)!.bounded,
      folioBoundedWithoutCompilationCache: find('folio', false)?.bounded ?? null,
      naiveBounded: find('naive', true)!.bounded,
    },
  };
}

export function formatMemory(r: MemoryResult): string {
  const lines = [
    `memory: heapUsed/RSS in MB after gc(), one plugin reloaded ${r.settings.reloads} times (a new version each time, with a ${r.settings.constantKB} KB constant); start = after ${r.settings.warmup} warm-up reloads`,
  ];
  for (const s of r.series) {
    const name = `${s.mode === 'folio' ? 'folio registry.reload' : "naive import('?v=i')"}${s.v8Flags.length ? ` ${s.v8Flags.join(' ')}` : ''}`;
    lines.push(
      `  ${name}`,
      `    ${s.points.map((p) => `${p.reloads === 0 ? 'start' : `@${p.reloads}`} ${p.heapUsedMB}/${p.rssMB}`).join('   ')}`,
      `    heap +${s.heapGrowthKBPerReload} KB/reload (after @${s.points[1]?.reloads}: +${s.lateHeapGrowthKBPerReload}), RSS +${s.rssGrowthKBPerReload} KB/reload, ${s.msPerReload} ms/reload` +
        `${s.mismatches ? `, ${s.mismatches} WRONG ANSWERS` : ''}  -> ${s.bounded ? 'BOUNDED' : 'GROWS'}`,
    );
  }
  const v = r.verdict;
  lines.push(
    `  verdict: folio as run (default V8 flags) ${v.folioBounded ? 'bounded' : 'grows'}; folio's own retention (compilation cache off) ${v.folioBoundedWithoutCompilationCache === null ? 'not run' : v.folioBoundedWithoutCompilationCache ? 'bounded' : 'grows'}; naive import ${v.naiveBounded ? 'bounded' : 'grows'}`,
  );
  return lines.join('\n');
}

if (import.meta.main) {
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const mode = arg('child');
  const dir = arg('dir');
  if ((mode !== 'folio' && mode !== 'naive') || !dir) {
    process.stderr.write('memory.ts is run by bench/run.ts (npm run bench -- --only=memory)\n');
    process.exit(2);
  }
  let msg: unknown;
  try {
    msg = { series: await child(mode, Number(arg('warmup') ?? 20), (arg('checkpoints') ?? '100,250,500').split(',').map(Number), dir) };
  } catch (err) {
    msg = { error: (err as Error).stack ?? String(err) };
    process.exitCode = 1;
  }
  await sendAndWait(msg);
  process.exit();
}
