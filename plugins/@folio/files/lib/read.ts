// Reading files: list, info, read (text in parts within the byte budget), download (the raw bytes).
import { Type } from 'typebox';
import { BadArguments, bytes, defineFunction, type FileMeta } from 'folio/sdk';
import { FileId, Folder, READ, Version } from './schemas.ts';

/** What a listed file shows: enough to pick one, nothing that repeats. */
const row = (f: FileMeta) => ({
  id: f.id,
  name: f.name,
  ...(f.folder ? { folder: f.folder } : {}),
  content_type: f.content_type,
  size: f.size,
  version: f.version,
  updated_at: f.updated_at,
  ...(f.note_id ? { note_id: f.note_id } : {}),
  ...(f.deleted_at ? { deleted_at: f.deleted_at } : {}),
});

export const list = defineFunction({
  title: 'List files',
  annotations: { readOnlyHint: true, openWorldHint: false },
  description:
    'List your files, most recently updated first: id, name, folder, content_type, size, version. ' +
    'When next_cursor is not null there are more: call again with cursor = next_cursor. trashed: true lists the trash.',
  args: Type.Object({
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Files per page, at most 100.' })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'next_cursor of the previous page.' })),
    folder: Type.Optional(Folder),
    trashed: Type.Optional(Type.Boolean({ default: false, description: 'List the trash instead.' })),
  }),
  examples: [{ args: {} }, { args: { folder: 'projects/2026' } }],
  requires: READ,
  handler: async (args, ctx) => {
    const page = await ctx.services.files.list({
      ...(args.limit !== undefined ? { limit: args.limit } : {}),
      ...(args.cursor !== undefined ? { cursor: args.cursor } : {}),
      ...(args.folder !== undefined ? { folder: args.folder } : {}),
      ...(args.trashed ? { trashed: true } : {}),
    });
    return { files: page.items.map(row), next_cursor: page.next_cursor };
  },
});

export const info = defineFunction({
  title: "Show a file's details",
  annotations: { readOnlyHint: true, openWorldHint: false },
  description:
    "One file's metadata (name, type, size, sha256, version, attached note) and its versions, newest first. " +
    'Read text with files.read; get the bytes with files.download.',
  args: Type.Object({ id: FileId }),
  examples: [{ args: { id: '0b0e6c9e-2f7a-4c1e-9d8e-8f1d2a3b4c5d' } }],
  requires: READ,
  handler: async ({ id }, ctx) => {
    const file = await ctx.services.files.get(id);
    const versions = await ctx.services.files.versions(id);
    return {
      file,
      versions: versions.slice(0, 50).map((v) => ({ version: v.version, size: v.size, change: v.change, created_at: v.created_at })),
      ...(versions.length > 50 ? { more_versions: versions.length - 50 } : {}),
    };
  },
});

const TEXTUAL = /^(text\/|application\/(json|xml|yaml|x-yaml|javascript|csv|x-ndjson|[\w.-]+\+(json|xml)))/;
/** Room left in the answer for everything but the text (JSON escaping can double some of it). */
const OVERHEAD = 600;

export const read = defineFunction({
  title: "Read a file's text",
  annotations: { readOnlyHint: true, openWorldHint: false },
  description:
    "Read a text file's content in parts that fit this call's byte budget. Start at offset 0; when next_offset is not null, " +
    'call again with offset = next_offset. Binary files (images, PDFs, ...) are refused: use files.download.',
  args: Type.Object({
    id: FileId,
    offset: Type.Optional(
      Type.Integer({ minimum: 0, default: 0, description: 'Byte offset to read from (next_offset of the previous part).' }),
    ),
    version: Type.Optional(Version),
  }),
  examples: [{ args: { id: '0b0e6c9e-2f7a-4c1e-9d8e-8f1d2a3b4c5d' } }],
  requires: READ,
  handler: async ({ id, offset, version }, ctx) => {
    const meta = await ctx.services.files.get(id);
    if (version === undefined && !TEXTUAL.test(meta.content_type))
      throw new BadArguments(`${meta.name} is ${meta.content_type}, not text; use files.download for its bytes.`, [
        { path: 'id', message: 'is not a text file' },
      ]);
    // JSON escapes can make text up to 6x longer (control characters); quotes and backslashes 2x. Plan for 2x.
    const room = Math.max(64, Math.floor((ctx.budget - OVERHEAD) / 2));
    return ctx.services.files.readText(id, { offset: offset ?? 0, maxBytes: room, ...(version !== undefined ? { version } : {}) });
  },
});

export const text = defineFunction({
  title: "Read a file's extracted text",
  annotations: { readOnlyHint: true, openWorldHint: false },
  description:
    'The text Folio extracted from a file for search: a PDF (whole, or one `page`), a DOCX, or a text file, in parts that fit ' +
    "this call's byte budget. Start at offset 0; when next_offset is not null, call again with offset = next_offset. " +
    'state "pending": extraction has not run yet (try again shortly); "skipped": the type has no text (note says why); ' +
    '"failed": extraction went over its memory or time limit (note says which; the file can still be downloaded).',
  args: Type.Object({
    id: FileId,
    page: Type.Optional(Type.Integer({ minimum: 1, description: 'One page of a PDF (1 is the first); pages says how many.' })),
    offset: Type.Optional(
      Type.Integer({ minimum: 0, default: 0, description: 'Character offset to read from (next_offset of the previous part).' }),
    ),
    version: Type.Optional(Version),
  }),
  examples: [{ args: { id: '0b0e6c9e-2f7a-4c1e-9d8e-8f1d2a3b4c5d' } }, { args: { id: '0b0e6c9e-2f7a-4c1e-9d8e-8f1d2a3b4c5d', page: 2 } }],
  requires: READ,
  handler: async ({ id, page, offset, version }, ctx) => {
    // Characters can take up to 3 bytes in UTF-8 and JSON escapes lengthen some: plan for 3 bytes each.
    const room = Math.max(16, Math.floor((ctx.budget - OVERHEAD) / 3));
    return ctx.services.files.extractedText(id, {
      maxChars: room,
      ...(page !== undefined ? { page } : {}),
      ...(offset !== undefined ? { offset } : {}),
      ...(version !== undefined ? { version } : {}),
    });
  },
});

export const download = defineFunction({
  title: 'Download a file',
  annotations: { readOnlyHint: true, openWorldHint: false },
  description:
    "A file's raw bytes, with its content type and name: what an attachment download is. Within this call's byte ceiling; " +
    'a larger file is refused with the URL to fetch it from with your bearer token (GET, Range supported).',
  args: Type.Object({ id: FileId, version: Type.Optional(Version) }),
  examples: [{ args: { id: '0b0e6c9e-2f7a-4c1e-9d8e-8f1d2a3b4c5d' } }],
  requires: READ,
  maxBytes: 8 * 1024 * 1024,
  handler: async ({ id, version }, ctx) => {
    const { file, data } = await ctx.services.files.readBytes(id, { maxBytes: ctx.budget, ...(version !== undefined ? { version } : {}) });
    return bytes(data, file.content_type, file.name);
  },
});
