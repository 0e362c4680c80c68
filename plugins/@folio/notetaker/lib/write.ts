// Writing: create, update, append, prepend, replace_section, delete (to the trash), restore.
// Edits that replace text need expected_version; appends and prepends never clobber and need none.
import { Type } from 'typebox';
import { BadArguments, defineFunction } from 'folio/sdk';
import { meta, versioned } from './notes.ts';
import { ExpectedVersion, NoteId, NoteMeta, TagsValue, WRITE } from './schemas.ts';

const Title = Type.String({ minLength: 1, maxLength: 500, description: 'The title, one line.' });
const Body = (what: string) => Type.String({ maxLength: 1_000_000, description: what });
const Heading = (what: string) =>
  Type.String({
    minLength: 1,
    maxLength: 300,
    description: `${what} Give the heading text without # (case-insensitive, the first match); a heading the note does not have is a 400.`,
  });
const EXAMPLE_ID = '0b7f3c52-5f5e-4a8e-9a43-2f4f6b1f0c11';

// ---- create -----------------------------------------------------------------------------------

const CreateArgs = Type.Object({
  title: Title,
  body: Type.Optional(Type.String({ maxLength: 1_000_000, default: '', description: 'The text, in markdown.' })),
  tags: Type.Optional(TagsValue),
  source: Type.Optional(
    Type.Union([Type.Literal('agent'), Type.Literal('transcript'), Type.Literal('import')], {
      default: 'agent',
      description:
        "Where the text comes from: 'agent' (you wrote it), 'transcript' (a recording's transcript), 'import' (copied from elsewhere).",
    }),
  ),
});

export const create = defineFunction({
  title: 'Create a note',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  description:
    'Create a note for the user (version 1). Answers with its id and version, not the body. The note is marked as coming from an agent unless you say otherwise with source.',
  args: CreateArgs,
  returns: NoteMeta,
  examples: [
    { args: { title: 'Call with Ada', body: '## Notes\n- wants the draft by Friday\n', tags: ['ada'] } },
    {
      args: {
        title: 'Standup 2026-11-20',
        body: '## Decisions\n- ship on Monday\n\n## Action items\n- [ ] Ada: update the docs\n',
        tags: ['meeting'],
      },
      description: 'a meeting note',
    },
  ],
  requires: WRITE,
  handler: async (args, ctx) =>
    meta(
      await ctx.services.notes.create({
        title: args.title,
        body: args.body ?? '',
        source: args.source ?? 'agent',
        ...(args.tags ? { tags: args.tags } : {}),
      }),
    ),
});

// ---- update -----------------------------------------------------------------------------------

const UpdateArgs = Type.Object({
  id: NoteId,
  expected_version: ExpectedVersion,
  title: Type.Optional(Title),
  body: Type.Optional(Body('The new body: replaces the whole body. To add text, use append; to change one section, replace_section.')),
  tags: Type.Optional(TagsValue),
});

export const update = defineFunction({
  title: 'Update a note',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  description:
    'Replace the title, the body and/or the tags of a note (give at least one; what you leave out stays). Needs expected_version, the version you read: ' +
    'if the note changed since, nothing is written and you get 409 with the current version and the head of its text; read it again and redo your change. ' +
    'Answers with the new version.',
  args: UpdateArgs,
  returns: NoteMeta,
  examples: [
    { args: { id: EXAMPLE_ID, expected_version: 3, title: 'Call with Ada (done)' }, description: 'rename' },
    { args: { id: EXAMPLE_ID, expected_version: 4, tags: ['ada', 'done'] }, description: 'replace the tags' },
  ],
  requires: WRITE,
  handler: async (args, ctx) => {
    if (args.title === undefined && args.body === undefined && args.tags === undefined)
      throw new BadArguments('nothing to change', [{ path: 'title', message: 'give at least one of title, body, tags' }]);
    const input = {
      expected_version: args.expected_version,
      ...(args.title !== undefined ? { title: args.title } : {}),
      ...(args.body !== undefined ? { body: args.body } : {}),
      ...(args.tags !== undefined ? { tags: args.tags } : {}),
    };
    return meta(await versioned(ctx, args.id, args.expected_version, 'call update again', () => ctx.services.notes.update(args.id, input)));
  },
});

// ---- append / prepend -------------------------------------------------------------------------

const AppendArgs = Type.Object({
  id: NoteId,
  text: Type.String({ minLength: 1, maxLength: 1_000_000, description: 'The text to add, in markdown.' }),
  heading: Type.Optional(Heading("Add at the end of this heading's section instead of the end of the note.")),
});

