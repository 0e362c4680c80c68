// Entry of `npm run bench`: runs the benchmarks, prints a summary table and one JSON line, and
// writes bench/results/latest.json.
//   npm run bench                         call, mcp, reload, memory, isolation, full durations
//   npm run bench -- --quick              shorter runs (a smoke test, noisier figures)
//   npm run bench -- --only=call          one (or a comma list: --only=call,reload)
//   npm run bench -- --only=mcp           MCP tools/call against the bare SDK server (bench/mcp.ts)
//   npm run bench -- --only=call --profile  also a CPU profile of Folio under the same load
//   npm run bench -- --only=files --profile CPU profiles of the files server and the client, and their CPU time per transfer
//   DATABASE_URL=postgres://... npm run bench   the call benchmark also runs against PostgreSQL
//   npm run bench -- --only=notes         list/get/search latency on 100k notes (not in the default set:
//                                         ~15-30 min; see bench/notes.ts)
//   npm run bench -- --only=revisions     bytes stored per small edit of a 1 MB note, before and after delta
//                                         revisions (~10 min; see bench/revisions.ts)
//   npm run bench -- --only=reports       other users' latency and /health while PDF reports render
//   npm run bench -- --only=report-formats  first byte, total time and size of reports per format and size
//   npm run bench -- --only=transcribe    the offline engine's real-time factor; the job queue's overhead
//                                         (not in the default set: ~2-5 min; see bench/report-load.ts)
//   npm run bench -- --only=fuzz          10,000 hostile requests over every surface (bench/fuzz.ts)
//   npm run bench -- --only=exchange      export/import of 10,000 notes with 500 attachments: time, peak RSS,
//                                         the round trip (~5 min; see bench/exchange.ts)
//   npm run bench -- --only=embedded-disk disk growth of 2,000 one-byte appends to a 1 MB note and the
//                                         upkeep after them; other users' latency; idle and start-up RSS
//                                         (PostgreSQL too with DATABASE_URL; --quick: 200 appends)
//   npm run bench -- --only=observability the no-op call with metrics and tracing on vs off (same run);
//                                         /metrics answer time with 100 plugins and 10k users (~3 min)
//   npm run bench -- --only=plugin-host   a plugin in its own process vs in-process vs bare baselines:
//                                         throughput, CPU, latency, memory, cold start (~3 min)
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { formatCall, runCall, type CallResult } from './call.ts';
import { formatMcpBench, runMcpBench, type McpBenchResult } from './mcp.ts';
import { formatIsolation, runIsolation, type IsolationResult } from './isolation.ts';
import { formatMemory, runMemory, type MemoryResult } from './memory.ts';
import { formatNotes, notesSummaryRows, runNotes, type NotesResult } from './notes.ts';
import { formatReload, runReload, type ReloadResult } from './reload.ts';
import { formatFiles, runFiles, type FilesResult } from './files.ts';
import { formatTranscribeBench, runTranscribeBench, type TranscribeBenchResult } from './transcribe.ts';
import { formatReportFormats, runReportFormats, type ReportFormatsResult } from './report-formats.ts';
import { formatRevisions, revisionsSummaryRows, runRevisions, type RevisionsResult } from './revisions.ts';
import { formatReportLoad, runReportLoad, type ReportLoadResult } from './report-load.ts';
import { formatFuzz, runFuzz, type FuzzRun } from './fuzz.ts';
import { formatPluginHost, pluginHostSummaryRows, runPluginHost, type PluginHostResult } from './plugin-host.ts';
import { exchangeSummaryRows, formatExchange, runExchangeBench, type ExchangeBenchResult } from './exchange.ts';
import { formatObservability, observabilitySummaryRows, runObservability, type ObservabilityResult } from './observability.ts';
import { embeddedDiskSummaryRows, formatEmbeddedDisk, runEmbeddedDisk, type EmbeddedDiskResult } from './embedded-disk.ts';
import { assertNode24, progress } from './util.ts';

const NAMES = [
  'call',
  'mcp',
  'reload',
  'memory',
  'isolation',
  'notes',
  'revisions',
  'files',
  'reports',
  'report-formats',
  'transcribe',
  'fuzz',
  'plugin-host',
  'exchange',
  'embedded-disk',
  'observability',
  'search',
] as const;
type Name = (typeof NAMES)[number];
/** What a bare `npm run bench` runs; notes, revisions, files, reports, fuzz and plugin-host only with --only (they take long). */
const DEFAULT: Name[] = ['call', 'mcp', 'reload', 'memory', 'isolation'];

