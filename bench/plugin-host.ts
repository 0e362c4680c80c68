// Plugin host: what a third-party plugin in a process of its own (core/kernel/isolation/) costs,
// against the same plugin in Folio's process and against bare baselines, in one run.
//
//   npx node bench/plugin-host.ts [--quick] [--profile]      on its own (~3-4 min; --quick ~2 min)
//   npm run bench -- --only=plugin-host [--quick] [--profile]
//
// 1. Throughput: POST /curl/call/<ns>/noop of the bench fixture's no-op, copied into two folders of
//    one Folio: `noop_inproc` (isolation.plugins: 'in-process') and `noop_proc` (the default for a
//    third-party folder: its own process, under bubblewrap where it works), against bare Koa
//    (servers/koa.ts); then MCP tools/call of the same two through Folio's /mcp against the official
//    SDK's server (mcp-servers.ts bare). The arrangement of bench/call.ts: each server in a child
//    process of its own, autocannon (10 connections) here, one configuration loaded at a time,
//    taking turns slice by slice, 3 rounds, medians; each ratio against the same round's baseline.
//    CPU per call on both sides of the channel, from /proc/<pid>/stat read here: Folio's process
//    (its threads), and the plugin's process tree (bwrap, bwrap, node).
// 2. Latency the process adds: under that load (each response's own time, not autocannon's
//    whole-millisecond histogram), and on one keep-alive connection, one call at a time.
// 3. Memory: the resident memory of idle hosts, 20 copies of the no-op in one Folio.
// 4. Cold start: isolation.idleStopSeconds 1; once the host has stopped, the first call's time.
//
// Folio runs on the embedded PGlite: a no-op's call touches the database for nothing (the token and
// namespace switches are cached), so the engine does not matter here.
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import autocannon from 'autocannon';
import { cpuOf, median } from './call.ts';
import { ADMIN_TOKEN, BENCH_PLUGINS, callFn } from './lib.ts';
import { openSession } from './mcp.ts';
import { formatProfile, summarizeProfile, type CpuProfile, type ProfileSummary } from './profile.ts';
import {
  assertNode24,
  isSmoke,
  percentile,
  pluginRoot,
  processCpuUs,
  readProc,
  tree,
  treeCpuUs,
  progress,
  removeDir,
  round,
  sized,
  sleep,
  sliceSeconds,
  spawnChild,
  tempDir,
  turnOrder,
  type Child,
} from './util.ts';

export const TARGETS = {
  /** Share of bare Koa's req/s, curl surface. */
  curlInProcess: 0.7,
  curlProcess: 0.6,
  /** Share of the bare SDK server's calls/s, MCP, plugin in a process. */
  mcpProcess: 0.7,
  /** Resident memory of one idle host (bwrap and node together), MB. */
  idleHostMb: 40,
  /** The first call to a stopped host, ms. */
  coldStartMs: 300,
};

const ROUNDS = 3;
const CONNECTIONS = 10;
const MEMORY_PLUGINS = 20;
const HERE = import.meta.dirname;
const RESULTS = path.join(HERE, 'results');
const FIXTURE = path.join(BENCH_PLUGINS, 'bench', 'index.mjs');

export interface Ready {
  url: string;
  token: string;
  engine: string;
  pid: number;
}

export interface Server {
  name: string;
  child: Child<Ready>;
  ready: Ready;
  stop(): Promise<void>;
}

/** One configuration under load: a server, what is sent, and the plugin folder whose process is watched. */
export interface Target {
  name: string;
  server: Server;
  path: string;
  headers: Record<string, string>;
  body: string;
  idReplacement?: boolean;
  pluginDir?: string;
}

interface Slice {
  reqPerSec: number;
  requests: number;
  latencies: number[];
  serverCpuUs: number;
  pluginCpuUs: number | null;
}

export interface RoundStats {
  reqPerSec: number;
  /** req/s over the same round's baseline (the first configuration). */
  ratio: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU (user + system) per call: the server's process, and the plugin's process tree. */
  serverCpuUs: number;
  pluginCpuUs: number | null;
}

export interface ConfigStats extends RoundStats {
  name: string;
  /** The goal for `ratio`, where there is one. */
  target: number | null;
  pass: boolean | null;
  rounds: RoundStats[];
}

