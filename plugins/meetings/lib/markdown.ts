// What a meeting note says, read from its markdown: open action items with their line numbers,
// decisions, headlines and the meeting's date. Reads markdown the way the notes service does
// (ATX headings and action items outside fenced code blocks).

export interface Item {
  /** 1-based line number in the note's body. */
  line: number;
  text: string;
  done: boolean;
}

export interface Heading {
  line: number;
  level: number;
  text: string;
}

const FENCE_RE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const HEADING_RE = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$/;
/** `- [ ] text`, `* [x] text`, `1. [ ] text`: the same items the notes service counts as open. */
const ITEM_RE = /^(\s*(?:[-*+]|\d+[.)])\s+)\[([ xX])\]\s+(\S.*)$/;
const BULLET_RE = /^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?/;

export function clip(s: string, max: number): string {
  const cps = Array.from(s);
  return cps.length <= max ? s : `${cps.slice(0, max - 1).join('')}…`;
}

/** Each line outside fenced code blocks (fence lines excluded), without a trailing \r, with its 1-based number. */
export function linesOutsideFences(body: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  let fence: { ch: string; len: number } | null = null;
  body.split('\n').forEach((raw, i) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const m = FENCE_RE.exec(line);
    if (fence) {
      if (m && m[1]![0] === fence.ch && m[1]!.length >= fence.len && m[2]!.trim() === '') fence = null;
      return;
    }
    if (m && !(m[1]![0] === '`' && m[2]!.includes('`'))) {
      fence = { ch: m[1]![0]!, len: m[1]!.length };
      return;
    }
    out.push({ line: i + 1, text: line });
  });
  return out;
}

export function items(body: string): Item[] {
  const out: Item[] = [];
  for (const { line, text } of linesOutsideFences(body)) {
    const m = ITEM_RE.exec(text);
    if (m) out.push({ line, text: m[3]!.trim(), done: m[2] !== ' ' });
  }
  return out;
}

export function openItems(body: string): Item[] {
  return items(body).filter((i) => !i.done);
}

/** The body with the open item on `line` checked (`[ ]` -> `[x]`); null when that line is not an open item. */
export function checkItem(body: string, line: number): string | null {
  const lines = body.split('\n');
  const raw = lines[line - 1];
  if (raw === undefined) return null;
  if (!openItems(body).some((i) => i.line === line)) return null;
  lines[line - 1] = raw.replace(ITEM_RE, (_all, lead: string, _mark: string, rest: string) => `${lead}[x] ${rest}`);
  return lines.join('\n');
}

export function headings(body: string): Heading[] {
  const out: Heading[] = [];
  for (const { line, text } of linesOutsideFences(body)) {
    const m = HEADING_RE.exec(text);
    if (m) out.push({ line, level: m[1]!.length, text: (m[2] ?? '').replace(/(^|[ \t]+)#+$/, '').trim() });
  }
  return out;
}

const DECISION_HEADING = /\b(decisions?|decided|outcomes?|resolutions?|agreed|agreements?)\b/i;
const ITEMS_HEADING = /\b(action items?|actions|to-?dos?|tasks|next steps|follow-?ups?)\b/i;
const DECISION_LINE = /^\s*(?:[-*+]\s+)?(?:\*\*|__)?(?:decision|decided|agreed)(?:\*\*|__)?\s*[:：](?:\*\*|__)?\s*(\S.*)$/i;

export interface MeetingSummary {
  decisions: string[];
  headlines: string[];
}

/** Decisions (items under a "Decisions" heading, or "Decision: ..." lines) and headlines (the other headings). */
export function summarize(body: string, title: string, max = 6): MeetingSummary {
  const lines = linesOutsideFences(body);
  const hs = headings(body);
  const decisions: string[] = [];
  const headlines: string[] = [];
  const byLine = new Map(hs.map((h) => [h.line, h]));
  let inDecisions: Heading | null = null;
  for (const { line, text } of lines) {
    const h = byLine.get(line);
    if (h) {
      if (inDecisions && h.level <= inDecisions.level) inDecisions = null;
      if (DECISION_HEADING.test(h.text)) inDecisions = h;
      else if (!ITEMS_HEADING.test(h.text) && h.text !== '' && h.text.toLowerCase() !== title.trim().toLowerCase())
        headlines.push(clip(h.text, 120));
      continue;
    }
    const d = DECISION_LINE.exec(text);
    if (d) decisions.push(clip(d[1]!.trim(), 200));
    else if (inDecisions && text.trim() !== '' && !ITEM_RE.test(text)) decisions.push(clip(text.replace(BULLET_RE, '').trim(), 200));
  }
  if (headlines.length === 0) {
    // No headings: the first line of prose says what the meeting was about.
    const first = lines.find(
      ({ text }) => text.trim() !== '' && !ITEM_RE.test(text) && !DECISION_LINE.test(text) && !/^\s*---\s*$/.test(text),
    );
    if (first)
      headlines.push(
        clip(
          first.text
            .replace(BULLET_RE, '')
            .replace(/^\s*>\s*/, '')
            .trim(),
          160,
        ),
      );
  }
  return { decisions: decisions.slice(0, max), headlines: headlines.slice(0, max) };
}

const ISO_DAY = /\b(\d{4}-\d{2}-\d{2})\b/;

function validDay(s: string | undefined): string | undefined {
  if (!s) return undefined;
  const d = new Date(`${s}T00:00:00Z`);
  return Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== s ? undefined : s;
}

/**
 * The day of the meeting (YYYY-MM-DD): a `date:` line near the top (front matter, or "Date: ..."),
 * else a date in the title, else the day the note was created.
 */
export function meetingDate(title: string, body: string, createdAt: string): string {
  for (const raw of body.split('\n', 15)) {
    const m = /^\s*(?:[-*+]\s+)?(?:\*\*|__)?date(?:\*\*|__)?\s*[:：]\s*(?:\*\*|__)?\s*(\d{4}-\d{2}-\d{2})/i.exec(raw);
    const day = validDay(m?.[1]);
    if (day) return day;
  }
  return validDay(ISO_DAY.exec(title)?.[1]) ?? createdAt.slice(0, 10);
}