function parseArgs(argv: string[]): { only: Name[]; quick: boolean; profile: boolean } {
  let only: Name[] = [...DEFAULT];
  let quick = false;
  let profile = false;
  for (const a of argv) {
    if (a === '--quick') quick = true;
    else if (a === '--profile') profile = true;
    else if (a.startsWith('--only=')) {
      const names = a.slice('--only='.length).split(',').filter(Boolean);
      const bad = names.filter((n) => !(NAMES as readonly string[]).includes(n));
      if (bad.length > 0 || names.length === 0) usage(`unknown benchmark ${bad.join(', ') || '(none)'}`);
      only = names as Name[];
    } else if (a === '--help' || a === '-h') usage();
    else usage(`unknown argument ${a}`);
  }
  return { only, quick, profile };
}

function usage(problem?: string): never {
  if (problem) process.stderr.write(`bench: ${problem}\n`);
  process.stderr.write(
    'usage: npm run bench -- [--only=call|mcp|reload|memory|isolation|notes|revisions|files|reports|report-formats|transcribe|fuzz|plugin-host|exchange|embedded-disk|observability[,...]] [--quick] [--profile]\n',
  );
  process.exit(problem ? 2 : 0);
}

interface Summary {
  at: string;
  quick: boolean;
  node: string;
  cpus: number;
  call?: CallResult;
  mcp?: McpBenchResult;
  reload?: ReloadResult;
  memory?: MemoryResult;
  files?: FilesResult;
  isolation?: IsolationResult;
  notes?: NotesResult;
  revisions?: RevisionsResult;
  reports?: ReportLoadResult;
  reportFormats?: ReportFormatsResult;
  transcribe?: TranscribeBenchResult;
  fuzz?: FuzzRun;
  pluginHost?: PluginHostResult;
  exchange?: ExchangeBenchResult;
  embeddedDisk?: EmbeddedDiskResult;
  observability?: ObservabilityResult;
  errors: Record<string, string>;
}

