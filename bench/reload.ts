// (b) Hot reload latency: from writing a new version of a plugin file to the new version answering
// POST /curl/call/... . Folio runs in this process with its file watcher on; nothing calls
// registry.reload(): the watcher has to notice the write by itself.
//
// Each iteration: write the file (the clock starts just before the write), then call the function
// every ~5 ms until the answer carries the new version. Two kinds of edit:
//   entry edit: the plugin's index.mjs changes;
//   deep edit:  only lib/helper.mjs changes, a file the entry imports (bundled by the loader).
// Both plugins run isolated (the default for a plugin outside ./plugins); the entry edits are then
// repeated on a copy that runs in-process (isolation.plugins), as this run's baseline.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ADMIN_TOKEN, callFn, startBenchFolio } from './lib.ts';
import { mean, percentile, progress, removeDir, round, sized, sleep, tempDir } from './util.ts';

export const TARGET_P95_MS = 500;
const POLL_MS = 5;
const ITERATION_TIMEOUT_MS = 10_000;
/** Pause after each iteration so a late duplicate watcher event of one write does not overlap the next. */
const SETTLE_MS = 100;
const DEBOUNCE_MS = 20;

export interface ReloadOptions {
  quick: boolean;
}

export interface LatencyStats {
  iterations: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  meanMs: number;
  timeouts: number;
  pass: boolean;
}

export interface ReloadResult {
  settings: { debounceMs: number; pollMs: number; engine: string };
  /** The plugins here run isolated (Folio's default for a plugin outside ./plugins). */
  entry: LatencyStats;
  deep: LatencyStats;
  /** The same entry edits on a copy that runs in-process, in the same Folio: the baseline of this run. */
  entryInProcess: LatencyStats;
  targetP95Ms: number;
}

const entrySource = (v: number, ns = 'hot') => `// version ${v}
export default {
  namespace: '${ns}',
  description: 'Hot reload benchmark plugin.',
  catalogue: 'public',
  functions: {
    version: { description: 'Which version is serving.', handler: () => ({ v: ${v} }) },
  },
};
`;

const deepEntrySource = `import { VERSION } from './lib/helper.mjs';
export default {
  namespace: 'deep',
  description: 'Hot reload benchmark plugin with a helper file.',
  catalogue: 'public',
  functions: {
    version: { description: 'Which version of the helper is serving.', handler: () => ({ v: VERSION }) },
  },
};
`;

const helperSource = (v: number) => `// helper version ${v}\nexport const VERSION = ${v};\n`;

async function servedVersion(url: string, ns: string): Promise<number | undefined> {
  try {
    const r = await callFn(url, ADMIN_TOKEN, ns, 'version');
    if (r.status !== 200) return undefined;
    return (JSON.parse(r.text) as { v: number }).v;
  } catch {
    return undefined;
  }
}

/** Polls until `ns.version` answers `v`; returns the ms since `t0`, or undefined on timeout. */
async function waitFor(url: string, ns: string, v: number, t0: number): Promise<number | undefined> {
  while (performance.now() - t0 < ITERATION_TIMEOUT_MS) {
    if ((await servedVersion(url, ns)) === v) return performance.now() - t0;
    await sleep(POLL_MS);
  }
  return undefined;
}

async function series(
  url: string,
  ns: string,
  file: string,
  source: (v: number) => string,
  n: number,
  label: string,
): Promise<LatencyStats> {
  const times: number[] = [];
  let timeouts = 0;
  for (let v = 1; v <= n; v++) {
    const text = source(v);
    const t0 = performance.now();
    await writeFile(file, text);
    const ms = await waitFor(url, ns, v, t0);
    if (ms === undefined) timeouts++;
    else times.push(ms);
    await sleep(SETTLE_MS);
  }
  const stats = {
    iterations: n,
    p50Ms: round(percentile(times, 50)),
    p95Ms: round(percentile(times, 95)),
    maxMs: round(Math.max(...times)),
    meanMs: round(mean(times)),
    timeouts,
    pass: timeouts === 0 && percentile(times, 95) < TARGET_P95_MS,
  };
  progress(`reload: ${label}: p50 ${stats.p50Ms} ms, p95 ${stats.p95Ms} ms, max ${stats.maxMs} ms, ${timeouts} timeouts`);
  return stats;
}

