// Full-text search over the caller's live notes: ranked (ts_rank over title A / tags B / body D),
// keyset pages on (rank, updated_at, id), plain-text snippets. When the words of a query find
// nothing, typo tolerance looks up close words of the caller's own vocabulary with pg_trgm
// (note_words, trigram GIN) and searches again with them; those hits are match 'fuzzy'.
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  countedWords,
  hasPositive,
  highlightTerms,
  matchBound,
  parseQuery,
  plainWords,
  toTsquery,
  withAlternatives,
  type ParsedQuery,
} from './query.ts';
import { ms, rows } from './rows.ts';
import { excerpt, snippetAround, snippetDeep, SNIPPET_WINDOW } from './snippet.ts';
import { isFuzzyWord } from './text.ts';
import type { Page, SearchHit, SearchOptions } from './types.ts';
import * as v from './validate.ts';

/** How much of a hit's body is read with it to build its snippet (a match further in reads the rest). */
const SNIPPET_SOURCE_CHARS = SNIPPET_WINDOW;
/**
 * Ranking considers the most recently updated matches, this many at most (a query matching more
 * notes than this never shows the older ones; adding words narrows it).
 */
export const RANK_WINDOW = 2000;
/**
 * Below this share of the caller's live notes, a query's matches are read through the GIN index;
 * above it, walking the notes newest-first finds the RANK_WINDOW newest sooner (measured at 100k
 * notes on PostgreSQL: a word in 7% of them 420 ms walking vs 94 ms by the index, one in 66% 59 ms
 * vs 179 ms; the two cross near 20%).
 */
const WALK_MIN_SHARE = 0.2;
/** Close words tried per misspelled word. */
const FUZZY_ALTERNATIVES = 3;

/** The notes a query, tag set and date range select, as SQL over `notes n`. */
export interface Selection {
  where: string;
  params: unknown[];
}

export function selectionSql(
  owner: string,
  f: { tsquery?: string | undefined; tags?: string[] | undefined; from?: Date | undefined; to?: Date | undefined },
): Selection {
  let where = `n.owner_id = ? and n.deleted_at is null`;
  const params: unknown[] = [owner];
  if (f.tsquery !== undefined) {
    where += ` and n.search_vector @@ ?::tsquery`;
    params.push(f.tsquery);
  }
  if (f.tags?.length) {
    where += ` and n.tags @> array[?]::text[]`;
    params.push(f.tags);
  }
  if (f.from) {
    where += ` and n.updated_at >= ?::timestamptz`;
    params.push(f.from.toISOString());
  }
  if (f.to) {
    where += ` and n.updated_at <= ?::timestamptz`;
    params.push(f.to.toISOString());
  }
  return { where, params };
}

export function dateRange(from: unknown, to: unknown): { from?: Date; to?: Date } {
  const f = v.dateBound(from, 'from', false);
  const t = v.dateBound(to, 'to', true);
  if (f && t && f > t) throw v.bad('from', 'must not be after to');
  return { ...(f ? { from: f } : {}), ...(t ? { to: t } : {}) };
}

export function parseSearchText(q: unknown): ParsedQuery {
  const parsed = parseQuery(v.query(q));
  if (parsed.length === 0) throw v.bad('q', 'has no words to search for');
  return parsed;
}

/** A table of one user's distinct words (note_words, search_words): the vocabulary typo tolerance draws on. */
export type WordTable = 'note_words' | 'search_words';

/** Which of these words the owner's vocabulary holds. */
export function knownWordsStatement(table: WordTable, owner: string, words: string[]): [string, unknown[]] {
  return [`select word from ${table} where owner_id = ? and word = any(array[?]::text[])`, [owner, words]];
}

/** Up to FUZZY_ALTERNATIVES close words of the owner's vocabulary for each term (pg_trgm similarity). */
export function closeWordsStatement(table: WordTable, owner: string, terms: string[]): [string, unknown[]] {
  return [
    `select m.term, c.word
       from unnest(array[?]::text[]) as m(term)
       cross join lateral (
         select w.word from ${table} w
          where w.owner_id = ? and w.word % m.term
          order by similarity(w.word, m.term) desc, w.word collate "C"
          limit ${FUZZY_ALTERNATIVES}) c`,
    [terms, owner],
  ];
}

