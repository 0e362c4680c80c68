// (i) search: global search (GET /api/v1/search) over one user's notes, files and transcripts at
// scale, against the floor: the same SQL statements the service runs, run directly on the same
// database (the service's own statement builders, through the same connection, no HTTP, no auth,
// no JSON). Also: how long a write takes to reach search (a note, an uploaded file), and whether
// indexing keeps up with one note appended to 45 times a second (waiting jobs, last write found).
//
//   npx node bench/search.ts                    PGlite at 10k notes + 1k files (100 MB) + 100 transcripts;
//                                               PostgreSQL too (DATABASE_URL) at 100k + 10k (1 GB) + 1k
//   npx node bench/search.ts --quick            PGlite, 2k notes + 100 files x 20 KB + 50 transcripts
//   npx node bench/search.ts --engines=postgres --notes=1000000 --files=0 --transcripts=0
//   options: --notes=N --files=N --file-kb=N --transcripts=N --requests=N --engines=pglite,postgres
//            --append-seconds=N (one note appended to 45 times a second this long; default 15, quick 3)
//            --keep-db (PostgreSQL: keep the seeded database), --db=URL (measure that database again, no seeding)
//
// Seeding writes the index directly, through the indexer's own derivation code (chunkDocument,
// buildVector: what the search-index job writes), from the notes bench's generator
// (bench/seed-notes.ts: realistic notes in several languages with planted rare words and phrases).
// Files are runs of generated text, half of them paged like PDFs (3,000 characters a page);
// transcripts are generated text in segments of ~15 words, 5 s apart. Then ANALYZE.
//
// Measure: Folio in this process (startFolio on that database), sequential GETs on one keep-alive
// connection, latency from sending to the last byte; per query kind a warm-up, then `requests`
// calls cycling through its queries; the floor runs the same statements as many times.
// Targets (the issue): p95 < 100 ms for every kind, through REST.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { pino } from 'pino';
import { startFolio, type Folio } from '../core/app.ts';
import { loadConfig } from '../core/kernel/config.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import { chunkDocument } from '../core/domain/search/chunk.ts';
import { rankedSearch, rankedStatement, runGuarded, type Filters } from '../core/domain/search/service.ts';
import { closeWordsStatement, knownWordsStatement } from '../core/domain/notes/search.ts';
import { noteParts } from '../core/domain/notes/search-source.ts';
import { parseQuery, plainWords, withAlternatives, type ParsedQuery } from '../core/domain/notes/query.ts';
import { buildVector, isFuzzyWord } from '../core/domain/notes/text.ts';
import { ADMIN_TOKEN, FIRST_PARTY_PLUGINS, freshDatabase } from './lib.ts';
import { generateNotes, QUERIES } from './seed-notes.ts';
import { assertNode24, percentile, progress, removeDir, round, tempDir } from './util.ts';

const TARGET_P95_MS = 100;
const KINDS = ['note', 'file', 'transcript'];
const OPS = {
  common: QUERIES.common,
  rare: QUERIES.rare,
  phrase: QUERIES.phrase,
  cjk: QUERIES.cjk,
  typo: QUERIES.typo,
} as const;
type Op = keyof typeof OPS;

interface Scale {
  notes: number;
  files: number;
  fileKb: number;
  transcripts: number;
}
interface Stats {
  p50: number;
  p95: number;
  max: number;
}
interface OpResult {
  op: Op;
  rest: Stats;
  floor: Stats;
  /** REST p95 / floor p95. */
  ratio: number;
  hits: number;
  met: boolean;
  /** Top-10 agreement with the full ranking, mean and worst over the op's queries (target >= 0.9). */
  overlap: number | null;
  overlapMin: number | null;
}
export interface SearchEngineResult {
  engine: 'pglite' | 'postgres';
  scale: Scale;
  chunks: number;
  textMb: number;
  seedSeconds: number;
  /** After seeding (MB): search_chunks with its TOAST, its indexes, search_words with its index, the whole database. */
  sizes: { chunksMb: number; chunkIndexesMb: number; wordsMb: number; databaseMb: number };
  ops: OpResult[];
  freshness: { note: Stats; file: Stats };
  appends: AppendsResult;
}
/** One note appended to at a steady rate: does indexing keep up? */
export interface AppendsResult {
  /** Appends asked for per second, and the rate reached (each append waits for its answer). */
  rate: number;
  achieved: number;
  writes: number;
  /** The most search-index jobs waiting at once while the writes ran, and when they stopped. */
  maxWaiting: number;
  waitingAtEnd: number;
  /** From the answer to the last append to the first search that finds its word. */
  lastWriteSearchableMs: number;
}

