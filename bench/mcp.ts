// MCP call throughput: tools/call of a no-op tool through Folio's /mcp against the official SDK's
// own Streamable HTTP server with the same one tool, in the same run, under the same load.
//
// Process arrangement (the same for both): each server runs alone in its own child process
// (bench/mcp-servers.ts on this same Node 24 binary, i.e. what `npx node` runs), autocannon runs
// in this parent process, and the servers are loaded one after the other, never at once (all are
// started once and stay up; each comparison runs 3 times, and the medians are reported). Both
// are stateful: the parent opens one session (initialize + initialized), then 10 connections send
// tools/call on it, each request with its own JSON-RPC id, each answered on its own SSE stream.
// Folio's call carries a plain user's bearer token (auth, per-user namespace access, dispatch and
// the request log all run per call); the bare server has no auth. 127.0.0.1 only; bounded in time.
//
//   npm run bench -- --only=mcp      3 rounds of 10 s per server (after a 3 s warm-up), plus the
//                                    same no-op over curl on each Folio: about 2 min on PGlite
//   npm run bench -- --only=mcp --quick   3 rounds of 3 s (about 1 min)
//   npx node bench/mcp.ts [--quick]  the same, on its own
//   DATABASE_URL=postgres://... npm run bench -- --only=mcp   Folio on PostgreSQL too
import path from 'node:path';
import autocannon from 'autocannon';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { assertNode24, progress, round, sized, sliceSeconds, spawnChild, turnOrder } from './util.ts';

/** Target: Folio serves at least this share of the bare SDK server's calls per second. */
export const MCP_TARGET_RATIO = 0.8;
/** Each comparison runs this many times in one invocation; the figures reported are the medians. */
export const MCP_ROUNDS = 3;
const SERVER = path.join(import.meta.dirname, 'mcp-servers.ts');
const TOOL = 'bench__noop';

export interface McpBenchOptions {
  /** 3 s runs instead of 10 s (a smoke test; noisier figures). */
  quick?: boolean;
  durationS?: number;
  connections?: number;
  rounds?: number;
  /** A PostgreSQL server URL: Folio also runs on a fresh database there. Default: DATABASE_URL. */
  databaseUrl?: string | undefined;
}

export interface McpLoad {
  callsPerSec: number;
  /** CPU time (user + system) the server process spent per call, in microseconds. */
  cpuUsPerCall: number;
  p50Ms: number;
  p99Ms: number;
  calls: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

export interface McpFolioRun extends McpLoad {
  engine: string;
  /** Folio's calls/s over the bare server's: the target's measure. */
  ratio: number;
  pass: boolean;
  /** The bare server's CPU per call over Folio's: the same comparison, less disturbed by other load. */
  cpuRatio: number;
  /** Each round's figures; ratio against the same round's bare run. */
  rounds: Array<{ callsPerSec: number; cpuUsPerCall: number; ratio: number }>;
  /** The same no-op through POST /curl/call on the same Folio process, right after: what the
   * surfaces share (auth, namespace access, dispatch) versus what MCP adds. */
  curl: McpLoad;
}

export interface McpBenchResult {
  settings: { connections: number; durationS: number; warmupS: number; rounds: number; slices: number; tool: string; arrangement: string };
  /** Medians over the rounds; `runs`: each round's. */
  bare: McpLoad & { runs: McpLoad[] };
  folio: McpFolioRun[];
  targetRatio: number;
}

interface Ready {
  url: string;
  token: string;
  engine: string;
}

const ACCEPT = 'application/json, text/event-stream';

/** initialize + notifications/initialized; checks `tool` answers; returns the session's headers. */
export async function openSession(ready: Pick<Ready, 'url' | 'token'>, tool = TOOL): Promise<Record<string, string>> {
  const base: Record<string, string> = { 'content-type': 'application/json', accept: ACCEPT };
  if (ready.token !== 'unused') base.authorization = `Bearer ${ready.token}`;
  const init = await fetch(`${ready.url}/mcp`, {
    method: 'POST',
    headers: base,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
    }),
  });
  await init.text();
  const session = init.headers.get('mcp-session-id');
  if (!init.ok || !session) throw new Error(`initialize answered ${init.status} without a session`);
  const headers = { ...base, 'mcp-session-id': session, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION };
  const note = await fetch(`${ready.url}/mcp`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  await note.text();
  const check = await fetch(`${ready.url}/mcp`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 'check', method: 'tools/call', params: { name: tool, arguments: {} } }),
  });
  const text = await check.text();
  if (!check.ok || !text.includes('"text":"{\\"ok\\":true}"') || text.includes('isError'))
    throw new Error(`${tool} answered ${check.status}: ${text.slice(0, 300)}`);
  return headers;
}

