// (o) observability: what metrics and tracing cost, and how fast /metrics answers.
//   1. POST /curl/call/bench/noop on three Folio servers in the same run: one plain; one with
//      METRICS_ENABLED and OpenTelemetry tracing on (the preload core/tracing.ts) sampling 1% of
//      traces, as production tracing runs; one exporting every span. Spans go over OTLP/HTTP to a
//      sink in this process; and one with metrics only. Each server runs alone in its own child process
//      (bench/servers/folio.ts) and they take turns slice by slice, as in bench/call.ts. Target:
//      the sampled server serves at least 95% of the plain server's req/s. Then notetaker.get of
//      one note, a call that queries the database, on the plain and the sampled server (what the pg
//      instrumentation adds to an unsampled request's queries).
//   2. GET /metrics on a server with 100 plugins loaded (each called once, so each has its series)
//      and 10,000 users (each with storage rows): the time of an answer, sequential scrapes, the
//      first one (nothing cached) apart. Target: under 50 ms.
import http from 'node:http';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import autocannon from 'autocannon';
import { BENCH_PLUGINS, ROOT, callFn, createUserToken, startBenchFolio } from './lib.ts';
import { percentile, progress, removeDir, round, sized, sliceSeconds, spawnChild, tempDir, turnOrder, type Child } from './util.ts';
import { cpuOf } from './call.ts';

export const COST_TARGET = 0.05;
export const SCRAPE_TARGET_MS = 50;

interface Ready {
  url: string;
  token: string;
}

/** What one slice of load calls: the no-op call, or a call that reads a note from the database. */
interface Target {
  name: string;
  path: string;
  body: string;
}

export interface ObservabilityResult {
  call: {
    offReqPerSec: number;
    onReqPerSec: number;
    offCpuUsPerCall: number;
    onCpuUsPerCall: number;
    /** The same with every span sampled and exported. */
    everySpanReqPerSec: number;
    everySpanCpuUsPerCall: number;
    everySpanCost: number;
    /** Metrics on, tracing off. */
    metricsOnlyReqPerSec: number;
    metricsOnlyCpuUsPerCall: number;
    metricsOnlyCost: number;
    /** 1 - on/off req/s: the throughput given up. */
    cost: number;
    /** on/off CPU per call, minus 1. */
    cpuCost: number;
    spansExported: number;
    pass: boolean;
  };
  /** notetaker.get of one note (a call that queries the database): plain vs metrics + 1% tracing. */
  db: {
    offReqPerSec: number;
    onReqPerSec: number;
    offCpuUsPerCall: number;
    onCpuUsPerCall: number;
    cost: number;
    cpuCost: number;
  };
  scrape: {
    plugins: number;
    users: number;
    firstMs: number;
    p50Ms: number;
    p95Ms: number;
    maxMs: number;
    /** CPU time of this process's main thread per scrape (server and client both run on it): what a busy machine does not inflate. */
    cpuP50Ms: number;
    cpuP95Ms: number;
    bytes: number;
    pass: boolean;
  };
}

