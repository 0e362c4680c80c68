// Global search: one ranked list over every kind of resource the domains register as a source
// (core/contract/search.ts). The index is kept by the search-index job, queued in the transaction
// of every write a source's domain tells about; `rebuild` reads every source again (npm run
// reindex). The query language, folding, CJK handling and typo tolerance are the notes search's
// (core/domain/notes/{query,text,snippet}.ts), so a query means the same everywhere.
//
// What a caller may see is decided before the index is read: the caller's surface asks the policy
// which kinds it may read (namespace visible, token scope) and search looks at those kinds only.
import { createHash } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { ResourceChange, SearchLocation, SearchSource } from '../../contract/search.ts';
import { SearchTimeout } from '../../contract/errors.ts';
import type { Principal } from '../identity/types.ts';
import { hasPositive, highlightTerms, phraseCandidates, toTsquery, type ParsedQuery } from '../notes/query.ts';
import { dateRange, fuzzyQuery, parseSearchText } from '../notes/search.ts';
import { excerpt, findMatches, SNIPPET_REACH, snippetAround, snippetAt } from '../notes/snippet.ts';
import { buildVector } from '../notes/text.ts';
import * as v from '../notes/validate.ts';
import { chunkDocument, locate, type Mark } from './chunk.ts';

/** Ranking considers the most recently updated matching chunks, this many at most (as note search does). */
export const RANK_WINDOW = 2000;
/** Terms (words, phrases, alternatives) one query may have. */
export const MAX_TERMS = 32;
/** A search statement that runs longer is stopped (PostgreSQL; the embedded engine has no timer). */
const STATEMENT_TIMEOUT_MS = 5000;
/** PostgreSQL's SQLSTATE for a statement stopped by statement_timeout (or a cancel request). */
const QUERY_CANCELED = '57014';
const TYPE_RE = /^[a-z0-9][a-z0-9.+-]{0,63}\/(\*|[a-z0-9][a-z0-9.+-]{0,63})$/;
const NIL_UUID = '00000000-0000-0000-0000-000000000000';
/**
 * Part of every resource's digest: raise it when what the indexer makes of a document changes
 * (chunking, folding, vectors), so that every resource is written again by its next job.
 */
const INDEXER_VERSION = 2;
/** A resource waiting this long for its index job gets another (its job may be lost). */
export const PENDING_RESEND_SECONDS = 60;

