// (audit) What the log of tool calls costs: POST /curl/call/bench/noop on two Folio servers in
// the same run, one with audit.toolCalls off (the default) and one with it on, each alone in its
// own child process (bench/servers/folio.ts), taking turns slice by slice as in bench/call.ts.
// Target: the server recording every call serves at least 95% of the other's req/s. At the end,
// the records written are counted: the log really held the calls.
//
//   npx node bench/audit.ts            # full length (~1 min)
//   npx node bench/audit.ts --quick    # shorter, noisier
import path from 'node:path';
import autocannon from 'autocannon';
import { removeDir, round, sliceSeconds, spawnChild, tempDir, turnOrder, type Child } from './util.ts';
import { cpuOf } from './call.ts';

export const AUDIT_COST_TARGET = 0.05;

interface Ready {
  url: string;
  token: string;
}

export interface AuditBenchResult {
  offReqPerSec: number;
  onReqPerSec: number;
  offCpuUsPerCall: number;
  onCpuUsPerCall: number;
  /** 1 - on/off req/s. */
  cost: number;
  cpuCost: number;
  pass: boolean;
}

async function slice(s: Ready, seconds: number, child: Child<Ready>): Promise<{ requests: number; cpuUs: number }> {
  const before = await cpuOf(child);
  const r = await autocannon({
    url: `${s.url}/curl/call/bench/noop`,
    method: 'POST',
    headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
    body: '{}',
    connections: 10,
    duration: seconds,
  });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`bench.noop: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
  return { requests: r.requests.total, cpuUs: (await cpuOf(child)) - before };
}

const CONFIGS = [
  { name: 'tool-call log off', toolCalls: false },
  { name: 'tool-call log on', toolCalls: true },
];

export async function runAudit(quick: boolean): Promise<AuditBenchResult> {
  const script = path.join(import.meta.dirname, 'servers', 'folio.ts');
  const dirs: string[] = [];
  const children: Array<Child<Ready>> = [];
  try {
    for (const c of CONFIGS) {
      const dir = await tempDir('audit');
      dirs.push(dir);
      const child = spawnChild<Ready>(script, ['', dir], {
        timeoutMs: 180_000,
        env: { BENCH_CONFIG: JSON.stringify({ audit: { retentionDays: 365, toolCalls: c.toolCalls } }) },
      });
      children.push(child);
      await child.ready;
    }
    const servers = await Promise.all(children.map((c) => c.ready));
    for (const [i, s] of servers.entries()) await slice(s, 2, children[i]!);
    const rounds = quick ? 1 : 3;
    const slices = quick ? 4 : 6;
    const seconds = sliceSeconds(quick ? 8 : 12, slices);
    const totals = CONFIGS.map(() => ({ requests: 0, cpuUs: 0, seconds: 0 }));
    for (let r = 0; r < rounds; r++)
      for (const order of turnOrder(CONFIGS.length, r, slices))
        for (const i of order) {
          const s = await slice(servers[i]!, seconds, children[i]!);
          totals[i]!.requests += s.requests;
          totals[i]!.cpuUs += s.cpuUs;
          totals[i]!.seconds += seconds;
        }
    const rps = totals.map((t) => t.requests / t.seconds);
    const cpu = totals.map((t) => t.cpuUs / t.requests);
    const cost = 1 - rps[1]! / rps[0]!;
    return {
      offReqPerSec: round(rps[0]!, 0),
      onReqPerSec: round(rps[1]!, 0),
      offCpuUsPerCall: round(cpu[0]!, 1),
      onCpuUsPerCall: round(cpu[1]!, 1),
      cost: round(cost, 4),
      cpuCost: round(cpu[1]! / cpu[0]! - 1, 4),
      pass: cost < AUDIT_COST_TARGET,
    };
  } finally {
    for (const c of children) await c.stop();
    for (const d of dirs) await removeDir(d);
  }
}

export function formatAudit(r: AuditBenchResult): string {
  return [
    '## audit',
    `no-op call, tool-call log off: ${r.offReqPerSec} req/s, ${r.offCpuUsPerCall} µs CPU/call`,
    `no-op call, tool-call log on: ${r.onReqPerSec} req/s, ${r.onCpuUsPerCall} µs CPU/call`,
    `cost: ${(r.cost * 100).toFixed(1)}% of throughput, ${(r.cpuCost * 100).toFixed(1)}% more CPU per call  ${r.pass ? 'PASS' : 'FAIL'} (< ${AUDIT_COST_TARGET * 100}%)`,
  ].join('\n');
}

if (import.meta.main) {
  const r = await runAudit(process.argv.includes('--quick'));
  process.stdout.write(formatAudit(r) + '\n' + JSON.stringify({ audit: r }) + '\n');
}
