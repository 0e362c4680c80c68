// MCP call throughput: tools/call of a no-op tool through Folio's /mcp against the official SDK's
// own Streamable HTTP server with the same one tool, in the same run, under the same load.
//
// Process arrangement (the same for both): each server runs alone in its own child process
// (bench/mcp-servers.ts on this same Node 24 binary, i.e. what `npx node` runs), autocannon runs
// in this parent process, and the servers are measured one after the other, never at once. Both
// are stateful: the parent opens one session (initialize + initialized), then 10 connections send
// tools/call on it, each request with its own JSON-RPC id, each answered on its own SSE stream.
// Folio's call carries a plain user's bearer token (auth, per-user namespace access, dispatch and
// the request log all run per call); the bare server has no auth. 127.0.0.1 only; bounded in time.
//
//   npx node bench/mcp.ts            10 s per server (after a 3 s warm-up; the bare one 5 s before
//                                    Folio and 5 s after), about 50 s in all
//   npx node bench/mcp.ts --quick    3 s per server (about 30 s in all, most of it starting servers)
//   DATABASE_URL=postgres://... npx node bench/mcp.ts   Folio on PostgreSQL too
import path from 'node:path';
import autocannon from 'autocannon';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { assertNode24, progress, round, spawnChild } from './util.ts';

/** Target: Folio serves at least this share of the bare SDK server's calls per second. */
export const MCP_TARGET_RATIO = 0.7;
const SERVER = path.join(import.meta.dirname, 'mcp-servers.ts');
const TOOL = 'bench__noop';

export interface McpBenchOptions {
  /** 3 s runs instead of 10 s (a smoke test; noisier figures). */
  quick?: boolean;
  durationS?: number;
  connections?: number;
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
  /** The same no-op through POST /curl/call on the same Folio process, right after: what the
   * surfaces share (auth, namespace access, dispatch) versus what MCP adds. */
  curl: McpLoad;
}

export interface McpBenchResult {
  settings: { connections: number; durationS: number; warmupS: number; tool: string; arrangement: string };
  /** Mean of a run before Folio and one after (each half the duration); p50/p99 the worse of the two. */
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

/** initialize + notifications/initialized; checks the tool answers; returns the session's headers. */
async function openSession(ready: Ready): Promise<Record<string, string>> {
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
    body: JSON.stringify({ jsonrpc: '2.0', id: 'check', method: 'tools/call', params: { name: TOOL, arguments: {} } }),
  });
  const text = await check.text();
  if (!check.ok || !text.includes('"text":"{\\"ok\\":true}"') || text.includes('isError'))
    throw new Error(`${TOOL} answered ${check.status}: ${text.slice(0, 300)}`);
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

async function measure(
  name: string,
  args: string[],
  warmupS: number,
  durationS: number,
  connections: number,
): Promise<{ result: McpLoad; engine: string; curl?: McpLoad }> {
  const child = spawnChild<Ready>(SERVER, args, { timeoutMs: 120_000 });
  try {
    const ready = await child.ready;
    const headers = await openSession(ready);
    progress(`mcp: ${name} up at ${ready.url}; warm-up ${warmupS}s (discarded)`);
    await load(child, ready.url, headers, warmupS, connections);
    progress(`mcp: ${name} measuring ${durationS}s`);
    const result = await load(child, ready.url, headers, durationS, connections);
    assertClean(name, result);
    progress(`mcp: ${name} ${result.callsPerSec} calls/s, p99 ${result.p99Ms} ms, ${result.cpuUsPerCall} µs CPU per call`);
    if (ready.token === 'unused') return { result, engine: ready.engine };
    progress(`mcp: ${name}, the same no-op over POST /curl/call, ${durationS}s`);
    const curlHeaders = { authorization: `Bearer ${ready.token}`, 'content-type': 'application/json' };
    const curl = await load(child, ready.url, curlHeaders, durationS, connections, true);
    assertClean(`${name} curl`, curl);
    progress(`mcp: ${name} curl ${curl.callsPerSec} calls/s, p99 ${curl.p99Ms} ms`);
    return { result, engine: ready.engine, curl };
  } finally {
    const code = await child.stop();
    if (code !== 0) progress(`mcp: ${name} server exited with code ${code}`);
  }
}