function stats(ms: number[]): Stats {
  return { p50: round(percentile(ms, 50)), p95: round(percentile(ms, 95)), max: round(Math.max(...ms)) };
}

// --- seeding -----------------------------------------------------------------------------------

interface Row {
  kind: string;
  id: string;
  chunk: number;
  title: string;
  tags: string[];
  content_type: string | null;
  updated_at: string;
  text: string;
  marks: unknown;
  vector: string;
}

const uuid = () => {
  const b = randomBytes(16);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

async function seed(folio: Folio, owner: string, scale: Scale): Promise<{ chunks: number; textBytes: number }> {
  const em = () => folio.db.orm.em.fork();
  const words = new Set<string>();
  let batch: Row[] = [];
  let chunks = 0;
  let textBytes = 0;
  let batchBytes = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    await em().execute(
      `insert into search_chunks (owner_id, kind, resource_id, chunk, title, tags, content_type, updated_at, text, marks, vector)
       select ?, r.kind, r.id::uuid, r.chunk, r.title, array(select jsonb_array_elements_text(r.tags)), r.content_type,
              r.updated_at::timestamptz, r.text, r.marks, r.vector::tsvector
         from jsonb_to_recordset(?::jsonb) as r(kind text, id text, chunk int, title text, tags jsonb, content_type text,
              updated_at text, text text, marks jsonb, vector text)`,
      [owner, JSON.stringify(batch)],
    );
    chunks += batch.length;
    batch = [];
    batchBytes = 0;
  };
  const add = async (
    kind: string,
    doc: { title: string; tags: string[]; updatedMs: number; contentType: string | null; parts: Array<{ text: string; where?: object }> },
  ) => {
    const id = uuid();
    chunkDocument(doc.parts).forEach((c, i) => {
      const v = buildVector([
        { text: doc.title, weight: 'A' },
        { text: doc.tags.join(' '), weight: 'B' },
        { text: c.text, weight: 'D' },
      ]);
      for (const w of v.words) words.add(w);
      textBytes += c.text.length;
      batchBytes += c.text.length + v.literal.length;
      batch.push({
        kind,
        id,
        chunk: i,
        title: doc.title,
        tags: doc.tags,
        content_type: doc.contentType,
        updated_at: new Date(doc.updatedMs).toISOString(),
        text: c.text,
        marks: c.marks,
        vector: v.literal,
      });
    });
    if (batch.length >= 400 || batchBytes > 8_000_000) await flush();
  };

  // Trashed notes of the generator are skipped: ask for more than needed (it stops when asked for no more).
  const gen = generateNotes(Math.ceil((scale.notes + scale.files * 200 + scale.transcripts * 20) * 1.25) + 100);
  const next = () => {
    for (;;) {
      const n = gen.next();
      if (n.done) throw new Error('the generator ran out');
      if (n.value.deletedMs === null) return n.value;
    }
  };
  const started = Date.now();
  let last = 0;
  const tick = (what: string, i: number, of: number) => {
    if (Date.now() - last < 5000) return;
    last = Date.now();
    progress(`  seeding ${what} ${i}/${of} (${Math.round((Date.now() - started) / 1000)} s, ${Math.round(textBytes / 1e6)} MB)`);
  };
  for (let i = 0; i < scale.notes; i++) {
    const n = next();
    await add('note', { title: n.title, tags: n.tags, updatedMs: n.updatedMs, contentType: null, parts: noteParts(n.body) });
    tick('notes', i, scale.notes);
  }
  for (let i = 0; i < scale.files; i++) {
    let text = '';
    let updatedMs = 0;
    while (text.length < scale.fileKb * 1024) {
      const n = next();
      text += `${n.title}\n\n${n.body}\n\n`;
      updatedMs = Math.max(updatedMs, n.updatedMs);
    }
    const pdf = i % 2 === 0;
    const parts = pdf
      ? Array.from({ length: Math.ceil(text.length / 3000) }, (_, p) => ({
          text: text.slice(p * 3000, (p + 1) * 3000),
          where: { page: p + 1 },
        }))
      : [{ text }];
    await add('file', {
      title: `document-${i}.${pdf ? 'pdf' : 'txt'}`,
      tags: [],
      updatedMs,
      contentType: pdf ? 'application/pdf' : 'text/plain',
      parts,
    });
    tick('files', i, scale.files);
  }
  for (let i = 0; i < scale.transcripts; i++) {
    const spoken: string[] = [];
    let updatedMs = 0;
    while (spoken.join(' ').length < 6000) {
      const n = next();
      spoken.push(...n.body.split(/\s+/).filter(Boolean));
      updatedMs = Math.max(updatedMs, n.updatedMs);
    }
    const parts = [];
    for (let w = 0; w < spoken.length; w += 15)
      parts.push({ text: spoken.slice(w, w + 15).join(' '), where: { start_seconds: (w / 15) * 5 } });
    await add('transcript', { title: `Transcript: call-${i}.m4a`, tags: ['transcript'], updatedMs, contentType: null, parts });
    tick('transcripts', i, scale.transcripts);
  }
  await flush();
  const all = [...words];
  for (let i = 0; i < all.length; i += 5000)
    await em().execute(
      `insert into search_words (owner_id, word) select ?, w from jsonb_array_elements_text(?::jsonb) w on conflict do nothing`,
      [owner, JSON.stringify(all.slice(i, i + 5000))],
    );
  await em().execute(`analyze search_chunks`);
  await em().execute(`analyze search_words`);
  return { chunks, textBytes };
}