export const append = defineFunction({
  title: 'Append to a note',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  description:
    'Add text at the end of a note, or at the end of one section (heading). Needs no version: it never overwrites anything, even if the note changed since you read it. ' +
    'To start a new section, append text that begins with a heading line ("## Follow-up"). Answers with the new version.',
  args: AppendArgs,
  returns: NoteMeta,
  examples: [
    { args: { id: EXAMPLE_ID, text: '- Ada called back: Friday is fine.' } },
    { args: { id: EXAMPLE_ID, text: '- [ ] send the contract', heading: 'Action items' }, description: 'into one section' },
  ],
  requires: WRITE,
  handler: async (args, ctx) =>
    meta(
      await versioned(ctx, args.id, undefined, 'append', () =>
        ctx.services.notes.append(args.id, { text: args.text, ...(args.heading !== undefined ? { heading: args.heading } : {}) }),
      ),
    ),
});

const PrependArgs = Type.Object({
  id: NoteId,
  text: Type.String({ minLength: 1, maxLength: 1_000_000, description: 'The text to add, in markdown.' }),
  heading: Type.Optional(Heading('Add right under this heading line instead of at the top of the note.')),
});

export const prepend = defineFunction({
  title: 'Prepend to a note',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  description:
    'Add text at the top of a note, or right under one heading. Needs no version and never overwrites anything. Answers with the new version.',
  args: PrependArgs,
  returns: NoteMeta,
  examples: [
    { args: { id: EXAMPLE_ID, text: '> Summary: Ada agreed to Friday.' } },
    { args: { id: EXAMPLE_ID, text: '- newest entry first', heading: 'Log' }, description: 'under a heading' },
  ],
  requires: WRITE,
  handler: async (args, ctx) =>
    meta(
      await versioned(ctx, args.id, undefined, 'prepend', () =>
        ctx.services.notes.prepend(args.id, { text: args.text, ...(args.heading !== undefined ? { heading: args.heading } : {}) }),
      ),
    ),
});

// ---- replace_section --------------------------------------------------------------------------

const ReplaceArgs = Type.Object({
  id: NoteId,
  expected_version: ExpectedVersion,
  heading: Heading('The section to replace: from under this heading line to the next heading of the same or a higher level.'),
  text: Body('The new text of the section; the heading line itself stays. May be empty.'),
});

export const replace_section = defineFunction({
  title: 'Replace a section',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  description:
    'Replace the text under one heading, keeping the heading line and the rest of the note. Needs expected_version (409 with the current version if the note changed). ' +
    'Read the section first with notetaker.get {"id": ..., "section": "..."}.',
  args: ReplaceArgs,
  returns: NoteMeta,
  examples: [{ args: { id: EXAMPLE_ID, expected_version: 5, heading: 'Decisions', text: '- ship on Monday\n- freeze on Friday\n' } }],
  requires: WRITE,
  handler: async (args, ctx) =>
    meta(
      await versioned(ctx, args.id, args.expected_version, 'call replace_section again', () =>
        ctx.services.notes.replaceSection(args.id, { expected_version: args.expected_version, heading: args.heading, text: args.text }),
      ),
    ),
});

// ---- delete / restore -------------------------------------------------------------------------

const DeleteArgs = Type.Object({
  id: NoteId,
  expected_version: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: 'If given, delete only if the note is still at this version (409 with the current version otherwise).',
    }),
  ),
});

export const del = defineFunction({
  title: 'Move a note to the trash',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  description:
    'Move a note to the trash (a new version; nothing is lost). It leaves lists and searches; notetaker.list {"trashed": true} shows the trash and notetaker.restore brings it back.',
  args: DeleteArgs,
  returns: Type.Object({ ...NoteMeta.properties, more: Type.String() }),
  examples: [
    { args: { id: EXAMPLE_ID } },
    { args: { id: EXAMPLE_ID, expected_version: 6 }, description: 'only if unchanged since version 6' },
  ],
  requires: WRITE,
  handler: async (args, ctx) => {
    const note = await versioned(ctx, args.id, args.expected_version, 'call delete again', () =>
      ctx.services.notes.trash(args.id, args.expected_version),
    );
    return { ...meta(note), more: `In the trash. To undo: ${ctx.ref('notetaker.restore', { id: note.id })}.` };
  },
});

const RestoreArgs = Type.Object({ id: NoteId });

export const restore = defineFunction({
  title: 'Restore from the trash',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  description: 'Bring a note back from the trash (a new version). Find trashed notes with notetaker.list {"trashed": true}.',
  args: RestoreArgs,
  returns: NoteMeta,
  examples: [{ args: { id: EXAMPLE_ID } }],
  requires: WRITE,
  handler: async (args, ctx) => meta(await versioned(ctx, args.id, undefined, 'restore', () => ctx.services.notes.untrash(args.id))),
});
