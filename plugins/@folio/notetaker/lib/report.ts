// generate_report: the service streams the report; we gather it up to this function's ceiling.
// A report too big to hand over at once can be saved as a note and read in parts with get.
import { Type } from 'typebox';
import { BadArguments, bytes, defineFunction } from 'folio/sdk';
import { DateArg, READ, TagsFilter } from './schemas.ts';

/** The function's ceiling, raised for PDFs; a text report is kept smaller, for a model to read. */
export const REPORT_MAX_BYTES = 4 * 1024 * 1024;
const TEXT_MAX_BYTES = 512 * 1024;

const ReportArgs = Type.Object({
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 500,
      description: 'Only notes matching this search (web-search syntax, as in notetaker.search).',
    }),
  ),
  tags: Type.Optional(TagsFilter),
  from: Type.Optional(DateArg('Only notes updated on or after this date (ISO 8601).')),
  to: Type.Optional(DateArg('Only notes updated on or before this date (ISO 8601).')),
  group_by: Type.Optional(
    Type.Union([Type.Literal('day'), Type.Literal('week'), Type.Literal('tag')], {
      default: 'day',
      description: 'How the notes are grouped in the report.',
    }),
  ),
  format: Type.Optional(
    Type.Union([Type.Literal('markdown'), Type.Literal('html'), Type.Literal('pdf')], {
      default: 'markdown',
      description: 'markdown or html come back as text; pdf as a file download (save it with curl -o).',
    }),
  ),
  title: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The report title.' })),
  save_as_note: Type.Optional(
    Type.Boolean({
      default: false,
      description: 'Also save the report (as markdown) as a new note; its id is reported. Needs scope notes:write.',
    }),
  ),
});

async function gather(
  stream: AsyncIterable<Uint8Array>,
  max: number,
  signal: AbortSignal,
): Promise<{ data: Uint8Array | null; size: number }> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of stream) {
    if (signal.aborted) break;
    size += chunk.byteLength;
    // Past the ceiling, keep reading (a saved note needs the whole stream) but keep nothing.
    if (size <= max) chunks.push(chunk);
  }
  if (size > max) return { data: null, size };
  const data = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    data.set(c, at);
    at += c.byteLength;
  }
  return { data, size };
}

export const generate_report = defineFunction({
  title: 'Generate a report',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  description:
    'A report over your notes (all of them, or those matching q, tags and a date range), grouped by day, week or tag. ' +
    `markdown and html come back as text (up to ${TEXT_MAX_BYTES / 1024} KiB), pdf as a file (up to ${REPORT_MAX_BYTES / 1024 / 1024} MiB). ` +
    "save_as_note: true also saves it as a note: text answers then start with a line naming the note id, a pdf's file name ends with -note-<id>.pdf. " +
    'A text report too big for one answer is refused (400) unless saved: then the answer gives the note id, and you read it in parts with notetaker.get. Otherwise narrow it (from/to, tags, q). A note holds 1 MiB: a report larger than that as Markdown cannot be saved (400, nothing saved); narrow it.',
  args: ReportArgs,
  returns: Type.Union(
    [
      Type.String({ description: 'the report as markdown or html' }),
      Type.String({ format: 'binary', description: 'the pdf' }),
      Type.Object({ saved_note_id: Type.String(), bytes: Type.Integer(), more: Type.String() }),
    ],
    {
      description: 'text for markdown/html, a file for pdf; a pointer to the saved note when a saved text report is too big for one answer',
    },
  ),
  examples: [
    { args: { from: '2026-11-01', group_by: 'week' }, description: 'this month, by week, as markdown' },
    { args: { tags: ['meeting'], format: 'pdf', title: 'Meetings' }, description: 'meeting notes as a pdf' },
    { args: { q: 'budget', group_by: 'tag', save_as_note: true }, description: 'saved as a note too' },
  ],
  requires: READ,
  maxBytes: REPORT_MAX_BYTES,
  handler: async (args, ctx) => {
    const format = args.format ?? 'markdown';
    const save = args.save_as_note ?? false;
    const report = await ctx.services.notes.report({
      group_by: args.group_by ?? 'day',
      format,
      save_as_note: save,
      ...(args.q !== undefined ? { q: args.q } : {}),
      ...(args.tags ? { tags: args.tags } : {}),
      ...(args.from ? { from: args.from } : {}),
      ...(args.to ? { to: args.to } : {}),
      ...(args.title !== undefined ? { title: args.title } : {}),
    });
    const max = format === 'pdf' ? REPORT_MAX_BYTES - 1024 : TEXT_MAX_BYTES;
    const { data, size } = await gather(report.stream, max, ctx.signal);
    const savedId = save && report.saved_note_id ? await report.saved_note_id : undefined;
    if (data === null) {
      if (savedId)
        return {
          saved_note_id: savedId,
          bytes: size,
          more: `The report is ${size} bytes, too big for one answer. It is saved as note ${savedId}: read it in parts with ${ctx.ref('notetaker.get', { id: savedId })} and follow next_offset.`,
        };
      throw new BadArguments(`the report would be ${size} bytes, over the ${max} this function returns at once`, [
        {
          path: 'from',
          message: `narrow the report (from/to, tags or q), or pass save_as_note: true and read the saved note in parts with ${ctx.ref('notetaker.get')}`,
        },
      ]);
    }
    if (format === 'pdf') {
      const base = report.filename.replace(/\.pdf$/i, '') || 'report';
      return bytes(data, report.contentType || 'application/pdf', savedId ? `${base}-note-${savedId}.pdf` : `${base}.pdf`);
    }
    const text = new TextDecoder().decode(data);
    return savedId ? `<!-- saved as note ${savedId}: ${ctx.ref('notetaker.get', { id: savedId })} -->\n${text}` : text;
  },
});