/**
 * The query with each plain word that the owner's vocabulary (`table`) does not hold replaced by up
 * to three close words it does hold; null when no word has an alternative. Sequential scans are off
 * for the lookup: without it the planner may scan every word instead of the trigram index (measured
 * at 80k words: 111 ms versus 6 ms); `timeoutMs` also bounds it (PostgreSQL).
 */
export async function fuzzyQuery(
  em: EntityManager,
  owner: string,
  parsed: ParsedQuery,
  opts: { table?: WordTable; timeoutMs?: number } = {},
): Promise<ParsedQuery | null> {
  const table = opts.table ?? 'note_words';
  const words = plainWords(parsed).filter(isFuzzyWord);
  if (words.length === 0) return null;
  const known = new Set((await rows<{ word: string }>(em, ...knownWordsStatement(table, owner, words))).map((r) => r.word));
  const missing = words.filter((w) => !known.has(w));
  if (missing.length === 0) return null;
  const found = await em.transactional(async (tx) => {
    await tx.execute('set local enable_seqscan = off');
    if (opts.timeoutMs !== undefined) await tx.execute(`set local statement_timeout = ${Math.floor(opts.timeoutMs)}`);
    return rows<{ term: string; word: string }>(tx, ...closeWordsStatement(table, owner, missing));
  });
  if (found.length === 0) return null;
  const alternatives = new Map<string, string[]>();
  for (const r of found) alternatives.set(r.term, [...(alternatives.get(r.term) ?? []), r.word]);
  return withAlternatives(parsed, alternatives);
}

interface HitRow {
  id: string;
  rank: number;
  updated_ms: number;
  title: string;
  tags: string[];
  version: number;
  body: string;
}

export async function searchNotes(em: EntityManager, owner: string, opts: SearchOptions): Promise<Page<SearchHit>> {
  const parsed = parseSearchText(opts?.q);
  const { limit, clampedFrom } = v.limit(opts.limit);
  const list = `note-search:${owner}`;
  const cursor = v.decodeCursor(opts.cursor, 'srtu', list);
  if (cursor && cursor[0] !== 't' && cursor[0] !== 'f') throw v.bad('cursor', 'is not a cursor this call returned');
  const tags = v.optionalTags(opts.tags, 'tags');
  const range = dateRange(opts.from, opts.to);

  let match: SearchHit['match'] = cursor?.[0] === 'f' ? 'fuzzy' : 'fulltext';
  let query: ParsedQuery | null = parsed;
  if (match === 'fuzzy') query = await fuzzyQuery(em, owner, parsed);
  let found = query ? await runSearch(em, owner, query, tags, range, cursor, limit + 1) : [];
  if (found.length === 0 && !cursor && hasPositive(parsed)) {
    const fuzzy = await fuzzyQuery(em, owner, parsed);
    if (fuzzy) {
      query = fuzzy;
      match = 'fuzzy';
      found = await runSearch(em, owner, fuzzy, tags, range, undefined, limit + 1);
    }
  }
  const terms = query ? highlightTerms(query) : [];
  const page = found.slice(0, limit);
  // A match past the part of the body read with the hits: the whole body of those notes, read
  // window by window until the match (a 1 MiB note is searched to its end; its snippet too).
  const inBody = new Map(page.map((r) => [r.id, snippetAround(r.body, terms)]));
  const deep = new Map<string, string>();
  const beyond = page.filter((r) => r.body.length >= SNIPPET_SOURCE_CHARS && inBody.get(r.id) === null).map((r) => r.id);
  if (beyond.length > 0) {
    const bodies = await rows<{ id: string; body: string }>(
      em,
      `select id, body from notes where owner_id = ? and id = any(array[?]::uuid[])`,
      [owner, beyond],
    );
    for (const b of bodies) {
      const snippet = snippetDeep(b.body, terms);
      if (snippet !== null) deep.set(b.id, snippet);
    }
  }
  const items: SearchHit[] = page.map((r) => ({
    id: r.id,
    title: r.title,
    tags: r.tags,
    updated_at: new Date(r.updated_ms).toISOString(),
    version: r.version,
    rank: r.rank,
    snippet: deep.get(r.id) ?? inBody.get(r.id) ?? snippetAround(r.title, terms) ?? excerpt(r.body),
    match,
  }));
  const last = found[Math.min(found.length, limit) - 1];
  const out: Page<SearchHit> = {
    items,
    next_cursor:
      found.length > limit && last ? v.encodeCursor([match === 'fuzzy' ? 'f' : 't', last.rank, last.updated_ms, last.id], list) : null,
    limit,
  };
  if (clampedFrom !== undefined) out.limit_clamped_from = clampedFrom;
  return out;
}

