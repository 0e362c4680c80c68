// Entry of `npm run bench`: runs the benchmarks, prints a summary table and one JSON line, and
// writes bench/results/latest.json.
//   npm run bench                         call, mcp, reload, memory, isolation, full durations
//   npm run bench -- --quick              shorter runs (noisier figures)
//   npm run bench -- --smoke              every benchmark at tiny sizes, to prove each still runs and
//                                         reports its figures (CI runs this; the figures mean nothing)
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
//   npm run bench -- --only=oauth         a call with an OAuth access token vs an API token (bench/oauth.ts)
//   npm run bench -- --only=backup        how long writes wait while a backup runs (bench/backup.ts)
//   npm run bench -- --only=tools-list    bytes per tool of tools/list (bench/tools-list.ts)
//   npm run bench -- --only=diff          one revision diff of a rewritten note: time and event-loop stall
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { formatCall, runCall, type CallResult } from './call.ts';
import { formatMcpBench, runMcpBench, type McpBenchResult } from './mcp.ts';
import { formatIsolation, isolationSummaryRows, runIsolation, type IsolationResult } from './isolation.ts';
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
import { runOAuthBench } from './oauth.ts';
import { runBackupBench } from './backup.ts';
import { runLargeCatalogue, runToolsList } from './tools-list.ts';
import { execFileSync } from 'node:child_process';
import { assertNode24, NODE, progress } from './util.ts';

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
  'oauth',
  'backup',
  'tools-list',
  'diff',
  'search',
] as const;
type Name = (typeof NAMES)[number];
/** What a bare `npm run bench` runs; notes, revisions, files, reports, fuzz and plugin-host only with --only (they take long). */
const DEFAULT: Name[] = ['call', 'mcp', 'reload', 'memory', 'isolation'];

function parseArgs(argv: string[]): { only: Name[]; quick: boolean; smoke: boolean; profile: boolean } {
  let only: Name[] | undefined;
  let quick = false;
  let smoke = false;
  let profile = false;
  for (const a of argv) {
    if (a === '--quick') quick = true;
    else if (a === '--smoke') smoke = true;
    else if (a === '--profile') profile = true;
    else if (a.startsWith('--only=')) {
      const names = a.slice('--only='.length).split(',').filter(Boolean);
      const bad = names.filter((n) => !(NAMES as readonly string[]).includes(n));
      if (bad.length > 0 || names.length === 0) usage(`unknown benchmark ${bad.join(', ') || '(none)'}`);
      only = names as Name[];
    } else if (a === '--help' || a === '-h') usage();
    else usage(`unknown argument ${a}`);
  }
  // --smoke alone: every benchmark (each at tiny sizes).
  return { only: only ?? (smoke ? [...NAMES] : [...DEFAULT]), quick: quick || smoke, smoke, profile };
}

