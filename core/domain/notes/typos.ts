// The words one typo away from a word (Damerau-Levenshtein distance 1: a letter dropped, added,
// changed, or two neighbours swapped), as candidates for typo tolerance. Looking these up in a
// user's word table is a handful of primary-key probes, where a pg_trgm similarity search reads
// every word sharing a trigram with the query (most of a large vocabulary for a common prefix).
// Most typos people make are one edit away; the rest fall back to the trigram search.

/** Letters tried for a changed or added letter, besides those of the word itself (words are folded: no accents). */
const LATIN = 'abcdefghijklmnopqrstuvwxyz';
/** Words longer than this get no candidates (a long word's edits would be many; the trigram search takes it). */
export const MAX_EDIT_WORD = 24;

/** Every distinct word one edit away from `word` (not `word` itself), for words of up to MAX_EDIT_WORD characters. */
export function oneEditAway(word: string): string[] {
  const chars = Array.from(word);
  if (chars.length < 3 || chars.length > MAX_EDIT_WORD) return [];
  const alphabet = [...new Set([...LATIN, ...chars])];
  const out = new Set<string>();
  const n = chars.length;
  for (let i = 0; i <= n; i++) {
    const head = chars.slice(0, i).join('');
    const tail = chars.slice(i).join('');
    if (i < n) out.add(head + chars.slice(i + 1).join('')); // dropped
    if (i < n - 1) out.add(head + chars[i + 1]! + chars[i]! + chars.slice(i + 2).join('')); // swapped
    for (const c of alphabet) {
      if (i < n && c !== chars[i]) out.add(head + c + chars.slice(i + 1).join('')); // changed
      out.add(head + c + tail); // added
    }
  }
  out.delete(word);
  return [...out].filter((w) => Array.from(w).length >= 3);
}
