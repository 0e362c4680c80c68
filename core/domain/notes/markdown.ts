// The little Markdown the notes domain needs to understand: ATX headings (# ...) outside fenced code
// blocks, the section under a heading, and open action items (- [ ] ...). Setext headings
// (underlined with === or ---) are not sections: an underline is too easy to write by accident.
import { BadArguments } from '../../contract/errors.ts';

export interface Heading {
  /** Line index. */
  line: number;
  level: number;
  text: string;
}

const FENCE_RE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const HEADING_RE = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$/;

function stripCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

/** Calls `visit` for every line that is not inside a fenced code block (fence lines excluded). */
function eachLineOutsideFences(lines: string[], visit: (line: string, index: number) => void): void {
  let fence: { ch: string; len: number } | null = null;
  lines.forEach((raw, i) => {
    const line = stripCr(raw);
    const m = FENCE_RE.exec(line);
    if (fence) {
      if (m && m[1]![0] === fence.ch && m[1]!.length >= fence.len && m[2]!.trim() === '') fence = null;
      return;
    }
    if (m && !(m[1]![0] === '`' && m[2]!.includes('`'))) {
      fence = { ch: m[1]![0]!, len: m[1]!.length };
      return;
    }
    visit(line, i);
  });
}

export function headings(lines: string[]): Heading[] {
  const out: Heading[] = [];
  eachLineOutsideFences(lines, (line, i) => {
    const m = HEADING_RE.exec(line);
    if (!m) return;
    // A closing run of #s (after a space) is not part of the text.
    const text = (m[2] ?? '').replace(/(^|[ \t]+)#+$/, '').trim();
    out.push({ line: i, level: m[1]!.length, text });
  });
  return out;
}

/** How a caller names a heading: its text, any leading #s ignored, compared case-insensitively. */
export function normalizeHeadingName(name: string): string {
  return name
    .trim()
    .replace(/^#+[ \t]*/, '')
    .trim()
    .toLowerCase();
}

/** The heading and the line range [start, end) of its section; BadArguments when there is none. */
export function findSection(lines: string[], name: string): { heading: Heading; start: number; end: number } {
  const all = headings(lines);
  const wanted = normalizeHeadingName(name);
  const idx = all.findIndex((h) => h.text.toLowerCase() === wanted);
  const heading = all[idx];
  if (!heading) {
    const known = all.map((h) => `"${h.text}"`).slice(0, 20);
    throw new BadArguments(`the note has no heading "${name.trim()}"`, [
      {
        path: '/heading',
        message: `no heading "${name.trim()}" in the note; ${known.length ? `its headings are ${known.join(', ')}` : 'it has no headings'}`,
      },
    ]);
  }
  const next = all.slice(idx + 1).find((h) => h.level <= heading.level);
  return { heading, start: heading.line + 1, end: next ? next.line : lines.length };
}

function textLines(text: string): string[] {
  const trimmed = text.replace(/(\r?\n)+$/, '');
  return trimmed === '' ? [] : trimmed.split('\n');
}

const blank = (line: string | undefined) => line === undefined || line.trim() === '';

/** Text appended at the end of the note, on a line of its own. */
export function appendToBody(body: string, text: string): string {
  if (body === '') return text;
  return body.endsWith('\n') ? body + text : `${body}\n${text}`;
}

/** Text prepended at the start of the note, on a line of its own. */
export function prependToBody(body: string, text: string): string {
  if (body === '') return text;
  return text.endsWith('\n') ? text + body : `${text}\n${body}`;
}

/** Text added after the last non-blank line of the heading's section. */
export function appendUnderHeading(body: string, heading: string, text: string): string {
  const lines = body.split('\n');
  const { start, end } = findSection(lines, heading);
  let at = end;
  while (at > start && blank(lines[at - 1])) at--;
  lines.splice(at, 0, ...textLines(text));
  return lines.join('\n');
}

/** Text added at the top of the heading's section (after blank lines that follow the heading). */
export function prependUnderHeading(body: string, heading: string, text: string): string {
  const lines = body.split('\n');
  const { start, end } = findSection(lines, heading);
  let at = start;
  while (at < end && blank(lines[at])) at++;
  if (at === end) at = start;
  lines.splice(at, 0, ...textLines(text));
  return lines.join('\n');
}

/** The section's text (up to the next heading of the same or a higher level) replaced; the heading line stays. */
export function replaceUnderHeading(body: string, heading: string, text: string): string {
  const lines = body.split('\n');
  const { start, end } = findSection(lines, heading);
  const replacement = textLines(text);
  if (end < lines.length) replacement.push('');
  else if (body.endsWith('\n')) replacement.push('');
  lines.splice(start, end - start, ...replacement);
  return lines.join('\n');
}

const ACTION_RE = /^\s*(?:[-*+]|\d+[.)])\s+\[ \]\s+(\S.*)$/;
const MAX_ACTION_ITEMS = 200;
const MAX_ACTION_ITEM_CHARS = 500;

/** The text of each open action item (`- [ ] ...`) outside code blocks, in order. */
export function openActionItems(body: string): string[] {
  const out: string[] = [];
  eachLineOutsideFences(body.split('\n'), (line) => {
    if (out.length >= MAX_ACTION_ITEMS) return;
    const m = ACTION_RE.exec(line);
    if (m) out.push(Array.from(m[1]!.trim()).slice(0, MAX_ACTION_ITEM_CHARS).join(''));
  });
  return out;
}
