// TypeBox schemas of the notetaker REST group. The same objects validate requests (Ajv, compiled once at start)
// and make the OpenAPI document; a schema listed in COMPONENTS appears there as a named component.
import { Type, type TSchema } from 'typebox';
import { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, NOTE_SOURCES } from '../types.ts';
import { TAG_INPUT_PATTERN, TAG_RULE } from '../markdown.ts';

const DateTime = Type.String({ format: 'date-time' });
const Uuid = Type.String({ format: 'uuid' });

export const NoteId = Type.String({ format: 'uuid', description: 'The note id.' });
export const Version = Type.Integer({ minimum: 1, description: 'A version of the note: 1 on create, +1 on every change.' });

export const Title = Type.String({ minLength: 1, maxLength: 500, description: 'The title: one line, 1 to 500 characters (trimmed).' });
export const Body = Type.String({ description: 'The body, markdown; at most 1 MiB of UTF-8.' });
export const Tag = Type.String({
  pattern: TAG_INPUT_PATTERN,
  description: `A tag: ${TAG_RULE}. Stored lowercase; compared case-insensitively.`,
});
export const Tags = Type.Array(Tag, { maxItems: 32, description: 'Tags of the note: at most 32 (duplicates are dropped).' });
export const Source = Type.Union(
  NOTE_SOURCES.map((s) => Type.Literal(s)),
  { description: 'Where the note came from.' },
);

export const Note = Type.Object(
  {
    id: Uuid,
    title: Type.String(),
    body: Type.String({ description: 'Markdown.' }),
    tags: Type.Array(Type.String()),
    source: Source,
    version: Type.Integer({ minimum: 1, description: 'Also the ETag: "<version>".' }),
    created_at: DateTime,
    updated_at: DateTime,
    deleted_at: Type.Union([DateTime, Type.Null()], { description: 'Set while the note is in the trash.' }),
  },
  { description: 'A note.' },
);

export const NoteSummary = Type.Object(
  {
    id: Uuid,
    title: Type.String(),
    tags: Type.Array(Type.String()),
    source: Source,
    version: Type.Integer({ minimum: 1 }),
    created_at: DateTime,
    updated_at: DateTime,
    deleted_at: Type.Union([DateTime, Type.Null()]),
    excerpt: Type.String({ description: 'The start of the body, plain text.' }),
    body_bytes: Type.Integer({ minimum: 0, description: 'Size of the body in bytes (UTF-8).' }),
  },
  { description: 'A note without its body, for lists.' },
);

const RevisionChange = Type.Union(
  ['create', 'update', 'append', 'prepend', 'replace_section', 'restore_revision', 'trash', 'untrash'].map((c) => Type.Literal(c)),
  { description: 'What made this version.' },
);

export const Revision = Type.Object(
  {
    note_id: Uuid,
    version: Type.Integer({ minimum: 1 }),
    title: Type.String(),
    body: Type.String(),
    tags: Type.Array(Type.String()),
    change: RevisionChange,
    created_at: DateTime,
  },
  { description: 'The content of one version of a note.' },
);

export const RevisionSummary = Type.Object(
  {
    note_id: Uuid,
    version: Type.Integer({ minimum: 1 }),
    title: Type.String(),
    tags: Type.Array(Type.String()),
    change: RevisionChange,
    created_at: DateTime,
    body_bytes: Type.Integer({ minimum: 0 }),
  },
  { description: 'A revision without its body.' },
);

export const Diff = Type.Object({
  from_version: Type.Integer({ minimum: 1 }),
  to_version: Type.Integer({ minimum: 1 }),
  diff: Type.String({ description: 'Unified diff from that revision to the current note.' }),
  coarse: Type.Boolean({
    description:
      'True when the versions differ on too many lines for an exact diff: the diff then replaces everything between the common first and last lines as one block (still a valid patch).',
  }),
});

export const SearchHit = Type.Object({
  id: Uuid,
  title: Type.String(),
  tags: Type.Array(Type.String()),
  updated_at: DateTime,
  version: Type.Integer({ minimum: 1 }),
  rank: Type.Number(),
  snippet: Type.String({ description: 'Matched words wrapped in « » (plain text).' }),
  match: Type.Union([Type.Literal('fulltext'), Type.Literal('fuzzy')], { description: "'fuzzy' when found through typo tolerance." }),
});

export const TagCount = Type.Object({ tag: Type.String(), count: Type.Integer({ minimum: 0 }) });
export const TagList = Type.Object({
  items: Type.Array(TagCount, { description: 'Every tag of your live notes with how many carry it, most used first.' }),
});

export const StorageUse = Type.Object(
  {
    used: Type.Integer({ minimum: 0, description: 'Bytes you store, every kind together.' }),
    quota: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'Your quota in bytes; null: no limit.' }),
    by_kind: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
      description: '`used` per kind: `notes` (every revision as stored), `files`, ...',
    }),
  },
  { description: 'What you store against your storage quota.' },
);

/** A page of a list: opaque cursor, the limit used, and whether the asked-for limit was clamped. */
function page(name: string, item: TSchema) {
  return Type.Object(
    {
      items: Type.Array(item),
      next_cursor: Type.Union([Type.String(), Type.Null()], {
        description: 'Opaque; pass it back as `cursor` for the next page. Null on the last page.',
      }),
      limit: Type.Integer({ minimum: 1, description: 'The limit actually used.' }),
      limit_clamped_from: Type.Optional(
        Type.Integer({
          description: `Present when the requested limit was over ${LIST_LIMIT_MAX} and was lowered to it (the Folio-Limit-Clamped header says the same).`,
        }),
      ),
    },
    { description: `A page of ${name}.` },
  );
}

