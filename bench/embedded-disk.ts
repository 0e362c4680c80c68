// The embedded engine's disk and memory, as a user sees them: Folio started as its own process
// (`node core/main.ts`, default configuration), driven over HTTP only.
//   npm run bench -- --only=embedded-disk [--quick]
//   npx node bench/embedded-disk.ts [--quick] [--appends=N] [--engines=pglite,postgres] [--skip-memory] [--skip-disk]
// Disk: one user makes a 1 MB note (random words: it compresses about as little as prose) and
// appends one byte to it N times (2,000; --quick 200); another user reads their own note and lists
// their notes all along. Measured: the data's size before, at its peak, after the appends and
// after the upkeep's next pass (PGlite: the data directory; PostgreSQL: pg_database_size plus the
// WAL directory, which its autovacuum and checkpointer keep by themselves, shared with the rest of
// the server); the other user's latency when idle, while appending, and during upkeep passes (the
// passes' windows from Folio's log).
// Memory: RSS when idle and the start-up peak (VmHWM) of a fresh and of an existing data directory.
// PostgreSQL runs when DATABASE_URL is set (a fresh database of its own, dropped after).
import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { freshDatabase } from './lib.ts';
import { NODE, assertNode24, isSmoke, mb, percentile, progress, removeDir, round, sized, sleep, tempDir } from './util.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const ADMIN = 'bench-bootstrap-admin-token-0123456789abcdef';
const NOTE_BYTES = 1_000_000;

export interface DiskRun {
  engine: 'pglite' | 'postgres';
  appends: number;
  /** Bytes of the data before the appends (the note written and indexed): the live data. */
  liveBytes: number;
  peakBytes: number;
  afterAppendsBytes: number;
  afterUpkeepBytes: number;
  /** afterUpkeep - live. */
  growthBytes: number;
  /** Of those, the WAL directory's, after the appends and after upkeep (PostgreSQL: the whole server's WAL). */
  walBytes: { live: number; afterAppends: number; afterUpkeep: number };
  appendMs: { mean: number; p95: number };
  /** The other user's GET note + list, p95 ms. */
  otherP95Ms: { idle: number; appending: number; upkeep: number | null };
  otherSamples: { idle: number; appending: number; upkeep: number };
  /** PGlite: the upkeep passes seen in the log during the run. */
  passes: { count: number; maxMs: number; maxVacuumMs: number; maxCheckpointMs: number } | null;
}

export interface MemoryRun {
  engine: 'pglite' | 'postgres';
  dataDir: 'fresh' | 'existing';
  startupPeakMb: number;
  idleRssMb: number;
}

export interface EmbeddedDiskResult {
  disk: DiskRun[];
  memory: MemoryRun[];
}

// --- Folio as a process --------------------------------------------------------------------------

interface Proc {
  child: ChildProcess;
  url: string;
  /** Folio's log lines so far (JSON). */
  lines: Array<Record<string, unknown>>;
  stop(): Promise<void>;
}

async function startFolioProcess(dataDir: string, databaseUrl: string | undefined): Promise<Proc> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'] ?? '',
    HOME: process.env['HOME'] ?? '',
    PORT: '0',
    DATA_DIR: dataDir,
    BOOTSTRAP_ADMIN_TOKEN: ADMIN,
    LOG_LEVEL: 'info',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  };
  const child = spawn(NODE, ['core/main.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Array<Record<string, unknown>> = [];
  let rest = '';
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      rest += chunk.toString();
      const parts = rest.split('\n');
      rest = parts.pop()!;
      for (const line of parts) {
        try {
          const l = JSON.parse(line) as Record<string, unknown>;
          lines.push(l);
          if (l['msg'] === 'folio listening') resolve(String(l['url']));
        } catch {
          // not a log line
        }
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('close', (code) => reject(new Error(`Folio exited with ${code} before listening: ${rest}`)));
  });
  let stopping = false;
  child.on('close', (code, signal) => {
    if (!stopping) process.stderr.write(`Folio exited (${code ?? signal}): ${JSON.stringify(lines.slice(-3))}\n`);
  });
  return {
    child,
    url,
    lines,
    stop: () =>
      new Promise<void>((resolve) => {
        stopping = true;
        if (child.exitCode !== null) return resolve();
        child.once('close', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** VmRSS and VmHWM of a process, in MB. */
async function memOf(pid: number): Promise<{ rss: number; hwm: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: round(kb('VmRSS') / 1024), hwm: round(kb('VmHWM') / 1024) };
}

async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true }))
    if (e.isFile())
      total += await stat(path.join(e.parentPath, e.name)).then(
        (s) => s.size,
        () => 0,
      );
  return total;
}

