// (d) notes: latency of list, get and search through the REST API on 100k notes of one user,
// against the floor: the same SQL the service runs, run directly on the same database.
//
//   npx node bench/notes.ts                  PGlite, and PostgreSQL too when DATABASE_URL is set
//   npx node bench/notes.ts --quick          10k notes, 50 requests per operation (a smoke test)
//   npx node bench/notes.ts --n=30000 --requests=100 --engines=pglite --reseed
//   npx node bench/notes.ts --engines=pglite --analyze   diagnostic: ANALYZE the PGlite copy first
//   DATABASE_URL=... npx node bench/notes.ts --engines=postgres --keep-db   keep the seeded database
//   npm run bench -- --only=notes            the same through the bench runner
//
// Per engine:
//   1. Seed (bench/seed-notes.ts): PGlite from the cache in bench/.cache/ (copied, as Folio writes
//      to it), PostgreSQL into a fresh database (dropped afterwards).
//   2. REST: Folio in a child process (this file with --serve, on this same Node 24), the client
//      here, sequential GETs on one keep-alive connection, latency from sending the request to the
//      last byte of the answer. Per operation: a warm-up (discarded), then the measured requests,
//      every one with its own parameters (page sizes, cursors, ids, queries).
//   3. Capture: the service (NotesServiceImpl, in this process) answers the same calls once more
//      through a recording EntityManager: each call's exact SQL texts as MikroORM sends them
//      (parameters inlined, plus begin/commit around transactions).
//   4. Floor: those statements replayed in order through a plain `pg` client on one connection,
//      timed per call, after the same warm-up. On PGlite the client talks to PGlite's socket server
//      in a worker thread (core/db/pglite-worker.ts, the way Folio opens it), and a second floor
//      runs them on PGlite in this process (no socket): the engine alone.
//   5. EXPLAIN (ANALYZE, BUFFERS) of the statements of each operation's slowest floor call.
//
// Targets (the issue): search p95 < 100 ms; list and get p95 < 20 ms, through REST.
import { cp, mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import { pino } from 'pino';
import { startFolio } from '../core/app.ts';
import { openDatabase } from '../core/db/database.ts';
import { DATABASE_SCHEMA } from '../core/domains.ts';
import type { Principal } from '../core/domain/identity/types.ts';
import { NotesServiceImpl } from '../core/domain/notes/service.ts';
import { encodeCursor } from '../core/domain/notes/validate.ts';
import { loadConfig } from '../core/kernel/config.ts';
import { ADMIN_TOKEN, FIRST_PARTY_PLUGINS, ROOT } from './lib.ts';
import { DEFAULT_N, ensurePgliteSeed, seedPostgres, type SeedMeta } from './seed-notes.ts';
import {
  assertNode24,
  mean,
  percentile,
  progress,
  removeDir,
  round,
  send,
  sized,
  spawnChild,
  stopOnParentRequest,
  tempDir,
} from './util.ts';

export const TARGETS = { searchP95Ms: 100, listGetP95Ms: 20 };
const RESULTS = path.join(import.meta.dirname, 'results');
const PGLITE_WORKER = path.join(ROOT, 'core/db/pglite-worker.ts');

export const OPS = [
  'list first page',
  'list deep page',
  'get',
  'search common word',
  'search mid word',
  'search rare word',
  'search phrase',
  'search CJK',
  'search typo',
  'search tag+date',
] as const;
export type OpName = (typeof OPS)[number];

export interface NotesOptions {
  quick: boolean;
  n?: number;
  requests?: number;
  warmup?: number;
  engines?: Array<'pglite' | 'postgres'>;
  reseed?: boolean;
  /**
   * Diagnostic: ANALYZE the PGlite copy before starting Folio (what Folio would get if it analyzed
   * PGlite itself; PostgreSQL's seed is analyzed anyway, as autovacuum would).
   */
  analyze?: boolean;
  /** PostgreSQL: keep the seeded database (its URL is printed) to look into it afterwards. */
  keepDb?: boolean;
}

export interface Stats {
  n: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  meanMs: number;
}

export interface OpResult {
  op: OpName;
  targetP95Ms: number;
  rest: Stats;
  /** The same SQL through a plain pg client on one connection. */
  floor: Stats;
  /** PGlite only: the same SQL on PGlite in this process (no socket, no pg protocol). */
  engineFloor?: Stats;
  /** REST ÷ floor. */
  ratioP50: number;
  ratioP95: number;
  /** REST − floor, ms. */
  overheadP50Ms: number;
  pass: boolean;
  /** Statements per call (begin/commit included), as captured. */
  statements: number;
  /** Per distinct query (searches): hits on the page, REST and floor p50. */
  perQuery?: Array<{ q: string; hits: number; match: string; restP50Ms: number; floorP50Ms: number; calls: number }>;
}

export interface EngineResult {
  engine: 'pglite' | 'postgres';
  /** The engine, and '+analyze' when the PGlite copy was analyzed first (--analyze). */
  variant: string;
  seed: { cached: boolean; ms: number; copyMs?: number; analyzeMs?: number; timings: SeedMeta['timings']; stats: SeedMeta['stats'] };
  ops: OpResult[];
  /** EXPLAIN (ANALYZE, BUFFERS) of the slowest floor call of each operation. */
  explain: Record<string, string>;
  phasesMs: Record<string, number>;
  /** 1-minute load average at the end of each phase: above ~1.5 on 2 cores, something else ran too. */
  loadAvg: Record<string, number>;
}

export interface NotesResult {
  settings: { n: number; requests: number; warmup: number; client: string; arrangement: string };
  targets: typeof TARGETS;
  engines: EngineResult[];
}

// --- the calls ---------------------------------------------------------------------------------------

interface Call {
  op: OpName;
  /** The distinct query a search call is about (for per-query figures). */
  q?: string;
  path: string;
  /** The same call on the service, as the REST handler makes it. */
  service: (svc: NotesServiceImpl, p: Principal) => Promise<unknown>;
}

function searchPath(params: Record<string, string>): string {
  return `/api/v1/notetaker/search?${new URLSearchParams(params).toString()}`;
}

/** `count` calls per operation, each with its own parameters, deterministic for a seed. */
function plan(meta: SeedMeta, count: number): Map<OpName, Call[]> {
  const out = new Map<OpName, Call[]>();
  const at = <T>(list: readonly T[], i: number): T => list[i % list.length]!;
  const limits = [20, 50, 100];
  out.set(
    'list first page',
    Array.from({ length: count }, (_, i) => {
      const limit = at(limits, i);
      return { op: 'list first page', path: `/api/v1/notetaker/notes?limit=${limit}`, service: (s, p) => s.list(p, { limit }) };
    }),
  );
  out.set(
    'list deep page',
    Array.from({ length: count }, (_, i) => {
      const pos = at(meta.listPositions, i);
      const cursor = encodeCursor([pos.updatedMs, pos.id], `notes:${meta.userId}`);
      return {
        op: 'list deep page',
        path: `/api/v1/notetaker/notes?limit=20&cursor=${cursor}`,
        service: (s, p) => s.list(p, { limit: 20, cursor }),
      };
    }),
  );
  out.set(
    'get',
    Array.from({ length: count }, (_, i) => {
      const id = at(meta.sampleIds, i);
      return { op: 'get', path: `/api/v1/notetaker/notes/${id}`, service: (s, p) => s.get(p, id) };
    }),
  );
  const searches: Array<[OpName, string]> = [
    ['search common word', 'common'],
    ['search mid word', 'mid'],
    ['search rare word', 'rare'],
    ['search phrase', 'phrase'],
    ['search CJK', 'cjk'],
    ['search typo', 'typo'],
  ];
  for (const [op, kind] of searches) {
    const qs = meta.queries[kind]!.map((x) => x.q);
    out.set(
      op,
      Array.from({ length: count }, (_, i) => {
        const q = at(qs, i);
        return { op, q, path: searchPath({ q }), service: (s, p) => s.search(p, { q }) };
      }),
    );
  }
  out.set(
    'search tag+date',
    Array.from({ length: count }, (_, i) => {
      const f = at(meta.filters, i);
      return {
        op: 'search tag+date',
        q: `${f.q} tag:${f.tag} ${f.from}..${f.to}`,
        path: searchPath({ q: f.q, tag: f.tag, from: f.from, to: f.to }),
        service: (s, p) => s.search(p, { q: f.q, tags: [f.tag], from: f.from, to: f.to }),
      };
    }),
  );
  return out;
}

// --- REST: Folio in a child process --------------------------------------------------------------------

/** In the child: Folio on `dataDir` (PGlite there) or `databaseUrl`, reports {url}, stops on request. */
async function serve(dataDir: string, databaseUrl: string | undefined): Promise<void> {
  const skills = path.join(dataDir, 'skills-empty');
  await mkdir(skills, { recursive: true });
  const config = loadConfig({
    env: {},
    overrides: {
      port: 0,
      host: '127.0.0.1',
      dataDir,
      databaseUrl: databaseUrl ?? null,
      pluginsDir: [FIRST_PARTY_PLUGINS],
      skillsDir: [skills],
      bootstrapAdminToken: ADMIN_TOKEN,
      logLevel: 'silent',
      reload: { watch: false, debounceMs: 20 },
      // The seed's trash is up to two years old: keep it (a purge at start would change the data).
      notes: { trashRetentionDays: 3650 },
    },
  });
  const folio = await startFolio(config, pino({ level: 'silent' }));
  stopOnParentRequest(() => folio.close());
  send({ url: folio.url, engine: folio.db.engine, pid: process.pid });
}

interface Reply {
  status: number;
  body: string;
  ms: number;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function get(base: URL, p: string, token: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(
      { host: base.hostname, port: base.port, path: p, method: 'GET', agent, headers: { authorization: `Bearer ${token}` } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - t0 }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(60_000, () => req.destroy(new Error(`GET ${p}: no answer within 60 s`)));
    req.on('error', reject);
    req.end();
  });
}

interface Measured {
  ms: number[];
  /** Per call: hits on the page and the match kind (searches), items (lists). */
  hits: number[];
  match: string[];
}

/** Runs the calls of each op: warm-up then measured, bounded in time per op. */
async function restPhase(
  url: string,
  token: string,
  calls: Map<OpName, Call[]>,
  warmup: number,
  maxOpMs: number,
): Promise<Map<OpName, Measured>> {
  const base = new URL(url);
  const out = new Map<OpName, Measured>();
  for (const [op, list] of calls) {
    const m: Measured = { ms: [], hits: [], match: [] };
    const t0 = performance.now();
    for (let i = 0; i < list.length; i++) {
      const r = await get(base, list[i]!.path, token);
      if (r.status !== 200) throw new Error(`${op}: GET ${list[i]!.path} answered ${r.status}: ${r.body.slice(0, 300)}`);
      if (i < warmup) continue;
      const json = JSON.parse(r.body) as { items?: Array<{ match?: string }>; id?: string };
      m.ms.push(r.ms);
      m.hits.push(json.items ? json.items.length : json.id ? 1 : 0);
      m.match.push(json.items?.[0]?.match ?? '');
      if (performance.now() - t0 > maxOpMs) {
        progress(`notes: ${op}: time cap reached after ${m.ms.length} measured calls`);
        break;
      }
    }
    out.set(op, m);
    progress(`notes:   REST ${op.padEnd(20)} p50 ${round(percentile(m.ms, 50), 2)} ms, p95 ${round(percentile(m.ms, 95), 2)} ms`);
  }
  return out;
}

// --- capture: the service's SQL, exactly as MikroORM sends it ---------------------------------------

/**
 * A stand-in for the ORM whose EntityManagers record every statement (parameters inlined by the
 * platform, as MikroORM's connection does before sending) and the begin/commit of transactions
 * (kysely sends exactly those), then run it for real.
 */
function recordingOrm(orm: MikroORM, sink: { list: string[] }): MikroORM {
  const platform = orm.em.getPlatform();
  const wrap = (em: EntityManager): EntityManager =>
    new Proxy(em, {
      get(target, prop) {
        if (prop === 'execute')
          return (sql: string, params: unknown[] = [], ...rest: unknown[]) => {
            sink.list.push(platform.formatQuery(sql, params));
            return (target.execute as (...a: unknown[]) => Promise<unknown>).call(target, sql, params, ...rest);
          };
        if (prop === 'transactional')
          return (cb: (tx: EntityManager) => Promise<unknown>, opts?: unknown) =>
            target.transactional(async (tx) => {
              sink.list.push('begin');
              const out = await cb(wrap(tx));
              sink.list.push('commit');
              return out;
            }, opts as never);
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  return { em: { fork: () => wrap(orm.em.fork()), getPlatform: () => platform } } as unknown as MikroORM;
}

/** Each call's statements. Calls with the same path run the same SQL, so each distinct one runs once. */
async function capture(
  target: { dataDir: string; databaseUrl?: string },
  userId: string,
  calls: Map<OpName, Call[]>,
  upTo: Map<OpName, number>,
): Promise<Map<OpName, string[][]>> {
  const db = await openDatabase({
    schema: DATABASE_SCHEMA,
    dataDir: target.dataDir,
    databaseUrl: target.databaseUrl,
    log: pino({ level: 'silent' }),
    migrate: false,
  });
  try {
    const sink = { list: [] as string[] };
    const svc = new NotesServiceImpl({ orm: recordingOrm(db.orm, sink) });
    const principal = { user: { id: userId } } as unknown as Principal;
    const out = new Map<OpName, string[][]>();
    for (const [op, list] of calls) {
      const seen = new Map<string, string[]>();
      const lists: string[][] = [];
      for (const c of list.slice(0, upTo.get(op) ?? list.length)) {
        let statements = seen.get(c.path);
        if (!statements) {
          sink.list = [];
          await c.service(svc, principal);
          seen.set(c.path, (statements = sink.list));
        }
        lists.push(statements);
      }
      out.set(op, lists);
    }
    return out;
  } finally {
    await db.close();
  }
}

// --- floors --------------------------------------------------------------------------------------------

interface Runner {
  run(sql: string): Promise<unknown[]>;
}

async function floorPhase(
  name: string,
  runner: Runner,
  statements: Map<OpName, string[][]>,
  warmup: number,
  maxOpMs: number,
  counts: Map<OpName, number>,
): Promise<Map<OpName, number[]>> {
  const out = new Map<OpName, number[]>();
  for (const [op, lists] of statements) {
    const ms: number[] = [];
    const t0 = performance.now();
    // The same calls as REST measured (a time cap there may have cut them short).
    const upTo = warmup + (counts.get(op) ?? lists.length - warmup);
    for (let i = 0; i < Math.min(lists.length, upTo); i++) {
      const s = performance.now();
      for (const sql of lists[i]!) await runner.run(sql);
      if (i >= warmup) ms.push(performance.now() - s);
      if (performance.now() - t0 > maxOpMs) break;
    }
    out.set(op, ms);
    progress(`notes:   ${name} ${op.padEnd(20)} p50 ${round(percentile(ms, 50), 2)} ms, p95 ${round(percentile(ms, 95), 2)} ms`);
  }
  return out;
}

/** EXPLAIN (ANALYZE, BUFFERS) of the reads of one captured call, in their transaction. */
async function explainCall(runner: Runner, list: string[]): Promise<string> {
  const parts: string[] = [];
  for (const sql of list) {
    const head = sql.trimStart().slice(0, 6).toLowerCase();
    if (head.startsWith('select') || head.startsWith('with')) {
      const rows = (await runner.run(`explain (analyze, buffers) ${sql}`)) as Array<Record<string, string>>;
      parts.push(`-- ${oneLine(sql).slice(0, 400)}\n${rows.map((r) => r['QUERY PLAN']).join('\n')}`);
    } else {
      await runner.run(sql);
    }
  }
  return parts.join('\n\n');
}

function oneLine(sql: string): string {
  return sql.replace(/\s+/g, ' ').trim();
}

function pgRunner(client: pg.Client): Runner {
  return { run: async (sql) => (await client.query(sql)).rows as unknown[] };
}

/** core/db/pglite-worker.ts in a worker thread (as Folio runs it): PGlite behind a loopback socket. */
async function startPgliteSocket(dir: string): Promise<{ port: number; stop(): Promise<void> }> {
  const worker = new Worker(PGLITE_WORKER, { workerData: { dir } });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', (m: { type: string; port?: number }) =>
      m.type === 'ready' ? resolve(m.port!) : reject(new Error(JSON.stringify(m))),
    );
  });
  return {
    port,
    async stop() {
      worker.postMessage({ type: 'close' });
      const timer = setTimeout(() => void worker.terminate(), 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

// --- one engine ------------------------------------------------------------------------------------

function stats(ms: number[]): Stats {
  return {
    n: ms.length,
    p50Ms: round(percentile(ms, 50), 2),
    p95Ms: round(percentile(ms, 95), 2),
    maxMs: round(Math.max(...ms), 2),
    meanMs: round(mean(ms), 2),
  };
}

async function runEngine(engine: 'pglite' | 'postgres', opts: Required<Omit<NotesOptions, 'engines'>>): Promise<EngineResult> {
  const phasesMs: Record<string, number> = {};
  const loadAvg: Record<string, number> = {};
  const phase = async <T>(name: string, f: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    try {
      return await f();
    } finally {
      phasesMs[name] = Math.round(performance.now() - t);
      loadAvg[name] = round(os.loadavg()[0]!, 2);
    }
  };
  const work = await tempDir('notes');
  let drop: (() => Promise<void>) | undefined;
  try {
    // 1. the seeded database
    let meta: SeedMeta;
    let databaseUrl: string | undefined;
    let seedInfo: EngineResult['seed'];
    if (engine === 'pglite') {
      const t = performance.now();
      const seed = await phase('seed', () => ensurePgliteSeed(opts.n, { reseed: opts.reseed }));
      const seedMs = performance.now() - t;
      meta = seed.meta;
      const copyMs = await phase('copy', async () => {
        const c = performance.now();
        await cp(path.join(seed.dir, 'pglite'), path.join(work, 'pglite'), { recursive: true });
        return Math.round(performance.now() - c);
      });
      progress(`notes: pglite: ${seed.seeded ? 'seeded' : 'cached seed'} (${path.relative(ROOT, seed.dir)}), copied in ${copyMs} ms`);
      seedInfo = { cached: !seed.seeded, ms: Math.round(seed.seeded ? seedMs : 0), copyMs, timings: meta.timings, stats: meta.stats };
      if (opts.analyze) {
        seedInfo.analyzeMs = await phase('analyze', async () => {
          const db = await PGlite.create({ dataDir: path.join(work, 'pglite'), extensions: { pg_trgm } });
          try {
            const t = performance.now();
            await db.exec('analyze');
            return Math.round(performance.now() - t);
          } finally {
            await db.close();
          }
        });
        progress(`notes: pglite: ANALYZE of the copy took ${seedInfo.analyzeMs} ms (--analyze)`);
      }
    } else {
      const serverUrl = process.env['DATABASE_URL']!;
      const seeded = await phase('seed', () => seedPostgres(serverUrl, opts.n));
      meta = seeded.meta;
      databaseUrl = seeded.url;
      drop = opts.keepDb ? () => Promise.resolve(progress(`notes: postgres: kept the seeded database ${seeded.url}`)) : seeded.drop;
      seedInfo = { cached: false, ms: meta.timings.totalMs, timings: meta.timings, stats: meta.stats };
    }
    const calls = plan(meta, opts.warmup + opts.requests);
    const maxOpMs = opts.quick ? 20_000 : 60_000;

    // 2. REST
    const rest = await phase('rest', async () => {
      const child = spawnChild<{ url: string; engine: string }>(fileURLToPath(import.meta.url), ['--serve', work, databaseUrl ?? ''], {
        timeoutMs: 180_000,
      });
      try {
        const ready = await child.ready;
        if (ready.engine !== engine) throw new Error(`Folio runs on ${ready.engine}, expected ${engine}`);
        progress(`notes: ${engine}: Folio up at ${ready.url}; ${opts.warmup} warm-up + ${opts.requests} measured calls per operation`);
        return await restPhase(ready.url, meta.token, calls, opts.warmup, maxOpMs);
      } finally {
        const code = await child.stop(60_000);
        if (code !== 0) progress(`notes: Folio exited with code ${code}`);
      }
    });
    const counts = new Map([...rest].map(([op, m]) => [op, m.ms.length]));
    const upTo = new Map([...counts].map(([op, c]) => [op, opts.warmup + c]));

    // 3. capture
    progress(`notes: ${engine}: capturing the service's SQL for the same calls`);
    const statements = await phase('capture', () =>
      capture({ dataDir: work, ...(databaseUrl ? { databaseUrl } : {}) }, meta.userId, calls, upTo),
    );

    // 4. floors, 5. explain
    const explain: Record<string, string> = {};
    const withClient = async (connect: pg.ClientConfig, name: string) => {
      const client = new pg.Client(connect);
      await client.connect();
      try {
        const runner = pgRunner(client);
        const f = await floorPhase(name, runner, statements, opts.warmup, maxOpMs, counts);
        for (const [op, ms] of f) {
          const slowest = ms.indexOf(Math.max(...ms));
          explain[op] = await explainCall(runner, statements.get(op)![opts.warmup + slowest]!);
        }
        return f;
      } finally {
        await client.end();
      }
    };
    let floor: Map<OpName, number[]>;
    let engineFloor: Map<OpName, number[]> | undefined;
    if (engine === 'pglite') {
      floor = await phase('floor', async () => {
        const sock = await startPgliteSocket(path.join(work, 'pglite'));
        try {
          return await withClient({ host: '127.0.0.1', port: sock.port, user: 'postgres', database: 'postgres' }, 'floor ');
        } finally {
          await sock.stop();
        }
      });
      engineFloor = await phase('engineFloor', async () => {
        const db = await PGlite.create({ dataDir: path.join(work, 'pglite'), extensions: { pg_trgm } });
        try {
          return await floorPhase('engine', { run: async (sql) => (await db.query(sql)).rows }, statements, opts.warmup, maxOpMs, counts);
        } finally {
          await db.close();
        }
      });
    } else {
      floor = await phase('floor', () => withClient({ connectionString: databaseUrl! }, 'floor '));
    }

    const ops: OpResult[] = [];
    for (const op of OPS) {
      const r = rest.get(op)!;
      const f = floor.get(op)!;
      const restS = stats(r.ms);
      const floorS = stats(f);
      const target = op.startsWith('search') ? TARGETS.searchP95Ms : TARGETS.listGetP95Ms;
      const result: OpResult = {
        op,
        targetP95Ms: target,
        rest: restS,
        floor: floorS,
        ratioP50: round(restS.p50Ms / floorS.p50Ms, 2),
        ratioP95: round(restS.p95Ms / floorS.p95Ms, 2),
        overheadP50Ms: round(restS.p50Ms - floorS.p50Ms, 2),
        pass: restS.p95Ms < target,
        statements: Math.round(mean(statements.get(op)!.map((l) => l.length))),
      };
      if (engineFloor) result.engineFloor = stats(engineFloor.get(op)!);
      const list = calls.get(op)!;
      if (list[0]!.q !== undefined) {
        const byQ = new Map<string, { rest: number[]; floor: number[]; hits: number; match: string }>();
        r.ms.forEach((ms, i) => {
          const c = list[opts.warmup + i]!;
          const e = byQ.get(c.q!) ?? { rest: [], floor: [], hits: r.hits[i]!, match: r.match[i]! };
          e.rest.push(ms);
          if (f[i] !== undefined) e.floor.push(f[i]);
          byQ.set(c.q!, e);
        });
        result.perQuery = [...byQ].map(([q, e]) => ({
          q,
          hits: e.hits,
          match: e.match,
          restP50Ms: round(percentile(e.rest, 50), 2),
          floorP50Ms: round(percentile(e.floor, 50), 2),
          calls: e.rest.length,
        }));
      }
      ops.push(result);
    }
    const variant = engine === 'pglite' && opts.analyze ? 'pglite+analyze' : engine;
    return { engine, variant, seed: seedInfo, ops, explain, phasesMs, loadAvg };
  } finally {
    await removeDir(work);
    await drop?.();
  }
}

export async function runNotes(opts: NotesOptions): Promise<NotesResult> {
  const n = opts.n ?? sized(opts.quick, DEFAULT_N, 10_000, 500);
  const requests = opts.requests ?? sized(opts.quick, 200, 50, 5);
  const warmup = opts.warmup ?? sized(opts.quick, 20, 10, 2);
  let engines = opts.engines ?? ['pglite', 'postgres'];
  if (engines.includes('postgres') && !process.env['DATABASE_URL']) {
    progress('notes: DATABASE_URL is not set: PostgreSQL run skipped (PGlite only)');
    engines = engines.filter((e) => e !== 'postgres');
  }
  const results: EngineResult[] = [];
  for (const engine of engines) {
    progress(`notes: --- ${engine}, ${n} notes ---`);
    results.push(
      await runEngine(engine, {
        quick: opts.quick,
        n,
        requests,
        warmup,
        reseed: opts.reseed ?? false,
        analyze: opts.analyze ?? false,
        keepDb: opts.keepDb ?? false,
      }),
    );
  }
  const out: NotesResult = {
    settings: {
      n,
      requests,
      warmup,
      client: 'node:http, one keep-alive connection, sequential GETs; latency = request sent to last byte received',
      arrangement:
        'Folio alone in a child process (same Node 24 binary), client in the parent; floors replayed from the parent after Folio stopped',
    },
    targets: TARGETS,
    engines: results,
  };
  await mkdir(RESULTS, { recursive: true });
  await writeFile(path.join(RESULTS, 'notes.json'), JSON.stringify(out, null, 2) + '\n');
  return out;
}

// --- output ----------------------------------------------------------------------------------------

function table(head: string[], rows: string[][], right: Set<number>): string {
  const all = [head, ...rows];
  const widths = head.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => (right.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const triple = (s: Stats) => `${s.p50Ms} / ${s.p95Ms} / ${s.maxMs}`;

export function formatNotes(r: NotesResult): string {
  const out: string[] = [
    `notes: ${r.settings.n} notes of one user; ${r.settings.requests} sequential calls per operation after ${r.settings.warmup} warm-up calls.`,
    `REST = GET through Folio's REST API (client side, loopback); floor = the same SQL statements through a plain pg client;`,
    `engine = (PGlite) the same SQL on PGlite in-process. Figures are p50 / p95 / max in ms.`,
  ];
  for (const e of r.engines) {
    const s = e.seed;
    out.push(
      '',
      `${e.variant}: seed ${s.cached ? `cached (made in ${(s.timings.totalMs / 1000).toFixed(1)} s)` : `${(s.ms / 1000).toFixed(1)} s`}` +
        `${s.copyMs !== undefined ? `, copied in ${(s.copyMs / 1000).toFixed(1)} s` : ''}${s.analyzeMs !== undefined ? `, ANALYZE ${(s.analyzeMs / 1000).toFixed(1)} s` : ''}; ${s.stats.live} live + ${s.stats.trashed} trashed notes, ` +
        `body mean ${s.stats.bodyBytes.mean} B (p95 ${s.stats.bodyBytes.p95}, max ${s.stats.bodyBytes.max}), ${s.stats.words} distinct words, ${s.stats.tags} tags`,
    );
    const head = [
      'operation',
      'REST p50/p95/max',
      'floor p50/p95/max',
      ...(e.engine === 'pglite' ? ['engine p50/p95/max'] : []),
      'REST÷floor p50',
      'target',
      '',
    ];
    const rows = e.ops.map((o) => [
      o.op,
      triple(o.rest),
      triple(o.floor),
      ...(o.engineFloor ? [triple(o.engineFloor)] : []),
      `${o.ratioP50}x (${o.overheadP50Ms >= 0 ? '+' : ''}${o.overheadP50Ms})`,
      `p95 < ${o.targetP95Ms}`,
      o.pass ? 'PASS' : 'FAIL',
    ]);
    out.push(table(head, rows, new Set([1, 2, 3, 4])));
    out.push(
      `  load average (1 min) after each phase: ${Object.entries(e.loadAvg)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
    );
    for (const o of e.ops)
      if (o.perQuery)
        out.push(
          `  ${o.op}: ` +
            o.perQuery
              .map((q) => `${q.q} → ${q.hits}${q.match === 'fuzzy' ? ' fuzzy' : ''} hits, REST ${q.restP50Ms} / floor ${q.floorP50Ms}`)
              .join('; '),
        );
  }
  return out.join('\n');
}

/** Summary rows for bench/run.ts: one per engine and operation. */
export function notesSummaryRows(r: NotesResult): string[][] {
  return r.engines.flatMap((e) =>
    e.ops.map((o) => [
      'notes',
      `${e.variant} ${o.op} p95 ms`,
      String(o.rest.p95Ms),
      `p50 ${o.rest.p50Ms}, max ${o.rest.maxMs}; floor p50 ${o.floor.p50Ms} p95 ${o.floor.p95Ms} (${o.ratioP50}x)`,
      `${o.pass ? 'PASS' : 'FAIL'} (< ${o.targetP95Ms} ms)`,
    ]),
  );
}

// --- CLI -------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  assertNode24();
  const args = process.argv.slice(2);
  if (args[0] === '--serve') {
    await serve(args[1]!, args[2] || undefined);
    return;
  }
  const opt = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const num = (name: string) => (opt(name) === undefined ? undefined : Number(opt(name)));
  const engines = opt('engines')?.split(',') as NotesOptions['engines'];
  const r = await runNotes({
    quick: args.includes('--quick'),
    reseed: args.includes('--reseed'),
    analyze: args.includes('--analyze'),
    keepDb: args.includes('--keep-db'),
    ...(num('n') !== undefined ? { n: num('n')! } : {}),
    ...(num('requests') !== undefined ? { requests: num('requests')! } : {}),
    ...(num('warmup') !== undefined ? { warmup: num('warmup')! } : {}),
    ...(engines ? { engines } : {}),
  });
  console.log('\n' + formatNotes(r));
  console.log(`\n(written to bench/results/notes.json; EXPLAIN ANALYZE of each operation's slowest floor call is in it)`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    await main();
  } catch (err) {
    if (process.argv[2] === '--serve') {
      send({ error: (err as Error).stack ?? String(err) });
      process.exit(1);
    }
    throw err;
  }
}
