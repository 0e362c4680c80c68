// Pure text helpers: characters (code points, the unit of every offset an agent sees) and parts of
// a long text that fit a byte budget. Markdown (headings, sections) is read with folio/sdk, the
// way the notes service reads it.
import { charLength } from 'folio/sdk';

/** UTF-16 index of the code point at character offset `chars` (clamped to the end). */
function unitIndex(s: string, chars: number): number {
  let i = 0;
  let n = 0;
  while (i < s.length && n < chars) {
    const c = s.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < s.length ? 2 : 1;
    n++;
  }
  return i;
}

/** Characters [start, end) of `s`, by code point. */
export function sliceChars(s: string, start: number, end?: number): string {
  const a = unitIndex(s, start);
  if (end === undefined) return s.slice(a);
  return s.slice(a, a + unitIndex(s.slice(a), end - start));
}

/** At most `max` characters, with an ellipsis when cut. */
export function clip(s: string, max: number): string {
  if (s.length <= max) return s;
  return charLength(s) <= max ? s : `${sliceChars(s, 0, max - 1)}…`;
}

/** Bytes this string takes inside a JSON answer (quotes and escapes included). */
export function jsonBytes(v: unknown): number {
  return Buffer.byteLength(JSON.stringify(v) ?? 'null', 'utf8');
}

export interface Part {
  text: string;
  /** Character offset of the part in the whole text. */
  offset: number;
  /** Characters in this part. */
  chars: number;
  /** Characters in the whole text. */
  total: number;
  /** Where the next part starts, or null when this part reaches the end. */
  next: number | null;
}

/**
 * Characters [offset, offset + length) of `text`, shortened so that the part takes at most
 * `byteBudget` bytes as a JSON string, and, when it does not reach the end, ending after the
 * last line break in its final quarter so that parts break between lines where they can.
 */
export function takePart(text: string, total: number, offset: number, length: number, byteBudget: number): Part {
  const rest = sliceChars(text, offset, Math.min(total, offset + length));
  let cps = Array.from(rest);
  if (jsonBytes(rest) > byteBudget) {
    // The largest prefix that fits: binary search on the character count.
    let lo = 0;
    let hi = cps.length;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (jsonBytes(cps.slice(0, mid).join('')) <= byteBudget) lo = mid;
      else hi = mid - 1;
    }
    cps = cps.slice(0, Math.max(lo, 1));
  }
  if (offset + cps.length < total && cps.length > 8) {
    const floor = Math.floor(cps.length * 0.75);
    for (let i = cps.length - 1; i >= floor; i--) {
      if (cps[i] === '\n') {
        cps = cps.slice(0, i + 1);
        break;
      }
    }
  }
  const end = offset + cps.length;
  return { text: cps.join(''), offset, chars: cps.length, total, next: end < total ? end : null };
}
