// Prompts: ready-made requests a user picks in an MCP client (often as slash commands). Each
// renders the user message that starts the work; the model then uses the tools as usual.
import type { PromptDefinition } from 'folio/sdk';

const day = (d: Date) => d.toISOString().slice(0, 10);

function positiveDays(raw: string | undefined, fallback: number): number {
  const n = raw === undefined || raw.trim() === '' ? fallback : Number(raw);
  return Number.isInteger(n) && n >= 1 && n <= 366 ? n : fallback;
}

export const summarize_week: PromptDefinition = {
  title: "Summarize my week's notes",
  description: 'Summarize the notes you wrote or changed recently: topics, decisions, open questions and to-dos.',
  arguments: [
    { name: 'days', description: 'How many days back (default 7).', values: ['1', '7', '14', '30'] },
    { name: 'tag', description: 'Only notes with this tag, e.g. meeting.', suggest: 'tags' },
  ],
  render: (args, ctx) => {
    const days = positiveDays(args.days, 7);
    const since = day(new Date(Date.now() - days * 86_400_000));
    const tag = args.tag?.trim();
    const filter = { from: since, ...(tag ? { tags: [tag] } : {}) };
    return [
      `Summarize my notes from the last ${days} days (updated since ${since})${tag ? `, only those tagged ${tag}` : ''}.`,
      '',
      `1. Get them in one piece with ${ctx.ref('notetaker.generate_report', { ...filter, group_by: 'day' })}. ` +
        `If that is refused as too big, list them with ${ctx.ref('notetaker.list', tag ? { tags: [tag] } : {})} (most recent first; stop at notes updated before ${since}) and read the ones that matter with ${ctx.ref('notetaker.get')}.`,
      '2. Then give me, citing each note by its title:',
      '   - the main topics, in a few lines each;',
      '   - decisions made;',
      '   - open questions;',
      '   - to-dos (unchecked "- [ ]" items first).',
      'Keep it short, and say so if a week was empty.',
    ].join('\n');
  },
};

export const prepare_meeting: PromptDefinition = {
  title: 'Prepare meeting notes',
  description: 'Draft the note for an upcoming meeting from what your notes already say about its topic.',
  arguments: [
    { name: 'topic', description: 'What the meeting is about.', required: true },
    { name: 'attendees', description: 'Who will be there, comma-separated.' },
  ],
  render: (args, ctx) => {
    const topic = args.topic!.trim();
    const keepsMeetings = (ctx.caller.notes.tags['meeting'] ?? 0) > 0;
    return [
      `Help me prepare a meeting about: ${topic}.${args.attendees ? ` Attendees: ${args.attendees}.` : ''}`,
      '',
      `1. Find what my notes say about it: ${ctx.ref('notetaker.search', { q: topic })}` +
        (keepsMeetings ? `, and earlier meetings on it: ${ctx.ref('notetaker.search', { q: topic, tags: ['meeting'] })}.` : '.') +
        ` Read the most relevant hits with ${ctx.ref('notetaker.get')}.`,
      ...(keepsMeetings
        ? [`2. List open action items from earlier meetings with ${ctx.ref('meetings.action_items')}; keep those on this topic.`]
        : []),
      `${keepsMeetings ? 3 : 2}. Draft the meeting note in Markdown: a title with today's date, the attendees, an agenda, the open items carried over as "- [ ]" lines, and empty Notes and Decisions sections.`,
      `${keepsMeetings ? 4 : 3}. Show me the draft. Once I agree, save it with ${ctx.ref('notetaker.create', { title: '...', body: '...', tags: ['meeting'] })}.`,
    ].join('\n');
  },
};
