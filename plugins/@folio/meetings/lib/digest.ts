// meetings.digest: a compact markdown digest of the meetings since a date.
import { Type } from 'typebox';
import { BadArguments, defineFunction, openItems, type Context, type Note } from 'folio/sdk';
import { clip, meetingDate, summarize } from './markdown.ts';
import { decode, encode, scan } from './scan.ts';
import { Cursor, DateArg, READ } from './schemas.ts';

const BUDGET = 40_000;
const DAY_MS = 86_400_000;

const DigestArgs = Type.Object({
  since: Type.Optional(DateArg('Meetings on or after this day (ISO 8601, e.g. 2026-11-01). Default: 7 days ago.')),
  until: Type.Optional(DateArg('Meetings on or before this day (ISO 8601). Default: no end.')),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 20, description: 'Meetings per answer, at most 50.' })),
  cursor: Type.Optional(Cursor),
});

interface Entry {
  date: string;
  text: string;
}

function entry(note: Note, date: string, ref: Context['ref']): Entry {
  const { decisions, headlines } = summarize(note.body, note.title);
  const open = openItems(note.body);
  const out = [`## ${date} · ${clip(note.title, 150)}`, `note ${note.id} · version ${note.version}`];
  if (decisions.length > 0) out.push('', '**Decisions**', ...decisions.map((d) => `- ${d}`));
  if (headlines.length > 0) out.push('', `**Headlines:** ${headlines.join(' · ')}`);
  if (open.length > 0) {
    out.push('', `**Open items (${open.length})**`, ...open.slice(0, 8).map((i) => `- [ ] ${clip(i.text, 200)} (line ${i.line})`));
    if (open.length > 8) out.push(`- … ${open.length - 8} more: ${ref('meetings.action_items', { note_id: note.id })}`);
  } else out.push('', '**Open items:** none');
  return { date, text: out.join('\n') };
}

export const digest = defineFunction({
  title: 'Digest of recent meetings',
  annotations: { readOnlyHint: true, openWorldHint: false },
  description:
    'A compact markdown digest of your meetings since a date (default: the last 7 days): per meeting its date, title, note id and version, decisions, headlines and open action items. ' +
    "A meeting is a note tagged meeting; its date is a 'Date: YYYY-MM-DD' line near the top, else a date in the title, else the day the note was created. " +
    'Only notes updated on or after since are looked at. When the digest ends with a cursor, call again with the same since/until and that cursor for more.',
  args: DigestArgs,
  returns: Type.String({ description: 'markdown: newest meetings first within each answer' }),
  examples: [
    { args: {}, description: 'the last 7 days' },
    { args: { since: '2026-11-01', until: '2026-11-30' }, description: 'one month' },
  ],
  requires: READ,
  handler: async (args, ctx) => {
    const sinceDay = args.since?.slice(0, 10) ?? new Date(Date.now() - 7 * DAY_MS).toISOString().slice(0, 10);
    const untilDay = args.until?.slice(0, 10);
    if (untilDay !== undefined && untilDay < sinceDay)
      throw new BadArguments('until is before since', [{ path: 'until', message: `must be on or after ${sinceDay}` }]);
    const limit = args.limit ?? 20;
    const entries: Entry[] = [];
    let size = 0;
    const { next, scanned } = await scan(
      ctx,
      decode(args.cursor),
      ({ note }) => {
        const date = meetingDate(note.title, note.body, note.created_at);
        if (date < sinceDay || (untilDay !== undefined && date > untilDay)) return 'next';
        const e = entry(note, date, ctx.ref);
        const bytes = Buffer.byteLength(e.text) + 2;
        if (entries.length > 0 && size + bytes > BUDGET) return 'stop_before';
        entries.push(e);
        size += bytes;
        return entries.length >= limit ? 'stop' : 'next';
      },
      { stopBefore: `${sinceDay}T00:00:00.000Z` },
    );
    entries.sort((a, b) => (a.date < b.date ? 1 : a.date > b.date ? -1 : 0));
    const range = untilDay ? `from ${sinceDay} to ${untilDay}` : `since ${sinceDay}`;
    const out = [`# Meetings ${range}: ${entries.length}${next ? ' in this part' : ''}`, ''];
    if (entries.length === 0) out.push(next ? `None in the ${scanned} notes looked at so far.` : 'No meeting notes in this range.', '');
    for (const e of entries) out.push(e.text, '');
    if (next) {
      const again = {
        ...(args.since ? { since: args.since } : { since: sinceDay }),
        ...(args.until ? { until: args.until } : {}),
        cursor: encode(next),
      };
      out.push('---', `More meetings: ${ctx.ref('meetings.digest', again)}`);
    }
    return out.join('\n').trimEnd() + '\n';
  },
});
