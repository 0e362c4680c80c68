// (a) Call throughput: POST /curl/call/bench/noop on Folio versus the same POST on a bare Koa
// hello world, in the same run, under the same load.
//
// Process arrangement (the same for both servers): each server runs alone in its own child
// process (bench/servers/*.ts, on this same Node 24 binary), and autocannon runs in this parent
// process. The servers are measured one after the other, never at the same time, so on a 2-core
// machine each server has one core while the load generator has the other. (In one process,
// autocannon would take CPU from the server, and more from whichever server is faster.)
//
// Folio's database is per run: the embedded PGlite (in the Folio process, as in production
// without DATABASE_URL), and, when DATABASE_URL is set, a fresh database on that PostgreSQL server.
// The no-op runs in Folio's process, as first-party plugins do; one more PGlite server runs it as a
// plugin dropped into plugins/ runs by default (isolation.mode 'third-party': a process of its own,
// sandboxed), and its CPU per request adds that process tree's (from /proc) to Folio's.
import { mkdir, readFile, realpath, rm } from 'node:fs/promises';
import path from 'node:path';
import autocannon from 'autocannon';
import { BENCH_PLUGINS, freshDatabase } from './lib.ts';
import { formatProfile, summarizeProfile, type CpuProfile, type ProfileSummary } from './profile.ts';
import {
  pluginRoot,
  progress,
  removeDir,
  round,
  sized,
  sliceSeconds,
  treeCpuUs,
  spawnChild,
  tempDir,
  turnOrder,
  type Child,
} from './util.ts';

const PATH = '/curl/call/bench/noop';
const SERVERS = path.join(import.meta.dirname, 'servers');
const RESULTS = path.join(import.meta.dirname, 'results');
/** Target: Folio serves at least this share of bare Koa's req/s. */
export const TARGET_RATIO = 0.6;
/** Each comparison runs this many times in one invocation; the figures reported are the medians. */
export const ROUNDS = 3;
/**
 * Each round is cut into this many slices (3 with --quick), and the servers take turns slice by
 * slice: this machine's speed drifts within seconds (the same server's req/s differed by 2x between
 * two 10 s runs a minute apart), so a server measured in one block of 10 s and the other in the
 * next were compared under different conditions.
 */
export const SLICES = 5;
const QUICK_SLICES = 3;

export interface CallOptions {
  quick: boolean;
  /** Also take a CPU profile of each Folio server under the same load, and per-step timings. */
  profile: boolean;
}

export interface LoadResult {
  reqPerSec: number;
  /** CPU time (user + system, all threads) the server process spent per request, in microseconds. */
  cpuUsPerCall: number;
  p50Ms: number;
  p99Ms: number;
  meanLatencyMs: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

/** One round's figures of one Folio engine, against the Koa run of the same round. */
export interface FolioRound {
  reqPerSec: number;
  cpuUsPerCall: number;
  p99Ms: number;
  koaReqPerSec: number;
  koaCpuUsPerCall: number;
  /** Folio req/s over the same round's Koa req/s. */
  ratio: number;
}

export interface FolioRun extends LoadResult {
  engine: string;
  /** Median over the rounds of Folio req/s ÷ the same round's Koa req/s: the target's measure. */
  ratio: number;
  /** Median over the rounds of Koa's CPU per request ÷ Folio's (1.00: as cheap as bare Koa). */
  cpuRatio: number;
  pass: boolean;
  rounds: FolioRound[];
  breakdown?: Record<string, number>;
  /** One per thread: the main thread, and each worker (the embedded PGlite, if it runs in one). */
  profiles?: Array<{ thread: string; file: string; summary: ProfileSummary }>;
}

export interface CallResult {
  settings: {
    connections: number;
    pipelining: number;
    durationS: number;
    warmupS: number;
    rounds: number;
    /** Each round's slices per server (the servers take turns slice by slice). */
    slices: number;
    arrangement: string;
    token: string;
  };
  /** Koa's medians over the rounds (req/s, CPU per request, p50/p99). */
  koa: LoadResult;
  koaRuns: LoadResult[];
  folio: FolioRun[];
  targetRatio: number;
}

interface Ready {
  url: string;
  token: string;
  userId: string;
  engine: string;
  pid: number;
}

type ServerChild = ReturnType<typeof spawnChild<Ready>>;

/** Median of a few numbers (the middle one of three). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The server process's CPU time so far (user + system, every thread), in microseconds. */
export async function cpuOf(child: Pick<Child<unknown>, 'child' | 'next'>): Promise<number> {
  child.child.send({ cmd: 'cpu' });
  const { cpu } = (await child.next(10_000)) as { cpu: { user: number; system: number } };
  return cpu.user + cpu.system;
}

/** `token` null: no Authorization header (Folio answers 401 before any database lookup). */
async function load(url: string, token: string | null, durationS: number, child?: ServerChild, plugin?: () => number): Promise<LoadResult> {
  const cpuBefore = (child ? await cpuOf(child) : 0) + (plugin?.() ?? 0);
  const r = await autocannon({
    url: url + PATH,
    method: 'POST',
    headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), 'content-type': 'application/json' },
    body: '{}',
    connections: 10,
    pipelining: 1,
    duration: durationS,
  });
  const cpuUs = child ? (await cpuOf(child)) + (plugin?.() ?? 0) - cpuBefore : NaN;
  return {
    reqPerSec: round(r.requests.mean, 0),
    cpuUsPerCall: round(cpuUs / Math.max(1, r.requests.total), 1),
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    meanLatencyMs: round(r.latency.mean, 2),
    requests: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
  };
}

