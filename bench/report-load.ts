// Reports under load: what other users see while PDF reports over ~3,000 notes each are generated.
//
//   npx node bench/report-load.ts                 idle baseline, then 2 and 8 reports at once
//   npx node bench/report-load.ts --quick         300 notes per reporter: a smoke test
//   npx node bench/report-load.ts --n=3000 --idle-seconds=5 --phases=2,8 --group=day
//   npm run bench -- --only=reports               the same, through the bench runner
//
// Folio runs alone in a child process (embedded PGlite, as `npm start` without DATABASE_URL); the
// load comes from this process. The data: the notes benchmark's seed of N notes (seed-notes.ts,
// cached), copied for each of 8 reporting users (each reports over N notes of their own) and an
// observer user with a few notes. Per phase:
//
// - idle: nothing but the observer, for --idle-seconds (the baseline of the same run);
// - K reports: K reporters each ask once for `POST /api/v1/notetaker/reports {"format":"pdf",
//   "group_by":"tag"}` at the same moment and read it to the end; the phase lasts until the last one
//   is done. Grouped by tag (the default here) a report reads its notes in batches of 500, so each
//   batch is a lot of rendering at once; grouped by day (--group=day) the same notes come in ~700
//   small groups, one query each, and reading them takes longer than rendering them.
//
// Throughout, the observer calls `GET /curl/whoami` back to back on one keep-alive connection
// (latency from sending to the last byte), and `GET /health` goes out every 250 ms on a connection
// of its own (5 s client timeout; a timeout counts as "no answer"). Read: whoami p50/p99 per phase
// and as ratios against the idle phase; /health answers by status; report wall times.
import { cp, mkdir } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { startFolio } from '../core/app.ts';
import { openDatabase } from '../core/db/database.ts';
import { DATABASE_SCHEMA } from '../core/domains.ts';
import { IdentityService } from '../core/domain/identity/service.ts';
import { loadConfig } from '../core/kernel/config.ts';
import { ADMIN_TOKEN, FIRST_PARTY_PLUGINS } from './lib.ts';
import { ensurePgliteSeed } from './seed-notes.ts';
import {
  assertNode24,
  percentile,
  progress,
  removeDir,
  round,
  send,
  sized,
  sleep,
  spawnChild,
  stopOnParentRequest,
  tempDir,
} from './util.ts';

const REPORTERS = 8;

export interface ReportLoadOptions {
  quick?: boolean;
  n?: number;
  idleSeconds?: number;
  phases?: number[];
  group?: 'day' | 'week' | 'tag';
}

interface PhaseResult {
  name: string;
  reports: number;
  seconds: number;
  whoami: { n: number; p50Ms: number; p99Ms: number; maxMs: number; p50Ratio: number; p99Ratio: number; errors: number };
  health: { n: number; byStatus: Record<string, number> };
  reportStatuses: Record<string, number>;
  reportMs: { min: number; mean: number; max: number } | null;
  reportBytes: number[];
}

export interface ReportLoadResult {
  notesPerReporter: number;
  group: string;
  phases: PhaseResult[];
}

// --- the child: Folio on a copy of the seed, with the reporters and the observer ---------------------

async function serve(dataDir: string, seedUserId: string): Promise<void> {
  const log = pino({ level: 'silent' });
  const db = await openDatabase({ schema: DATABASE_SCHEMA, dataDir, log });
  const identity = new IdentityService(db);
  const tokens: string[] = [];
  const em = () => db.orm.em.fork();
  try {
    for (let i = 0; i <= REPORTERS; i++) {
      const user = await identity.createUser({
        email: `reporter-${i}@bench.example`,
        name: i === REPORTERS ? 'Observer' : `Reporter ${i}`,
      });
      tokens.push((await identity.createApiToken(user.id, { name: 'report bench', scopes: ['*'] })).token);
      if (i === REPORTERS) continue; // the observer has no notes
      await em()
        .getConnection()
        .execute(
          `insert into notes (id, owner_id, title, body, tags, source, version, body_bytes, excerpt, open_items, search_vector, created_at, updated_at)
           select gen_random_uuid(), ?, title, body, tags, source, version, body_bytes, excerpt, open_items, search_vector, created_at, updated_at
             from notes where owner_id = ? and deleted_at is null`,
          [user.id, seedUserId],
        );
    }
  } finally {
    await db.close();
  }
  const skills = path.join(dataDir, 'skills-empty');
  await mkdir(skills, { recursive: true });
  const config = loadConfig({
    env: {},
    overrides: {
      port: 0,
      host: '127.0.0.1',
      dataDir,
      pluginsDir: [FIRST_PARTY_PLUGINS],
      skillsDir: [skills],
      bootstrapAdminToken: ADMIN_TOKEN,
      logLevel: 'silent',
      reload: { watch: false, debounceMs: 20 },
      // The seed's trash is up to two years old: keep it (a purge at start would change the data).
      notes: { trashRetentionDays: 3650 },
    },
  });
  const folio = await startFolio(config, log);
  stopOnParentRequest(() => folio.close());
  send({ url: folio.url, tokens });
}

