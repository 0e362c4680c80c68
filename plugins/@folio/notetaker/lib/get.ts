// notetaker.get: one note, a long body in parts that always fit the byte ceiling, or one section.
import { Type } from 'typebox';
import { BadArguments, charLength, defineFunction, findSection, headings } from 'folio/sdk';
import { clip, jsonBytes, sliceChars, takePart } from './text.ts';
import { Length, NoteId, Offset, PART_BYTES, PART_DEFAULT, PartFields, READ } from './schemas.ts';

/** No answer of get goes over this, whatever the note: under the 64 KiB default ceiling. */
const ANSWER_MAX = 60_000;

const GetArgs = Type.Object({
  id: NoteId,
  offset: Type.Optional(Offset),
  length: Type.Optional(Length),
  section: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 300,
      description:
        'Read only the section under this heading: its text without #, case-insensitive, the first match; from the heading line to the next heading of the same or a higher level. offset and length then count within the section.',
    }),
  ),
});

export const get = defineFunction({
  title: 'Read a note',
  annotations: { readOnlyHint: true, openWorldHint: false },
  description:
    `Read one note: its title, tags, source, version and body. A long body comes in parts of up to ${PART_DEFAULT} characters (length changes that): ` +
    'total_chars is the size of the whole body, and when next_offset is not null, call get again with offset = next_offset for the next part, until next_offset is null. ' +
    "The first part of a long note also gives an outline (its headings with their offsets); section reads just one heading's section. " +
    'Keep version: edits that replace text need it as expected_version.',
  args: GetArgs,
  returns: Type.Object({
    id: Type.String(),
    title: Type.String(),
    tags: Type.Array(Type.String()),
    source: Type.String(),
    version: Type.Integer(),
    created_at: Type.String(),
    updated_at: Type.String(),
    deleted_at: Type.Optional(Type.String()),
    section: Type.Optional(Type.String()),
    note_chars: Type.Optional(Type.Integer()),
    ...PartFields,
    outline: Type.Optional(Type.Array(Type.Object({ offset: Type.Integer(), level: Type.Integer(), heading: Type.String() }))),
    body: Type.String({ description: 'This part of the body (markdown).' }),
  }),
  examples: [
    { args: { id: '0b7f3c52-5f5e-4a8e-9a43-2f4f6b1f0c11' }, description: 'a note (its first part, if it is long)' },
    { args: { id: '0b7f3c52-5f5e-4a8e-9a43-2f4f6b1f0c11', offset: 12000 }, description: 'the next part' },
    { args: { id: '0b7f3c52-5f5e-4a8e-9a43-2f4f6b1f0c11', section: 'Decisions' }, description: 'one section' },
  ],
  requires: READ,
  handler: async (args, ctx) => {
    // Stay under this call's ceiling (lower when the caller sent max_bytes_llm), with room to spare.
    const answerMax = Math.max(1_000, Math.min(ANSWER_MAX, ctx.budget - 1_000));
    const note = await ctx.services.notes.get(args.id);
    const noteChars = charLength(note.body);
    let text = note.body;
    let total = noteChars;
    let sectionName: string | undefined;
    if (args.section !== undefined) {
      const section = findSection(note.body, args.section);
      if (!section) {
        const known = headings(note.body)
          .slice(0, 30)
          .map((h) => clip(h.text, 60));
        throw new BadArguments(`note ${note.id} has no heading '${clip(args.section, 100)}'`, [
          {
            path: 'section',
            message:
              known.length > 0 ? `no such heading; its headings are: ${known.join(' | ')}` : 'no such heading: this note has no headings',
          },
        ]);
      }
      text = sliceChars(note.body, section.start, section.end);
      total = section.end - section.start;
      sectionName = section.heading.text;
    }
    const offset = args.offset ?? 0;
    if (offset > total)
      throw new BadArguments(`offset ${offset} is past the end`, [
        { path: 'offset', message: `must be at most ${total}: the ${sectionName ? 'section' : 'note'} has ${total} characters` },
      ]);
    const length = args.length ?? PART_DEFAULT;
    let budget = PART_BYTES;
    let withOutline = sectionName === undefined && offset === 0;
    for (;;) {
      const part = takePart(text, total, offset, length, budget);
      let outline: Array<{ offset: number; level: number; heading: string }> | undefined;
      let headingsTotal: number | undefined;
      if (withOutline && part.next !== null) {
        const hs = headings(note.body);
        outline = hs.slice(0, 40).map((h) => ({ offset: h.offset, level: h.level, heading: clip(h.text, 80) }));
        if (hs.length > 40) headingsTotal = hs.length;
      }
      const answer = {
        id: note.id,
        title: note.title,
        tags: note.tags,
        source: note.source,
        version: note.version,
        created_at: note.created_at,
        updated_at: note.updated_at,
        ...(note.deleted_at
          ? { deleted_at: note.deleted_at, trash: `This note is in the trash: ${ctx.ref('notetaker.restore')} brings it back.` }
          : {}),
        ...(sectionName ? { section: sectionName, note_chars: noteChars } : {}),
        total_chars: total,
        offset: part.offset,
        chars: part.chars,
        next_offset: part.next,
        ...(part.next !== null
          ? {
              more: `This part is characters ${part.offset}-${part.offset + part.chars} of ${total}. Next part: ${ctx.ref('notetaker.get', { id: note.id, offset: part.next, ...(sectionName ? { section: sectionName } : {}) })}.`,
            }
          : {}),
        ...(outline ? { outline, ...(headingsTotal ? { headings_total: headingsTotal } : {}) } : {}),
        body: part.text,
      };
      const size = jsonBytes(answer);
      if (size <= answerMax || budget <= 1_000) return answer;
      // A very long title or outline: drop the outline first, then shorten the part.
      if (withOutline && outline) withOutline = false;
      else budget = Math.max(1_000, Math.min(budget, jsonBytes(part.text)) - (size - answerMax) - 100);
    }
  },
});
