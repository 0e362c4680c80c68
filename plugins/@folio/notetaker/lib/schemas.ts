// Argument and result schemas shared by the notetaker functions. Help renders an argument's own
// constraints but not those of array items, so item rules are repeated in descriptions.
import { Type } from 'typebox';
import { TAG_PATTERN, TAG_RULE } from 'folio/sdk';

export const READ = { scopes: ['notes:read'] };
export const WRITE = { scopes: ['notes:write'] };

/** Note ids are UUIDs. */
export const NoteId = Type.String({ format: 'uuid', description: 'The note id (from list, search or create).' });

/** A tag as the notes service stores it (folio/sdk TAG_PATTERN); it stores tags lowercase. */
export const Tag = Type.String({ pattern: TAG_PATTERN });
const EACH_TAG = `each ${TAG_RULE}; stored lowercase`;

export const TagsFilter = Type.Array(Tag, {
  minItems: 1,
  maxItems: 16,
  uniqueItems: true,
  description: `Only notes carrying every one of these tags (${EACH_TAG}), e.g. ["meeting"].`,
});

export const TagsValue = Type.Array(Tag, {
  maxItems: 32,
  uniqueItems: true,
  description: `The tags of the note (${EACH_TAG}), e.g. ["project-x", "meeting"]. Replaces all tags.`,
});

export const ExpectedVersion = Type.Integer({
  minimum: 1,
  description:
    'The version you read (from get, list or your last edit). If the note has changed since, nothing is written and you get 409 with the current version.',
});

export const Cursor = Type.String({
  maxLength: 4096,
  description: 'next_cursor from the previous answer, to get the next page. Keep the other arguments the same.',
});

// ISO 8601 date (2026-11-21) or date-time (2026-11-21T09:00:00Z).
const ISO_DATE = '^\\d{4}-\\d{2}-\\d{2}([T ]\\d{2}:\\d{2}.*)?$';
export const DateArg = (what: string) => Type.String({ pattern: ISO_DATE, maxLength: 40, description: what });

/** Default and largest part of a long text, in characters. */
export const PART_DEFAULT = 12_000;
export const PART_MAX = 50_000;
/** Bytes one part may take in an answer, whatever its characters: keeps answers under the 64 KiB default ceiling. */
export const PART_BYTES = 32_000;

export const Offset = Type.Integer({
  minimum: 0,
  default: 0,
  description: 'Where to start reading, in characters from the start. Use next_offset from the previous answer.',
});

export const Length = Type.Integer({
  minimum: 1,
  maximum: PART_MAX,
  default: PART_DEFAULT,
  description: `How many characters to return at most. A part is also cut to fit ${PART_BYTES} bytes, and ends at a line break where it can.`,
});

/** The compact description of a note after a write. */
export const NoteMeta = Type.Object({
  id: Type.String(),
  version: Type.Integer(),
  title: Type.String(),
  tags: Type.Array(Type.String()),
  source: Type.String(),
  updated_at: Type.String(),
  deleted_at: Type.Union([Type.String(), Type.Null()]),
  body_chars: Type.Integer(),
});

export const PartFields = {
  total_chars: Type.Integer({ description: 'Characters in the whole text (or section).' }),
  offset: Type.Integer(),
  chars: Type.Integer({ description: 'Characters in this part.' }),
  next_offset: Type.Union([Type.Integer(), Type.Null()], { description: 'Pass as offset for the next part; null at the end.' }),
  more: Type.Optional(Type.String()),
};