// --- the floor: the service's statements, run directly -----------------------------------------

const ALL: Filters = { kinds: KINDS, tags: undefined, range: {}, type: undefined };

/** The query search ranks for `q`: as written when it finds something, else with typo alternatives (null: neither). */
async function floorCall(em: EntityManager, owner: string, q: string): Promise<ParsedQuery | null> {
  const parsed = parseQuery(q);
  const f = ALL;
  const found = await rankedSearch(em, owner, parsed, f, undefined, 21);
  if (found.length > 0) return parsed;
  const words = plainWords(parsed).filter(isFuzzyWord);
  const known = new Set(
    (await em.execute<Array<{ word: string }>>(...knownWordsStatement('search_words', owner, words))).map((r) => r.word),
  );
  const missing = words.filter((w) => !known.has(w));
  if (missing.length === 0) return null;
  const close = await runGuarded<{ term: string; word: string }>(em, closeWordsStatement('search_words', owner, missing));
  const alternatives = new Map<string, string[]>();
  for (const r of close) alternatives.set(r.term, [...(alternatives.get(r.term) ?? []), r.word]);
  if (alternatives.size === 0) return null;
  const fuzzy = withAlternatives(parsed, alternatives);
  await rankedSearch(em, owner, fuzzy, f, undefined, 21);
  return fuzzy;
}

const TOP = 10;
/**
 * Result quality of the rank window: of the top TOP hits search answers, the share that the full
 * ranking (every match ranked, no window) also puts in its top TOP. Ties count as agreement: a hit
 * ranked as high as the full ranking's TOP-th is as good a hit. Null when the query finds nothing.
 */
async function overlap(em: EntityManager, owner: string, q: string): Promise<number | null> {
  const query = await floorCall(em, owner, q);
  if (!query) return null;
  const windowed = await rankedSearch<{ rank: number }>(em, owner, query, ALL, undefined, TOP);
  const full = await runGuarded<{ rank: number }>(em, rankedStatement(owner, query, ALL, undefined, TOP, false, null));
  if (full.length === 0) return null;
  const bar = full[full.length - 1]!.rank * (1 - 1e-6);
  return Math.min(1, windowed.filter((h) => h.rank >= bar).length / full.length);
}

// --- one engine ----------------------------------------------------------------------------------

