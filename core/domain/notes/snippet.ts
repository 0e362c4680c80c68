// Plain-text snippets with the matched words wrapped in « ». Built here, not with ts_headline: the
// index holds folded lexemes and CJK bigrams, which ts_headline cannot map back to the original text.
import { foldWithMap, isWordChar } from './text.ts';

const BEFORE = 60;
const LENGTH = 220;

interface Span {
  start: number;
  end: number;
}

/**
 * Where the terms occur in `text` (offsets into the original text), sorted, not overlapping.
 * `near`: only the first match and those starting less than `near` characters after it (what a
 * snippet can show), so a long text full of a common word is not walked to its end.
 */
export function findMatches(text: string, terms: Array<{ text: string; cjk: boolean }>, opts: { near?: number } = {}): Span[] {
  if (terms.length === 0 || text.length === 0) return [];
  const { folded, origin } = foldWithMap(text);
  // A whole-word match of `term` at or after `from` in the folded text; -1 when none.
  const next = (term: { text: string; cjk: boolean }, from: number): number => {
    for (;;) {
      const at = folded.indexOf(term.text, from);
      if (at === -1) return -1;
      // A word matches whole words only (the index matches whole lexemes); CJK matches anywhere.
      if (term.cjk || (!boundaryFails(folded, at - 1) && !boundaryFails(folded, at + term.text.length))) return at;
      from = at + term.text.length;
    }
  };
  let until = Infinity;
  if (opts.near !== undefined) {
    let first = Infinity;
    for (const term of terms) {
      if (!term.text) continue;
      const at = next(term, 0);
      if (at !== -1) first = Math.min(first, origin[at]!);
    }
    if (first === Infinity) return [];
    until = first + opts.near;
  }
  const spans: Span[] = [];
  for (const term of terms) {
    if (!term.text) continue;
    for (let from = 0; ;) {
      const at = next(term, from);
      if (at === -1 || origin[at]! >= until) break;
      from = at + term.text.length;
      spans.push({ start: origin[at]!, end: origin[from]! });
      if (spans.length > 200) break;
    }
  }
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const merged: Span[] = [];
  for (const s of spans) {
    const last = merged[merged.length - 1];
    if (last && s.start <= last.end) last.end = Math.max(last.end, s.end);
    else merged.push({ ...s });
  }
  return merged;
}

function boundaryFails(folded: string, i: number): boolean {
  if (i < 0 || i >= folded.length) return false;
  const code = folded.codePointAt(i)!;
  // A low surrogate: look at the whole code point it ends.
  const ch = code >= 0xdc00 && code <= 0xdfff && i > 0 ? String.fromCodePoint(folded.codePointAt(i - 1)!) : String.fromCodePoint(code);
  return isWordChar(ch);
}

/**
 * A window of `text` around its first match with every match in it marked; null when no term
 * occurs. Whitespace is collapsed; an ellipsis shows where the text was cut.
 */
export function snippetAround(text: string, terms: Array<{ text: string; cjk: boolean }>): string | null {
  return snippetAt(text, findMatches(text, terms, { near: SNIPPET_REACH }));
}

/** How far after its first match a snippet can reach (findMatches `near` for snippets). */
export const SNIPPET_REACH = LENGTH;

/**
 * snippetAround with the matches already found (findMatches of the same text, with `near` at least
 * SNIPPET_REACH): they are not looked for twice.
 */
export function snippetAt(text: string, spans: readonly Span[]): string | null {
  const first = spans[0];
  if (!first) return null;
  let start = Math.max(0, first.start - BEFORE);
  if (start > 0) {
    const ws = text.slice(start, first.start).search(/\s/);
    if (ws !== -1) start += ws + 1;
  }
  let end = Math.min(text.length, start + LENGTH);
  if (end < text.length) {
    const lastWs = text.slice(first.end, end).search(/\s\S*$/);
    if (lastWs > 0) end = first.end + lastWs;
  }
  // Never cut a match in two.
  for (const s of spans) if (s.start < end && s.end > end) end = s.end;
  start = safeBoundary(text, start);
  end = safeBoundary(text, end);
  let out = '';
  let at = start;
  for (const s of spans) {
    if (s.end <= start || s.start >= end) continue;
    out += text.slice(at, Math.max(at, s.start)) + '«' + text.slice(Math.max(at, s.start), s.end) + '»';
    at = s.end;
  }
  out += text.slice(at, end);
  return (start > 0 ? '…' : '') + collapse(out) + (end < text.length ? '…' : '');
}

/** How much of a long text one look for a match reads (windows overlap by SNIPPET_OVERLAP). */
export const SNIPPET_WINDOW = 20_000;
const SNIPPET_OVERLAP = 400;

/**
 * snippetAround over a text of any length, read in windows (folding a whole 1 MiB note at once
 * would cost more than the query): the window holding the first match gives the snippet.
 */
export function snippetDeep(text: string, terms: Array<{ text: string; cjk: boolean }>): string | null {
  for (let start = 0; start < text.length; start += SNIPPET_WINDOW - SNIPPET_OVERLAP) {
    const from = safeBoundary(text, start);
    const to = safeBoundary(text, Math.min(text.length, from + SNIPPET_WINDOW));
    const found = snippetAround(text.slice(from, to), terms);
    if (found !== null) {
      const head = from > 0 && !found.startsWith('…') ? '…' : '';
      const tail = to < text.length && !found.endsWith('…') ? '…' : '';
      return head + found + tail;
    }
    if (to >= text.length) break;
  }
  return null;
}

/** The beginning of the text, as a plain one-line excerpt. */
export function excerpt(text: string, max = 200): string {
  const head = collapse(text.slice(0, max * 4));
  const chars = Array.from(head);
  return chars.length <= max ? head : chars.slice(0, max).join('').trimEnd() + '…';
}

function collapse(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/** Moves an offset off the middle of a surrogate pair. */
function safeBoundary(text: string, i: number): number {
  const c = text.charCodeAt(i);
  return c >= 0xdc00 && c <= 0xdfff ? i - 1 : i;
}