/** One line per target, for the table. */
function summaryRows(s: Summary): string[][] {
  const rows: string[][] = [];
  if (s.call) {
    rows.push([
      'call',
      'bare koa req/s',
      String(s.call.koa.reqPerSec),
      `p99 ${s.call.koa.p99Ms} ms, ${s.call.koa.cpuUsPerCall} µs CPU/request (median of ${s.call.settings.rounds})`,
      '',
    ]);
    for (const f of s.call.folio)
      rows.push([
        'call',
        `folio/${f.engine} req/s`,
        String(f.reqPerSec),
        `p99 ${f.p99Ms} ms, ${(f.ratio * 100).toFixed(1)}% of koa, ${f.cpuUsPerCall} µs CPU/request (median of ${s.call.settings.rounds})`,
        `${f.pass ? 'PASS' : 'FAIL'} (>= ${s.call.targetRatio * 100}%)`,
      ]);
  }
  if (s.mcp) {
    rows.push([
      'mcp',
      'bare sdk calls/s',
      String(s.mcp.bare.callsPerSec),
      `p99 ${s.mcp.bare.p99Ms} ms, ${s.mcp.bare.cpuUsPerCall} µs CPU/call (median of ${s.mcp.settings.rounds})`,
      '',
    ]);
    for (const f of s.mcp.folio)
      rows.push([
        'mcp',
        `folio/${f.engine} calls/s`,
        String(f.callsPerSec),
        `p99 ${f.p99Ms} ms, ${(f.ratio * 100).toFixed(1)}% of sdk, ${f.cpuUsPerCall} µs CPU/call (median of ${s.mcp.settings.rounds})`,
        `${f.pass ? 'PASS' : 'FAIL'} (>= ${s.mcp.targetRatio * 100}%)`,
      ]);
  }
  if (s.reload) {
    for (const [name, st] of [
      ['entry edit', s.reload.entry],
      ['deep edit', s.reload.deep],
      ['entry edit in-process', s.reload.entryInProcess],
    ] as const)
      rows.push([
        'reload',
        `${name} p95 ms`,
        String(st.p95Ms),
        `p50 ${st.p50Ms}, max ${st.maxMs}, n ${st.iterations}${st.timeouts ? `, ${st.timeouts} timeouts` : ''}`,
        `${st.pass ? 'PASS' : 'FAIL'} (< ${s.reload.targetP95Ms} ms)`,
      ]);
  }
  if (s.files) {
    const f = s.files;
    for (const [name, x] of [
      ['upload', f.upload],
      ['download', f.download],
    ] as const)
      rows.push([
        'files',
        `${f.sizeMB} MiB ${name} MB/s (${x.client})`,
        String(x.mbPerSec),
        `${(x.ratio * 100).toFixed(1)}% of cp (${f.cp.mbPerSec} MB/s), ${(x.vsDurableCp * 100).toFixed(0)}% of cp+fsync, RSS +${x.rssGrowthMB} MB, CPU server ${x.serverCpu}`,
        `${x.pass ? 'PASS' : 'FAIL'} (>= ${f.targetRatio * 100}%, < ${f.targetRssGrowthMB} MB)`,
      ]);
    rows.push([
      'files',
      'upload ceiling MB/s (no write)',
      String(f.ceilings.hash.mbPerSec),
      `loopback into bare Node + sha256: ${(f.ceilings.hash.ratio * 100).toFixed(1)}% of cp; loopback alone ${f.ceilings.discard.mbPerSec} MB/s (${(f.ceilings.discard.ratio * 100).toFixed(1)}%)`,
      '',
    ]);
    rows.push([
      'files',
      'upload ceiling MB/s (write, no hash)',
      String(f.ceilings.write.mbPerSec),
      `loopback into bare Node + a file write: ${(f.ceilings.write.ratio * 100).toFixed(1)}% of cp; + fsync ${f.ceilings.durable.mbPerSec} MB/s (${(f.ceilings.durable.ratio * 100).toFixed(1)}%)`,
      '',
    ]);
    rows.push([
      'files',
      '50 x 10 MB downloads p95 ms',
      String(f.concurrent.p95Ms),
      `${f.concurrent.completed}/50 complete, RSS peak ${f.concurrent.rssPeakMB} MB`,
      f.concurrent.completed === 50 ? 'PASS (all complete)' : 'FAIL',
    ]);
  }
  if (s.memory) {
    for (const m of s.memory.series) {
      const first = m.points[0]!;
      const last = m.points[m.points.length - 1]!;
      rows.push([
        'memory',
        `${m.mode}${m.v8Flags.length ? ` ${m.v8Flags.join(' ')}` : ''} heap KB/reload`,
        String(m.heapGrowthKBPerReload),
        `heap ${first.heapUsedMB}->${last.heapUsedMB} MB, RSS ${first.rssMB}->${last.rssMB} MB over ${last.reloads}`,
        m.bounded ? 'BOUNDED' : 'GROWS',
      ]);
    }
  }
  if (s.isolation) {
    const i = s.isolation;
    rows.push([
      'isolation',
      'worker/in-process req/s',
      String(i.ratio),
      `${i.worker.reqPerSec} vs ${i.inProcess.reqPerSec} req/s, p99 ${i.worker.p99Ms} vs ${i.inProcess.p99Ms} ms`,
      `${i.pass ? 'PASS' : 'FAIL'} (>= ${i.targetRatio})`,
    ]);
    rows.push(['isolation', 'RSS MB per isolated plugin', String(i.memory.rssPerPluginMB), `over ${i.memory.plugins} plugins`, '']);
  }
  if (s.notes) rows.push(...notesSummaryRows(s.notes));
  if (s.revisions) rows.push(...revisionsSummaryRows(s.revisions));
  if (s.reports)
    for (const p of s.reports.phases.slice(1)) {
      const health = Object.entries(p.health.byStatus).filter(([st]) => st !== '200');
      rows.push([
        'reports',
        `${p.name}: whoami p50/p99 ×idle`,
        `${p.whoami.p50Ratio}/${p.whoami.p99Ratio}`,
        `p50 ${p.whoami.p50Ms} ms, p99 ${p.whoami.p99Ms} ms; /health ${JSON.stringify(p.health.byStatus)}`,
        health.length === 0 ? 'PASS (/health always 200)' : 'FAIL (/health not 200)',
      ]);
    }
  if (s.fuzz)
    rows.push([
      'fuzz',
      '5xx / non-JSON log lines',
      `${s.fuzz.serverErrors.length}/${s.fuzz.nonJson.length}`,
      `${s.fuzz.sent} requests in ${s.fuzz.seconds} s on ${s.fuzz.engine}`,
      s.fuzz.serverErrors.length === 0 && s.fuzz.nonJson.length === 0 ? 'PASS (0/0)' : 'FAIL',
    ]);
  if (s.pluginHost) rows.push(...pluginHostSummaryRows(s.pluginHost));
  if (s.exchange) rows.push(...exchangeSummaryRows(s.exchange));
  if (s.embeddedDisk) rows.push(...embeddedDiskSummaryRows(s.embeddedDisk));
  if (s.observability) rows.push(...observabilitySummaryRows(s.observability));
  for (const [name, err] of Object.entries(s.errors)) rows.push([name, 'ERROR', '', err.split('\n')[0]!.slice(0, 100), 'ERROR']);
  return rows;
}

