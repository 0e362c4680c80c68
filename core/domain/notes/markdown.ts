// The little Markdown the notes domain needs to understand: ATX headings (# ...) outside fenced code
// blocks, the section under a heading, and open action items (- [ ] ...). Setext headings
// (underlined with === or ---) are not sections: an underline is too easy to write by accident.
import { BadArguments } from '../../contract/errors.ts';

// One implementation for the whole server: the notes service, the REST surface and the plugins
// (through folio/sdk, core/sdk/index.ts) read notes with this module, and it holds the tag rule too.
// Pure: no I/O and no state; its one import is the error class the section edits throw.
//
// Whitespace is read as CommonMark and GFM read it:
//   - lines end at \n; a \r before it is part of the line ending (CRLF), never of the line;
//   - a byte order mark (U+FEFF) at the very start of the body is not part of the first line;
//   - indentation and the space around markers are spaces and tabs only: a no-break space,
//     an ideographic space (U+3000), \v or \f is text;
//   - a heading or a fence is indented by 0 to 3 spaces (a tab indents 4 columns: code, not a heading);
//   - a task box is [ ], [x] or [X], or [\t] (GFM: a whitespace character inside means open);
//     spaces or tabs must separate the list marker, the box and the item's text.
// Line numbers are 1-based; character offsets count Unicode code points (what an agent sees).

// ---- characters and lines ---------------------------------------------------------------------

/** Length in characters (Unicode code points). */
export function charLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** A body, or the body already split at '\n'. */
export type MarkdownSource = string | readonly string[];

export interface SourceLine {
  /** 1-based line number. */
  line: number;
  /** The line without its line ending (\n or \r\n), and for line 1 without a byte order mark. */
  text: string;
  /** Character offset in the body where the line starts. */
  offset: number;
}

const FENCE_RE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const BLANK_RE = /^[ \t]*$/;

function splitLines(source: MarkdownSource): readonly string[] {
  return typeof source === 'string' ? source.split('\n') : source;
}

/** Every line, with whether it belongs to a fenced code block (fence lines included), and the body's length in characters. */
function scan(source: MarkdownSource): { lines: Array<SourceLine & { code: boolean }>; chars: number } {
  const out: Array<SourceLine & { code: boolean }> = [];
  let fence: { ch: string; len: number } | null = null;
  let offset = 0;
  splitLines(source).forEach((raw, i) => {
    let text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (i === 0 && text.startsWith('\uFEFF')) text = text.slice(1);
    const at = offset;
    offset += charLength(raw) + 1;
    const m = FENCE_RE.exec(text);
    if (fence) {
      // Closed by a fence of the same character, at least as long, followed only by spaces or tabs.
      if (m && m[1]![0] === fence.ch && m[1]!.length >= fence.len && BLANK_RE.test(m[2]!)) fence = null;
      out.push({ line: i + 1, text, offset: at, code: true });
      return;
    }
    // A backtick fence's info string may not contain a backtick (that is inline code).
    if (m && !(m[1]![0] === '`' && m[2]!.includes('`'))) {
      fence = { ch: m[1]![0]!, len: m[1]!.length };
      out.push({ line: i + 1, text, offset: at, code: true });
      return;
    }
    out.push({ line: i + 1, text, offset: at, code: false });
  });
  return { lines: out, chars: Math.max(0, offset - 1) };
}

/** Each line outside fenced code blocks (fence lines excluded), in order. */
export function linesOutsideFences(source: MarkdownSource): SourceLine[] {
  return scan(source)
    .lines.filter((l) => !l.code)
    .map(({ line, text, offset }) => ({ line, text, offset }));
}

// ---- headings and sections --------------------------------------------------------------------

export interface Heading {
  /** 1-based line number of the heading line. */
  line: number;
  /** 1 to 6: the number of #s. */
  level: number;
  /** The heading's text: without the #s, a closing run of #s, or the spaces and tabs around it. */
  text: string;
  /** Character offset of the heading line's first character. */
  offset: number;
}

const HEADING_RE = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$/;