export async function runMcpBench(opts: McpBenchOptions = {}): Promise<McpBenchResult> {
  assertNode24();
  const warmupS = opts.quick ? 1 : 3;
  const durationS = opts.durationS ?? (opts.quick ? 3 : 10);
  const connections = opts.connections ?? 10;
  // The bare server is measured for half the time before Folio and half after, and the two
  // averaged: load on the machine that drifts during the run weighs on both sides alike.
  const half = Math.max(1, Math.round(durationS / 2));
  const bareBefore = (await measure('bare sdk (before)', ['bare'], warmupS, half, connections)).result;

  const serverUrl = opts.databaseUrl ?? process.env['DATABASE_URL'];
  const engines: Array<string | undefined> = [undefined];
  if (serverUrl) engines.push(serverUrl);
  const folio: McpFolioRun[] = [];
  for (const pgServer of engines) {
    const { freshDatabase } = await import('./lib.ts');
    const db = pgServer ? await freshDatabase(pgServer) : undefined;
    try {
      const { result, engine, curl } = await measure(
        `folio/${pgServer ? 'postgres' : 'pglite'}`,
        ['folio', db?.url ?? ''],
        warmupS,
        durationS,
        connections,
      );
      folio.push({ engine, ...result, ratio: 0, cpuRatio: 0, pass: false, curl: curl! });
    } finally {
      await db?.drop();
    }
  }
  const bareAfter = (await measure('bare sdk (after)', ['bare'], warmupS, half, connections)).result;
  const bare: McpLoad & { runs: McpLoad[] } = {
    callsPerSec: round((bareBefore.callsPerSec + bareAfter.callsPerSec) / 2, 0),
    cpuUsPerCall: round(
      (bareBefore.cpuUsPerCall * bareBefore.calls + bareAfter.cpuUsPerCall * bareAfter.calls) / (bareBefore.calls + bareAfter.calls),
      0,
    ),
    p50Ms: Math.max(bareBefore.p50Ms, bareAfter.p50Ms),
    p99Ms: Math.max(bareBefore.p99Ms, bareAfter.p99Ms),
    calls: bareBefore.calls + bareAfter.calls,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    runs: [bareBefore, bareAfter],
  };
  for (const f of folio) {
    f.ratio = Number((f.callsPerSec / bare.callsPerSec).toFixed(3));
    f.cpuRatio = Number((bare.cpuUsPerCall / f.cpuUsPerCall).toFixed(3));
    f.pass = f.ratio >= MCP_TARGET_RATIO;
  }
  return {
    settings: {
      connections,
      durationS,
      warmupS,
      tool: TOOL,
      arrangement:
        'one child process per server (same Node 24 binary), autocannon in the parent, servers measured one at a time, one stateful session each',
    },
    bare,
    folio,
    targetRatio: MCP_TARGET_RATIO,
  };
}

export function formatMcpBench(r: McpBenchResult): string {
  const row = (name: string, l: McpLoad, ratio: string, cpuRatio: string, verdict = '') =>
    `  ${name.padEnd(16)} ${String(l.callsPerSec).padStart(8)} ${String(l.p50Ms).padStart(7)} ${String(l.p99Ms).padStart(7)} ${ratio.padStart(7)} ${String(l.cpuUsPerCall).padStart(9)} ${cpuRatio.padStart(8)}  ${verdict}`;
  return [
    `mcp tools/call ${r.settings.tool}: ${r.settings.connections} connections, ${r.settings.durationS}s (after ${r.settings.warmupS}s warm-up)`,
    `  ${'server'.padEnd(16)} ${'calls/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'vs sdk'.padStart(7)} ${'µs CPU'.padStart(9)} ${'vs sdk'.padStart(8)}`,
    row('bare sdk', r.bare, '1.00', '1.00', `(calls/s before / after Folio: ${r.bare.runs.map((b) => b.callsPerSec).join(' / ')})`),
    ...r.folio.flatMap((f) => [
      row(
        `folio/${f.engine}`,
        f,
        f.ratio.toFixed(2),
        f.cpuRatio.toFixed(2),
        `${f.pass ? 'PASS' : 'FAIL'} (target >= ${r.targetRatio} in calls/s)`,
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
