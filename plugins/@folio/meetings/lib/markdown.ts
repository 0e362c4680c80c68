// What a meeting note says, read from its markdown: decisions, headlines and the meeting's date.
// Lines, headings and action items come from folio/sdk, read exactly the way the notes service
// reads them (ATX headings and action items outside fenced code blocks).
import { headings, linesOutsideFences, parseActionItem, type Heading } from 'folio/sdk';

/** Strips a list marker and a task box from the start of a line (decisions and headlines are shown without them). */
const BULLET_RE = /^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ \txX]\][ \t]+)?/;

export function clip(s: string, max: number): string {
  const cps = Array.from(s);
  return cps.length <= max ? s : `${cps.slice(0, max - 1).join('')}…`;
}

const isItem = (text: string) => parseActionItem(text) !== null;

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
    else if (inDecisions && text.trim() !== '' && !isItem(text)) decisions.push(clip(text.replace(BULLET_RE, '').trim(), 200));
  }
  if (headlines.length === 0) {
    // No headings: the first line of prose says what the meeting was about.
    const first = lines.find(({ text }) => text.trim() !== '' && !isItem(text) && !DECISION_LINE.test(text) && !/^\s*---\s*$/.test(text));
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