type ServerChild = ReturnType<typeof spawnChild<Ready>>;

async function cpuOf(child: ServerChild): Promise<number> {
  child.child.send({ cmd: 'cpu' });
  const { cpu } = (await child.next(10_000)) as { cpu: { user: number; system: number } };
  return cpu.user + cpu.system;
}

async function load(
  child: ServerChild,
  url: string,
  headers: Record<string, string>,
  durationS: number,
  connections: number,
  curl = false,
): Promise<McpLoad> {
  const cpuBefore = await cpuOf(child);
  const r = await autocannon({
    ...(curl
      ? { url: `${url}/curl/call/bench/noop`, body: '{}' }
      : {
          url: `${url}/mcp`,
          // autocannon puts a fresh id in place of [<id>] for every request.
          body: JSON.stringify({ jsonrpc: '2.0', id: '[<id>]', method: 'tools/call', params: { name: TOOL, arguments: {} } }),
          idReplacement: true,
        }),
    method: 'POST',
    headers,
    connections,
    pipelining: 1,
    duration: durationS,
  });
  const cpuUs = (await cpuOf(child)) - cpuBefore;
  return {
    callsPerSec: round(r.requests.mean, 0),
    cpuUsPerCall: round(cpuUs / Math.max(1, r.requests.total), 0),
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    calls: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
  };
}

function assertClean(name: string, result: McpLoad): void {
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0)
    throw new Error(
      `${name}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts: the figures would be meaningless`,
    );
}

interface Started {
  name: string;
  child: ServerChild;
  ready: Ready;
  headers: Record<string, string>;
  stop(): Promise<void>;
}