/**
 * Does `query` match fewer than WALK_MIN_SHARE of the owner's live notes, by the word counts of
 * note_words and note_stats (an upper bound; false when they cannot tell)?
 */
async function sparse(em: EntityManager, owner: string, query: ParsedQuery): Promise<boolean> {
  const words = countedWords(query);
  if (words.length === 0) return false;
  const [r] = await rows<{ live: number | null; counts: Record<string, number> | string | null }>(
    em,
    `select (select live_count from note_stats where owner_id = ?) as live,
            (select jsonb_object_agg(word, notes) from note_words where owner_id = ? and word = any(array[?]::text[])) as counts`,
    [owner, owner, words],
  );
  if (!r?.live) return false;
  const counts = typeof r.counts === 'string' ? (JSON.parse(r.counts) as Record<string, number>) : (r.counts ?? {});
  const bound = matchBound(query, (w) => counts[w] ?? 0);
  return bound !== null && bound < r.live * WALK_MIN_SHARE;
}

async function runSearch(
  em: EntityManager,
  owner: string,
  query: ParsedQuery,
  tags: string[] | undefined,
  range: { from?: Date; to?: Date },
  cursor: Array<string | number> | undefined,
  take: number,
): Promise<HitRow[]> {
  const tsquery = toTsquery(query);
  const sel = selectionSql(owner, { tsquery, tags, from: range.from, to: range.to });
  const params: unknown[] = [...sel.params, tsquery];
  let after = '';
  if (cursor) {
    after = `where (rank, updated_at, id) < (?::real, ?::timestamptz, ?::uuid)`;
    params.push(cursor[1], new Date(cursor[2] as number).toISOString(), cursor[3]);
  }
  params.push(take);
  // No index orders by rank, so ranking reads every candidate's vector. Candidates are the most
  // recently updated matches, at most RANK_WINDOW of them: a word in every note costs the same at
  // 10k or 100k notes. The window is chosen without reading a vector (the GIN index answers a
  // query without phrases exactly, and a row carries its vector as a pointer through the sort);
  // only the RANK_WINDOW vectors in it are read, to rank them. Then one page is kept, and only its
  // titles and bodies are read.
  //
  // The planner prices the @@ filter as cheap, but every vector it reads outside the GIN index must
  // be de-TOASTed: for a word in ~10-30% of the notes it picks a seq scan that is several times
  // slower than the GIN bitmap, so sequential scans are off for this one statement. For the same
  // reason it walks the notes newest-first (the list index) as soon as it expects ~7% of them to
  // match, reading a vector per note walked; that only pays above ~20% (`sparse` tells from the
  // caller's word counts).
  return em.transactional(async (tx) => {
    await tx.execute('set local enable_seqscan = off');
    if (!range.from && !range.to && (await sparse(tx, owner, query))) await tx.execute('set local enable_indexscan = off');
    return rows<HitRow>(
      tx,
      `with w as (
       select n.id, n.updated_at, n.search_vector
         from notes n where ${sel.where}
        order by n.updated_at desc, n.id desc limit ${RANK_WINDOW}
     ), h as (
       select w.id, w.updated_at, ts_rank(w.search_vector, ?::tsquery, 1) as rank from w
     ), top as (
       select * from h ${after} order by rank desc, updated_at desc, id desc limit ?
     )
     select top.id, top.rank, ${ms('top.updated_at', 'updated_ms')}, n.title, n.tags, n.version, left(n.body, ${SNIPPET_SOURCE_CHARS}) as body
       from top join notes n on n.id = top.id
      order by top.rank desc, top.updated_at desc, top.id desc`,
      params,
    );
  });
}