function usage(problem?: string): never {
  if (problem) process.stderr.write(`bench: ${problem}\n`);
  process.stderr.write(`usage: npm run bench -- [--only=${NAMES.join('|')}[,...]] [--quick | --smoke] [--profile]\n`);
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
  oauth?: Awaited<ReturnType<typeof runOAuthBench>>;
  backup?: Array<Awaited<ReturnType<typeof runBackupBench>>>;
  toolsList?: Awaited<ReturnType<typeof runToolsList>> & { largeCatalogue: Awaited<ReturnType<typeof runLargeCatalogue>> };
  diff?: string;
  search?: Awaited<ReturnType<typeof import('./search.ts').runSearch>>;
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
        `${(x.vsBare * 100).toFixed(0)}% of bare Node (rounds ${x.vsBareRounds.map((v) => (v * 100).toFixed(0)).join('/')}), ${(x.ratio * 100).toFixed(1)}% of cp, RSS +${x.rssGrowthMB} MB, CPU server ${x.serverCpu}`,
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
  if (s.isolation) rows.push(...isolationSummaryRows(s.isolation));
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
  if (s.oauth)
    rows.push([
      'oauth',
      'OAuth/API token req/s',
      String(s.oauth.oauth.reqPerSec),
      `API token ${s.oauth.api.reqPerSec} req/s, overhead ${s.oauth.overhead}%`,
      `${s.oauth.pass ? 'PASS' : 'FAIL'} (<= 10%)`,
    ]);
  for (const b of s.backup ?? [])
    rows.push([
      'backup',
      `${b.engine}: max write ms during`,
      String(b.during.max),
      `baseline p50 ${b.baseline.p50} ms, backup ${b.backupMs} ms`,
      '',
    ]);
  if (s.toolsList) {
    const own = s.toolsList.sizes[0]!;
    rows.push(['tools-list', 'B/tool, ordinary user', String(own.perTool), `${own.tools} tools, ${own.bytes} bytes`, '']);
  }
  if (s.diff) rows.push(['diff', 'revision diff', 'done', s.diff.split('\n').slice(-1)[0]!.trim().slice(0, 100), '']);
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
  const { only, quick, smoke, profile } = parseArgs(process.argv.slice(2));
  // Read by every benchmark (util.ts isSmoke) and inherited by their child processes.
  if (smoke) process.env['BENCH_SMOKE'] = '1';
  const summary: Summary = { at: new Date().toISOString(), quick, node: process.version, cpus: os.cpus().length, errors: {} };
  const details: string[] = [];
  for (const name of only) {
    progress(`--- ${name}${smoke ? ' (smoke)' : quick ? ' (quick)' : ''} ---`);
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
      if (name === 'fuzz')
        details.push(formatFuzz((summary.fuzz = await runFuzz(smoke ? { requests: 200 } : quick ? { requests: 1000 } : {}))));
      if (name === 'oauth') {
        const r = (summary.oauth = await runOAuthBench({ quick }));
        details.push(`oauth: API token ${r.api.reqPerSec} req/s, OAuth token ${r.oauth.reqPerSec} req/s, overhead ${r.overhead}%`);
      }
      if (name === 'backup') {
        const size = { notes: smoke ? 50 : 1000, big: 0 };
        summary.backup = [await runBackupBench(size)];
        if (process.env['DATABASE_URL'] && !smoke)
          summary.backup.push(await runBackupBench({ ...size, databaseUrl: process.env['DATABASE_URL'] }));
        for (const b of summary.backup)
          details.push(
            `backup (${b.engine}): write p50 ${b.baseline.p50} ms alone; during the backup p50 ${b.during.p50} ms, max ${b.during.max} ms`,
          );
      }
      if (name === 'tools-list') {
        summary.toolsList = { ...(await runToolsList()), largeCatalogue: await runLargeCatalogue(smoke ? 5 : 100) };
        details.push(`tools-list: ${summary.toolsList.sizes.map((x) => `${x.who} ${x.perTool} B/tool`).join('; ')}`);
      }
      if (name === 'diff')
        // A script that measures its own thread's stalls: run on its own, not in this process.
        details.push(
          (summary.diff = execFileSync(NODE, [path.join(import.meta.dirname, 'diff.ts'), `--lines=${smoke ? 500 : 10_000}`], {
            encoding: 'utf8',
          })),
        );
      if (name === 'search') {
        const flags = smoke
          ? ['--quick', '--notes=200', '--files=5', '--transcripts=2', '--requests=5', '--append-seconds=1']
          : quick
            ? ['--quick']
            : [];
        const m = await import('./search.ts');
        const result = await m.runSearch(flags);
        summary.search = result;
        details.push(m.formatSearch(result));
      }
    } catch (err) {
      summary.errors[name] = (err as Error).stack ?? String(err);
      progress(`${name} FAILED: ${(err as Error).stack ?? String(err)}`);
    }
    progress(`${name} took ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
  // A smoke run passes when every benchmark completed and reported (no figure is judged).
  const key = (n: Name) => (n === 'report-formats' ? 'reportFormats' : n.replace(/-(\w)/g, (_, c: string) => c.toUpperCase()));
  const missing = only.filter((n) => !(n in summary.errors) && (summary as unknown as Record<string, unknown>)[key(n)] === undefined);
  for (const n of missing) summary.errors[n] = 'completed without reporting any figure';

  const results = path.join(import.meta.dirname, 'results');
  await mkdir(results, { recursive: true });
  const file = smoke ? 'smoke.json' : 'latest.json';
  await writeFile(path.join(results, file), JSON.stringify(summary, null, 2) + '\n');

  console.log('');
  for (const d of details) console.log(d + '\n');
  console.log(table(summaryRows(summary)));
  console.log(
    `\n(${smoke ? 'smoke run: the figures mean nothing; ' : quick ? 'quick run; ' : ''}Node ${process.version}, ${summary.cpus} CPUs; written to bench/results/${file})`,
  );
  console.log(JSON.stringify(summary));
  if (Object.keys(summary.errors).length > 0) process.exitCode = 1;
}

await main();
