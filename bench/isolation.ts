// (e) Isolation cost: the same no-op function served by a plugin on Folio's thread and by a copy of
// it in a worker of its own (core/kernel/isolation/), in one Folio, in the same run.
//
// One Folio in this process serves both copies (isolation.plugins: one folder 'in-process', the
// other 'worker'). Clients in this process (fetch, `CONCURRENCY` at a time) call one copy, then
// the other, alternating which goes first, in `rounds` rounds: both modes see the same machine,
// the same database and the same load generator, so their ratio is what isolation costs a call.
// Then the memory an isolated plugin costs: RSS (the whole process, workers included) after
// loading `EXTRA` more isolated copies, after GC, divided by their number.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { ADMIN_TOKEN, createUserToken, startBenchFolio } from './lib.ts';
import { mb, percentile, progress, removeDir, round, sleep, tempDir } from './util.ts';

/** Target: a call through an isolated plugin keeps at least this share of the in-process throughput. */
export const TARGET_RATIO = 0.7;
const CONCURRENCY = 8;
const EXTRA = 5;

export interface ModeStats {
  calls: number;
  /** req/s of each round, in order: a spread between rounds says the machine was busy with something else. */
  rounds: number[];
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  non200: number;
}

export interface IsolationResult {
  settings: { concurrency: number; rounds: number; callsPerRound: number; engine: string };
  inProcess: ModeStats;
  worker: ModeStats;
  ratio: number;
  pass: boolean;
  targetRatio: number;
  memory: { plugins: number; rssBeforeMB: number; rssAfterMB: number; rssPerPluginMB: number };
}

const source = (ns: string) => `export default {
  namespace: '${ns}',
  description: 'No-op (${ns}).',
  functions: { noop: { description: 'Do nothing.', handler: () => ({ ok: true }) } },
};
`;

async function plugin(root: string, folder: string, ns: string): Promise<string> {
  const dir = path.join(root, folder);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'index.mjs'), source(ns));
  return dir;
}

/** `n` calls, CONCURRENCY at a time; wall time and each call's latency. */
async function burst(url: string, token: string, ns: string, n: number): Promise<{ ms: number; latencies: number[]; non200: number }> {
  const latencies: number[] = [];
  let next = 0;
  let non200 = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) {
        next++;
        const s = performance.now();
        const res = await fetch(`${url}/curl/call/${ns}/noop`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: '{}',
        });
        await res.arrayBuffer();
        if (res.status !== 200) non200++;
        latencies.push(performance.now() - s);
      }
    }),
  );
  return { ms: performance.now() - t0, latencies, non200 };
}

function stats(runs: Array<{ ms: number; latencies: number[]; non200: number }>): ModeStats {
  const latencies = runs.flatMap((r) => r.latencies);
  const ms = runs.reduce((a, r) => a + r.ms, 0);
  return {
    calls: latencies.length,
    rounds: runs.map((r) => round((r.latencies.length / r.ms) * 1000, 0)),
    reqPerSec: round((latencies.length / ms) * 1000, 0),
    p50Ms: round(percentile(latencies, 50), 2),
    p99Ms: round(percentile(latencies, 99), 2),
    non200: runs.reduce((a, r) => a + r.non200, 0),
  };
}

export async function runIsolation(opts: { quick: boolean }): Promise<IsolationResult> {
  const rounds = opts.quick ? 4 : 10;
  const callsPerRound = opts.quick ? 500 : 2000;
  const root = await tempDir('isolation');
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  try {
    await plugin(root, 'noop_inproc', 'noop_inproc');
    await plugin(root, 'noop_worker', 'noop_worker');
    const extra = Array.from({ length: EXTRA }, (_, i) => `noop_extra${i}`);
    const server = await startBenchFolio({
      plugins: [root],
      watch: false,
      overrides: {
        isolation: {
          plugins: { noop_inproc: 'in-process', noop_worker: 'worker', ...Object.fromEntries(extra.map((e) => [e, 'worker'])) },
        },
      },
    });
    try {
      const { token } = await createUserToken(server.url);
      progress(`isolation: warm-up`);
      await burst(server.url, token, 'noop_inproc', 300);
      await burst(server.url, token, 'noop_worker', 300);
      const runs: Record<'inproc' | 'worker', Array<Awaited<ReturnType<typeof burst>>>> = { inproc: [], worker: [] };
      for (let r = 0; r < rounds; r++) {
        progress(`isolation: round ${r + 1}/${rounds}, ${callsPerRound} calls per mode`);
        const order = r % 2 === 0 ? (['inproc', 'worker'] as const) : (['worker', 'inproc'] as const);
        for (const mode of order)
          runs[mode].push(await burst(server.url, token, mode === 'inproc' ? 'noop_inproc' : 'noop_worker', callsPerRound));
      }
      const inProcess = stats(runs.inproc);
      const worker = stats(runs.worker);
      const ratio = round(worker.reqPerSec / inProcess.reqPerSec, 3);

      progress(`isolation: memory of ${EXTRA} more isolated plugins`);
      const rss = async () => {
        for (let i = 0; i < 3; i++) {
          gc();
          await sleep(50);
        }
        return process.memoryUsage().rss;
      };
      const before = await rss();
      for (const e of extra) await server.folio.registry.reload(await plugin(root, e, e));
      for (const e of extra) {
        const r = await fetch(`${server.url}/curl/call/${e}/noop`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
        await r.arrayBuffer();
      }
      const after = await rss();
      return {
        settings: { concurrency: CONCURRENCY, rounds, callsPerRound, engine: server.engine },
        inProcess,
        worker,
        ratio,
        pass: ratio >= TARGET_RATIO,
        targetRatio: TARGET_RATIO,
        memory: { plugins: EXTRA, rssBeforeMB: mb(before), rssAfterMB: mb(after), rssPerPluginMB: mb((after - before) / EXTRA) },
      };
    } finally {
      await server.close();
    }
  } finally {
    await removeDir(root);
  }
}

export function formatIsolation(r: IsolationResult): string {
  const row = (name: string, s: ModeStats) =>
    `  ${name.padEnd(22)} ${String(s.calls).padStart(6)} ${String(s.reqPerSec).padStart(8)} ${String(s.p50Ms).padStart(8)} ${String(s.p99Ms).padStart(8)} ${String(s.non200).padStart(6)}`;
  return [
    `isolation: no-op call, in-process vs worker, one Folio (${r.settings.engine}), ${r.settings.concurrency} concurrent clients in the same process, ${r.settings.rounds} alternating rounds of ${r.settings.callsPerRound} calls`,
    `  ${'plugin'.padEnd(22)} ${'calls'.padStart(6)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'non200'.padStart(6)}`,
    row('in-process', r.inProcess),
    row('worker (isolated)', r.worker),
    `  req/s per round: in-process ${r.inProcess.rounds.join(' ')}; worker ${r.worker.rounds.join(' ')}`,
    `  ratio worker/in-process: ${r.ratio}  ${r.pass ? 'PASS' : 'FAIL'} (target >= ${r.targetRatio})`,
    `  memory: RSS ${r.memory.rssBeforeMB} -> ${r.memory.rssAfterMB} MB after ${r.memory.plugins} more isolated plugins: ${r.memory.rssPerPluginMB} MB each`,
  ].join('\n');
}