async function runEngine(
  engine: 'pglite' | 'postgres',
  scale: Scale,
  requests: number,
  appendSeconds: number,
  keep: { keepDb: boolean; db: string | undefined },
): Promise<SearchEngineResult> {
  const dataDir = await tempDir('folio-bench-search-');
  let drop: (() => Promise<void>) | undefined;
  let databaseUrl: string | null = null;
  if (engine === 'postgres' && keep.db) {
    databaseUrl = keep.db;
  } else if (engine === 'postgres') {
    const fresh = await freshDatabase(process.env['DATABASE_URL']!);
    databaseUrl = fresh.url;
    drop = keep.keepDb ? () => Promise.resolve(progress(`  kept the database: --db=${databaseUrl} reuses it`)) : fresh.drop;
  }
  const config = loadConfig({
    env: {},
    overrides: {
      port: 0,
      host: '127.0.0.1',
      dataDir,
      databaseUrl,
      pluginsDir: [FIRST_PARTY_PLUGINS],
      bootstrapAdminToken: ADMIN_TOKEN,
      logLevel: 'silent',
      reload: { watch: false },
    },
  });
  const folio = await startFolio(config, pino({ level: 'silent' }));
  try {
    const em = () => folio.db.orm.em.fork();
    const [admin] = await em().execute<Array<{ id: string }>>(`select id from users order by created_at limit 1`);
    const owner = admin!.id;
    progress(`search bench on ${engine}: seeding ${JSON.stringify(scale)}`);
    const t0 = Date.now();
    const [held] = await em().execute<Array<{ n: number; bytes: number }>>(
      `select count(*)::int as n, coalesce(sum(length(text)), 0)::float8 as bytes from search_chunks`,
    );
    const seeded = keep.db && held!.n > 0 ? { chunks: held!.n, textBytes: held!.bytes } : await seed(folio, owner, scale);
    const seedSeconds = round((Date.now() - t0) / 1000);
    progress(`  seeded ${seeded.chunks} chunks, ${Math.round(seeded.textBytes / 1e6)} MB of text in ${seedSeconds} s`);
    const [size] = await em().execute<Array<{ chunks: number; idx: number; words: number; db: number }>>(
      `select pg_table_size('search_chunks')::float8 as chunks, pg_indexes_size('search_chunks')::float8 as idx,
              pg_total_relation_size('search_words')::float8 as words, pg_database_size(current_database())::float8 as db`,
    );
    const mb = (b: number) => round(b / 1e6);
    const sizes = { chunksMb: mb(size!.chunks), chunkIndexesMb: mb(size!.idx), wordsMb: mb(size!.words), databaseMb: mb(size!.db) };
    progress(`  sizes (MB): ${JSON.stringify(sizes)}`);

    const headers = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const rest = async (q: string): Promise<{ ms: number; hits: number }> => {
      const t = performance.now();
      const r = await fetch(`${folio.url}/api/v1/search?q=${encodeURIComponent(q)}`, { headers });
      const body = (await r.json()) as { hits?: unknown[] };
      const ms = performance.now() - t;
      if (r.status !== 200) throw new Error(`search ${q}: ${r.status} ${JSON.stringify(body)}`);
      return { ms, hits: body.hits?.length ?? 0 };
    };
    const ops: OpResult[] = [];
    for (const [op, queries] of Object.entries(OPS) as Array<[Op, readonly string[]]>) {
      for (const q of queries.slice(0, 5)) {
        await rest(q);
        await floorCall(em(), owner, q);
      }
      const restMs: number[] = [];
      const floorMs: number[] = [];
      let hits = 0;
      for (let i = 0; i < requests; i++) {
        const q = queries[i % queries.length]!;
        const r = await rest(q);
        restMs.push(r.ms);
        hits += r.hits;
        const t = performance.now();
        await floorCall(em(), owner, q);
        floorMs.push(performance.now() - t);
      }
      const shares: number[] = [];
      for (const q of queries) {
        const o = await overlap(em(), owner, q);
        if (o !== null) shares.push(o);
      }
      const restStats = stats(restMs);
      const floorStats = stats(floorMs);
      ops.push({
        op,
        rest: restStats,
        floor: floorStats,
        ratio: round(restStats.p95 / Math.max(0.1, floorStats.p95), 2),
        hits: round(hits / requests),
        met: restStats.p95 < TARGET_P95_MS,
        overlap: shares.length ? round(shares.reduce((a, b) => a + b, 0) / shares.length, 2) : null,
        overlapMin: shares.length ? round(Math.min(...shares), 2) : null,
      });
      progress(
        `  ${op}: REST p50/p95 ${restStats.p50}/${restStats.p95} ms, floor ${floorStats.p50}/${floorStats.p95} ms, top-10 overlap ${ops.at(-1)!.overlap}`,
      );
    }

    // Freshness: from the answer to a write to the first search that finds it.
    const until = async (q: string, id: string): Promise<number> => {
      const t = performance.now();
      for (;;) {
        const r = await fetch(`${folio.url}/api/v1/search?q=${encodeURIComponent(q)}`, { headers });
        const body = (await r.json()) as { hits: Array<{ id: string }> };
        if (body.hits.some((h) => h.id === id)) return performance.now() - t;
        if (performance.now() - t > 30_000) throw new Error(`${q} never became searchable`);
        await new Promise((res) => setTimeout(res, 20));
      }
    };
    const noteMs: number[] = [];
    const fileMs: number[] = [];
    for (let i = 0; i < 8; i++) {
      const word = `freshnote${randomBytes(4).toString('hex')}`;
      const r = await fetch(`${folio.url}/api/v1/notetaker/notes`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'fresh', body: `a new word: ${word}` }),
      });
      const n = (await r.json()) as { id: string };
      noteMs.push(await until(word, n.id));
      const fword = `freshfile${randomBytes(4).toString('hex')}`;
      const u = await fetch(`${folio.url}/api/v1/filedb/files?name=fresh-${i}.txt`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'text/plain' },
        body: `the text of an uploaded file: ${fword}`,
      });
      const f = (await u.json()) as { id: string };
      fileMs.push(await until(fword, f.id));
    }
    const freshness = { note: stats(noteMs), file: stats(fileMs) };
    progress(
      `  freshness: note p50/max ${freshness.note.p50}/${freshness.note.max} ms, file ${freshness.file.p50}/${freshness.file.max} ms`,
    );
    const appends = await sustainedAppends(folio, headers, until, appendSeconds);
    progress(
      `  appends: ${appends.writes} at ${appends.achieved}/s, waiting jobs max ${appends.maxWaiting} (${appends.waitingAtEnd} at the end), last write searchable after ${appends.lastWriteSearchableMs} ms`,
    );
    return { engine, scale, chunks: seeded.chunks, textMb: round(seeded.textBytes / 1e6), seedSeconds, sizes, ops, freshness, appends };
  } finally {
    await folio.close();
    await drop?.();
    await removeDir(dataDir);
  }
}