async function startServer(name: string, args: string[]): Promise<Started> {
  const child = spawnChild<Ready>(SERVER, args, { timeoutMs: 120_000 });
  const stop = async () => {
    const code = await child.stop();
    if (code !== 0) progress(`mcp: ${name} server exited with code ${code}`);
  };
  try {
    const ready = await child.ready;
    return { name, child, ready, headers: await openSession(ready), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Each round's slices per server (3 with --quick): see bench/call.ts SLICES. */
export const SLICES = 5;

/** One round of one server from its slices (all of the same length): mean calls/s, CPU per call over all, percentiles the slices' median. */
function combinedLoads(parts: McpLoad[]): McpLoad {
  const calls = parts.reduce((a, p) => a + p.calls, 0);
  return {
    callsPerSec: round(parts.reduce((a, p) => a + p.callsPerSec, 0) / parts.length, 0),
    cpuUsPerCall: round(parts.reduce((a, p) => a + p.cpuUsPerCall * p.calls, 0) / Math.max(1, calls), 0),
    p50Ms: median(parts.map((p) => p.p50Ms)),
    p99Ms: median(parts.map((p) => p.p99Ms)),
    calls,
    non2xx: parts.reduce((a, p) => a + p.non2xx, 0),
    errors: parts.reduce((a, p) => a + p.errors, 0),
    timeouts: parts.reduce((a, p) => a + p.timeouts, 0),
  };
}

/** Median of a few numbers (the middle one of three). */
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function medianOf(runs: McpLoad[]): McpLoad {
  const m = (f: (r: McpLoad) => number) => median(runs.map(f));
  return {
    callsPerSec: round(
      m((r) => r.callsPerSec),
      0,
    ),
    cpuUsPerCall: round(
      m((r) => r.cpuUsPerCall),
      0,
    ),
    p50Ms: m((r) => r.p50Ms),
    p99Ms: m((r) => r.p99Ms),
    calls: runs.reduce((a, r) => a + r.calls, 0),
    non2xx: runs.reduce((a, r) => a + r.non2xx, 0),
    errors: runs.reduce((a, r) => a + r.errors, 0),
    timeouts: runs.reduce((a, r) => a + r.timeouts, 0),
  };
}

export async function runMcpBench(opts: McpBenchOptions = {}): Promise<McpBenchResult> {
  assertNode24();
  const warmupS = opts.quick ? 1 : 3;
  const durationS = opts.durationS ?? sized(opts.quick, 10, 3, 1);
  const connections = opts.connections ?? 10;
  const rounds = opts.rounds ?? sized(opts.quick, MCP_ROUNDS, MCP_ROUNDS, 1);
  const serverUrl = opts.databaseUrl ?? process.env['DATABASE_URL'];
  const engines: Array<string | undefined> = [undefined];
  if (serverUrl) engines.push(serverUrl);
  else progress('mcp: DATABASE_URL is not set: PostgreSQL run skipped (PGlite only)');

  // Every server is started once and stays up (idle) while another is loaded. Each round loads
  // them one at a time, in slices taking turns (the first one alternating from slice to slice), so
  // drift in the machine's speed weighs on both sides alike; each Folio round is compared with the
  // same round's bare run, and the figures reported are the medians over the rounds.
  const { freshDatabase } = await import('./lib.ts');
  const dbs: Array<{ url: string; drop(): Promise<void> } | undefined> = [];
  const servers: Started[] = [];
  try {
    servers.push(await startServer('bare sdk', ['bare']));
    for (const pgServer of engines) {
      const db = pgServer ? await freshDatabase(pgServer) : undefined;
      dbs.push(db);
      servers.push(await startServer(`folio/${pgServer ? 'postgres' : 'pglite'}`, ['folio', db?.url ?? '']));
    }
    for (const s of servers) {
      progress(`mcp: ${s.name} up at ${s.ready.url}; warm-up ${warmupS}s (discarded)`);
      await load(s.child, s.ready.url, s.headers, warmupS, connections);
    }
    const runs: McpLoad[][] = servers.map(() => []);
    const curlRuns: McpLoad[][] = servers.map(() => []);
    // Each round in slices, the servers taking turns slice by slice (as bench/call.ts: this
    // machine's speed drifts within seconds).
    const slices = sized(opts.quick, SLICES, 3, 1);
    const sliceS = sliceSeconds(durationS, slices);
    for (let r = 0; r < rounds; r++) {
      progress(`mcp: round ${r + 1}/${rounds}: ${slices} slices of ${sliceS}s per server, taking turns`);
      const parts: McpLoad[][] = servers.map(() => []);
      const curlParts: McpLoad[][] = servers.map(() => []);
      for (const order of turnOrder(servers.length, r, slices)) {
        for (const i of order) {
          const s = servers[i]!;
          const part = await load(s.child, s.ready.url, s.headers, sliceS, connections);
          assertClean(s.name, part);
          parts[i]!.push(part);
          if (s.ready.token === 'unused') continue;
          // The same no-op through POST /curl/call on the same process: what the surfaces share
          // (auth, namespace access, dispatch) versus what MCP adds.
          const curlHeaders = { authorization: `Bearer ${s.ready.token}`, 'content-type': 'application/json' };
          const curl = await load(s.child, s.ready.url, curlHeaders, sliceS, connections, true);
          assertClean(`${s.name} curl`, curl);
          curlParts[i]!.push(curl);
        }
      }
      servers.forEach((s, i) => {
        const tag = `mcp: round ${r + 1}/${rounds}, ${s.name}`;
        const result = combinedLoads(parts[i]!);
        progress(`${tag} ${result.callsPerSec} calls/s, p99 ${result.p99Ms} ms, ${result.cpuUsPerCall} µs CPU per call`);
        runs[i]!.push(result);
        if (curlParts[i]!.length === 0) return;
        const curl = combinedLoads(curlParts[i]!);
        progress(`${tag} via curl ${curl.callsPerSec} calls/s, p99 ${curl.p99Ms} ms, ${curl.cpuUsPerCall} µs CPU per call`);
        curlRuns[i]!.push(curl);
      });
    }
    const bareRuns = runs[0]!;
    const folio: McpFolioRun[] = servers.slice(1).map((s, e) => {
      const mine = runs[e + 1]!;
      const ratios = mine.map((f, r) => f.callsPerSec / bareRuns[r]!.callsPerSec);
      const cpuRatios = mine.map((f, r) => bareRuns[r]!.cpuUsPerCall / f.cpuUsPerCall);
      const ratio = Number(median(ratios).toFixed(3));
      return {
        engine: s.ready.engine,
        ...medianOf(mine),
        ratio,
        cpuRatio: Number(median(cpuRatios).toFixed(3)),
        pass: ratio >= MCP_TARGET_RATIO,
        rounds: mine.map((f, r) => ({ callsPerSec: f.callsPerSec, cpuUsPerCall: f.cpuUsPerCall, ratio: Number(ratios[r]!.toFixed(3)) })),
        curl: medianOf(curlRuns[e + 1]!),
      };
    });
    return {
      settings: {
        connections,
        durationS: slices * sliceS,
        warmupS,
        rounds,
        slices,
        tool: TOOL,
        arrangement:
          'one child process per server (same Node 24 binary), all started once, autocannon in the parent, servers loaded one at a time, taking turns in slices of each round (the first one alternating), one stateful session each',
      },
      bare: { ...medianOf(bareRuns), runs: bareRuns },
      folio,
      targetRatio: MCP_TARGET_RATIO,
    };
  } finally {
    for (const s of servers) await s.stop();
    for (const db of dbs) await db?.drop();
  }
}

export function formatMcpBench(r: McpBenchResult): string {
  const row = (name: string, l: McpLoad, ratio: string, cpuRatio: string, verdict = '') =>
    `  ${name.padEnd(16)} ${String(l.callsPerSec).padStart(8)} ${String(l.p50Ms).padStart(7)} ${String(l.p99Ms).padStart(7)} ${ratio.padStart(7)} ${String(l.cpuUsPerCall).padStart(9)} ${cpuRatio.padStart(8)}  ${verdict}`;
  return [
    `mcp tools/call ${r.settings.tool}: ${r.settings.connections} connections, ${r.settings.rounds} rounds of ${r.settings.durationS}s per server in ${r.settings.slices} slices taking turns (after ${r.settings.warmupS}s warm-up); medians`,
    `  ${'server'.padEnd(16)} ${'calls/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'vs sdk'.padStart(7)} ${'µs CPU'.padStart(9)} ${'vs sdk'.padStart(8)}`,
    row(
      'bare sdk',
      r.bare,
      '1.00',
      '1.00',
      `(rounds: ${r.bare.runs.map((b) => `${b.callsPerSec} calls/s ${b.cpuUsPerCall} µs`).join(' / ')})`,
    ),
    ...r.folio.flatMap((f) => [
      row(
        `folio/${f.engine}`,
        f,
        f.ratio.toFixed(2),
        f.cpuRatio.toFixed(2),
        `${f.pass ? 'PASS' : 'FAIL'} (target >= ${r.targetRatio} in calls/s; rounds: ${f.rounds.map((x) => `${x.callsPerSec} calls/s ${x.cpuUsPerCall} µs ${x.ratio.toFixed(2)}`).join(' / ')})`,
      ),
      row(
        '  same, via curl',
        f.curl,
        (f.curl.callsPerSec / r.bare.callsPerSec).toFixed(2),
        (r.bare.cpuUsPerCall / f.curl.cpuUsPerCall).toFixed(2),
        '(POST /curl/call on the same Folio process)',
      ),
    ]),
  ].join('\n');
}

if (import.meta.main) {
  const result = await runMcpBench({ quick: process.argv.includes('--quick') });
  console.log(formatMcpBench(result));
  console.log(JSON.stringify(result));
  process.exit(result.folio.every((f) => f.pass) ? 0 : 1);
}