export interface HostMemory {
  processes: number;
  vmRssMb: number;
  /** Anonymous resident memory: the host's own pages (heap, code space), none of the shared binary's. */
  rssAnonMb: number;
  /** Proportional set size: shared pages divided among the processes that map them. */
  pssMb: number;
}

export interface PluginHostResult {
  settings: { rounds: number; slices: number; sliceS: number; warmupS: number; connections: number; sandbox: string; engine: string };
  curl: ConfigStats[];
  mcp: ConfigStats[];
  latency: {
    /** Process minus in-process, medians over the rounds, under the curl load. */
    underLoad: { p50Ms: number; p99Ms: number };
    sequential: { calls: number; inProcess: { p50Ms: number; p99Ms: number }; process: { p50Ms: number; p99Ms: number } };
    /** Process minus in-process, one call at a time. */
    addedSequential: { p50Ms: number; p99Ms: number };
  };
  memory: {
    plugins: number;
    /** Median over the hosts, right after loading, and after each answered one call. */
    idleHost: HostMemory;
    afterOneCall: HostMemory;
    /** Sums over all the hosts, after one call each. */
    total: HostMemory;
    /** The throughput run's host, after its load. */
    afterLoad: HostMemory | null;
    folioRssMb: number;
    /**
     * CPU while idle, ms per second: Folio's process with the 20 hosts, the 20 hosts' processes, and
     * a Folio of the same configuration with no host running (the cold-start run's, while stopped).
     */
    idleCpu: { seconds: number; folioMsPerS: number; hostsMsPerS: number; folioNoHostMsPerS: number };
    target: number;
    pass: boolean;
  };
  coldStart: { samples: number[]; medianMs: number; maxMs: number; warmMs: number; nodeStartMs: number; target: number; pass: boolean };
  profiles?: Array<{ name: string; file: string; summary: ProfileSummary }>;
}

// ---- the plugin's processes, from /proc ---------------------------------------------------------