/** The heading a line of text is, or null. */
export function parseHeading(line: string): { level: number; text: string } | null {
  const m = HEADING_RE.exec(line);
  if (!m) return null;
  // A closing run of #s (after a space or tab, or making up the whole text) is not part of the text.
  const text = (m[2] ?? '').replace(/(^|[ \t]+)#+$/, '').replace(/^[ \t]+|[ \t]+$/g, '');
  return { level: m[1]!.length, text };
}

function headingsOf(lines: SourceLine[]): Heading[] {
  const out: Heading[] = [];
  for (const l of lines) {
    const h = parseHeading(l.text);
    if (h) out.push({ line: l.line, level: h.level, text: h.text, offset: l.offset });
  }
  return out;
}

/** The ATX headings (`# ...` to `###### ...`) outside fenced code blocks, in order. */
export function headings(source: MarkdownSource): Heading[] {
  return headingsOf(linesOutsideFences(source));
}

/**
 * How a caller names a heading, and how headings are compared: trimmed, any leading #s dropped,
 * lowercased. Lenient on purpose ("## Decisions ", "decisions" and "Decisions" are one name).
 */
export function headingKey(name: string): string {
  return name
    .trim()
    .replace(/^#+[ \t]*/, '')
    .trim()
    .toLowerCase();
}

export interface Section {
  heading: Heading;
  /**
   * The lines under the heading line, 1-based and half-open: [firstLine, endLine). endLine is the
   * line of the next heading of the same or a higher level, or one past the last line.
   */
  firstLine: number;
  endLine: number;
  /**
   * Characters of the section, half-open: [start, end), from the heading line's first character
   * to the next heading of the same or a higher level, or the end of the body.
   */
  start: number;
  end: number;
}

/** The section of the first heading whose key is `name`'s key (see headingKey), or undefined. */
export function findSection(source: MarkdownSource, name: string): Section | undefined {
  const { lines, chars } = scan(source);
  const all = headingsOf(lines.filter((l) => !l.code));
  const key = headingKey(name);
  const idx = all.findIndex((h) => headingKey(h.text) === key);
  const heading = all[idx];
  if (!heading) return undefined;
  const next = all.slice(idx + 1).find((h) => h.level <= heading.level);
  return {
    heading,
    firstLine: heading.line + 1,
    endLine: next ? next.line : lines.length + 1,
    start: heading.offset,
    end: next ? next.offset : chars,
  };
}

// ---- action items -----------------------------------------------------------------------------

export interface ActionItem {
  /** 1-based line number. */
  line: number;
  /** The item's text, without the marker and the box. */
  text: string;
  /** [x] or [X]. */
  done: boolean;
}

/** A list marker (- * + or 1 to 9 digits and . or )), a task box, and text, each apart by spaces or tabs. */
const ITEM_RE = /^([ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\[)([ \txX])\][ \t]+([^ \t].*)$/;

/** The action item (task-list item) a line of text is, or null. */
export function parseActionItem(line: string): { text: string; done: boolean } | null {
  const m = ITEM_RE.exec(line);
  if (!m) return null;
  return { text: m[3]!.replace(/[ \t]+$/, ''), done: m[2] === 'x' || m[2] === 'X' };
}

/** Every action item (`- [ ] ...`, `* [x] ...`, `1. [ ] ...`) outside fenced code blocks, in order. */
export function actionItems(source: MarkdownSource): ActionItem[] {
  const out: ActionItem[] = [];
  for (const { line, text } of linesOutsideFences(source)) {
    const item = parseActionItem(text);
    if (item) out.push({ line, ...item });
  }
  return out;
}

/** The action items not yet done. */
export function openItems(source: MarkdownSource): ActionItem[] {
  return actionItems(source).filter((i) => !i.done);
}

/**
 * The body with the open item on `line` checked: only the character inside its box changes
 * (`[ ]` -> `[x]`), the rest of the line and its line ending stay. Null when that line is not an
 * open action item.
 */
export function checkItem(body: string, line: number): string | null {
  const found = linesOutsideFences(body).find((l) => l.line === line);
  const m = found ? ITEM_RE.exec(found.text) : null;
  if (!m || m[2] === 'x' || m[2] === 'X') return null;
  const lines = body.split('\n');
  const raw = lines[line - 1]!;
  // Where the box's character is in the raw line: after a byte order mark that line 1 may start with.
  const at = raw.length - (raw.endsWith('\r') ? 1 : 0) - found!.text.length + m[1]!.length;
  lines[line - 1] = `${raw.slice(0, at)}x${raw.slice(at + 1)}`;
  return lines.join('\n');
}

const MAX_ACTION_ITEMS = 200;
const MAX_ACTION_ITEM_CHARS = 500;

/** What the notes service stores of a body's open items: the first 200, each cut to 500 characters. */
export function openActionItems(body: string): string[] {
  return openItems(body)
    .slice(0, MAX_ACTION_ITEMS)
    .map((i) => Array.from(i.text).slice(0, MAX_ACTION_ITEM_CHARS).join(''));
}

// ---- tags -------------------------------------------------------------------------------------

/** A stored tag: 1 to 64 letters, digits, _ - / . starting with a letter or digit (JSON Schema / RegExp source, `u` flag). */
export const TAG_PATTERN = '^[\\p{L}\\p{N}][\\p{L}\\p{N}_\\-/.]{0,63}$';
/** A tag as a caller may send it: what normalizeTag turns into a stored tag (spaces around it, any case). */
export const TAG_INPUT_PATTERN = `^\\s*${TAG_PATTERN.slice(1, -1)}\\s*$`;
export const TAG_RE = new RegExp(TAG_PATTERN, 'u');
/** The rule in words, for messages and descriptions. */
export const TAG_RULE = '1 to 64 letters, digits, _ - / . starting with a letter or digit';

/** The stored form of a tag: trimmed and lowercased. Tags compare by this form. */
export function normalizeTag(raw: string): string {
  return raw.trim().toLowerCase();
}

/** Whether `raw` is a tag once normalized. */
export function isTag(raw: string): boolean {
  return TAG_RE.test(normalizeTag(raw));
}

// ---- section edits (the notes service's append, prepend and replace_section) --------------------

/** The section named `name`; BadArguments naming the note's headings when there is none. */
function sectionOrFail(lines: readonly string[], name: string): { start: number; end: number } {
  const section = findSection(lines, name);
  if (!section) {
    const known = headings(lines)
      .map((h) => `"${h.text}"`)
      .slice(0, 20);
    throw new BadArguments(`the note has no heading "${name.trim()}"`, [
      {
        path: 'heading',
        message: `no heading "${name.trim()}" in the note; ${known.length ? `its headings are ${known.join(', ')}` : 'it has no headings'}`,
      },
    ]);
  }
  // As indexes into `lines`: [start, end).
  return { start: section.firstLine - 1, end: section.endLine - 1 };
}

function textLines(text: string): string[] {
  const trimmed = text.replace(/(\r?\n)+$/, '');
  return trimmed === '' ? [] : trimmed.split('\n');
}

/** Blank as CommonMark means it: nothing but spaces and tabs (and the \r of a CRLF). */
const blank = (line: string | undefined) => line === undefined || /^[ \t]*\r?$/.test(line);

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
  const { start, end } = sectionOrFail(lines, heading);
  let at = end;
  while (at > start && blank(lines[at - 1])) at--;
  lines.splice(at, 0, ...textLines(text));
  return lines.join('\n');
}

/** Text added at the top of the heading's section (after blank lines that follow the heading). */
export function prependUnderHeading(body: string, heading: string, text: string): string {
  const lines = body.split('\n');
  const { start, end } = sectionOrFail(lines, heading);
  let at = start;
  while (at < end && blank(lines[at])) at++;
  if (at === end) at = start;
  lines.splice(at, 0, ...textLines(text));
  return lines.join('\n');
}

/** The section's text (up to the next heading of the same or a higher level) replaced; the heading line stays. */
export function replaceUnderHeading(body: string, heading: string, text: string): string {
  const lines = body.split('\n');
  const { start, end } = sectionOrFail(lines, heading);
  const replacement = textLines(text);
  if (end < lines.length) replacement.push('');
  else if (body.endsWith('\n')) replacement.push('');
  lines.splice(start, end - start, ...replacement);
  return lines.join('\n');
}