function assertClean(name: string, r: LoadResult): void {
  if (r.non2xx > 0 || r.errors > 0 || r.timeouts > 0)
    throw new Error(`${name}: ${r.non2xx} non-2xx answers, ${r.errors} errors, ${r.timeouts} timeouts: the figures would be meaningless`);
}

/** A server child with its data folder (made here and removed after it is gone, even if killed). */
async function startServer(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ child: ServerChild; ready: Ready; stop(): Promise<void> }> {
  const dataDir = script === 'folio.ts' ? await tempDir('data') : undefined;
  const child = spawnChild<Ready>(path.join(SERVERS, script), dataDir ? [...args, dataDir] : args, { timeoutMs: 120_000, env });
  const stop = async () => {
    const code = await child.stop(30_000);
    if (code !== 0) progress(`call: ${script} server exited with code ${code}`);
    await removeDir(dataDir);
  };
  try {
    return { child, ready: await child.ready, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Used by the profiled run: one server, a warm-up, one measured load, then `extra`. */
async function measure(
  name: string,
  script: string,
  args: string[],
  warmupS: number,
  durationS: number,
  extra?: (child: ServerChild, ready: Ready) => Promise<void>,
): Promise<{ result: LoadResult; ready: Ready }> {
  const server = await startServer(script, args);
  try {
    const { child, ready } = server;
    progress(`call: ${name} up at ${ready.url}; warm-up ${warmupS}s (discarded)`);
    await load(ready.url, ready.token, warmupS);
    progress(`call: ${name} measuring ${durationS}s`);
    const result = await load(ready.url, ready.token, durationS, child);
    assertClean(name, result);
    progress(`call: ${name} ${result.reqPerSec} req/s, p99 ${result.p99Ms} ms`);
    if (extra) await extra(child, ready);
    return { result, ready };
  } finally {
    await server.stop();
  }
}

/**
 * One round of one server from its slices (all of the same length): mean req/s, CPU per request
 * over all of them, latency percentiles the median of the slices'.
 */
export function combined(parts: LoadResult[]): LoadResult {
  const requests = parts.reduce((a, p) => a + p.requests, 0);
  const cpuUs = parts.reduce((a, p) => a + p.cpuUsPerCall * p.requests, 0);
  return {
    reqPerSec: round(parts.reduce((a, p) => a + p.reqPerSec, 0) / parts.length, 0),
    cpuUsPerCall: round(cpuUs / Math.max(1, requests), 1),
    p50Ms: median(parts.map((p) => p.p50Ms)),
    p99Ms: median(parts.map((p) => p.p99Ms)),
    meanLatencyMs: round(parts.reduce((a, p) => a + p.meanLatencyMs * p.requests, 0) / Math.max(1, requests), 2),
    requests,
    non2xx: parts.reduce((a, p) => a + p.non2xx, 0),
    errors: parts.reduce((a, p) => a + p.errors, 0),
    timeouts: parts.reduce((a, p) => a + p.timeouts, 0),
  };
}

/** Medians of several runs of one server (p50/p99: the median too). */
function medianOf(runs: LoadResult[]): LoadResult {
  const m = (f: (r: LoadResult) => number) => median(runs.map(f));
  return {
    reqPerSec: round(
      m((r) => r.reqPerSec),
      0,
    ),
    cpuUsPerCall: round(
      m((r) => r.cpuUsPerCall),
      1,
    ),
    p50Ms: m((r) => r.p50Ms),
    p99Ms: m((r) => r.p99Ms),
    meanLatencyMs: round(
      m((r) => r.meanLatencyMs),
      2,
    ),
    requests: runs.reduce((a, r) => a + r.requests, 0),
    non2xx: runs.reduce((a, r) => a + r.non2xx, 0),
    errors: runs.reduce((a, r) => a + r.errors, 0),
    timeouts: runs.reduce((a, r) => a + r.timeouts, 0),
  };
}

export async function runCall(opts: CallOptions): Promise<CallResult> {
  const warmupS = opts.quick ? 1 : 2;
  const durationS = sized(opts.quick, 10, 3, 1);
  const rounds = sized(opts.quick, ROUNDS, ROUNDS, 1);
  const engines: Array<{ engine: string; serverUrl?: string; env?: NodeJS.ProcessEnv }> = [
    { engine: 'pglite' },
    { engine: 'pglite, own process', env: { BENCH_ISOLATION: 'third-party' } },
  ];
  const dbUrl = process.env['DATABASE_URL'];
  if (dbUrl) engines.push({ engine: 'postgres', serverUrl: dbUrl });
  else progress('call: DATABASE_URL is not set: PostgreSQL run skipped (PGlite only)');

  // Every server is started once and stays up (idle) while the others are loaded; each round loads
  // them one at a time, in slices taking turns (the first one alternating from slice to slice), so
  // drift in the machine's speed weighs on both sides alike. Each Folio round is compared with the
  // same round's Koa.
  const dbs: Array<{ url: string; drop(): Promise<void> } | undefined> = [];
  const servers: Array<Awaited<ReturnType<typeof startServer>> & { name: string; plugin?: () => number }> = [];
  try {
    servers.push({ name: 'bare koa', ...(await startServer('koa.ts', [])) });
    for (const { engine, serverUrl, env } of engines) {
      const db = serverUrl ? await freshDatabase(serverUrl) : undefined;
      dbs.push(db);
      const server = await startServer('folio.ts', [db?.url ?? ''], env);
      // The plugin's own process tree, where it has one (bwrap, bwrap, node: a child of Folio's).
      const fixture = await realpath(path.join(BENCH_PLUGINS, 'bench'));
      const root = env ? pluginRoot(server.ready.pid, fixture) : undefined;
      if (env && root === undefined) throw new Error(`folio/${engine}: no process of ${fixture} under Folio's`);
      servers.push({ name: `folio/${engine}`, ...server, ...(root === undefined ? {} : { plugin: () => treeCpuUs(root) }) });
    }
    for (const s of servers) {
      progress(`call: ${s.name} up at ${s.ready.url}; warm-up ${warmupS}s (discarded)`);
      await load(s.ready.url, s.ready.token, warmupS);
    }
    const runs: LoadResult[][] = servers.map(() => []);
    const slices = sized(opts.quick, SLICES, QUICK_SLICES, 1);
    const sliceS = sliceSeconds(durationS, slices);
    for (let r = 0; r < rounds; r++) {
      progress(`call: round ${r + 1}/${rounds}: ${slices} slices of ${sliceS}s per server, taking turns`);
      const parts: LoadResult[][] = servers.map(() => []);
      for (const order of turnOrder(servers.length, r, slices)) {
        for (const i of order) {
          const s = servers[i]!;
          const part = await load(s.ready.url, s.ready.token, sliceS, s.child, s.plugin);
          assertClean(s.name, part);
          parts[i]!.push(part);
        }
      }
      parts.forEach((p, i) => {
        const result = combined(p);
        progress(
          `call: round ${r + 1}/${rounds}, ${servers[i]!.name} ${result.reqPerSec} req/s, p99 ${result.p99Ms} ms, ${result.cpuUsPerCall} µs CPU per request`,
        );
        runs[i]!.push(result);
      });
    }
    const koaRuns = runs[0]!;
    const folio: FolioRun[] = engines.map(({ engine }, e) => {
      const mine = runs[e + 1]!;
      const perRound: FolioRound[] = mine.map((f, r) => ({
        reqPerSec: f.reqPerSec,
        cpuUsPerCall: f.cpuUsPerCall,
        p99Ms: f.p99Ms,
        koaReqPerSec: koaRuns[r]!.reqPerSec,
        koaCpuUsPerCall: koaRuns[r]!.cpuUsPerCall,
        ratio: Number((f.reqPerSec / koaRuns[r]!.reqPerSec).toFixed(3)),
      }));
      const ratio = Number(median(perRound.map((x) => x.ratio)).toFixed(3));
      return {
        engine,
        ...medianOf(mine),
        ratio,
        cpuRatio: Number(median(perRound.map((x) => x.koaCpuUsPerCall / x.cpuUsPerCall)).toFixed(3)),
        pass: ratio >= TARGET_RATIO,
        rounds: perRound,
      };
    });
    for (const s of servers.splice(0)) await s.stop();
    // Profiles of the in-process configurations (the own-process one's cost is split across processes).
    if (opts.profile)
      for (let i = 0; i < folio.length; i++) if (!engines[i]!.env) await profileRun(folio[i]!, dbs[i]?.url ?? '', durationS);
    return {
      settings: {
        connections: 10,
        pipelining: 1,
        durationS: slices * sliceS,
        warmupS,
        rounds,
        slices,
        arrangement:
          'one child process per server (same Node 24 binary), all started once, autocannon in the parent, servers loaded one at a time, taking turns in slices of each round (the first one alternating)',
        token: 'a plain user API token made with admin.create_user',
      },
      koa: medianOf(koaRuns),
      koaRuns,
      folio,
      targetRatio: TARGET_RATIO,
    };
  } finally {
    for (const s of servers) await s.stop();
    for (const db of dbs) await db?.drop();
  }
}

/** A second, separate run of the same load with a CPU profile of the Folio process, plus step timings. */
async function profileRun(run: FolioRun, dbUrl: string, durationS: number): Promise<void> {
  await mkdir(RESULTS, { recursive: true });
  const base = path.join(RESULTS, `folio-${run.engine}`);
  let files: Array<{ thread: string; file: string }> = [];
  await measure(`folio/${run.engine} (profiled, figures not used)`, 'folio.ts', [dbUrl], 1, 1, async (child, ready) => {
    const ask = async (msg: Record<string, unknown>) => {
      child.child.send(msg);
      const reply = (await child.next(120_000)) as {
        ok: boolean;
        error?: string;
        breakdown?: Record<string, number>;
        files?: Array<{ thread: string; file: string }>;
        threads?: string[];
      };
      if (!reply.ok) throw new Error(reply.error);
      return reply;
    };
    const { threads } = await ask({ cmd: 'profile-start' });
    progress(`call: profiling folio/${run.engine} (threads: ${threads?.join(', ')}) under the same load for ${durationS}s`);
    const profiled = await load(ready.url, ready.token, durationS);
    files = (await ask({ cmd: 'profile-stop', file: base })).files ?? [];
    progress(`call: folio/${run.engine} per-step timings (sequential, in the server process)`);
    const b = (await ask({ cmd: 'breakdown', n: 2000 })).breakdown!;
    run.breakdown = Object.fromEntries(Object.entries(b).map(([k, v]) => [k, round(v, 1)]));
    run.breakdown['profiledReqPerSec'] = profiled.reqPerSec;
    // Folio's HTTP stack without any database work: the same POST without a token is refused
    // (401) by the authenticator before it looks anything up. Pino-http, Koa, the routers and the
    // error answer still run.
    progress(`call: folio/${run.engine} same load without a token (401 before any lookup), ${durationS}s, then again profiled`);
    const noDb = await load(ready.url, null, durationS);
    await ask({ cmd: 'profile-start' });
    await load(ready.url, null, durationS);
    const noDbFiles = (await ask({ cmd: 'profile-stop', file: `${base}-no-token` })).files ?? [];
    for (const f of noDbFiles) {
      if (f.thread === 'main') files.push({ ...f, thread: 'main, no-token (401) load' });
      else await rm(f.file, { force: true }); // the database is idle in this run
    }
    if (noDb.errors > 0 || noDb.timeouts > 0 || noDb.non2xx < noDb.requests * 0.99)
      throw new Error('the no-token run did not answer 401s only');
    run.breakdown['noDbReqPerSec'] = noDb.reqPerSec;
    run.breakdown['noDbP99Ms'] = noDb.p99Ms;
  });
  run.profiles = [];
  for (const { thread, file } of files)
    run.profiles.push({
      thread,
      file: path.relative(process.cwd(), file),
      summary: summarizeProfile(JSON.parse(await readFile(file, 'utf8')) as CpuProfile),
    });
}

export function formatCall(r: CallResult): string {
  const cpu = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
  const lines = [
    `call throughput: POST ${PATH}, ${r.settings.connections} connections, pipelining ${r.settings.pipelining}, ${r.settings.rounds} rounds of ${r.settings.durationS}s per server in ${r.settings.slices} slices taking turns (after ${r.settings.warmupS}s warm-up); medians`,
    `  ${'server'.padEnd(26)} ${'req/s'.padStart(9)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'vs koa'.padStart(7)} ${'µs CPU'.padStart(7)} ${'vs koa'.padStart(7)}`,
    `  ${'bare koa'.padEnd(26)} ${String(r.koa.reqPerSec).padStart(9)} ${String(r.koa.p50Ms).padStart(7)} ${String(r.koa.p99Ms).padStart(7)} ${'1.00'.padStart(7)} ${cpu(r.koa.cpuUsPerCall).padStart(7)} ${'1.00'.padStart(7)}  (rounds: ${r.koaRuns.map((k) => `${k.reqPerSec} req/s ${cpu(k.cpuUsPerCall)} µs`).join(' / ')})`,
  ];
  for (const f of r.folio)
    lines.push(
      `  ${`folio/${f.engine}`.padEnd(26)} ${String(f.reqPerSec).padStart(9)} ${String(f.p50Ms).padStart(7)} ${String(f.p99Ms).padStart(7)} ${f.ratio.toFixed(2).padStart(7)} ${cpu(f.cpuUsPerCall).padStart(7)} ${f.cpuRatio.toFixed(2).padStart(7)}  ${f.pass ? 'PASS' : 'FAIL'} (target >= ${r.targetRatio} in req/s; rounds: ${f.rounds.map((x) => `${x.reqPerSec} req/s ${cpu(x.cpuUsPerCall)} µs ${x.ratio.toFixed(2)}`).join(' / ')})`,
    );
  lines.push(
    `  (vs koa: req/s ratio, the median of each round's Folio ÷ Koa; µs CPU: the server process's user + system CPU time per request, every thread; its vs koa: Koa's µs ÷ Folio's)`,
  );
  for (const f of r.folio) {
    if (f.breakdown) {
      const b = f.breakdown;
      lines.push(
        `  folio/${f.engine} step timings (sequential, µs per call): identity.authenticate ${b['authenticateUs']}, identity.namespaceAccess ${b['namespaceAccessUs']}, dispatcher.call ${b['dispatchUs']} (incl. namespaceAccess), bare 'select 1' ${b['selectOneUs']}`,
        `  folio/${f.engine} without database work (same POST, no token -> 401 before any lookup): ${b['noDbReqPerSec']} req/s, p99 ${b['noDbP99Ms']} ms (${((b['noDbReqPerSec']! / r.koa.reqPerSec) * 100).toFixed(0)}% of koa); profiled run: ${b['profiledReqPerSec']} req/s`,
      );
    }
    for (const p of f.profiles ?? [])
      lines.push(`  folio/${f.engine} CPU profile under load, thread ${p.thread} (${p.file}):`, formatProfile(p.summary));
  }
  return lines.join('\n');
}