export async function runReload(opts: ReloadOptions): Promise<ReloadResult> {
  const scratch = await tempDir('reload');
  let bench: Awaited<ReturnType<typeof startBenchFolio>> | undefined;
  try {
    const hotDir = path.join(scratch, 'hot');
    const deepDir = path.join(scratch, 'deep');
    const inProcDir = path.join(scratch, 'hot_inproc');
    await mkdir(hotDir);
    await mkdir(inProcDir);
    await writeFile(path.join(inProcDir, 'index.mjs'), entrySource(0, 'hot_inproc'));
    await mkdir(path.join(deepDir, 'lib'), { recursive: true });
    await writeFile(path.join(hotDir, 'index.mjs'), entrySource(0));
    await writeFile(path.join(deepDir, 'index.mjs'), deepEntrySource);
    await writeFile(path.join(deepDir, 'lib/helper.mjs'), helperSource(0));

    bench = await startBenchFolio({
      plugins: [scratch],
      watch: true,
      debounceMs: DEBOUNCE_MS,
      overrides: { isolation: { plugins: { hot_inproc: 'in-process' } } },
    });
    for (const ns of ['hot', 'deep', 'hot_inproc'])
      if ((await servedVersion(bench.url, ns)) !== 0) throw new Error(`${ns}.version is not serving version 0 after start`);
    await sleep(200); // let the watcher settle

    const n = sized(opts.quick, 50, 15, 3);
    const nDeep = sized(opts.quick, 10, 3, 1);
    progress(`reload: ${n} entry edits, then ${nDeep} deep edits (debounce ${DEBOUNCE_MS} ms, poll every ${POLL_MS} ms)`);
    const entry = await series(bench.url, 'hot', path.join(hotDir, 'index.mjs'), entrySource, n, 'entry edit (index.mjs)');
    const deep = await series(bench.url, 'deep', path.join(deepDir, 'lib/helper.mjs'), helperSource, nDeep, 'deep edit (lib/helper.mjs)');
    const entryInProcess = await series(
      bench.url,
      'hot_inproc',
      path.join(inProcDir, 'index.mjs'),
      (v) => entrySource(v, 'hot_inproc'),
      n,
      'entry edit, in-process plugin',
    );
    return {
      settings: { debounceMs: DEBOUNCE_MS, pollMs: POLL_MS, engine: bench.engine },
      entry,
      deep,
      entryInProcess,
      targetP95Ms: TARGET_P95_MS,
    };
  } finally {
    await bench?.close();
    await removeDir(scratch);
  }
}

export function formatReload(r: ReloadResult): string {
  const row = (name: string, s: LatencyStats) =>
    `  ${name.padEnd(28)} ${String(s.iterations).padStart(5)} ${String(s.p50Ms).padStart(8)} ${String(s.p95Ms).padStart(8)} ${String(s.maxMs).padStart(8)} ${String(s.timeouts).padStart(8)}  ${s.pass ? 'PASS' : 'FAIL'} (target p95 < ${r.targetP95Ms} ms)`;
  return [
    `hot reload: file write -> new version answering (watcher debounce ${r.settings.debounceMs} ms, poll ${r.settings.pollMs} ms)`,
    `  ${'edit'.padEnd(28)} ${'n'.padStart(5)} ${'p50 ms'.padStart(8)} ${'p95 ms'.padStart(8)} ${'max ms'.padStart(8)} ${'timeouts'.padStart(8)}`,
    row('entry (index.mjs), isolated', r.entry),
    row('deep (lib/helper.mjs), isolated', r.deep),
    row('entry, in-process', r.entryInProcess),
  ].join('\n');
}