/** An OTLP/HTTP receiver that takes every export and counts the requests. */
export async function otlpSink(): Promise<{ url: string; exports: () => number; close: () => Promise<void> }> {
  let exports = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      exports++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    exports: () => exports,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const NOOP: Target = { name: 'bench.noop', path: '/curl/call/bench/noop', body: '{}' };

async function slice(
  url: string,
  token: string,
  seconds: number,
  child: Child<Ready>,
  target: Target = NOOP,
): Promise<{ requests: number; cpuUs: number }> {
  const before = await cpuOf(child);
  const r = await autocannon({
    url: `${url}${target.path}`,
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: target.body,
    connections: 10,
    duration: seconds,
  });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${target.name}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
  return { requests: r.requests.total, cpuUs: (await cpuOf(child)) - before };
}

/** The servers compared, in one run: plain, then metrics with tracing as it would run in production (sampled), then every span. */
const CONFIGS = [
  { name: 'off', env: {} as Record<string, string>, tracing: false, metrics: false },
  {
    name: 'on',
    tracing: true,
    metrics: true,
    env: { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' } as Record<string, string>,
  },
  { name: 'every span', tracing: true, metrics: true, env: {} as Record<string, string> },
  { name: 'metrics only', tracing: false, metrics: true, env: {} as Record<string, string> },
];

/** Alternating slices of `target` on the servers `which` (indexes into `servers`): requests/s and CPU µs per call of each. */
async function compare(
  servers: Ready[],
  children: Array<Child<Ready>>,
  which: number[],
  targets: Target[],
  quick: boolean,
): Promise<{ rps: number[]; cpu: number[] }> {
  const rounds = sized(quick, 3, 1, 1);
  const slices = sized(quick, 6, 4, 2);
  const seconds = sliceSeconds(sized(quick, 12, 8, 2), slices);
  const totals = which.map(() => ({ requests: 0, cpuUs: 0, seconds: 0 }));
  for (let r = 0; r < rounds; r++)
    for (const order of turnOrder(which.length, r, slices))
      for (const k of order) {
        const i = which[k]!;
        const s = await slice(servers[i]!.url, servers[i]!.token, seconds, children[i]!, targets[k]);
        totals[k]!.requests += s.requests;
        totals[k]!.cpuUs += s.cpuUs;
        totals[k]!.seconds += seconds;
      }
  return { rps: totals.map((t) => t.requests / t.seconds), cpu: totals.map((t) => t.cpuUs / t.requests) };
}

/** A note of `bytes` characters owned by the server's user, and the notetaker.get call that reads it. */
async function noteTarget(s: Ready, bytes: number): Promise<Target> {
  const r = await callFn(s.url, s.token, 'notetaker', 'create', { title: 'observability bench', body: 'x'.repeat(bytes) });
  if (r.status !== 200) throw new Error(`notetaker.create answered ${r.status}: ${r.text.slice(0, 200)}`);
  const { id } = JSON.parse(r.text) as { id: string };
  const target = { name: 'notetaker.get', path: '/curl/call/notetaker/get', body: JSON.stringify({ id }) };
  const check = await callFn(s.url, s.token, 'notetaker', 'get', { id });
  if (check.status !== 200) throw new Error(`notetaker.get answered ${check.status}: ${check.text.slice(0, 200)}`);
  return target;
}

async function callCost(quick: boolean): Promise<Pick<ObservabilityResult, 'call' | 'db'>> {
  const sink = await otlpSink();
  const script = path.join(import.meta.dirname, 'servers', 'folio.ts');
  const dirs: string[] = [];
  const children: Array<Child<Ready>> = [];
  try {
    // One after the other: embedded engines starting at once on two busy cores take minutes.
    for (const c of CONFIGS) {
      const dir = await tempDir('obs');
      dirs.push(dir);
      const child = spawnChild<Ready>(script, ['', dir], {
        timeoutMs: 180_000,
        ...(c.tracing ? { execArgv: ['--import', path.join(ROOT, 'core', 'tracing.ts')] } : {}),
        env: {
          ...(c.metrics ? { BENCH_CONFIG: JSON.stringify({ metrics: { enabled: true, token: null } }) } : {}),
          ...(c.tracing
            ? {
                OTEL_TRACES_EXPORTER: 'otlp',
                OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
                OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
                ...c.env,
              }
            : {}),
        },
      });
      children.push(child);
      await child.ready;
    }
    const servers = await Promise.all(children.map((c) => c.ready));
    // Warm every server (JIT, caches) before anything counts.
    for (const [i, s] of servers.entries()) await slice(s.url, s.token, sized(quick, 2, 2, 1), children[i]!);
    const all = CONFIGS.map((_, i) => i);
    const { rps, cpu } = await compare(
      servers,
      children,
      all,
      all.map(() => NOOP),
      quick,
    );
    const cost = 1 - rps[1]! / rps[0]!;
    progress('observability: notetaker.get (a database query), plain vs metrics + 1% tracing');
    const notes = [await noteTarget(servers[0]!, 2000), await noteTarget(servers[1]!, 2000)];
    for (const [k, i] of [0, 1].entries()) await slice(servers[i]!.url, servers[i]!.token, 1, children[i]!, notes[k]);
    const db = await compare(servers, children, [0, 1], notes, quick);
    const call = {
      offReqPerSec: round(rps[0]!, 0),
      onReqPerSec: round(rps[1]!, 0),
      everySpanReqPerSec: round(rps[2]!, 0),
      offCpuUsPerCall: round(cpu[0]!, 1),
      onCpuUsPerCall: round(cpu[1]!, 1),
      everySpanCpuUsPerCall: round(cpu[2]!, 1),
      cost: round(cost, 4),
      cpuCost: round(cpu[1]! / cpu[0]! - 1, 4),
      everySpanCost: round(1 - rps[2]! / rps[0]!, 4),
      metricsOnlyReqPerSec: round(rps[3]!, 0),
      metricsOnlyCpuUsPerCall: round(cpu[3]!, 1),
      metricsOnlyCost: round(1 - rps[3]! / rps[0]!, 4),
      spansExported: sink.exports(),
      pass: cost < COST_TARGET,
    };
    return {
      call,
      db: {
        offReqPerSec: round(db.rps[0]!, 0),
        onReqPerSec: round(db.rps[1]!, 0),
        offCpuUsPerCall: round(db.cpu[0]!, 1),
        onCpuUsPerCall: round(db.cpu[1]!, 1),
        cost: round(1 - db.rps[1]! / db.rps[0]!, 4),
        cpuCost: round(db.cpu[1]! / db.cpu[0]! - 1, 4),
      },
    };
  } finally {
    for (const c of children) await c.stop();
    await sink.close();
    for (const d of dirs) await removeDir(d);
  }
}

/** 100 small plugins, two functions each. */
async function manyPlugins(dir: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const ns = `p${String(i).padStart(3, '0')}`;
    await mkdir(path.join(dir, ns));
    await writeFile(
      path.join(dir, ns, 'index.mjs'),
      `export default { namespace: '${ns}', description: 'Plugin ${ns} of the metrics bench.', functions: {
  ping: { description: 'Answer ok.', handler: () => ({ ok: true }) },
  echo: { description: 'Echo text.', args: { type: 'object', properties: { text: { type: 'string' } } }, handler: ({ text }) => text ?? '' },
} };\n`,
    );
  }
}

async function scrapeTime(quick: boolean): Promise<ObservabilityResult['scrape']> {
  const PLUGINS = sized(quick, 100, 100, 10);
  const USERS = sized(quick, 10_000, 10_000, 200);
  const pluginsDir = await tempDir('obs-plugins');
  await manyPlugins(pluginsDir, PLUGINS);
  const b = await startBenchFolio({
    plugins: [BENCH_PLUGINS, pluginsDir],
    watch: false,
    // In-process: 100 plugin processes would measure this machine's memory, not /metrics.
    overrides: { metrics: { enabled: true, token: null }, isolation: { mode: 'in-process' } },
  });
  try {
    progress(`observability: ${USERS} users with storage rows`);
    const em = b.folio.db.orm.em.fork();
    await em.execute(
      `insert into users (id, email) select gen_random_uuid(), 'obs-' || g || '@example.com' from generate_series(1, ${USERS}) g`,
    );
    await em.execute(
      `insert into storage_usage (owner_id, kind, bytes) select id, k, (random() * 1e6)::bigint from users, unnest(array['notes', 'files']) k
        where email like 'obs-%'`,
    );
    const { token } = await createUserToken(b.url);
    progress(`observability: one call of each of the ${PLUGINS} plugins' functions`);
    for (let i = 0; i < PLUGINS; i++) {
      const ns = `p${String(i).padStart(3, '0')}`;
      for (const fn of ['ping', 'echo']) {
        const r = await callFn(b.url, token, ns, fn, fn === 'echo' ? { text: 'x' } : {});
        if (r.status !== 200) throw new Error(`${ns}.${fn}: ${r.status} ${r.text.slice(0, 200)}`);
      }
    }
    const scrape = async () => {
      const c0 = process.threadCpuUsage();
      const t0 = performance.now();
      const res = await fetch(`${b.url}/metrics`);
      const text = await res.text();
      if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
      const c = process.threadCpuUsage(c0);
      return { ms: performance.now() - t0, cpuMs: (c.user + c.system) / 1000, bytes: text.length };
    };
    const first = await scrape();
    const times: number[] = [];
    const cpu: number[] = [];
    let bytes = 0;
    const n = sized(quick, 300, 50, 5);
    for (let i = 0; i < n; i++) {
      const s = await scrape();
      times.push(s.ms);
      cpu.push(s.cpuMs);
      bytes = s.bytes;
    }
    const p95 = percentile(times, 95);
    return {
      plugins: PLUGINS,
      users: USERS,
      firstMs: round(first.ms, 1),
      p50Ms: round(percentile(times, 50), 1),
      p95Ms: round(p95, 1),
      maxMs: round(Math.max(...times), 1),
      cpuP50Ms: round(percentile(cpu, 50), 1),
      cpuP95Ms: round(percentile(cpu, 95), 1),
      bytes,
      pass: p95 < SCRAPE_TARGET_MS && first.ms < SCRAPE_TARGET_MS,
    };
  } finally {
    await b.close();
    await removeDir(pluginsDir);
  }
}

export async function runObservability(opts: { quick: boolean }): Promise<ObservabilityResult> {
  progress('observability: no-op call, metrics and tracing off vs on');
  const { call, db } = await callCost(opts.quick);
  progress('observability: /metrics with 100 plugins and 10,000 users');
  const scrape = await scrapeTime(opts.quick);
  return { call, db, scrape };
}

export function formatObservability(r: ObservabilityResult): string {
  const c = r.call;
  const s = r.scrape;
  return [
    '## observability',
    `no-op call, off: ${c.offReqPerSec} req/s, ${c.offCpuUsPerCall} µs CPU/call`,
    `no-op call, metrics only: ${c.metricsOnlyReqPerSec} req/s, ${c.metricsOnlyCpuUsPerCall} µs CPU/call, cost ${(c.metricsOnlyCost * 100).toFixed(1)}%`,
    `no-op call, metrics + tracing on (1% of traces sampled): ${c.onReqPerSec} req/s, ${c.onCpuUsPerCall} µs CPU/call`,
    `no-op call, metrics + tracing, every span exported: ${c.everySpanReqPerSec} req/s, ${c.everySpanCpuUsPerCall} µs CPU/call, cost ${(c.everySpanCost * 100).toFixed(1)}% (${c.spansExported} OTLP exports received)`,
    `cost: ${(c.cost * 100).toFixed(1)}% of throughput, ${(c.cpuCost * 100).toFixed(1)}% more CPU per call  ${c.pass ? 'PASS' : 'FAIL'} (< ${COST_TARGET * 100}%)`,
    `notetaker.get (database query), off: ${r.db.offReqPerSec} req/s, ${r.db.offCpuUsPerCall} µs CPU/call; metrics + 1% tracing: ${r.db.onReqPerSec} req/s, ${r.db.onCpuUsPerCall} µs CPU/call; cost ${(r.db.cost * 100).toFixed(1)}% of throughput, ${(r.db.cpuCost * 100).toFixed(1)}% more CPU per call`,
    `/metrics with ${s.plugins} plugins and ${s.users} users (${s.bytes} bytes): first ${s.firstMs} ms, p50 ${s.p50Ms} ms, p95 ${s.p95Ms} ms, max ${s.maxMs} ms; CPU per scrape p50 ${s.cpuP50Ms} ms, p95 ${s.cpuP95Ms} ms  ${s.pass ? 'PASS' : 'FAIL'} (< ${SCRAPE_TARGET_MS} ms)`,
  ].join('\n');
}

export function observabilitySummaryRows(r: ObservabilityResult): string[][] {
  return [
    [
      'observability',
      'no-op call cost, metrics+tracing',
      `${(r.call.cost * 100).toFixed(1)}%`,
      `${r.call.onReqPerSec} vs ${r.call.offReqPerSec} req/s; CPU/call +${(r.call.cpuCost * 100).toFixed(1)}%`,
      `${r.call.pass ? 'PASS' : 'FAIL'} (< ${COST_TARGET * 100}%)`,
    ],
    [
      'observability',
      'no-op call cost, metrics only',
      `${(r.call.metricsOnlyCost * 100).toFixed(1)}%`,
      `${r.call.metricsOnlyReqPerSec} vs ${r.call.offReqPerSec} req/s`,
      '',
    ],
    [
      'observability',
      'notetaker.get cost, metrics+tracing',
      `${(r.db.cost * 100).toFixed(1)}%`,
      `${r.db.onReqPerSec} vs ${r.db.offReqPerSec} req/s; CPU/call +${(r.db.cpuCost * 100).toFixed(1)}%`,
      '',
    ],
    [
      'observability',
      '/metrics p95 (100 plugins, 10k users)',
      `${r.scrape.p95Ms} ms`,
      `first ${r.scrape.firstMs} ms, max ${r.scrape.maxMs} ms, CPU p95 ${r.scrape.cpuP95Ms} ms`,
      `${r.scrape.pass ? 'PASS' : 'FAIL'} (< ${SCRAPE_TARGET_MS} ms)`,
    ],
  ];
}