export const NotePage = page('note summaries, most recently updated first', NoteSummary);
export const RevisionPage = page('revisions, newest first', RevisionSummary);
export const SearchPage = page('search hits, best first', SearchHit);

// ---- requests

export const ListQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        default: LIST_LIMIT_DEFAULT,
        description: `How many to return; default ${LIST_LIMIT_DEFAULT}, at most ${LIST_LIMIT_MAX}. A larger value is clamped to ${LIST_LIMIT_MAX} (not refused): the response says so in limit_clamped_from and the Folio-Limit-Clamped header.`,
      }),
    ),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'next_cursor of the previous page.' })),
  },
  { additionalProperties: false },
);

const TagFilter = Type.Array(Tag, {
  maxItems: 16,
  description: 'Only notes carrying every one of these tags. Repeat the parameter for several: tag=a&tag=b.',
});

const IdPrefix = Type.String({
  minLength: 4,
  maxLength: 36,
  pattern: '^[0-9a-fA-F-]+$',
  description: 'Only those whose id starts with this: at least 4 hex digits, as lists show ids shortened (e.g. d5a51b13).',
});

export const TrashQuery = Type.Object({ ...ListQuery.properties, id_prefix: Type.Optional(IdPrefix) }, { additionalProperties: false });

export const NotesQuery = Type.Object(
  { ...ListQuery.properties, tag: Type.Optional(TagFilter), id_prefix: Type.Optional(IdPrefix) },
  { additionalProperties: false },
);

const IsoDate = Type.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2}([Tt ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?([Zz]|[+-]\\d{2}:?\\d{2})?)?$',
  description: 'ISO 8601 date (2026-03-01) or date-time (2026-03-01T09:00:00Z), inclusive, on updated_at.',
});

export const SearchQuery = Type.Object(
  {
    q: Type.String({
      minLength: 1,
      maxLength: 1000,
      description:
        'Web-search syntax: words, "quoted phrases", -excluded, OR. Any language; typos are tolerated (hits found that way have match=fuzzy).',
    }),
    tag: Type.Optional(TagFilter),
    from: Type.Optional(IsoDate),
    to: Type.Optional(IsoDate),
    ...ListQuery.properties,
  },
  { additionalProperties: false },
);

export const IdParams = Type.Object({ id: NoteId });
export const RevisionParams = Type.Object({
  id: NoteId,
  version: Type.Integer({ minimum: 1, maximum: 2147483647, description: 'The revision (a past version number).' }),
});

export const CreateNote = Type.Object(
  {
    title: Title,
    body: Type.Optional(Body),
    tags: Type.Optional(Tags),
    source: Type.Optional(Source),
  },
  { additionalProperties: false },
);

const ExpectedVersion = Type.Integer({
  minimum: 1,
  description:
    'The version this edit is based on; the same as sending If-Match: "<version>". A stale one is 412 precondition_failed and nothing is written.',
});

export const SectionText = Type.Object(
  {
    text: Type.String({ minLength: 1, description: 'Markdown to add.' }),
    heading: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 500,
        description:
          "Add at the end (append) or start (prepend) of this heading's section instead of the whole note's. Matched case-insensitively, without the #s.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const ReplaceSectionInput = Type.Object(
  {
    heading: Type.String({
      minLength: 1,
      maxLength: 500,
      description: 'The heading text, without the #s; matched case-insensitively, the first match wins.',
    }),
    text: Type.String({ description: 'The new text under the heading; the heading line itself stays.' }),
  },
  { additionalProperties: false },
);

export const PatchNote = Type.Object(
  {
    expected_version: Type.Optional(ExpectedVersion),
    title: Type.Optional(Title),
    body: Type.Optional(Body),
    tags: Type.Optional(Tags),
    append: Type.Optional(SectionText),
    prepend: Type.Optional(SectionText),
    replace_section: Type.Optional(ReplaceSectionInput),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description:
      'One kind of edit per request: either fields (any of title, body, tags: replacing, so a version is required), or exactly one of append, prepend, replace_section. append and prepend never overwrite and take no version; replace_section needs one.',
  },
);

export const PutNote = Type.Object(
  { expected_version: Type.Optional(ExpectedVersion), title: Title, body: Body, tags: Tags },
  { additionalProperties: false, description: 'The whole editable content; a version is required (If-Match or expected_version).' },
);

export const ReportRequest = Type.Object(
  {
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        description: 'Only notes matching this search (same syntax as GET /notetaker/search).',
      }),
    ),
    tags: Type.Optional(TagFilter),
    from: Type.Optional(IsoDate),
    to: Type.Optional(IsoDate),
    group_by: Type.Union([Type.Literal('day'), Type.Literal('week'), Type.Literal('tag')], {
      default: 'day',
      description: 'How notes are grouped.',
    }),
    format: Type.Union([Type.Literal('markdown'), Type.Literal('html'), Type.Literal('pdf')], {
      default: 'markdown',
      description: 'What is streamed back.',
    }),
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    save_as_note: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'Also save the report (as markdown) as a new note; its id comes back in Folio-Saved-Note-Id. Needs notes:write.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** Named in the OpenAPI document's components.schemas; anywhere else they appear as $refs. */
export const COMPONENTS: Record<string, TSchema> = {
  Note,
  NoteSummary,
  NotePage,
  Revision,
  RevisionSummary,
  RevisionPage,
  Diff,
  SearchHit,
  SearchPage,
  TagList,
  TagCount,
  StorageUse,
  CreateNote,
  PatchNote,
  PutNote,
  SectionText,
  ReplaceSection: ReplaceSectionInput,
  ReportRequest,
};
