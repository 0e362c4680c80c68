// A resource's text cut into overlapping chunks for the index. Chunks are at most CHUNK_CHARS long
// (well under PostgreSQL's 16,383 word positions per vector, even for CJK text, where every
// character is a position), cut at white space where there is some, and each begins OVERLAP_CHARS
// before the previous one ended: a phrase shorter than the overlap is always whole in one chunk.
// Each chunk keeps where its parts begin (page, segment time, heading), to say where a match is.
import type { SearchDocument, SearchLocation } from '../../contract/search.ts';

export const CHUNK_CHARS = 6000;
export const OVERLAP_CHARS = 400;
/** How far back from the limit a cut looks for white space. */
const CUT_WINDOW = 400;

/** A location in force from `at` (an offset into the chunk's text). */
export type Mark = [at: number, where: SearchLocation];

export interface Chunk {
  text: string;
  marks: Mark[];
}

/** Moves an offset off the middle of a surrogate pair. */
function safe(text: string, i: number): number {
  const c = text.charCodeAt(i);
  return c >= 0xdc00 && c <= 0xdfff ? i - 1 : i;
}

/** The last white space in (from, to], as a cut point after it; `to` when there is none. */
function cutBefore(text: string, from: number, to: number): number {
  for (let i = to - 1; i > from; i--) if (/\s/.test(text[i]!)) return i + 1;
  return safe(text, to);
}

/** The first white space in [from, to), as a start point after it; `from` when there is none. */
function startAfter(text: string, from: number, to: number): number {
  for (let i = from; i < to; i++) if (/\s/.test(text[i]!)) return i + 1;
  return safe(text, from);
}

export function chunkDocument(parts: SearchDocument['parts']): Chunk[] {
  let text = '';
  const starts: Array<{ at: number; where: SearchLocation | undefined }> = [];
  for (const part of parts) {
    if (text.length > 0) text += '\n\n';
    starts.push({ at: text.length, where: part.where });
    text += part.text;
  }
  if (text.trim() === '') return [{ text: '', marks: [] }];
  const chunks: Chunk[] = [];
  let start = 0;
  for (;;) {
    let end = text.length;
    if (end - start > CHUNK_CHARS) end = cutBefore(text, start + CHUNK_CHARS - CUT_WINDOW, start + CHUNK_CHARS);
    const marks: Mark[] = [];
    // The location in force where the chunk starts, then each one that begins inside it.
    let current: SearchLocation | undefined;
    for (const s of starts) {
      if (s.at <= start) current = s.where;
      else if (s.at < end && s.where) marks.push([s.at - start, s.where]);
    }
    if (current) marks.unshift([0, current]);
    chunks.push({ text: text.slice(start, end), marks });
    if (end >= text.length) break;
    const next = startAfter(text, end - OVERLAP_CHARS, end);
    start = next > start ? next : end;
  }
  return chunks;
}

/** Where the text at `offset` of a chunk is: the last mark at or before it. */
export function locate(marks: Mark[], offset: number): SearchLocation | null {
  let found: SearchLocation | null = null;
  for (const [at, where] of marks) {
    if (at > offset) break;
    found = where;
  }
  return found;
}
