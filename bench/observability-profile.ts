// CPU profiles of the no-op call on the servers bench/observability.ts compares: which functions the
// tracing and metrics cost goes to. Not part of the bench run; a tool for when the cost moves.
// Usage: npx node bench/observability-profile.ts [seconds=6] [configs=off,on]
// Writes <tmp>/obs-<config>.cpuprofile (main thread) and prints each profile's summary
// (bench/profile.ts) plus the self time of the functions that differ most between the first config and the others.
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import autocannon from 'autocannon';
import { ROOT } from './lib.ts';
import { removeDir, spawnChild, tempDir, type Child } from './util.ts';
import { formatProfile, summarizeProfile, type CpuProfile } from './profile.ts';
import { otlpSink } from './observability.ts';

const seconds = Number(process.argv[2] ?? 6);
const wanted = (process.argv[3] ?? 'off,on').split(',');

interface Ready {
  url: string;
  token: string;
}

const CONFIGS: Record<string, { tracing: boolean; metrics: boolean; env: Record<string, string> }> = {
  off: { tracing: false, metrics: false, env: {} },
  metrics: { tracing: false, metrics: true, env: {} },
  on: { tracing: true, metrics: true, env: { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' } },
  tracing: { tracing: true, metrics: false, env: { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' } },
  every: { tracing: true, metrics: true, env: {} },
};

async function load(s: Ready, secs: number): Promise<number> {
  const r = await autocannon({
    url: `${s.url}/curl/call/bench/noop`,
    method: 'POST',
    headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
    body: '{}',
    connections: 10,
    duration: secs,
  });
  return r.requests.total;
}

/** Self time per function (name and place), in µs per call. */
function selfPerCall(profile: CpuProfile, calls: number): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const out = new Map<string, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const n = byId.get(profile.samples[i]!)!;
    const f = n.callFrame;
    const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^file:\/\/.*\/node_modules\//, '').replace(`file://${ROOT}/`, '')}:${f.lineNumber + 1}`;
    out.set(key, (out.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  for (const [k, v] of out) out.set(k, v / calls);
  return out;
}

const script = path.join(import.meta.dirname, 'servers', 'folio.ts');
const sink = await otlpSink();
const results: Array<{ name: string; self: Map<string, number> }> = [];
const servers: Array<{ name: string; child: Child<Ready>; ready: Ready; dir: string; calls: number }> = [];
try {
  // One after the other (embedded engines starting at once are slow), then all profiled at once
  // while the load takes turns between them, slice by slice: a busy machine slows them alike.
  for (const name of wanted) {
    const c = CONFIGS[name];
    if (!c) throw new Error(`unknown config ${name}; one of ${Object.keys(CONFIGS).join(', ')}`);
    const dir = await tempDir('obs-prof');
    const child = spawnChild<Ready>(script, ['', dir], {
      timeoutMs: 180_000,
      ...(c.tracing ? { execArgv: ['--import', path.join(ROOT, 'core', 'tracing.ts')] } : {}),
      env: {
        ...(c.metrics ? { BENCH_CONFIG: JSON.stringify({ metrics: { enabled: true, token: null } }) } : {}),
        ...(c.tracing
          ? { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', ...c.env }
          : {}),
      },
    });
    servers.push({ name, child, ready: await child.ready, dir, calls: 0 });
  }
  for (const s of servers) await load(s.ready, 2);
  for (const s of servers) {
    s.child.child.send({ cmd: 'profile-start' });
    await s.child.next(30_000);
  }
  const slices = Math.max(2, Math.round(seconds / 2));
  for (let i = 0; i < slices; i++)
    for (const s of i % 2 ? [...servers].reverse() : servers) s.calls += await load(s.ready, seconds / slices);
  for (const s of servers) {
    const base = path.join(tmpdir(), `obs-${s.name}`);
    s.child.child.send({ cmd: 'profile-stop', file: base });
    await s.child.next(30_000);
    const profile = JSON.parse(readFileSync(`${base}.cpuprofile`, 'utf8')) as CpuProfile;
    const summary = summarizeProfile(profile);
    const busyUs = (summary.totalMs * summary.busyPct * 10) / s.calls;
    console.log(
      `\n## ${s.name}: ${s.calls} calls in ${seconds}s, ${busyUs.toFixed(1)} µs busy main thread per call; profile ${base}.cpuprofile`,
    );
    console.log(formatProfile(summary));
    results.push({ name: s.name, self: selfPerCall(profile, s.calls) });
  }
} finally {
  for (const s of servers) {
    await s.child.stop();
    await removeDir(s.dir);
  }
}
const [first, ...rest] = results;
for (const r of rest) {
  const keys = new Set([...first!.self.keys(), ...r.self.keys()]);
  const diff = [...keys].map((k) => ({ k, d: (r.self.get(k) ?? 0) - (first!.self.get(k) ?? 0) })).sort((a, b) => b.d - a.d);
  console.log(`\n## self µs per call, ${r.name} minus ${first!.name} (top 40)`);
  for (const { k, d } of diff.slice(0, 40)) console.log(`${d.toFixed(2).padStart(8)}  ${k}`);
}
await sink.close();
