// Language-agnostic text analysis for search, done in TypeScript so both engines (PostgreSQL with
// any locale, PGlite with the C locale) index and query exactly the same lexemes: the database only
// stores and matches what this file produces (tsvector/tsquery literals, no parser, no dictionary).
//
//   fold      lowercase, strip Latin-style diacritics (café -> cafe), compatibility forms (ﬁ, ｶ, ①)
//   tokenize  runs of letters/digits/marks; CJK runs (no spaces) become overlapping bigrams plus a
//             final unigram (the Lucene CJKAnalyzer approach), so a query is a phrase of bigrams

/** Combining marks that are diacritics on Latin, Greek, Cyrillic (not Japanese voicing marks). */
function isDiacritic(c: number): boolean {
  return (
    (c >= 0x300 && c <= 0x36f) ||
    (c >= 0x1ab0 && c <= 0x1aff) ||
    (c >= 0x1dc0 && c <= 0x1dff) ||
    (c >= 0x20d0 && c <= 0x20ff) ||
    (c >= 0xfe20 && c <= 0xfe2f)
  );
}

function stripDiacritics(s: string): string {
  let out = '';
  for (const ch of s) if (!isDiacritic(ch.codePointAt(0)!)) out += ch;
  return out;
}
/** Letters that are not decomposable but that people type without their stroke. */
const SPECIAL: Record<string, string> = {
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  đ: 'd',
  ð: 'd',
  ł: 'l',
  þ: 'th',
  ı: 'i',
  ħ: 'h',
  ŧ: 't',
  ŀ: 'l',
};
const SPECIAL_RE = /[ßæœøđðłþıħŧŀ]/g;

const foldCache = new Map<string, string>();

/** Folds one code point (a string of one code point). Cached: text has few distinct characters. */
function foldChar(ch: string): string {
  const code = ch.codePointAt(0)!;
  if (code < 0x80) return code >= 65 && code <= 90 ? String.fromCharCode(code + 32) : ch;
  let out = foldCache.get(ch);
  if (out === undefined) {
    out = stripDiacritics(ch.normalize('NFKD'))
      .normalize('NFC')
      .toLowerCase()
      .replace(SPECIAL_RE, (c) => SPECIAL[c] ?? c);
    if (foldCache.size < 50_000) foldCache.set(ch, out);
  }
  return out;
}

/** Folded text; code point by code point, so positions can be mapped back (see foldWithMap). */
export function fold(text: string): string {
  // Only upper-case ASCII and non-ASCII code points need work; the regex finds them fast.
  return text.replace(NEEDS_FOLD, foldChar);
}
// eslint-disable-next-line no-control-regex
const NEEDS_FOLD = /[A-Z]|[^\u0000-\u007f]/gu;

/** Folded text and, for every UTF-16 unit of it, the offset in `text` of the code point it came from. */
export function foldWithMap(text: string): { folded: string; origin: number[] } {
  let folded = '';
  const origin: number[] = [];
  let i = 0;
  for (const ch of text) {
    const f = foldChar(ch);
    folded += f;
    for (let k = 0; k < f.length; k++) origin.push(i);
    i += ch.length;
  }
  origin.push(i);
  return { folded, origin };
}

const CJK_RE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30fc\u3005]/u;
const WORD_RE = /[\p{L}\p{N}\p{M}]/u;

export function isCjk(ch: string): boolean {
  return CJK_RE.test(ch);
}
export function isWordChar(ch: string): boolean {
  return WORD_RE.test(ch);
}

export interface Run {
  text: string;
  cjk: boolean;
}

const WORD_RUN = /[\p{L}\p{N}\p{M}]+/gu;
const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30fc\u3005]+/gu;
// eslint-disable-next-line no-control-regex
const ASCII_ONLY = /^[\u0000-\u007f]*$/;

/** Runs of word characters in already-folded text, split where CJK and other scripts meet. */
export function runs(folded: string): Run[] {
  const out: Run[] = [];
  for (const m of folded.matchAll(WORD_RUN)) {
    const word = m[0];
    if (ASCII_ONLY.test(word)) {
      out.push({ text: word, cjk: false });
      continue;
    }
    let at = 0;
    for (const c of word.matchAll(CJK_RUN)) {
      if (c.index > at) out.push({ text: word.slice(at, c.index), cjk: false });
      out.push({ text: c[0], cjk: true });
      at = c.index + c[0].length;
    }
    if (at < word.length) out.push({ text: word.slice(at), cjk: false });
  }
  return out;
}

/** The lexemes a run is indexed as: itself, or for CJK its bigrams followed by its last character. */
export function runLexemes(run: Run): string[] {
  if (!run.cjk) return [run.text];
  const chars = Array.from(run.text);
  if (chars.length === 1) return chars;
  const out: string[] = [];
  for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
  out.push(chars[chars.length - 1]!);
  return out;
}

// --- tsvector ---------------------------------------------------------------------------------------

/** PostgreSQL limits: a position is at most 16383, a lexeme keeps at most 256 positions, is under 2 KiB. */
const MAX_POS = 16383;
const MAX_POSITIONS_PER_LEXEME = 256;
const MAX_LEXEME_BYTES = 2046;
/** A tsvector must stay under 1 MiB; stop adding new lexemes well before. */
const MAX_VECTOR_LEXEME_BYTES = 700_000;

type Weight = 'A' | 'B' | 'C' | 'D';

/**
 * A tsvector literal for the given fields (title A, tags B, body D), positions counted across
 * fields with a gap so a phrase never spans two fields. Also returns the distinct plain words (for
 * the fuzzy word table).
 */
export function buildVector(fields: Array<{ text: string; weight: Weight }>): { literal: string; words: Set<string> } {
  const lex = new Map<string, { pos: number[]; w: Weight[] }>();
  let pos = 0;
  let bytes = 0;
  for (const field of fields) {
    pos += 2;
    for (const run of runs(fold(field.text))) {
      for (const l of runLexemes(run)) {
        pos++;
        const p = Math.min(pos, MAX_POS);
        let entry = lex.get(l);
        if (!entry) {
          const b = Buffer.byteLength(l);
          if (b > MAX_LEXEME_BYTES || bytes + b > MAX_VECTOR_LEXEME_BYTES) continue;
          bytes += b + 8;
          entry = { pos: [], w: [] };
          lex.set(l, entry);
        }
        const last = entry.pos.length - 1;
        if (entry.pos.length >= MAX_POSITIONS_PER_LEXEME || (last >= 0 && entry.pos[last] === p)) continue;
        entry.pos.push(p);
        entry.w.push(field.weight);
      }
    }
  }
  const parts: string[] = [];
  for (const [l, e] of lex) {
    parts.push(`${quoteLexeme(l)}:${e.pos.map((p, i) => (e.w[i] === 'D' ? String(p) : `${p}${e.w[i]}`)).join(',')}`);
  }
  // Exactly the vector's own lexemes that pass isFuzzyWord, so the words of a stored vector can be
  // recomputed from it alone (CJK lexemes are 1-2 characters, never words).
  const words = new Set([...lex.keys()].filter(isFuzzyWord));
  return { literal: parts.join(' '), words };
}

/** Words worth keeping for typo tolerance: 3..64 characters with at least one letter. */
export function isFuzzyWord(w: string): boolean {
  if (w.length < 3 || w.length > 128) return false;
  const n = Array.from(w).length;
  return n >= 3 && n <= 64 && /\p{L}/u.test(w);
}

export function quoteLexeme(l: string): string {
  return `'${l.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}