export interface SearchOptions {
  q: unknown;
  /** Only these kinds (default: every kind the caller may read). */
  kinds?: string[] | undefined;
  tags?: string[] | undefined;
  from?: string | undefined;
  to?: string | undefined;
  /** A content type (`application/pdf`) or a family (`audio/*`): files of that type only. */
  type?: string | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

export interface SearchHit {
  kind: string;
  id: string;
  title: string;
  /** Text around the first match, the matched words between « and ». */
  snippet: string;
  /** Where the match is: page, start_seconds or heading; null when it is in the title only. */
  where: SearchLocation | null;
  updated_at: string;
  /** The resource on the REST API. */
  link: string;
  tags: string[];
  content_type: string | null;
  rank: number;
  /** 'fuzzy' when typo tolerance replaced words of the query that matched nothing. */
  match: 'fulltext' | 'fuzzy';
}

export interface SearchPage {
  hits: SearchHit[];
  next_cursor: string | null;
  limit: number;
  limit_clamped_from?: number;
  /** The kinds that were searched (those asked for that the caller may read). */
  kinds: string[];
}

interface HitRow {
  kind: string;
  id: string;
  rank: number;
  updated_ms: number;
  title: string;
  tags: string[];
  content_type: string | null;
  text: string;
  marks: Mark[];
}

async function rows<T>(em: EntityManager, sql: string, params: unknown[] = []): Promise<T[]> {
  return await em.execute<T[]>(sql, params);
}

/** A search's filters, validated. */
export interface Filters {
  kinds: string[];
  tags: string[] | undefined;
  range: { from?: Date; to?: Date };
  type: string | undefined;
}

/** One SQL statement and its parameters (exported for the benchmark's floor: the same SQL, run directly). */
export type Statement = [sql: string, params: unknown[]];

/**
 * Runs a search statement the way search does: sequential scans off and a statement timeout,
 * for this statement's transaction only.
 */
export async function runGuarded<T>(em: EntityManager, [sql, params]: Statement): Promise<T[]> {
  return guarded(em, (tx) => rows<T>(tx, sql, params));
}

/**
 * A search transaction: sequential scans off, the statement timeout set, and a statement stopped by
 * it answered as SearchTimeout (a clear 503 that says how to narrow the query), not as a failure.
 */
async function guarded<T>(em: EntityManager, work: (tx: EntityManager) => Promise<T>): Promise<T> {
  try {
    return await em.transactional(async (tx) => {
      await tx.execute(`set local enable_seqscan = off`);
      await tx.execute(`set local statement_timeout = ${STATEMENT_TIMEOUT_MS}`);
      return work(tx);
    });
  } catch (err) {
    throw timedOut(err);
  }
}

/** A statement stopped by the statement timeout as SearchTimeout; any other error as it is. */
function timedOut(err: unknown): unknown {
  if ((err as { code?: unknown } | null)?.code !== QUERY_CANCELED) return err;
  return new SearchTimeout(
    `the search was stopped after ${STATEMENT_TIMEOUT_MS / 1000} s: it matches more than can be ranked in time. Add a word, a kind, a tag or a date range to narrow it.`,
  );
}

/** The chunks of `owner` a query and its filters select, as SQL over `search_chunks c`. */
function selection(owner: string, tsquery: string, f: Filters): { where: string; params: unknown[] } {
  let where = `c.owner_id = ? and c.kind = any(array[?]::text[]) and c.vector @@ ?::tsquery`;
  const params: unknown[] = [owner, f.kinds, tsquery];
  if (f.tags?.length) {
    where += ` and c.tags @> array[?]::text[]`;
    params.push(f.tags);
  }
  if (f.range.from) {
    where += ` and c.updated_at >= ?::timestamptz`;
    params.push(f.range.from.toISOString());
  }
  if (f.range.to) {
    where += ` and c.updated_at <= ?::timestamptz`;
    params.push(f.range.to.toISOString());
  }
  if (f.type) {
    if (f.type.endsWith('/*')) {
      where += ` and c.content_type like ?`;
      params.push(`${f.type.slice(0, -1)}%`);
    } else {
      where += ` and c.content_type = ?`;
      params.push(f.type);
    }
  }
  return { where, params };
}

/**
 * The ranked page: as note search does, the most recent RANK_WINDOW matching chunks are ranked
 * (the GIN index finds them; sequential scans are off, see core/domain/notes/search.ts), the best
 * chunk of each resource stands for it, and only one page of texts is read. The window is chosen
 * before any vector is read for ranking (a chunk's vector travels through the sort as a pointer),
 * so only the RANK_WINDOW vectors in it are read to rank them, however many chunks match.
 *
 * `narrow` (a query with a phrase, see rankedSearch): the GIN index only knows which chunks hold
 * all of a phrase's words, and each must be read to check their positions. Rather than checking
 * every such chunk and then keeping the newest RANK_WINDOW, the candidates are put in date order
 * first (no vector read) and checked newest first, one by one (by row address), until RANK_WINDOW
 * of them hold the phrase.
 */
export function rankedStatement(
  owner: string,
  query: ParsedQuery,
  f: Filters,
  cursor: Array<string | number> | undefined,
  take: number,
  narrow = false,
  rankWindow: number | null = RANK_WINDOW,
): Statement {
  // `rankWindow` null ranks every match (the benchmark's reference for the window's result quality).
  const limit = rankWindow === null ? '' : `limit ${Math.floor(rankWindow)}`;
  const tsquery = toTsquery(query);
  const candidates = narrow ? phraseCandidates(query) : null;
  const { where, params } = selection(owner, candidates ?? tsquery, f);
  const window = candidates
    ? `select x.* from (
         select c.ctid as row_at, c.updated_at from search_chunks c where ${where} order by c.updated_at desc offset 0
       ) cand cross join lateral (
         select c.kind, c.resource_id, c.chunk, c.updated_at, c.vector from search_chunks c
          where c.ctid = cand.row_at and c.vector @@ ?::tsquery offset 0
       ) x
       order by cand.updated_at desc ${limit}`
    : `select c.kind, c.resource_id, c.chunk, c.updated_at, c.vector
         from search_chunks c where ${where}
        order by c.updated_at desc ${limit}`;
  if (candidates) params.push(tsquery);
  params.push(tsquery);
  let after = '';
  if (cursor) {
    after = `where (rank, updated_at, kind, resource_id) < (?::real, ?::timestamptz, ?, ?::uuid)`;
    params.push(cursor[2], new Date(cursor[3] as number).toISOString(), cursor[4], cursor[5]);
  }
  params.push(take, owner);
  return [
    `with w as (
       ${window}
     ), h as (
       select w.kind, w.resource_id, w.chunk, w.updated_at, ts_rank(w.vector, ?::tsquery, 1) as rank from w
     ), best as (
       select distinct on (kind, resource_id) * from h order by kind, resource_id, rank desc, chunk
     ), top as (
       select * from best ${after} order by rank desc, updated_at desc, kind desc, resource_id desc limit ?
     )
     select top.kind, top.resource_id as id, top.rank, (extract(epoch from top.updated_at) * 1000)::float8 as updated_ms,
            c.title, c.tags, c.content_type, c.text, c.marks
       from top join search_chunks c
         on c.owner_id = ? and c.kind = top.kind and c.resource_id = top.resource_id and c.chunk = top.chunk
      order by top.rank desc, top.updated_at desc, top.kind desc, top.resource_id desc`,
    params,
  ];
}

/**
 * Runs the ranked statement as search does (runGuarded's settings). A query with a phrase first asks
 * the planner how it would find the window. When it would walk the chunks newest first (it expects
 * the phrase in many of them, and the walk stops at RANK_WINDOW), that is the plan; when it would go
 * through the GIN index, the phrase is checked on the date-ordered candidates (`narrow`), not on
 * every chunk that holds its words. Measured on PostgreSQL, 301k chunks: "quarterly budget review"
 * (15.8k candidates, 6.3k matches) 408 -> 187 ms, while "next week" (278k candidates) keeps its
 * 26 ms walk, which the narrowed form would turn into 340 ms.
 */
export async function rankedSearch<T>(
  em: EntityManager,
  owner: string,
  query: ParsedQuery,
  f: Filters,
  cursor: Array<string | number> | undefined,
  take: number,
): Promise<T[]> {
  return guarded(em, async (tx) => {
    let narrow = false;
    if (phraseCandidates(query)) {
      const { where, params } = selection(owner, toTsquery(query), f);
      const [plan] = await rows<Record<string, unknown>>(
        tx,
        `explain (format json) select 1 from search_chunks c where ${where} order by c.updated_at desc limit ${RANK_WINDOW}`,
        params,
      );
      narrow = !JSON.stringify(plan ?? {}).includes('search_chunks_owner_updated_index');
    }
    return rows<T>(tx, ...rankedStatement(owner, query, f, cursor, take, narrow));
  });
}

function termCount(q: ParsedQuery): number {
  return q.reduce((n, clause) => n + clause.length, 0);
}

/** Resources waiting for their index job, and the longest wait in seconds (null: not known yet). */
type Backlog = { pending: number | null; oldest_seconds: number | null };

export class SearchService {
  readonly #orm: MikroORM;
  readonly #sources: () => SearchSource[];
  readonly #publicUrl: () => string;
  readonly #log: Logger | undefined;
  readonly #send: ((changes: ResourceChange[]) => Promise<void>) | undefined;

