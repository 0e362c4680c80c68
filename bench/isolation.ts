// (j) Isolation cost, as a user's client sees it: POST /curl/call/<ns>/noop of the same no-op in
// one Folio, from a load generator in another process, in three configurations measured in the
// same run:
//   bare koa            servers/koa.ts, the same POST answering {"ok":true}: the baseline
//   folio, in-process   the no-op forced onto Folio's thread (isolation.plugins), as first-party
//                       plugins run
//   folio, own process  the no-op as a third-party folder runs by default: a process of its own,
//                       under bubblewrap where it works (isolation.mode 'third-party')
// Each server in a child process of its own; autocannon (10 connections, closed loop) in this
// process; the configurations take turns slice by slice in each round, medians over the rounds,
// each ratio against the same round's Koa. CPU per call from /proc/<pid>/stat: the server's
// process (its threads), and the plugin's process tree (bwrap, bwrap, node).
// bench/plugin-host.ts measures the same and more (MCP, latency one call at a time, memory, cold
// start); this is its short form for the default set.
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import {
  TARGETS,
  compare,
  load,
  pluginStatus,
  startFolio,
  startServer,
  writePlugins,
  type ConfigStats,
  type Server,
  type Target,
} from './plugin-host.ts';
import { progress, removeDir, sized, sliceSeconds, tempDir } from './util.ts';

export interface IsolationResult {
  settings: { rounds: number; slices: number; sliceS: number; warmupS: number; sandbox: string; engine: string; arrangement: string };
  /** bare koa, folio in-process, folio own process; each with its ratio to Koa. */
  configs: ConfigStats[];
}

export async function runIsolation(opts: { quick: boolean }): Promise<IsolationResult> {
  const rounds = sized(opts.quick, 3, 3, 1);
  const slices = sized(opts.quick, 3, 3, 1);
  const sliceS = sliceSeconds(sized(opts.quick, 6, 3, 1), slices);
  const warmupS = sized(opts.quick, 2, 1, 1);
  const root = await realpath(await tempDir('isolation'));
  const servers: Server[] = [];
  try {
    await writePlugins(root, ['noop_inproc', 'noop_proc']);
    progress('isolation: starting bare Koa and Folio (each in its own process)');
    const koa = await startServer('bare koa', path.join(import.meta.dirname, 'servers', 'koa.ts'), []);
    servers.push(koa);
    const folio = await startFolio('folio', root, { isolation: { plugins: { noop_inproc: 'in-process' } } });
    servers.push(folio);
    const status = await pluginStatus(folio, 'noop_proc');
    if (status.isolation !== 'process' || (await pluginStatus(folio, 'noop_inproc')).isolation !== 'in-process')
      throw new Error('the two copies do not run where this bench needs them');
    const json = { 'content-type': 'application/json' };
    const auth = { ...json, authorization: `Bearer ${folio.ready.token}` };
    const targets: Target[] = [
      { name: 'bare koa', server: koa, path: '/curl/call/bench/noop', headers: json, body: '{}' },
      { name: 'folio, in-process', server: folio, path: '/curl/call/noop_inproc/noop', headers: auth, body: '{}' },
      {
        name: 'folio, own process',
        server: folio,
        path: '/curl/call/noop_proc/noop',
        headers: auth,
        body: '{}',
        pluginDir: path.join(root, 'noop_proc'),
      },
    ];
    for (const t of targets) {
      progress(`isolation: warm-up ${t.name} ${warmupS}s (discarded)`);
      await load(t, warmupS);
    }
    const configs = await compare('isolation:', targets, [null, TARGETS.curlInProcess, TARGETS.curlProcess], slices, sliceS, rounds);
    return {
      settings: {
        rounds,
        slices,
        sliceS,
        warmupS,
        sandbox: status.sandbox?.kind ?? 'none',
        engine: folio.ready.engine,
        arrangement: 'each server in its own child process, autocannon (10 connections) in the parent, taking turns slice by slice',
      },
      configs,
    };
  } finally {
    for (const s of servers) await s.stop();
    await removeDir(root);
  }
}

export function formatIsolation(r: IsolationResult): string {
  const s = r.settings;
  const lines = [
    `isolation: POST /curl/call/<ns>/noop from another process (autocannon, 10 connections), ${s.rounds} rounds of ${s.slices} slices of ${s.sliceS}s per configuration taking turns; medians; Folio on ${s.engine}, sandbox ${s.sandbox}`,
    `  ${'configuration'.padEnd(20)} ${'req/s'.padStart(8)} ${'vs koa'.padStart(7)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'server µs CPU'.padStart(14)} ${'plugin µs CPU'.padStart(14)}`,
  ];
  for (const c of r.configs)
    lines.push(
      `  ${c.name.padEnd(20)} ${String(c.reqPerSec).padStart(8)} ${c.ratio.toFixed(2).padStart(7)} ${String(c.p50Ms).padStart(7)} ${String(c.p99Ms).padStart(7)} ${String(c.serverCpuUs).padStart(14)} ${String(c.pluginCpuUs ?? '-').padStart(14)}  ${c.pass === null ? '' : `${c.pass ? 'PASS' : 'FAIL'} (>= ${c.target})`}`,
    );
  lines.push('  (µs CPU per call from /proc/<pid>/stat: the server process, and the plugin process tree where it has one)');
  return lines.join('\n');
}

export function isolationSummaryRows(r: IsolationResult): string[][] {
  return r.configs.map((c) => [
    'isolation',
    `${c.name} req/s`,
    String(c.reqPerSec),
    `${c.name === 'bare koa' ? '' : `${(c.ratio * 100).toFixed(1)}% of koa, `}p99 ${c.p99Ms} ms, ${c.serverCpuUs} µs server CPU/call${c.pluginCpuUs === null ? '' : ` + ${c.pluginCpuUs} plugin`}`,
    c.pass === null ? '' : `${c.pass ? 'PASS' : 'FAIL'} (>= ${(c.target ?? 0) * 100}%)`,
  ]);
}
