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
import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import autocannon from 'autocannon';
import { freshDatabase } from './lib.ts';
import { formatProfile, summarizeProfile, type CpuProfile, type ProfileSummary } from './profile.ts';
import { progress, removeDir, round, spawnChild, tempDir } from './util.ts';

const PATH = '/curl/call/bench/noop';
const SERVERS = path.join(import.meta.dirname, 'servers');
const RESULTS = path.join(import.meta.dirname, 'results');
/** Target: Folio serves at least this share of bare Koa's req/s. */
export const TARGET_RATIO = 0.6;

export interface CallOptions {
  quick: boolean;
  /** Also take a CPU profile of each Folio server under the same load, and per-step timings. */
  profile: boolean;
}

export interface LoadResult {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  meanLatencyMs: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

export interface FolioRun extends LoadResult {
  engine: string;
  ratio: number;
  pass: boolean;
  breakdown?: Record<string, number>;
  /** One per thread: the main thread, and each worker (the embedded PGlite, if it runs in one). */
  profiles?: Array<{ thread: string; file: string; summary: ProfileSummary }>;
}

export interface CallResult {
  settings: { connections: number; pipelining: number; durationS: number; warmupS: number; arrangement: string; token: string };
  /** Mean req/s of the two Koa runs (before and after Folio); p50/p99 the worse of the two. */
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
}

/** `token` null: no Authorization header (Folio answers 401 before any database lookup). */
async function load(url: string, token: string | null, durationS: number): Promise<LoadResult> {
  const r = await autocannon({
    url: url + PATH,
    method: 'POST',
    headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), 'content-type': 'application/json' },
    body: '{}',
    connections: 10,
    pipelining: 1,
    duration: durationS,
  });
  return {
    reqPerSec: round(r.requests.mean, 0),
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

async function measure(
  name: string,
  script: string,
  args: string[],
  warmupS: number,
  durationS: number,
  extra?: (child: ReturnType<typeof spawnChild<Ready>>, ready: Ready) => Promise<void>,
): Promise<{ result: LoadResult; ready: Ready }> {
  // The child's data folder is made and removed here, so nothing stays behind even if the
  // child has to be killed.
  const dataDir = script === 'folio.ts' ? await tempDir('data') : undefined;
  const child = spawnChild<Ready>(path.join(SERVERS, script), dataDir ? [...args, dataDir] : args, { timeoutMs: 120_000 });
  try {
    const ready = await child.ready;
    progress(`call: ${name} up at ${ready.url}; warm-up ${warmupS}s (discarded)`);
    await load(ready.url, ready.token, warmupS);
    progress(`call: ${name} measuring ${durationS}s`);
    const result = await load(ready.url, ready.token, durationS);
    assertClean(name, result);
    progress(`call: ${name} ${result.reqPerSec} req/s, p99 ${result.p99Ms} ms`);
    if (extra) await extra(child, ready);
    return { result, ready };
  } finally {
    const code = await child.stop(30_000);
    if (code !== 0) progress(`call: ${name} server exited with code ${code}`);
    await removeDir(dataDir);
  }
}

export async function runCall(opts: CallOptions): Promise<CallResult> {
  const warmupS = opts.quick ? 1 : 2;
  const durationS = opts.quick ? 3 : 10;
  const engines: Array<{ engine: string; serverUrl?: string }> = [{ engine: 'pglite' }];
  const dbUrl = process.env['DATABASE_URL'];
  if (dbUrl) engines.push({ engine: 'postgres', serverUrl: dbUrl });
  else progress('call: DATABASE_URL is not set: PostgreSQL run skipped (PGlite only)');

  // Koa before and after the Folio runs: the machine may be busy with other work, and the two
  // Koa figures show how much the baseline moved during the run.
  const koaBefore = (await measure('bare koa (before)', 'koa.ts', [], warmupS, durationS)).result;
  const folio: FolioRun[] = [];
  const dbs: Array<{ url: string; drop(): Promise<void> } | undefined> = [];
  try {
    for (const { engine, serverUrl } of engines) {
      const db = serverUrl ? await freshDatabase(serverUrl) : undefined;
      dbs.push(db);
      const { result } = await measure(`folio/${engine}`, 'folio.ts', [db?.url ?? ''], warmupS, durationS);
      folio.push({ engine, ...result, ratio: 0, pass: false });
    }
    const koaAfter = (await measure('bare koa (after)', 'koa.ts', [], warmupS, durationS)).result;
    const koa: LoadResult = {
      reqPerSec: round((koaBefore.reqPerSec + koaAfter.reqPerSec) / 2, 0),
      p50Ms: Math.max(koaBefore.p50Ms, koaAfter.p50Ms),
      p99Ms: Math.max(koaBefore.p99Ms, koaAfter.p99Ms),
      meanLatencyMs: round((koaBefore.meanLatencyMs + koaAfter.meanLatencyMs) / 2, 2),
      requests: koaBefore.requests + koaAfter.requests,
      non2xx: 0,
      errors: 0,
      timeouts: 0,
    };
    for (const f of folio) {
      f.ratio = Number((f.reqPerSec / koa.reqPerSec).toFixed(3));
      f.pass = f.ratio >= TARGET_RATIO;
    }
    if (opts.profile) for (let i = 0; i < folio.length; i++) await profileRun(folio[i]!, dbs[i]?.url ?? '', durationS);
    return {
      settings: {
        connections: 10,
        pipelining: 1,
        durationS,
        warmupS,
        arrangement: 'one child process per server (same Node 24 binary), autocannon in the parent, servers measured one at a time',
        token: 'a plain user API token made with admin.create_user',
      },
      koa,
      koaRuns: [koaBefore, koaAfter],
      folio,
      targetRatio: TARGET_RATIO,
    };
  } finally {
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
  const lines = [
    `call throughput: POST ${PATH}, ${r.settings.connections} connections, pipelining ${r.settings.pipelining}, ${r.settings.durationS}s (after ${r.settings.warmupS}s warm-up)`,
    `  ${'server'.padEnd(16)} ${'req/s'.padStart(9)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'vs koa'.padStart(7)}`,
    `  ${'bare koa'.padEnd(16)} ${String(r.koa.reqPerSec).padStart(9)} ${String(r.koa.p50Ms).padStart(7)} ${String(r.koa.p99Ms).padStart(7)} ${'1.00'.padStart(7)}  (runs before/after Folio: ${r.koaRuns.map((k) => `${k.reqPerSec} req/s p99 ${k.p99Ms} ms`).join(' / ')})`,
  ];
  for (const f of r.folio)
    lines.push(
      `  ${`folio/${f.engine}`.padEnd(16)} ${String(f.reqPerSec).padStart(9)} ${String(f.p50Ms).padStart(7)} ${String(f.p99Ms).padStart(7)} ${f.ratio.toFixed(2).padStart(7)}  ${f.pass ? 'PASS' : 'FAIL'} (target >= ${r.targetRatio})`,
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