/** Search-index jobs waiting now (created or to retry), all resources. */
async function waitingJobs(folio: Folio): Promise<number> {
  const [r] = await folio.db.orm.em
    .fork()
    .execute<Array<{ n: number }>>(
      `select count(*)::int as n from pgboss.job where name = 'search-index' and state in ('created', 'retry')`,
    );
  return r?.n ?? 0;
}

/**
 * One note appended to APPEND_RATE times a second for `seconds` (each append a new word), the
 * waiting search-index jobs sampled meanwhile; then how long until the last append's word is found.
 */
const APPEND_RATE = 45;
async function sustainedAppends(
  folio: Folio,
  headers: Record<string, string>,
  until: (q: string, id: string) => Promise<number>,
  seconds: number,
): Promise<AppendsResult> {
  const json = { ...headers, 'content-type': 'application/json' };
  const created = await fetch(`${folio.url}/api/v1/notetaker/notes`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ title: 'live log', body: 'appended to all the time' }),
  });
  const { id } = (await created.json()) as { id: string };
  const tag = randomBytes(3).toString('hex');
  let maxWaiting = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      maxWaiting = Math.max(maxWaiting, await waitingJobs(folio));
      await new Promise((res) => setTimeout(res, 100));
    }
  })();
  const total = Math.round(APPEND_RATE * seconds);
  const start = performance.now();
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / APPEND_RATE;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((res) => setTimeout(res, wait));
    const r = await fetch(`${folio.url}/api/v1/notetaker/notes/${id}`, {
      method: 'PATCH',
      headers: json,
      body: JSON.stringify({ append: { text: `line ${i}: appended${tag}x${i}` } }),
    });
    if (r.status !== 200) throw new Error(`append: ${r.status} ${await r.text()}`);
    await r.arrayBuffer();
  }
  const elapsed = (performance.now() - start) / 1000;
  sampling = false;
  await sampler;
  const waitingAtEnd = await waitingJobs(folio);
  maxWaiting = Math.max(maxWaiting, waitingAtEnd);
  const lastWriteSearchableMs = round(await until(`appended${tag}x${total - 1}`, id));
  return { rate: APPEND_RATE, achieved: round(total / elapsed), writes: total, maxWaiting, waitingAtEnd, lastWriteSearchableMs };
}