interface Answer {
  id?: string;
  token?: string;
  hits?: unknown[];
}

async function api(url: string, token: string, method: string, p: string, body?: unknown): Promise<{ status: number; json: Answer }> {
  const res = await fetch(url + p, {
    signal: AbortSignal.timeout(120_000),
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text.startsWith('{') ? (JSON.parse(text) as Answer) : {} };
}

async function newUser(url: string, email: string): Promise<string> {
  const r = await api(url, ADMIN, 'POST', '/curl/call/admin/create_user', { email });
  if (r.status !== 200) throw new Error(`create_user: ${r.status} ${JSON.stringify(r.json)}`);
  return String(r.json.token);
}

function randomText(chars: number, seed = 11): string {
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const words: string[] = [];
  let n = 0;
  while (n < chars) {
    let w = '';
    for (let i = 2 + Math.floor(rnd() * 8); i > 0; i--) w += String.fromCharCode(97 + Math.floor(rnd() * 26));
    words.push(n > 0 && words.length % 120 === 0 ? `\n\n${w}` : w);
    n += w.length + 1;
  }
  return words.join(' ').slice(0, chars);
}

// --- disk ----------------------------------------------------------------------------------------

async function diskRun(engine: 'pglite' | 'postgres', appends: number, quick: boolean): Promise<DiskRun> {
  const dataDir = await tempDir('embedded-disk');
  const db = engine === 'postgres' ? await freshDatabase(process.env['DATABASE_URL']!) : undefined;
  const proc = await startFolioProcess(dataDir, db?.url);
  const client = db ? new pg.Client({ connectionString: db.url }) : undefined;
  await client?.connect();
  try {
    const wal = async () => {
      if (!client) return dirBytes(path.join(dataDir, 'pglite', 'pg_wal'));
      const { rows } = await client.query<{ b: string }>(`select (select coalesce(sum(size), 0) from pg_ls_waldir())::text as b`);
      return Number(rows[0]!.b);
    };
    const size = async () => {
      if (!client) return dirBytes(path.join(dataDir, 'pglite'));
      const { rows } = await client.query<{ b: string }>(
        `select (pg_database_size(current_database()) + (select coalesce(sum(size), 0) from pg_ls_waldir()))::text as b`,
      );
      return Number(rows[0]!.b);
    };
    const a = await newUser(proc.url, `appender-${engine}@example.com`);
    const b = await newUser(proc.url, `reader-${engine}@example.com`);
    const big = await api(proc.url, a, 'POST', '/api/v1/notetaker/notes', { title: 'big', body: randomText(NOTE_BYTES) });
    if (big.status !== 201) throw new Error(`create: ${big.status}`);
    const small = await api(proc.url, b, 'POST', '/api/v1/notetaker/notes', { title: 'mine', body: randomText(4000, 5) });
    for (let i = 0; i < 20; i++) await api(proc.url, b, 'POST', '/api/v1/notetaker/notes', { title: `n${i}`, body: 'short' });
    // Indexed: the note's chunks are searchable.
    for (let i = 0; i < 300; i++) {
      const r = await api(proc.url, a, 'GET', '/api/v1/search?q=big');
      if (r.json?.hits?.length) break;
      await sleep(100);
    }
    const passes = () => proc.lines.filter((l) => String(l['msg']).startsWith('embedded database upkeep'));
    // A pass over what the writes so far left (PGlite), so "live" is the data without dead rows.
    if (engine === 'pglite') {
      const seen = passes().length;
      for (let i = 0; i < (isSmoke() ? 5 : 60) && passes().length === seen; i++) {
        // A pass comes every embedded.upkeepMinutes; 64 MB of WAL brings one sooner: write some.
        await api(proc.url, a, 'PATCH', `/api/v1/notetaker/notes/${String(big.json.id)}`, { append: { text: 'x' } });
        await sleep(200);
      }
    }
    const live = await size();
    const liveWal = await wal();

    // The other user's reads, all along.
    const samples: Array<{ t0: number; t1: number; phase: 'idle' | 'appending' | 'after' }> = [];
    let phase: 'idle' | 'appending' | 'after' = 'idle';
    let reading = true;
    const reader = (async () => {
      while (reading && proc.child.exitCode === null) {
        const t0 = Date.now();
        const p0 = performance.now();
        await api(proc.url, b, 'GET', `/api/v1/notetaker/notes/${String(small.json.id)}`);
        await api(proc.url, b, 'GET', '/api/v1/notetaker/notes?limit=20');
        samples.push({ t0, t1: t0 + (performance.now() - p0), phase });
        await sleep(20);
      }
    })();
    reader.catch(() => {}); // a failure of the run stops the server under it; the run's own error is the one reported
    await sleep(sized(quick, 10_000, 3000, 500));

    phase = 'appending';
    let peak = live;
    const appendMs: number[] = [];
    for (let i = 0; i < appends; i++) {
      const t = performance.now();
      const r = await api(proc.url, a, 'PATCH', `/api/v1/notetaker/notes/${String(big.json.id)}`, { append: { text: 'x' } });
      appendMs.push(performance.now() - t);
      if (r.status !== 200) throw new Error(`append ${i}: ${r.status}`);
      if (i % 20 === 0) peak = Math.max(peak, await size());
      if (i % 200 === 0) progress(`embedded-disk ${engine}: ${i}/${appends} appends, ${mb(peak)} MB peak`);
    }
    const afterAppends = await size();
    const afterAppendsWal = await wal();
    peak = Math.max(peak, afterAppends);
    phase = 'after';
    const ended = Date.now();
    // PGlite: the upkeep's next pass. PostgreSQL: its autovacuum (naptime 1 min) and checkpointer.
    if (engine === 'pglite') {
      // A smoke run's few appends do not bring a pass sooner: it waits 5 s, not for the next pass.
      const waits = isSmoke() ? 10 : 1200;
      for (let i = 0; i < waits && !passes().some((l) => Number(l['time']) > ended + 500); i++) await sleep(500);
    } else await sleep(sized(quick, 70_000, 5000, 500));
    const afterUpkeep = await size();
    const afterUpkeepWal = await wal();
    reading = false;
    await reader;

    // Which reads overlapped a pass: a pass logs when it ends, with its duration.
    const windows = passes().map((l) => [Number(l['time']) - Number(l['ms']), Number(l['time'])] as const);
    const inPass = (s: { t0: number; t1: number }) => windows.some(([from, to]) => s.t0 < to && s.t1 > from);
    const ms = (xs: typeof samples) => xs.map((s) => s.t1 - s.t0);
    const idle = samples.filter((s) => s.phase === 'idle' && !inPass(s));
    const during = samples.filter(inPass);
    const appending = samples.filter((s) => s.phase === 'appending' && !inPass(s));
    const p = passes();
    return {
      engine,
      appends,
      liveBytes: live,
      peakBytes: peak,
      afterAppendsBytes: afterAppends,
      afterUpkeepBytes: afterUpkeep,
      growthBytes: afterUpkeep - live,
      walBytes: { live: liveWal, afterAppends: afterAppendsWal, afterUpkeep: afterUpkeepWal },
      appendMs: { mean: round(appendMs.reduce((x, y) => x + y, 0) / appendMs.length), p95: round(percentile(appendMs, 95)) },
      otherP95Ms: {
        idle: round(percentile(ms(idle), 95)),
        appending: round(percentile(ms(appending), 95)),
        upkeep: during.length ? round(percentile(ms(during), 95)) : null,
      },
      otherSamples: { idle: idle.length, appending: appending.length, upkeep: during.length },
      passes:
        engine === 'pglite'
          ? {
              count: p.length,
              maxMs: Math.max(0, ...p.map((l) => Number(l['ms']))),
              maxVacuumMs: Math.max(0, ...p.flatMap((l) => (l['tables'] as string[]).map((t) => Number(/\((\d+) ms\)/.exec(t)?.[1] ?? 0)))),
              maxCheckpointMs: Math.max(0, ...p.map((l) => Number(l['checkpointMs']))),
            }
          : null,
    };
  } finally {
    await client?.end();
    await proc.stop();
    await db?.drop();
    await removeDir(dataDir);
  }
}

// --- memory --------------------------------------------------------------------------------------

async function memoryRuns(engine: 'pglite' | 'postgres', quick: boolean): Promise<MemoryRun[]> {
  const dataDir = await tempDir('embedded-mem');
  const db = engine === 'postgres' ? await freshDatabase(process.env['DATABASE_URL']!) : undefined;
  const out: MemoryRun[] = [];
  try {
    for (const which of ['fresh', 'existing'] as const) {
      const proc = await startFolioProcess(dataDir, db?.url);
      try {
        // A few requests, as a first visitor would make, then idle.
        const token = await newUser(proc.url, `mem-${which}-${engine}@example.com`);
        await api(proc.url, token, 'POST', '/api/v1/notetaker/notes', { title: 'hello', body: 'world' });
        await api(proc.url, token, 'GET', '/api/v1/notetaker/notes');
        await sleep(sized(quick, 15_000, 5000, 500));
        const m = await memOf(proc.child.pid!);
        out.push({ engine, dataDir: which, startupPeakMb: m.hwm, idleRssMb: m.rss });
      } finally {
        await proc.stop();
      }
    }
  } finally {
    await db?.drop();
    await removeDir(dataDir);
  }
  return out;
}

// --- entry ---------------------------------------------------------------------------------------

export async function runEmbeddedDisk(opts: {
  quick: boolean;
  appends?: number;
  engines?: string[];
  skipMemory?: boolean;
  skipDisk?: boolean;
}): Promise<EmbeddedDiskResult> {
  const engines = (opts.engines ?? ['pglite', 'postgres']).filter((e) => e === 'pglite' || process.env['DATABASE_URL']) as Array<
    'pglite' | 'postgres'
  >;
  const appends = opts.appends ?? sized(opts.quick, 2000, 200, 5);
  const result: EmbeddedDiskResult = { disk: [], memory: [] };
  for (const e of opts.skipDisk ? [] : engines) {
    progress(`embedded-disk: ${e}, ${appends} appends to a 1 MB note`);
    result.disk.push(await diskRun(e, appends, opts.quick));
  }
  if (!opts.skipMemory)
    for (const e of engines) {
      progress(`embedded-disk: ${e}, memory`);
      result.memory.push(...(await memoryRuns(e, opts.quick)));
    }
  return result;
}

export function embeddedDiskSummaryRows(r: EmbeddedDiskResult): string[][] {
  const rows: string[][] = [];
  for (const d of r.disk) {
    const bound = 2 * d.liveBytes + 256 * 1024 * 1024;
    rows.push([
      'embedded-disk',
      `${d.engine} growth MB after ${d.appends} appends + upkeep`,
      String(mb(d.growthBytes)),
      `live ${mb(d.liveBytes)} MB, peak ${mb(d.peakBytes)} MB, after appends ${mb(d.afterAppendsBytes)} MB; of which WAL ${mb(d.walBytes.live)} / ${mb(d.walBytes.afterAppends)} / ${mb(d.walBytes.afterUpkeep)} MB`,
      d.engine === 'pglite'
        ? `${d.growthBytes < 50 * 1024 * 1024 ? 'PASS' : 'FAIL'} (< 50 MB); peak ${d.peakBytes < bound ? 'PASS' : 'FAIL'} (< 2x live + 256 MB)`
        : '',
    ]);
    const ratio = d.otherP95Ms.upkeep === null ? null : d.otherP95Ms.upkeep / d.otherP95Ms.idle;
    rows.push([
      'embedded-disk',
      `${d.engine} other user p95 ms idle/appending/upkeep`,
      `${d.otherP95Ms.idle}/${d.otherP95Ms.appending}/${d.otherP95Ms.upkeep ?? '-'}`,
      `samples ${d.otherSamples.idle}/${d.otherSamples.appending}/${d.otherSamples.upkeep}; append mean ${d.appendMs.mean} ms${d.passes ? `; ${d.passes.count} passes, longest ${d.passes.maxMs} ms (vacuum ${d.passes.maxVacuumMs}, checkpoint ${d.passes.maxCheckpointMs})` : ''}`,
      ratio === null ? '' : `${ratio <= 2 ? 'PASS' : 'FAIL'} (upkeep <= 2x idle)`,
    ]);
  }
  for (const m of r.memory)
    rows.push([
      'embedded-disk',
      `${m.engine} ${m.dataDir} dir RSS MB idle / start-up peak`,
      `${m.idleRssMb} / ${m.startupPeakMb}`,
      '',
      m.engine === 'pglite' ? `${m.idleRssMb < 350 && m.startupPeakMb < 600 ? 'PASS' : 'FAIL'} (< 350 / < 600)` : '',
    ]);
  return rows;
}

export function formatEmbeddedDisk(r: EmbeddedDiskResult): string {
  return embeddedDiskSummaryRows(r)
    .map((row) => row.join(' | '))
    .join('\n');
}

if (import.meta.filename === process.argv[1]) {
  assertNode24();
  const args = process.argv.slice(2);
  const arg = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const result = await runEmbeddedDisk({
    quick: args.includes('--quick'),
    ...(arg('appends') ? { appends: Number(arg('appends')) } : {}),
    ...(arg('engines') ? { engines: arg('engines')!.split(',') } : {}),
    skipMemory: args.includes('--skip-memory'),
    skipDisk: args.includes('--skip-disk'),
  });
  process.stdout.write(`${formatEmbeddedDisk(result)}\n${JSON.stringify(result)}\n`);
}