// --- the load ---------------------------------------------------------------------------------------

interface Reply {
  status: number;
  bytes: number;
  ms: number;
}

function request(agent: http.Agent, url: string, method: string, token: string | null, body?: string, timeoutMs = 120_000): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined)
      Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
    const req = http.request(url, { method, agent, headers, timeout: timeoutMs }, (res) => {
      let bytes = 0;
      res.on('data', (d: Buffer) => (bytes += d.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, ms: performance.now() - t0 }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

async function phase(
  url: string,
  tokens: string[],
  name: string,
  reports: number,
  opts: { idleSeconds: number; group: string },
  base?: PhaseResult,
): Promise<PhaseResult> {
  const observer = tokens[REPORTERS]!;
  const whoAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const healthAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let running = true;
  const who: number[] = [];
  let whoErrors = 0;
  const health: Record<string, number> = {};
  const observe = (async () => {
    while (running) {
      try {
        const r = await request(whoAgent, `${url}/curl/whoami`, 'GET', observer);
        if (r.status === 200) who.push(r.ms);
        else whoErrors++;
      } catch {
        whoErrors++;
      }
    }
  })();
  const probe = (async () => {
    while (running) {
      const tick = sleep(250);
      const status = await request(healthAgent, `${url}/health`, 'GET', null, undefined, 5000).then(
        (r) => String(r.status),
        () => 'no answer in 5 s',
      );
      health[status] = (health[status] ?? 0) + 1;
      await tick;
    }
  })();
  const t0 = performance.now();
  const statuses: Record<string, number> = {};
  const times: number[] = [];
  const sizes: number[] = [];
  if (reports === 0) await sleep(opts.idleSeconds * 1000);
  else
    await Promise.all(
      tokens.slice(0, reports).map(async (token) => {
        const agent = new http.Agent({ keepAlive: false });
        const r = await request(
          agent,
          `${url}/api/v1/notetaker/reports`,
          'POST',
          token,
          JSON.stringify({ format: 'pdf', group_by: opts.group }),
        ).catch(() => ({
          status: 0,
          bytes: 0,
          ms: 0,
        }));
        statuses[String(r.status)] = (statuses[String(r.status)] ?? 0) + 1;
        if (r.status === 200) {
          times.push(r.ms);
          sizes.push(r.bytes);
        }
      }),
    );
  const seconds = (performance.now() - t0) / 1000;
  running = false;
  await Promise.all([observe, probe]);
  whoAgent.destroy();
  healthAgent.destroy();
  const p50 = percentile(who, 50);
  const p99 = percentile(who, 99);
  return {
    name,
    reports,
    seconds: round(seconds, 1),
    whoami: {
      n: who.length,
      p50Ms: round(p50, 2),
      p99Ms: round(p99, 2),
      maxMs: round(Math.max(...who), 1),
      p50Ratio: base ? round(p50 / base.whoami.p50Ms, 1) : 1,
      p99Ratio: base ? round(p99 / base.whoami.p99Ms, 1) : 1,
      errors: whoErrors,
    },
    health: { n: Object.values(health).reduce((a, b) => a + b, 0), byStatus: health },
    reportStatuses: statuses,
    reportMs: times.length
      ? {
          min: round(Math.min(...times), 0),
          mean: round(times.reduce((a, b) => a + b, 0) / times.length, 0),
          max: round(Math.max(...times), 0),
        }
      : null,
    reportBytes: sizes,
  };
}

export async function runReportLoad(opts: ReportLoadOptions = {}): Promise<ReportLoadResult> {
  const n = opts.n ?? sized(opts.quick, 3000, 300, 30);
  const idleSeconds = opts.idleSeconds ?? sized(opts.quick, 8, 3, 1);
  const phases = opts.phases ?? [2, 8];
  const group = opts.group ?? 'tag';
  const seed = await ensurePgliteSeed(n);
  const dir = await tempDir('reports');
  await cp(seed.dir, dir, { recursive: true });
  const child = spawnChild<{ url: string; tokens: string[] }>(
    fileURLToPath(import.meta.url),
    ['--serve', `--dir=${dir}`, `--seed-user=${seed.meta.userId}`],
    {
      timeoutMs: 180_000,
    },
  );
  try {
    const { url, tokens } = await child.ready;
    progress(`reports: Folio up at ${url}; ${REPORTERS} reporters with ${seed.meta.stats.live} notes each`);
    // Warm-up (thrown away): one report of each kind of work, and the observer's path.
    const warm = new http.Agent({ keepAlive: true });
    await request(warm, `${url}/api/v1/notetaker/reports`, 'POST', tokens[0]!, JSON.stringify({ format: 'pdf', group_by: group }));
    for (let i = 0; i < 50; i++) await request(warm, `${url}/curl/whoami`, 'GET', tokens[REPORTERS]!);
    warm.destroy();
    const out: PhaseResult[] = [];
    progress('reports: idle');
    const idle = await phase(url, tokens, 'idle', 0, { idleSeconds, group });
    out.push(idle);
    for (const k of phases) {
      progress(`reports: ${k} PDF reports at once`);
      out.push(await phase(url, tokens, `${k} reports`, Math.min(k, REPORTERS), { idleSeconds, group }, idle));
    }
    return { notesPerReporter: seed.meta.stats.live, group, phases: out };
  } finally {
    await child.stop();
    await removeDir(dir);
  }
}

export function formatReportLoad(r: ReportLoadResult): string {
  const head = [
    'phase',
    's',
    'whoami n',
    'p50 ms',
    'p99 ms',
    'max ms',
    'p50 ×idle',
    'p99 ×idle',
    '/health',
    'reports',
    'report ms (min/mean/max)',
  ];
  const rows = r.phases.map((p) => [
    p.name,
    String(p.seconds),
    String(p.whoami.n),
    String(p.whoami.p50Ms),
    String(p.whoami.p99Ms),
    String(p.whoami.maxMs),
    String(p.whoami.p50Ratio),
    String(p.whoami.p99Ratio),
    Object.entries(p.health.byStatus)
      .map(([s, c]) => `${s}×${c}`)
      .join(' '),
    Object.entries(p.reportStatuses)
      .map(([s, c]) => `${s}×${c}`)
      .join(' ') || '-',
    p.reportMs ? `${p.reportMs.min}/${p.reportMs.mean}/${p.reportMs.max}` : '-',
  ]);
  const all = [head, ...rows];
  const widths = head.map((_, i) => Math.max(...all.map((row) => row[i]!.length)));
  const line = (row: string[]) => row.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  return [
    `reports: PDF reports over ${r.notesPerReporter} notes each, grouped by ${r.group}; other users' GET /curl/whoami and GET /health meanwhile (embedded PGlite)`,
    line(head),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...rows.map(line),
  ].join('\n');
}

async function main(): Promise<void> {
  assertNode24();
  const args = process.argv.slice(2);
  const arg = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  if (args.includes('--serve')) return serve(arg('dir')!, arg('seed-user')!);
  const result = await runReportLoad({
    quick: args.includes('--quick'),
    ...(arg('n') ? { n: Number(arg('n')) } : {}),
    ...(arg('idle-seconds') ? { idleSeconds: Number(arg('idle-seconds')) } : {}),
    ...(arg('phases') ? { phases: arg('phases')!.split(',').map(Number) } : {}),
    ...(arg('group') ? { group: arg('group') as 'day' | 'week' | 'tag' } : {}),
  });
  console.log(formatReportLoad(result));
  console.log(JSON.stringify(result));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