/** VmRSS summed over the tree (what Folio's isolation.memoryMb ceiling watches), RssAnon, PSS. */
function treeMemory(root: number): HostMemory {
  let rss = 0;
  let anon = 0;
  let pss = 0;
  const pids = tree(root);
  for (const p of pids) {
    const status = readProc(`/proc/${p}/status`) ?? '';
    rss += Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    anon += Number(/^RssAnon:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    pss += Number(/^Pss:\s+(\d+)/m.exec(readProc(`/proc/${p}/smaps_rollup`) ?? '')?.[1] ?? 0);
  }
  return { processes: pids.length, vmRssMb: round(rss / 1024), rssAnonMb: round(anon / 1024), pssMb: round(pss / 1024) };
}

function medianMemory(ms: HostMemory[]): HostMemory {
  const m = (f: (x: HostMemory) => number) => round(median(ms.map(f)));
  return { processes: m((x) => x.processes), vmRssMb: m((x) => x.vmRssMb), rssAnonMb: m((x) => x.rssAnonMb), pssMb: m((x) => x.pssMb) };
}

function sumMemory(ms: HostMemory[]): HostMemory {
  const s = (f: (x: HostMemory) => number) => round(ms.reduce((a, x) => a + f(x), 0));
  return { processes: s((x) => x.processes), vmRssMb: s((x) => x.vmRssMb), rssAnonMb: s((x) => x.rssAnonMb), pssMb: s((x) => x.pssMb) };
}

// ---- servers ----------------------------------------------------------------------------------------

/** Copies of the bench fixture, each under its own folder name and namespace. */
export async function writePlugins(root: string, names: string[]): Promise<void> {
  const source = await readFile(FIXTURE, 'utf8');
  if (!source.includes("namespace: 'bench'")) throw new Error(`${FIXTURE} no longer says namespace: 'bench'`);
  for (const ns of names) {
    await mkdir(path.join(root, ns), { recursive: true });
    await writeFile(path.join(root, ns, 'index.mjs'), source.replace("namespace: 'bench'", `namespace: '${ns}'`));
  }
}

export async function startServer(name: string, script: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Server> {
  const child = spawnChild<Ready>(script, args, { env, timeoutMs: 180_000 });
  const stop = async () => {
    const code = await child.stop(30_000);
    if (code !== 0) progress(`plugin-host: ${name} exited with code ${code}`);
  };
  try {
    return { name, child, ready: await child.ready, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Folio (servers/folio.ts) with the plugin folders of `pluginsRoot`, each in a process of its own
 * (isolation.mode 'third-party', the default) unless `config` says otherwise. The bench fixture
 * itself (its token check) runs in-process.
 */
export async function startFolio(name: string, pluginsRoot: string, config: { isolation: Record<string, unknown> }): Promise<Server> {
  const dataDir = await tempDir('data');
  const isolation = { ...config.isolation, plugins: { bench: 'in-process', ...(config.isolation['plugins'] as object) } };
  try {
    const server = await startServer(name, path.join(HERE, 'servers', 'folio.ts'), ['', dataDir], {
      BENCH_ISOLATION: 'third-party',
      BENCH_PLUGIN_DIRS: pluginsRoot,
      BENCH_CONFIG: JSON.stringify({ ...config, isolation }),
    });
    return {
      ...server,
      stop: async () => {
        await server.stop();
        await removeDir(dataDir);
      },
    };
  } catch (err) {
    await removeDir(dataDir);
    throw err;
  }
}

async function folioRssMb(server: Server): Promise<number> {
  server.child.child.send({ cmd: 'rss' });
  const { rss } = (await server.child.next(10_000)) as { rss: number };
  return round(rss / 1024 / 1024);
}

interface StatusRow {
  namespace: string | null;
  isolation: string;
  sandbox: { kind: string; running: boolean } | null;
}

export async function pluginStatus(server: Server, ns: string): Promise<StatusRow> {
  const r = await callFn(server.ready.url, ADMIN_TOKEN, 'admin', 'plugin_status');
  if (r.status !== 200) throw new Error(`admin.plugin_status answered ${r.status}: ${r.text.slice(0, 300)}`);
  const row = (JSON.parse(r.text) as StatusRow[]).find((x) => x.namespace === ns);
  if (!row) throw new Error(`plugin_status has no ${ns}`);
  return row;
}

// ---- load ---------------------------------------------------------------------------------------------

export async function load(t: Target, durationS: number): Promise<Slice> {
  const folioPid = t.server.ready.pid;
  const root = t.pluginDir ? pluginRoot(folioPid, t.pluginDir) : undefined;
  if (t.pluginDir && root === undefined) throw new Error(`${t.name}: no process of ${t.pluginDir} under Folio's`);
  // The server's CPU from /proc, as `top` would see it (its own threads; the plugin's processes apart).
  const cpu0 = processCpuUs(folioPid);
  const plugin0 = root === undefined ? 0 : treeCpuUs(root);
  const latencies: number[] = [];
  const instance = autocannon({
    url: t.server.ready.url + t.path,
    method: 'POST',
    headers: t.headers,
    body: t.body,
    ...(t.idReplacement ? { idReplacement: true } : {}),
    connections: CONNECTIONS,
    pipelining: 1,
    duration: durationS,
  }) as unknown as autocannon.Instance & Promise<autocannon.Result>;
  // Each response's own time, to the microsecond: autocannon's histogram keeps whole milliseconds.
  void instance.on('response', (_client, status, _bytes, ms) => {
    if (status === 200) latencies.push(ms);
  });
  const r = await instance;
  const plugin1 = root === undefined ? 0 : treeCpuUs(root);
  const cpu1 = processCpuUs(folioPid);
  if (r.non2xx > 0 || r.errors > 0 || r.timeouts > 0)
    throw new Error(`${t.name}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts: the figures would be meaningless`);
  if (root !== undefined && pluginRoot(folioPid, t.pluginDir!) !== root)
    throw new Error(`${t.name}: the plugin's process restarted under load`);
  const n = Math.max(1, r.requests.total);
  return {
    reqPerSec: r.requests.mean,
    requests: r.requests.total,
    latencies,
    serverCpuUs: (cpu1 - cpu0) / n,
    pluginCpuUs: root === undefined ? null : (plugin1 - plugin0) / n,
  };
}

function roundOf(parts: Slice[]): Omit<RoundStats, 'ratio'> {
  const requests = parts.reduce((a, p) => a + p.requests, 0);
  const latencies = parts.flatMap((p) => p.latencies);
  const per = (f: (p: Slice) => number) => parts.reduce((a, p) => a + f(p) * p.requests, 0) / Math.max(1, requests);
  return {
    reqPerSec: round(parts.reduce((a, p) => a + p.reqPerSec, 0) / parts.length, 0),
    p50Ms: round(percentile(latencies, 50), 3),
    p99Ms: round(percentile(latencies, 99), 3),
    serverCpuUs: round(per((p) => p.serverCpuUs)),
    pluginCpuUs: parts[0]!.pluginCpuUs === null ? null : round(per((p) => p.pluginCpuUs!)),
  };
}

/** Rounds of slices, the targets taking turns (the first alternating); each ratio against targets[0]. */
export async function compare(
  tag: string,
  targets: Target[],
  goals: Array<number | null>,
  slices: number,
  sliceS: number,
  roundCount = ROUNDS,
): Promise<ConfigStats[]> {
  const rounds: RoundStats[][] = targets.map(() => []);
  for (let r = 0; r < roundCount; r++) {
    progress(`${tag} round ${r + 1}/${roundCount}: ${slices} slices of ${sliceS}s per configuration, taking turns`);
    const parts: Slice[][] = targets.map(() => []);
    for (const order of turnOrder(targets.length, r, slices)) for (const i of order) parts[i]!.push(await load(targets[i]!, sliceS));
    const stats = parts.map(roundOf);
    stats.forEach((s, i) => {
      const ratio = round(s.reqPerSec / stats[0]!.reqPerSec, 3);
      rounds[i]!.push({ ...s, ratio });
      progress(
        `${tag} round ${r + 1}, ${targets[i]!.name}: ${s.reqPerSec} req/s (${ratio}), p50 ${s.p50Ms} ms, p99 ${s.p99Ms} ms, CPU µs/call ${s.serverCpuUs}${s.pluginCpuUs === null ? '' : ` + plugin ${s.pluginCpuUs}`}`,
      );
    });
  }
  return targets.map((t, i) => {
    const mine = rounds[i]!;
    const m = (f: (x: RoundStats) => number, digits = 1) => round(median(mine.map(f)), digits);
    const ratio = m((x) => x.ratio, 3);
    const goal = goals[i] ?? null;
    return {
      name: t.name,
      reqPerSec: m((x) => x.reqPerSec, 0),
      ratio,
      p50Ms: m((x) => x.p50Ms, 3),
      p99Ms: m((x) => x.p99Ms, 3),
      serverCpuUs: m((x) => x.serverCpuUs),
      pluginCpuUs: mine[0]!.pluginCpuUs === null ? null : m((x) => x.pluginCpuUs!),
      target: goal,
      pass: goal === null ? null : ratio >= goal,
      rounds: mine,
    };
  });
}

/** POST on one keep-alive connection; the answer's status once its last byte is read. */
function post(agent: http.Agent, url: string, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** One call at a time on one connection, blocks of `perBlock` calls, the targets taking turns. */
async function sequential(targets: Target[], blocks: number, perBlock: number): Promise<Array<{ p50Ms: number; p99Ms: number }>> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const latencies: number[][] = targets.map(() => []);
    for (const order of turnOrder(targets.length, 0, blocks))
      for (const i of order) {
        const t = targets[i]!;
        for (let k = 0; k < perBlock; k++) {
          const t0 = performance.now();
          const status = await post(agent, t.server.ready.url + t.path, t.headers, t.body);
          latencies[i]!.push(performance.now() - t0);
          if (status !== 200) throw new Error(`${t.name}: answered ${status}`);
        }
      }
    return latencies.map((l) => ({ p50Ms: round(percentile(l, 50), 3), p99Ms: round(percentile(l, 99), 3) }));
  } finally {
    agent.destroy();
  }
}

// ---- profiles of Folio's side -----------------------------------------------------------------------

async function profiled(t: Target, durationS: number, file: string): Promise<{ name: string; file: string; summary: ProfileSummary }> {
  const ask = async (msg: Record<string, unknown>) => {
    t.server.child.child.send(msg);
    const reply = (await t.server.child.next(120_000)) as { ok: boolean; error?: string; files?: Array<{ thread: string; file: string }> };
    if (!reply.ok) throw new Error(reply.error);
    return reply;
  };
  await ask({ cmd: 'profile-start' });
  await load(t, durationS);
  const files = (await ask({ cmd: 'profile-stop', file })).files ?? [];
  const main = files.find((f) => f.thread === 'main')!;
  return {
    name: t.name,
    file: path.relative(process.cwd(), main.file),
    summary: summarizeProfile(JSON.parse(await readFile(main.file, 'utf8')) as CpuProfile),
  };
}

// ---- the run ------------------------------------------------------------------------------------------

export async function runPluginHost(opts: { quick: boolean; profile?: boolean }): Promise<PluginHostResult> {
  assertNode24();
  const slices = sized(opts.quick, 3, 3, 1);
  const sliceS = sliceSeconds(opts.quick || isSmoke() ? 3 : 6, slices);
  const warmupS = opts.quick || isSmoke() ? 1 : 2;
  const rounds = sized(opts.quick, ROUNDS, ROUNDS, 1);
  const [seqBlocks, seqPerBlock] = sized(opts.quick, [10, 200], [6, 100], [2, 20]);
  const memoryPlugins = sized(opts.quick, MEMORY_PLUGINS, MEMORY_PLUGINS, 3);
  const root = await realpath(await tempDir('plugin-host'));
  const servers: Server[] = [];
  const stopAll = async () => {
    for (const s of servers.splice(0)) await s.stop();
  };
  try {
    // ---- 1, 2: throughput, CPU and latency ----
    const procDir = path.join(root, 'throughput', 'noop_proc');
    await writePlugins(path.join(root, 'throughput'), ['noop_inproc', 'noop_proc']);
    progress('plugin-host: starting bare Koa, the bare MCP SDK server and Folio');
    const koa = await startServer('bare koa', path.join(HERE, 'servers', 'koa.ts'), []);
    servers.push(koa);
    const sdk = await startServer('bare sdk', path.join(HERE, 'mcp-servers.ts'), ['bare']);
    servers.push(sdk);
    const folio = await startFolio('folio', path.join(root, 'throughput'), { isolation: { plugins: { noop_inproc: 'in-process' } } });
    servers.push(folio);
    const status = await pluginStatus(folio, 'noop_proc');
    if (status.isolation !== 'process' || (await pluginStatus(folio, 'noop_inproc')).isolation !== 'in-process')
      throw new Error('the two copies do not run where this bench needs them');
    const sandbox = status.sandbox?.kind ?? 'none';

    const json = { 'content-type': 'application/json' };
    const auth = { ...json, authorization: `Bearer ${folio.ready.token}` };
    const curl: Target[] = [
      { name: 'bare koa', server: koa, path: '/curl/call/bench/noop', headers: json, body: '{}' },
      { name: 'folio, in-process', server: folio, path: '/curl/call/noop_inproc/noop', headers: auth, body: '{}' },
      { name: 'folio, own process', server: folio, path: '/curl/call/noop_proc/noop', headers: auth, body: '{}', pluginDir: procDir },
    ];
    const rpc = (tool: string) =>
      JSON.stringify({ jsonrpc: '2.0', id: '[<id>]', method: 'tools/call', params: { name: tool, arguments: {} } });
    const mcp: Target[] = [
      { name: 'bare sdk', server: sdk, path: '/mcp', headers: await openSession(sdk.ready), body: rpc('bench__noop'), idReplacement: true },
      {
        name: 'folio, in-process',
        server: folio,
        path: '/mcp',
        headers: await openSession(folio.ready, 'noop_inproc__noop'),
        body: rpc('noop_inproc__noop'),
        idReplacement: true,
      },
      {
        name: 'folio, own process',
        server: folio,
        path: '/mcp',
        headers: await openSession(folio.ready, 'noop_proc__noop'),
        body: rpc('noop_proc__noop'),
        idReplacement: true,
        pluginDir: procDir,
      },
    ];
    for (const t of [...curl, ...mcp]) {
      progress(`plugin-host: warm-up ${t.path} ${t.name} ${warmupS}s (discarded)`);
      await load(t, warmupS);
    }
    const curlStats = await compare('plugin-host: curl', curl, [null, TARGETS.curlInProcess, TARGETS.curlProcess], slices, sliceS, rounds);
    const mcpStats = await compare('plugin-host: mcp', mcp, [null, null, TARGETS.mcpProcess], slices, sliceS, rounds);
    progress('plugin-host: one call at a time on one connection');
    const [seqIn, seqProc] = await sequential(curl.slice(1), seqBlocks, seqPerBlock);
    const added = (f: (r: RoundStats) => number) =>
      round(median(curlStats[2]!.rounds.map((r, i) => f(r) - f(curlStats[1]!.rounds[i]!))), 3);
    const afterLoadRoot = pluginRoot(folio.ready.pid, procDir);
    const afterLoad = afterLoadRoot === undefined ? null : treeMemory(afterLoadRoot);
    let profiles: PluginHostResult['profiles'];
    if (opts.profile) {
      await mkdir(RESULTS, { recursive: true });
      progress(`plugin-host: CPU profiles of Folio's process, ${sliceS * slices}s under each curl load (figures not used)`);
      profiles = [
        await profiled(curl[1]!, sliceS * slices, path.join(RESULTS, 'plugin-host-folio-inproc')),
        await profiled(curl[2]!, sliceS * slices, path.join(RESULTS, 'plugin-host-folio-proc')),
      ];
    }
    await stopAll();

    // ---- 3: memory of idle hosts ----
    const names = Array.from({ length: memoryPlugins }, (_, i) => `noop_${String(i + 1).padStart(2, '0')}`);
    await writePlugins(path.join(root, 'memory'), names);
    progress(`plugin-host: Folio with ${memoryPlugins} no-op plugins, each in its own process`);
    const many = await startFolio('folio, 20 plugins', path.join(root, 'memory'), { isolation: {} });
    servers.push(many);
    const hosts = () =>
      names.map((ns) => {
        const r = pluginRoot(many.ready.pid, path.join(root, 'memory', ns));
        if (r === undefined) throw new Error(`no process for ${ns}`);
        return treeMemory(r);
      });
    await sleep(1000);
    const loaded = hosts();
    for (const ns of names) {
      const r = await callFn(many.ready.url, many.ready.token, ns, 'noop');
      if (r.status !== 200) throw new Error(`${ns}.noop answered ${r.status}`);
    }
    await sleep(1000);
    const called = hosts();
    // What idle hosts cost in CPU: Folio's side (heartbeats, the memory watch) and their own.
    const idleS = sized(opts.quick, 5, 3, 1);
    const roots = names.map((ns) => pluginRoot(many.ready.pid, path.join(root, 'memory', ns))!);
    const hostsCpu = () => roots.reduce((a, r) => a + treeCpuUs(r), 0);
    const [folio0, hosts0] = [await cpuOf(many.child), hostsCpu()];
    await sleep(idleS * 1000);
    const [folio1, hosts1] = [await cpuOf(many.child), hostsCpu()];
    const memory = {
      plugins: memoryPlugins,
      idleHost: medianMemory(loaded),
      afterOneCall: medianMemory(called),
      total: sumMemory(called),
      afterLoad,
      folioRssMb: await folioRssMb(many),
      idleCpu: {
        seconds: idleS,
        folioMsPerS: round((folio1 - folio0) / 1000 / idleS, 2),
        hostsMsPerS: round((hosts1 - hosts0) / 1000 / idleS, 2),
        folioNoHostMsPerS: NaN,
      },
      target: TARGETS.idleHostMb,
      pass: medianMemory(called).vmRssMb < TARGETS.idleHostMb,
    };
    await stopAll();

    // ---- 4: cold start ----
    const coldDir = path.join(root, 'cold', 'noop_cold');
    await writePlugins(path.join(root, 'cold'), ['noop_cold']);
    progress('plugin-host: cold start (isolation.idleStopSeconds 1)');
    const cold = await startFolio('folio, idle stop 1 s', path.join(root, 'cold'), { isolation: { idleStopSeconds: 1 } });
    servers.push(cold);
    const samples: number[] = [];
    const warm: number[] = [];
    const stopped = async () => {
      const deadline = Date.now() + 15_000;
      while (pluginRoot(cold.ready.pid, coldDir) !== undefined || (await pluginStatus(cold, 'noop_cold')).sandbox?.running !== false) {
        if (Date.now() > deadline) throw new Error('the idle host did not stop within 15 s');
        await sleep(25);
      }
    };
    // The same idle Folio with no host running: the baseline of the idle CPU above.
    await stopped();
    const idle0 = await cpuOf(cold.child);
    await sleep(idleS * 1000);
    memory.idleCpu.folioNoHostMsPerS = round(((await cpuOf(cold.child)) - idle0) / 1000 / idleS, 2);
    for (let i = 0; i < sized(opts.quick, 9, 5, 2); i++) {
      await stopped();
      const t0 = performance.now();
      const first = await callFn(cold.ready.url, cold.ready.token, 'noop_cold', 'noop');
      const t1 = performance.now();
      await callFn(cold.ready.url, cold.ready.token, 'noop_cold', 'noop');
      warm.push(performance.now() - t1);
      if (first.status !== 200) throw new Error(`noop_cold.noop answered ${first.status} after an idle stop: ${first.text.slice(0, 200)}`);
      samples.push(round(t1 - t0, 1));
      progress(`plugin-host: cold call ${i + 1}: ${round(t1 - t0, 1)} ms`);
    }
    await stopAll();
    // The floor of any host's start: this Node starting and exiting, nothing loaded.
    const nodeStarts: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      execFileSync(process.execPath, ['-e', '0']);
      nodeStarts.push(performance.now() - t0);
    }
    const coldMedian = round(median(samples), 1);

    const result: PluginHostResult = {
      settings: { rounds, slices, sliceS, warmupS, connections: CONNECTIONS, sandbox, engine: folio.ready.engine },
      curl: curlStats,
      mcp: mcpStats,
      latency: {
        underLoad: { p50Ms: added((r) => r.p50Ms), p99Ms: added((r) => r.p99Ms) },
        sequential: { calls: seqBlocks * seqPerBlock, inProcess: seqIn!, process: seqProc! },
        addedSequential: { p50Ms: round(seqProc!.p50Ms - seqIn!.p50Ms, 3), p99Ms: round(seqProc!.p99Ms - seqIn!.p99Ms, 3) },
      },
      memory,
      coldStart: {
        samples,
        medianMs: coldMedian,
        maxMs: Math.max(...samples),
        warmMs: round(median(warm), 2),
        nodeStartMs: round(median(nodeStarts), 1),
        target: TARGETS.coldStartMs,
        pass: coldMedian < TARGETS.coldStartMs,
      },
      ...(profiles ? { profiles } : {}),
    };
    await mkdir(RESULTS, { recursive: true });
    await writeFile(path.join(RESULTS, 'plugin-host.json'), JSON.stringify(result, null, 2) + '\n');
    return result;
  } finally {
    await stopAll();
    await removeDir(root);
  }
}

function cpuAdded(cs: ConfigStats[]): string {
  const [inProcess, own] = [cs[1]!, cs[2]!];
  return `Folio's process +${round(own.serverCpuUs - inProcess.serverCpuUs)} µs, the plugin's ${own.pluginCpuUs} µs`;
}

function idleFolioPerHost(r: PluginHostResult): number {
  const c = r.memory.idleCpu;
  return round((c.folioMsPerS - c.folioNoHostMsPerS) / r.memory.plugins, 2);
}

export function formatPluginHost(r: PluginHostResult): string {
  const s = r.settings;
  const verdict = (c: ConfigStats) => (c.pass === null ? '' : `${c.pass ? 'PASS' : 'FAIL'} (>= ${c.target})`);
  const rows = (title: string, base: string, cs: ConfigStats[]) => [
    `  ${title.padEnd(22)} ${'req/s'.padStart(7)} ${`vs ${base}`.padStart(7)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'µs CPU server'.padStart(13)} ${'+ plugin'.padStart(8)}`,
    ...cs.map(
      (c) =>
        `  ${c.name.padEnd(22)} ${String(c.reqPerSec).padStart(7)} ${c.ratio.toFixed(2).padStart(7)} ${c.p50Ms.toFixed(2).padStart(7)} ${c.p99Ms.toFixed(2).padStart(7)} ${c.serverCpuUs.toFixed(1).padStart(13)} ${(c.pluginCpuUs === null ? '-' : c.pluginCpuUs.toFixed(1)).padStart(8)}  ${verdict(c)}  (rounds: ${c.rounds.map((x) => `${x.reqPerSec} ${x.ratio.toFixed(2)}`).join(' / ')})`,
    ),
  ];
  const mem = (m: HostMemory) => `VmRSS ${m.vmRssMb} MB (RssAnon ${m.rssAnonMb}, PSS ${m.pssMb}; ${m.processes} processes)`;
  const l = r.latency;
  const c = r.coldStart;
  const lines = [
    `plugin-host: a no-op plugin in-process vs in its own process (${s.sandbox}), one Folio (${s.engine}); ${s.connections} connections, ${s.rounds} rounds of ${s.slices} slices of ${s.sliceS}s per configuration taking turns (after ${s.warmupS}s warm-up); medians`,
    ...rows('curl POST /curl/call', 'koa', r.curl),
    ...rows('mcp tools/call', 'sdk', r.mcp),
    `  (µs CPU: per call, the server's process (user + system, every thread), and the plugin's process tree from /proc)`,
    `  CPU the process adds per call (own process minus in-process): curl ${cpuAdded(r.curl)}; mcp ${cpuAdded(r.mcp)}`,
    `  latency added by the process: under the curl load p50 +${l.underLoad.p50Ms} ms, p99 +${l.underLoad.p99Ms} ms; one call at a time on one connection (${l.sequential.calls} calls each) p50 ${l.sequential.inProcess.p50Ms} -> ${l.sequential.process.p50Ms} ms (+${l.addedSequential.p50Ms}), p99 ${l.sequential.inProcess.p99Ms} -> ${l.sequential.process.p99Ms} ms (+${l.addedSequential.p99Ms})`,
    `  memory, one idle host (median of ${r.memory.plugins}): just loaded ${mem(r.memory.idleHost)}; after one call ${mem(r.memory.afterOneCall)}  ${r.memory.pass ? 'PASS' : 'FAIL'} (VmRSS < ${r.memory.target} MB)`,
    `  memory, ${r.memory.plugins} hosts together: ${mem(r.memory.total)}; Folio's own process ${r.memory.folioRssMb} MB`,
    ...(r.memory.afterLoad ? [`  memory, the throughput run's host after its load: ${mem(r.memory.afterLoad)}`] : []),
    `  idle CPU (ms per second, over ${r.memory.idleCpu.seconds}s): Folio's process with ${r.memory.plugins} hosts ${r.memory.idleCpu.folioMsPerS}, with none running ${r.memory.idleCpu.folioNoHostMsPerS}: ${idleFolioPerHost(r)} per host on Folio's side; the hosts' own processes ${r.memory.idleCpu.hostsMsPerS} (${round(r.memory.idleCpu.hostsMsPerS / r.memory.plugins, 2)} each)`,
    `  cold start, first call after an idle stop: median ${c.medianMs} ms, max ${c.maxMs} ms (${c.samples.join(', ')}); the next call ${c.warmMs} ms; bare \`node -e 0\` ${c.nodeStartMs} ms  ${c.pass ? 'PASS' : 'FAIL'} (< ${c.target} ms)`,
  ];
  for (const p of r.profiles ?? []) lines.push(`  Folio's CPU profile, ${p.name} (${p.file}):`, formatProfile(p.summary));
  return lines.join('\n');
}

/** One line per goal, for run.ts's table. */
export function pluginHostSummaryRows(r: PluginHostResult): string[][] {
  const rows: string[][] = [];
  for (const [surface, cs, base] of [
    ['curl', r.curl, 'koa'],
    ['mcp', r.mcp, 'sdk'],
  ] as const)
    for (const c of cs.slice(1))
      rows.push([
        'plugin-host',
        `${surface} ${c.name} vs ${base}`,
        c.ratio.toFixed(2),
        `${c.reqPerSec} req/s, p99 ${c.p99Ms} ms, ${c.serverCpuUs} µs CPU${c.pluginCpuUs === null ? '' : ` + ${c.pluginCpuUs} plugin`}`,
        c.pass === null ? '' : `${c.pass ? 'PASS' : 'FAIL'} (>= ${c.target})`,
      ]);
  rows.push([
    'plugin-host',
    'idle host VmRSS MB',
    String(r.memory.afterOneCall.vmRssMb),
    `PSS ${r.memory.afterOneCall.pssMb} MB; ${r.memory.plugins} hosts ${r.memory.total.vmRssMb} MB (PSS ${r.memory.total.pssMb})`,
    `${r.memory.pass ? 'PASS' : 'FAIL'} (< ${r.memory.target})`,
  ]);
  rows.push([
    'plugin-host',
    'cold start first call ms',
    String(r.coldStart.medianMs),
    `max ${r.coldStart.maxMs}, warm ${r.coldStart.warmMs} ms`,
    `${r.coldStart.pass ? 'PASS' : 'FAIL'} (< ${r.coldStart.target})`,
  ]);
  rows.push([
    'plugin-host',
    'latency added p50/p99 ms',
    `${r.latency.addedSequential.p50Ms}/${r.latency.addedSequential.p99Ms}`,
    `one call at a time; under load +${r.latency.underLoad.p50Ms}/+${r.latency.underLoad.p99Ms}`,
    '',
  ]);
  return rows;
}

if (import.meta.main) {
  const result = await runPluginHost({ quick: process.argv.includes('--quick'), profile: process.argv.includes('--profile') });
  console.log(formatPluginHost(result));
  console.log(JSON.stringify(result));
}