  /** `send` queues an index job for these resources (resendStale). */
  constructor(
    db: { orm: MikroORM },
    sources: () => SearchSource[],
    opts: { publicUrl?: () => string; log?: Logger; send?: (changes: ResourceChange[]) => Promise<void> } = {},
  ) {
    this.#orm = db.orm;
    this.#send = opts.send;
    this.#sources = sources;
    this.#publicUrl = opts.publicUrl ?? (() => '');
    this.#log = opts.log;
  }

  #em(): EntityManager {
    return this.#orm.em.fork();
  }

  /** Every kind of resource there is a source for, with what governs it. */
  get sources(): SearchSource[] {
    return this.#sources();
  }

  /** The kinds this caller may read, as the policy answers `mayRead` for each source. */
  async readableKinds(mayRead: (namespace: string, scope: string) => Promise<boolean>): Promise<string[]> {
    const sources = this.#sources();
    const verdicts = await Promise.all(sources.map((s) => mayRead(s.namespace, s.scope)));
    return sources.filter((_, i) => verdicts[i]).map((s) => s.kind);
  }

  #source(kind: string): SearchSource | undefined {
    return this.#sources().find((s) => s.kind === kind);
  }

  // --- the index ---------------------------------------------------------------------------------

  /**
   * Marks changed resources as waiting for their index job, in the writer's transaction, and
   * answers those that need a job: the ones not already waiting, and the ones waiting longer than
   * PENDING_RESEND_SECONDS (their job may be lost: cancelled, dead-lettered, the queue cleared). A
   * resource written many times a second so has one job waiting, which indexes it as it is when it
   * runs. The row is locked (`do update`) even when it was waiting already: a job that starts now
   * waits for this write to commit before it takes the row, and then reads this write.
   */
  async pending(em: EntityManager, changes: ResourceChange[]): Promise<ResourceChange[]> {
    // Once each (`do update` refuses a row twice in one statement), in key order, so that two writers
    // of the same resources lock their rows in the same order.
    const byKey = new Map<string, ResourceChange>();
    for (const c of changes)
      if (v.isUuid(c.owner) && v.isUuid(c.id)) byKey.set(`${c.owner}:${c.kind}:${c.id}`, { owner: c.owner, kind: c.kind, id: c.id });
    const valid = [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, c]) => c);
    if (valid.length === 0) return [];
    // `do update ... where` locks every conflicting row until this write commits, also those it does
    // not update (PostgreSQL locks all of them), and answers only the rows inserted or updated.
    return rows<ResourceChange>(
      em,
      `insert into search_pending (owner_id, kind, resource_id, since)
       select r.owner, r.kind, r.id, now() from jsonb_to_recordset(?::jsonb) as r(owner uuid, kind text, id uuid)
       on conflict (owner_id, kind, resource_id) do update set since = now()
         where search_pending.since < now() - make_interval(secs => ?)
       returning kind, owner_id as owner, resource_id as id`,
      [JSON.stringify(valid), PENDING_RESEND_SECONDS],
    );
  }

  /**
   * Resources waiting longer than PENDING_RESEND_SECONDS (their job lost, and no write since to
   * send another) get another job (upkeep); answers how many. A send that fails is tried again
   * PENDING_RESEND_SECONDS later.
   */
  async resendStale(): Promise<number> {
    if (!this.#send) return 0;
    const stale = await rows<ResourceChange>(
      this.#em(),
      `update search_pending set since = now() where since < now() - make_interval(secs => ?)
       returning kind, owner_id as owner, resource_id as id`,
      [PENDING_RESEND_SECONDS],
    );
    if (stale.length === 0) return 0;
    this.#log?.warn({ resources: stale.length }, 'search: index jobs sent again for resources waiting too long');
    await this.#send(stale);
    return stale.length;
  }

  #backlogQuery: Promise<Backlog> | null = null;
  #lastBacklog: Backlog | null = null;

  /**
   * How many resources wait for their index job, and the longest wait (for /health). /health must
   * answer while the database is busy or hung (the embedded engine has one connection): past
   * `waitMs` the last figure known is given, marked stale (null before the first), and the one
   * query in flight goes on to refresh it.
   */
  async backlog(waitMs = 250): Promise<Backlog & { stale?: true }> {
    this.#backlogQuery ??= rows<{ pending: number; oldest: number | null }>(
      this.#em(),
      `select count(*)::int as pending, extract(epoch from now() - min(since))::float8 as oldest from search_pending`,
    )
      .then(([r]) => (this.#lastBacklog = { pending: r?.pending ?? 0, oldest_seconds: Math.max(0, Math.round(r?.oldest ?? 0)) }))
      .finally(() => (this.#backlogQuery = null));
    const last = (): Backlog & { stale: true } => ({ ...(this.#lastBacklog ?? { pending: null, oldest_seconds: null }), stale: true });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<Backlog & { stale: true }>((resolve) => (timer = setTimeout(() => resolve(last()), waitMs)));
    try {
      return await Promise.race([this.#backlogQuery.catch(last), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Reads each changed resource again and replaces its chunks (none when it is gone). */
  async index(changes: ResourceChange[], opts: { force?: boolean } = {}): Promise<{ indexed: number; removed: number }> {
    const seen = new Set<string>();
    let indexed = 0;
    let removed = 0;
    for (const c of changes) {
      const key = `${c.kind}:${c.owner}:${c.id}`;
      if (seen.has(key) || !v.isUuid(c.owner) || !v.isUuid(c.id)) continue;
      seen.add(key);
      if (await this.#indexOne(c, opts.force === true)) indexed++;
      else removed++;
    }
    return { indexed, removed };
  }

  /** `force`: every chunk and word written again, whatever the digest says (a rebuild). */
  async #indexOne(c: ResourceChange, force: boolean): Promise<boolean> {
    // No longer waiting, before the resource is read: a write committed from now on marks it again
    // and queues another job, which reads that write.
    await this.#em().execute(`delete from search_pending where owner_id = ? and kind = ? and resource_id = ?`, [c.owner, c.kind, c.id]);
    return this.#em().transactional(async (em) => {
      // One indexer at a time per resource, and the resource read once the lock is held: of two
      // jobs for one resource, the later one always writes what is there now.
      await em.execute(`select pg_advisory_xact_lock(hashtextextended(?, 0))`, [`search:${c.kind}:${c.id}`]);
      const source = this.#source(c.kind);
      const doc = source ? await source.load(em, c.owner, c.id) : null;
      if (!doc) {
        await em.execute(`delete from search_chunks where owner_id = ? and kind = ? and resource_id = ?`, [c.owner, c.kind, c.id]);
        return false;
      }
      const digest = createHash('sha256')
        .update(JSON.stringify([INDEXER_VERSION, doc.title, doc.tags, doc.contentType, doc.updatedAt.toISOString(), doc.parts]))
        .digest('base64url');
      const [held] = await rows<{ digest: string | null }>(
        em,
        `select digest from search_chunks where owner_id = ? and kind = ? and resource_id = ? and chunk = 0`,
        [c.owner, c.kind, c.id],
      );
      // Indexed as it is already (an earlier job read the same version): nothing to write.
      if (!force && held?.digest === digest) return true;
      const words = new Set<string>();
      const chunks = chunkDocument(doc.parts).map((chunk, i) => {
        const vec = buildVector([
          { text: doc.title, weight: 'A' },
          { text: doc.tags.join(' '), weight: 'B' },
          { text: chunk.text, weight: 'D' },
        ]);
        for (const w of vec.words) words.add(w);
        return { chunk: i, text: chunk.text, marks: chunk.marks, vector: vec.literal };
      });
      // Only the chunks that changed are written: an append to a long note changes its last chunk,
      // and rewriting every chunk (their text and vectors, TOAST and GIN entries) cost megabytes of
      // disk and WAL per one-character edit (bench/embedded-disk.ts). The others only take the
      // resource's new time, which leaves their text, vector and TOAST where they are.
      const json = JSON.stringify(chunks);
      const updatedAt = doc.updatedAt.toISOString();
      await em.execute(
        `delete from search_chunks c
          where c.owner_id = ? and c.kind = ? and c.resource_id = ?
            and (?::boolean or not (c.title = ? and c.tags = array[?]::text[] and c.content_type is not distinct from ?
                     and exists (select 1 from jsonb_to_recordset(?::jsonb) as r(chunk int, text text, marks jsonb, vector text)
                                  where r.chunk = c.chunk and r.text = c.text and r.marks = c.marks and r.vector::tsvector = c.vector)))`,
        [c.owner, c.kind, c.id, force, doc.title, doc.tags, doc.contentType, json],
      );
      // The chunks kept take the resource's new time, and chunk 0 the new digest.
      await em.execute(
        `update search_chunks set updated_at = ?::timestamptz, digest = case when chunk = 0 then ? else digest end
          where owner_id = ? and kind = ? and resource_id = ?
            and (updated_at <> ?::timestamptz or (chunk = 0 and digest is distinct from ?))`,
        [updatedAt, digest, c.owner, c.kind, c.id, updatedAt, digest],
      );
      await em.execute(
        `insert into search_chunks (owner_id, kind, resource_id, chunk, title, tags, content_type, updated_at, text, marks, vector, digest)
         select ?, ?, ?, r.chunk, ?, array[?]::text[], ?, ?::timestamptz, r.text, r.marks, r.vector::tsvector,
                case when r.chunk = 0 then ? end
           from jsonb_to_recordset(?::jsonb) as r(chunk int, text text, marks jsonb, vector text)
          where not exists (select 1 from search_chunks c where c.owner_id = ? and c.kind = ? and c.resource_id = ? and c.chunk = r.chunk)
         on conflict (owner_id, kind, resource_id, chunk) do nothing`,
        [c.owner, c.kind, c.id, doc.title, doc.tags, doc.contentType, updatedAt, digest, json, c.owner, c.kind, c.id],
      );
      if (words.size > 0)
        await em.execute(
          `insert into search_words (owner_id, word) select ?, w from jsonb_array_elements_text(?::jsonb) w on conflict do nothing`,
          [c.owner, JSON.stringify([...words])],
        );
      return true;
    });
  }

  /** Is the index empty while there is something to find (a database that had data before search)? */
  async needsRebuild(): Promise<boolean> {
    const em = this.#em();
    const [any] = await rows<{ x: number }>(em, `select 1 as x from search_chunks limit 1`);
    if (any) return false;
    for (const s of this.#sources()) if ((await s.all(em, null, 1)).length > 0) return true;
    return false;
  }

  /**
   * Reads everything again: first what the index holds (what is gone is removed), then every
   * resource of every source. The word list is rebuilt on the way. `progress(done, total)`.
   */
  async rebuild(
    opts: { progress?: (done: number, total: number) => void; signal?: AbortSignal } = {},
  ): Promise<{ indexed: number; removed: number }> {
    const em = this.#em();
    const [held] = await rows<{ n: number }>(em, `select count(distinct (kind, resource_id))::int as n from search_chunks`);
    let total = held?.n ?? 0;
    for (const s of this.#sources()) total += await s.count(em);
    let done = 0;
    let indexed = 0;
    let removed = 0;
    const step = async (batch: ResourceChange[]) => {
      opts.signal?.throwIfAborted();
      const r = await this.index(batch, { force: true });
      indexed += r.indexed;
      removed += r.removed;
      done += batch.length;
      opts.progress?.(Math.min(done, total), total);
    };
    await em.execute(`delete from search_words`);
    // What the index holds now (a kind without a source any more is removed with it).
    let after = { kind: '', id: NIL_UUID };
    for (;;) {
      const page = await rows<{ kind: string; owner: string; id: string }>(
        em,
        `select distinct kind, owner_id as owner, resource_id as id from search_chunks
          where (kind, resource_id) > (?, ?::uuid) order by kind, resource_id limit 200`,
        [after.kind, after.id],
      );
      if (page.length === 0) break;
      await step(page);
      after = { kind: page[page.length - 1]!.kind, id: page[page.length - 1]!.id };
    }
    for (const s of this.#sources()) {
      let cursor: string | null = null;
      for (;;) {
        const page = await s.all(em, cursor, 200);
        if (page.length === 0) break;
        await step(page.map((r) => ({ kind: s.kind, owner: r.owner, id: r.id })));
        cursor = page[page.length - 1]!.id;
      }
    }
    opts.progress?.(total, total);
    this.#log?.info({ indexed, removed }, 'search index rebuilt');
    return { indexed, removed };
  }

  // --- queries -----------------------------------------------------------------------------------

  /**
   * The caller's hits, best first, over the kinds in `readable` (the policy's answer for this
   * caller) that the options ask for.
   */
  async search(p: Principal, readable: readonly string[], opts: SearchOptions): Promise<SearchPage> {
    const parsed = parseSearchText(opts.q);
    const terms = termCount(parsed);
    if (terms > MAX_TERMS) throw v.bad('q', `has ${terms} terms; at most ${MAX_TERMS} (words, "phrases" and OR alternatives)`);
    const known = this.#sources().map((s) => s.kind);
    for (const k of opts.kinds ?? [])
      if (!known.includes(k))
        throw v.bad('kinds', `has '${String(k).slice(0, 40)}', which is not a kind of result; the kinds are ${known.join(', ')}`);
    const kinds = (opts.kinds?.length ? known.filter((k) => opts.kinds!.includes(k)) : known).filter((k) => readable.includes(k));
    const tags = v.optionalTags(opts.tags, 'tags');
    const range = dateRange(opts.from, opts.to);
    let type: string | undefined;
    if (opts.type !== undefined) {
      type = String(opts.type).trim().toLowerCase();
      if (!TYPE_RE.test(type)) throw v.bad('type', 'must be a content type like application/pdf, or a family like audio/*');
    }
    const { limit, clampedFrom } = v.limit(opts.limit);
    // A cursor carries a fingerprint of the query, its filters and its user: another query's (or
    // another user's) cursor is refused rather than silently continuing something else.
    const fingerprint = createHash('sha256')
      .update(
        JSON.stringify([p.user.id, opts.q, kinds, tags ?? [], range.from?.getTime() ?? null, range.to?.getTime() ?? null, type ?? null]),
      )
      .digest('base64url')
      .slice(0, 16);
    const cursor = v.decodeCursor(opts.cursor, 'ssrtsu');
    if (cursor && (cursor[0] !== fingerprint || (cursor[1] !== 't' && cursor[1] !== 'f')))
      throw v.bad('cursor', 'belongs to another query; start again without it');

    const page: SearchPage = { hits: [], next_cursor: null, limit, kinds };
    if (clampedFrom !== undefined) page.limit_clamped_from = clampedFrom;
    if (kinds.length === 0) return page;

    const filters = { kinds, tags, range, type };
    let match: SearchHit['match'] = cursor?.[1] === 'f' ? 'fuzzy' : 'fulltext';
    let query: ParsedQuery | null = parsed;
    const em = this.#em();
    if (match === 'fuzzy') query = await this.#fuzzy(em, p.user.id, parsed);
    let found = query ? await rankedSearch<HitRow>(em, p.user.id, query, filters, cursor, limit + 1) : [];
    if (found.length === 0 && !cursor && hasPositive(parsed)) {
      const fuzzy = await this.#fuzzy(em, p.user.id, parsed);
      if (fuzzy) {
        query = fuzzy;
        match = 'fuzzy';
        found = await rankedSearch<HitRow>(em, p.user.id, fuzzy, filters, undefined, limit + 1);
      }
    }
    const marked = query ? highlightTerms(query) : [];
    const base = this.#publicUrl();
    page.hits = found.slice(0, limit).map((r) => {
      const spans = findMatches(r.text, marked, { near: SNIPPET_REACH });
      const first = spans[0];
      const source = this.#source(r.kind);
      return {
        kind: r.kind,
        id: r.id,
        title: r.title,
        snippet: snippetAt(r.text, spans) ?? snippetAround(r.title, marked) ?? excerpt(r.text),
        where: first ? locate(Array.isArray(r.marks) ? r.marks : [], first.start) : null,
        updated_at: new Date(r.updated_ms).toISOString(),
        link: `${base}/api/v1${source ? source.link(r.id) : ''}`,
        tags: r.tags,
        content_type: r.content_type,
        rank: r.rank,
        match,
      };
    });
    const last = found[Math.min(found.length, limit) - 1];
    if (found.length > limit && last)
      page.next_cursor = v.encodeCursor([fingerprint, match === 'fuzzy' ? 'f' : 't', last.rank, last.updated_ms, last.kind, last.id]);
    return page;
  }

  /** The query with close words of the caller's own index for words it does not hold (pg_trgm); null when none. */
  async #fuzzy(em: EntityManager, owner: string, parsed: ParsedQuery): Promise<ParsedQuery | null> {
    try {
      return await fuzzyQuery(em, owner, parsed, { table: 'search_words', timeoutMs: STATEMENT_TIMEOUT_MS });
    } catch (err) {
      throw timedOut(err);
    }
  }
}
