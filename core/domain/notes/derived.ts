// What a write keeps in step with a note's content, inside the write's own transaction:
//   - the note's derived columns (search vector, excerpt, open action items, body size);
//   - the per-user word table behind typo tolerance (note_words: word -> how many notes hold it);
//   - the per-user live-note count and tag counts behind summary() and tags().
// Counters are upserted in sorted key order, so concurrent writers take row locks in the same order
// and cannot deadlock each other (each writer first holds its one note row).
import type { EntityManager } from '@mikro-orm/postgresql';
import { openActionItems } from './markdown.ts';
import { excerpt } from './snippet.ts';
import { buildVector, isFuzzyWord } from './text.ts';

export interface Content {
  title: string;
  body: string;
  tags: string[];
}

export interface Derived {
  vector: string;
  words: Set<string>;
  excerpt: string;
  openItems: string[];
  bodyBytes: number;
}

export function derive(c: Content): Derived {
  const { literal, words } = buildVector([
    { text: c.title, weight: 'A' },
    { text: c.tags.join(' '), weight: 'B' },
    { text: c.body, weight: 'D' },
  ]);
  return { vector: literal, words, excerpt: excerpt(c.body), openItems: openActionItems(c.body), bodyBytes: Buffer.byteLength(c.body) };
}

/** The SQL expression listing a stored vector's candidate words (filtered exactly by wordsOf). */
export const VECTOR_WORDS_SQL = (col: string) =>
  `array(select l from unnest(tsvector_to_array(${col})) l where char_length(l) between 3 and 64)`;

export function wordsOf(lexemes: string[]): Set<string> {
  return new Set(lexemes.filter(isFuzzyWord));
}

/** +1 for words only in `after`, -1 for words only in `before`. */
export function wordDelta(before: Set<string>, after: Set<string>, into = new Map<string, number>()): Map<string, number> {
  for (const w of after) if (!before.has(w)) into.set(w, (into.get(w) ?? 0) + 1);
  for (const w of before) if (!after.has(w)) into.set(w, (into.get(w) ?? 0) - 1);
  return into;
}

/** Tag count changes of the live notes when a note goes from `before` to `after` (null: not live). */
export function tagDelta(before: string[] | null, after: string[] | null): Map<string, number> {
  const d = new Map<string, number>();
  for (const t of after ?? []) d.set(t, (d.get(t) ?? 0) + 1);
  for (const t of before ?? []) d.set(t, (d.get(t) ?? 0) - 1);
  for (const [t, n] of d) if (n === 0) d.delete(t);
  return d;
}

function sortedEntries(m: Map<string, number>): [string[], number[]] {
  const keys = [...m.keys()].filter((k) => m.get(k) !== 0).sort();
  return [keys, keys.map((k) => m.get(k)!)];
}

export async function applyWordDelta(em: EntityManager, ownerId: string, delta: Map<string, number>): Promise<void> {
  const [words, counts] = sortedEntries(delta);
  if (words.length === 0) return;
  await em.execute(
    `insert into note_words (owner_id, word, notes)
     select ?, d.w, d.n from unnest(array[?]::text[], array[?]::int[]) as d(w, n) order by d.w collate "C"
     on conflict (owner_id, word) do update set notes = note_words.notes + excluded.notes`,
    [ownerId, words, counts],
  );
  const gone = words.filter((_, i) => counts[i]! < 0);
  if (gone.length > 0) {
    await em.execute(`delete from note_words where owner_id = ? and word = any(array[?]::text[]) and notes <= 0`, [ownerId, gone]);
  }
}

export async function applyStatsDelta(em: EntityManager, ownerId: string, tags: Map<string, number>, live: number): Promise<void> {
  const [names, counts] = sortedEntries(tags);
  if (names.length > 0) {
    await em.execute(
      `insert into note_tag_stats (owner_id, tag, live_count)
       select ?, d.t, d.n from unnest(array[?]::text[], array[?]::int[]) as d(t, n) order by d.t collate "C"
       on conflict (owner_id, tag) do update set live_count = note_tag_stats.live_count + excluded.live_count`,
      [ownerId, names, counts],
    );
    const gone = names.filter((_, i) => counts[i]! < 0);
    if (gone.length > 0) {
      await em.execute(`delete from note_tag_stats where owner_id = ? and tag = any(array[?]::text[]) and live_count <= 0`, [
        ownerId,
        gone,
      ]);
    }
  }
  if (live !== 0) {
    await em.execute(
      `insert into note_stats (owner_id, live_count) values (?, ?)
       on conflict (owner_id) do update set live_count = note_stats.live_count + excluded.live_count`,
      [ownerId, live],
    );
  }
}
