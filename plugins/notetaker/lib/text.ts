// Pure text helpers: characters (code points, the unit of every offset an agent sees), parts of a
// long text that fit a byte budget, and markdown headings and sections.

/** Length in characters (Unicode code points), the unit of `offset` and `length`. */
export function charLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

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

export interface Heading {
  level: number;
  text: string;
  /** 1-based line number. */
  line: number;
  /** Character offset of the heading line's first character. */
  offset: number;
}

// The same reading of markdown as the notes service (core/domain/notes/markdown.ts): ATX headings
// outside fenced code; a closing run of #s is not part of the text.
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/** The ATX headings (`# ...` to `###### ...`) of a markdown text, skipping fenced code. */
export function headings(body: string): Heading[] {
  const out: Heading[] = [];
  let fence: { ch: string; len: number } | null = null;
  let offset = 0;
  for (const [i, raw] of body.split('\n').entries()) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const at = offset;
    offset += charLength(raw) + 1;
    const f = FENCE.exec(line);
    if (fence) {
      if (f && f[1]![0] === fence.ch && f[1]!.length >= fence.len && f[2]!.trim() === '') fence = null;
      continue;
    }
    if (f && !(f[1]![0] === '`' && f[2]!.includes('`'))) {
      fence = { ch: f[1]![0]!, len: f[1]!.length };
      continue;
    }
    const h = HEADING.exec(line);
    if (h) out.push({ level: h[1]!.length, text: (h[2] ?? '').replace(/(^|[ \t]+)#+$/, '').trim(), line: i + 1, offset: at });
  }
  return out;
}

/** How a heading is compared: without leading #s, trimmed, case-insensitive. */
export function headingKey(s: string): string {
  return s
    .trim()
    .replace(/^#+[ \t]*/, '')
    .trim()
    .toLowerCase();
}

export interface Section {
  heading: Heading;
  /** Character range of the section: from its heading line to the next heading of the same or a higher level. */
  start: number;
  end: number;
}

/** The first section whose heading matches `name` (see headingKey). */
export function findSection(body: string, total: number, name: string): { section: Section | undefined; all: Heading[] } {
  const all = headings(body);
  const key = headingKey(name);
  const idx = all.findIndex((h) => h.text.toLowerCase() === key);
  if (idx < 0) return { section: undefined, all };
  const heading = all[idx]!;
  const after = all.slice(idx + 1).find((h) => h.level <= heading.level);
  return { section: { heading, start: heading.offset, end: after ? after.offset : total }, all };
}