function table(rows: string[][]): string {
  const head = ['bench', 'measure', 'value', 'detail', 'target'];
  const all = [head, ...rows];
  const widths = head.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => (i === 2 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

async function main(): Promise<void> {
  assertNode24();
  const { only, quick, profile } = parseArgs(process.argv.slice(2));
  const summary: Summary = { at: new Date().toISOString(), quick, node: process.version, cpus: os.cpus().length, errors: {} };
  const details: string[] = [];
  for (const name of only) {
    progress(`--- ${name}${quick ? ' (quick)' : ''} ---`);
    const t0 = Date.now();
    try {
      if (name === 'call') details.push(formatCall((summary.call = await runCall({ quick, profile }))));
      if (name === 'mcp') details.push(formatMcpBench((summary.mcp = await runMcpBench({ quick }))));
      if (name === 'reload') details.push(formatReload((summary.reload = await runReload({ quick }))));
      if (name === 'memory') details.push(formatMemory((summary.memory = await runMemory({ quick }))));
      if (name === 'files') details.push(formatFiles((summary.files = await runFiles({ quick, profile }))));
      if (name === 'isolation') details.push(formatIsolation((summary.isolation = await runIsolation({ quick }))));
      if (name === 'notes') details.push(formatNotes((summary.notes = await runNotes({ quick }))));
      if (name === 'revisions') details.push(formatRevisions((summary.revisions = await runRevisions({ quick }))));
      if (name === 'transcribe') details.push(formatTranscribeBench((summary.transcribe = await runTranscribeBench({ quick }))));
      if (name === 'report-formats') details.push(formatReportFormats((summary.reportFormats = await runReportFormats({ quick }))));
      if (name === 'reports') details.push(formatReportLoad((summary.reports = await runReportLoad({ quick }))));
      if (name === 'plugin-host') details.push(formatPluginHost((summary.pluginHost = await runPluginHost({ quick, profile }))));
      if (name === 'exchange') details.push(formatExchange((summary.exchange = await runExchangeBench({ quick }))));
      if (name === 'embedded-disk') details.push(formatEmbeddedDisk((summary.embeddedDisk = await runEmbeddedDisk({ quick }))));
      if (name === 'observability') details.push(formatObservability((summary.observability = await runObservability({ quick }))));
      if (name === 'search')
        details.push(await import('./search.ts').then(async (m) => m.formatSearch(await m.runSearch(quick ? ['--quick'] : []))));
      if (name === 'fuzz') details.push(formatFuzz((summary.fuzz = await runFuzz(quick ? { requests: 1000 } : {}))));
    } catch (err) {
      summary.errors[name] = (err as Error).stack ?? String(err);
      progress(`${name} FAILED: ${(err as Error).stack ?? String(err)}`);
    }
    progress(`${name} took ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }

  const results = path.join(import.meta.dirname, 'results');
  await mkdir(results, { recursive: true });
  await writeFile(path.join(results, 'latest.json'), JSON.stringify(summary, null, 2) + '\n');

  console.log('');
  for (const d of details) console.log(d + '\n');
  console.log(table(summaryRows(summary)));
  console.log(`\n(${quick ? 'quick run; ' : ''}Node ${process.version}, ${summary.cpus} CPUs; written to bench/results/latest.json)`);
  console.log(JSON.stringify(summary));
  if (Object.keys(summary.errors).length > 0) process.exitCode = 1;
}

await main();
