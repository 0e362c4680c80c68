// History: every version of a note is kept. revisions lists them, reads one, or diffs one against
// the current note; restore_revision makes an old one current again (as a new version).
import { Type } from 'typebox';
import { BadArguments, charLength, defineFunction, type RevisionSummary } from 'folio/sdk';
import { clip, takePart } from './text.ts';
import { fitPage, moreHint, rowsBudget } from './paging.ts';
import { meta, versioned } from './notes.ts';
import { Cursor, Length, NoteId, NoteMeta, Offset, PART_BYTES, PART_DEFAULT, PartFields, READ, WRITE } from './schemas.ts';

const EXAMPLE_ID = '0b7f3c52-5f5e-4a8e-9a43-2f4f6b1f0c11';
const Version = (what: string) => Type.Integer({ minimum: 1, description: what });

const RevisionsArgs = Type.Object({
  id: NoteId,
  version: Type.Optional(Version('Read this version (its title, tags and body, in parts like get). Leave out to list the versions.')),
  diff: Type.Optional(
    Type.Boolean({
      default: false,
      description: 'With version: a unified diff from that version to the current note instead of its text.',
    }),
  ),
  offset: Type.Optional(Offset),
  length: Type.Optional(Length),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Listing: versions per page, newest first.' })),
  cursor: Type.Optional(Cursor),
});

const Listing = Type.Object(
  {
    id: Type.String(),
    revisions: Type.Array(
      Type.Object({
        version: Type.Integer(),
        change: Type.String(),
        title: Type.String(),
        created_at: Type.String(),
        body_bytes: Type.Integer(),
      }),
    ),
    next_cursor: Type.Union([Type.String(), Type.Null()]),
    more: Type.Optional(Type.String()),
  },
  { description: 'without version: the versions, newest first' },
);

const OneRevision = Type.Object(
  {
    id: Type.String(),
    version: Type.Integer(),
    change: Type.String(),
    created_at: Type.String(),
    title: Type.String(),
    tags: Type.Array(Type.String()),
    ...PartFields,
    body: Type.String(),
  },
  { description: 'with version: that version, in parts' },
);

const Diff = Type.Object(
  {
    id: Type.String(),
    from_version: Type.Integer(),
    to_version: Type.Integer(),
    coarse: Type.Boolean({
      description:
        'true when the versions differ on too many lines for an exact diff: one block replaces everything between the common first and last lines',
    }),
    ...PartFields,
    diff: Type.String(),
  },
  { description: 'with version and diff: the unified diff to the current note, in parts' },
);

export const revisions = defineFunction({
  title: 'Note history',
  annotations: { readOnlyHint: true, openWorldHint: false },
  description:
    'The history of a note: every change made a version, and every version is kept. Without version: list them, newest first (version, change, title, created_at). ' +
    'With version: read that version (in parts, like get: follow next_offset). With version and diff: true: a unified diff from that version to the current note. ' +
    'To go back to a version, use restore_revision.',
  args: RevisionsArgs,
  returns: Type.Union([Listing, OneRevision, Diff]),
  examples: [
    { args: { id: EXAMPLE_ID }, description: 'list the versions' },
    { args: { id: EXAMPLE_ID, version: 2 }, description: 'read version 2' },
    { args: { id: EXAMPLE_ID, version: 2, diff: true }, description: 'what changed since version 2' },
  ],
  requires: READ,
  handler: async (args, ctx) => {
    const notes = ctx.services.notes;
    if (args.version === undefined) {
      if (args.diff)
        throw new BadArguments('diff needs a version', [
          { path: 'version', message: 'is required with diff: true (the version to compare with the current note)' },
        ]);
      const page = await fitPage({
        budget: rowsBudget(ctx.budget),
        cursor: args.cursor,
        limit: args.limit ?? 20,
        max: 100,
        fetch: (cursor, limit) => notes.revisions(args.id, { limit, ...(cursor !== undefined ? { cursor } : {}) }),
        row: (r: RevisionSummary) => ({
          version: r.version,
          change: r.change,
          title: clip(r.title, 120),
          created_at: r.created_at,
          body_bytes: r.body_bytes,
        }),
      });
      return {
        id: args.id,
        revisions: page.rows,
        next_cursor: page.next_cursor,
        ...moreHint(page.next_cursor, 'versions', ctx.ref('notetaker.revisions')),
      };
    }
    const version = args.version;
    const offset = args.offset ?? 0;
    const inParts = (text: string, extra: { diff?: true }) => {
      const total = charLength(text);
      if (offset > total)
        throw new BadArguments(`offset ${offset} is past the end`, [{ path: 'offset', message: `must be at most ${total}` }]);
      const part = takePart(text, total, offset, args.length ?? PART_DEFAULT, PART_BYTES);
      return {
        total_chars: total,
        offset: part.offset,
        chars: part.chars,
        next_offset: part.next,
        ...(part.next !== null
          ? { more: `Next part: ${ctx.ref('notetaker.revisions', { id: args.id, version, ...extra, offset: part.next })}.` }
          : {}),
        text: part.text,
      };
    };
    if (args.diff) {
      const d = await notes.diff(args.id, version);
      const { text, ...part } = inParts(d.diff, { diff: true });
      return { id: args.id, from_version: d.from_version, to_version: d.to_version, coarse: d.coarse, ...part, diff: text };
    }
    const r = await notes.revision(args.id, version);
    const { text, ...part } = inParts(r.body, {});
    return {
      id: r.note_id,
      version: r.version,
      change: r.change,
      created_at: r.created_at,
      title: r.title,
      tags: r.tags,
      ...part,
      body: text,
    };
  },
});

const RestoreRevisionArgs = Type.Object({
  id: NoteId,
  version: Version('The version whose title, body and tags become current again.'),
  expected_version: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: 'If given, restore only if the note is still at this version (409 with the current version otherwise).',
    }),
  ),
});

export const restore_revision = defineFunction({
  title: 'Restore an earlier version',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  description:
    'Make an old version current again: its title, body and tags are written as a new version, so nothing is lost and this too can be undone. ' +
    'Find versions with notetaker.revisions.',
  args: RestoreRevisionArgs,
  returns: NoteMeta,
  examples: [
    { args: { id: EXAMPLE_ID, version: 2 } },
    { args: { id: EXAMPLE_ID, version: 2, expected_version: 5 }, description: 'only if nobody changed it since version 5' },
  ],
  requires: WRITE,
  handler: async (args, ctx) =>
    meta(
      await versioned(ctx, args.id, args.expected_version, 'call restore_revision again', () =>
        ctx.services.notes.restoreRevision(args.id, args.version, args.expected_version),
      ),
    ),
});