export function formatSearch(results: SearchEngineResult[]): string {
  const out: string[] = ['(i) search: GET /api/v1/search vs the same SQL run directly (ms)'];
  for (const r of results) {
    out.push(
      `  ${r.engine}: ${r.scale.notes} notes + ${r.scale.files} files (${r.scale.fileKb} KB each) + ${r.scale.transcripts} transcripts = ${r.chunks} chunks, ${r.textMb} MB of text (seeded in ${r.seedSeconds} s)`,
    );
    out.push(
      `    sizes: search_chunks ${r.sizes.chunksMb} MB + its indexes ${r.sizes.chunkIndexesMb} MB, search_words ${r.sizes.wordsMb} MB, database ${r.sizes.databaseMb} MB`,
    );
    out.push('    query     REST p50   p95     floor p50   p95   p95 ratio  hits  target p95<100  top-10 overlap mean/min');
    for (const o of r.ops)
      out.push(
        `    ${o.op.padEnd(8)} ${String(o.rest.p50).padStart(8)} ${String(o.rest.p95).padStart(6)} ${String(o.floor.p50).padStart(11)} ${String(o.floor.p95).padStart(6)} ${String(o.ratio).padStart(10)} ${String(o.hits).padStart(5)}  ${(o.met ? 'met' : 'NOT met').padEnd(14)}  ${o.overlap ?? '-'}/${o.overlapMin ?? '-'}`,
      );
    out.push(
      `    a write reaches search: note p50 ${r.freshness.note.p50} ms (max ${r.freshness.note.max}), uploaded file p50 ${r.freshness.file.p50} ms (max ${r.freshness.file.max}); target < 2000`,
    );
    const a = r.appends;
    out.push(
      `    one note appended to ${a.rate}/s (reached ${a.achieved}/s, ${a.writes} writes): search-index jobs waiting at most ${a.maxWaiting}, ${a.waitingAtEnd} when the writes stopped; the last write searchable after ${a.lastWriteSearchableMs} ms (target < 2000)`,
    );
  }
  return out.join('\n');
}

/** The search bench with its options as command-line flags (`npm run bench -- --only=search` passes --quick or nothing). */
export async function runSearch(argv: string[]): Promise<SearchEngineResult[]> {
  const arg = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const quick = argv.includes('--quick');
  const appendSeconds = Number(arg('append-seconds') ?? (quick ? 3 : 15));
  const engines = (arg('engines') ?? (process.env['DATABASE_URL'] && !quick ? 'pglite,postgres' : 'pglite')).split(',') as Array<
    'pglite' | 'postgres'
  >;
  const requests = Number(arg('requests') ?? (quick ? 30 : 100));
  const results: SearchEngineResult[] = [];
  for (const engine of engines) {
    const base: Scale = quick
      ? { notes: 2000, files: 100, fileKb: 20, transcripts: 50 }
      : engine === 'postgres'
        ? { notes: 100_000, files: 10_000, fileKb: 100, transcripts: 1000 }
        : { notes: 10_000, files: 1000, fileKb: 100, transcripts: 100 };
    const scale: Scale = {
      notes: Number(arg('notes') ?? base.notes),
      files: Number(arg('files') ?? base.files),
      fileKb: Number(arg('file-kb') ?? base.fileKb),
      transcripts: Number(arg('transcripts') ?? base.transcripts),
    };
    if (engine === 'postgres' && !process.env['DATABASE_URL']) throw new Error('--engines=postgres needs DATABASE_URL');
    results.push(await runEngine(engine, scale, requests, appendSeconds, { keepDb: argv.includes('--keep-db'), db: arg('db') }));
  }
  return results;
}

async function main(): Promise<void> {
  assertNode24();
  const results = await runSearch(process.argv.slice(2));
  const text = formatSearch(results);
  console.log(text);
  console.log(JSON.stringify({ search: results }));
}

if (path.resolve(process.argv[1] ?? '') === import.meta.filename) await main();
