// Writing: a small text file, attachments to notes, trash, and share links.
import { Type } from 'typebox';
import { BadArguments, defineFunction } from 'folio/sdk';
import { FileId, Folder, Name, NoteId, READ, Version, WRITE } from './schemas.ts';

export const write = defineFunction({
  title: 'Write a text file',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  description:
    'Write a small text file (UTF-8). Without id: a new file named `name`. With id and expected_version: new content for that ' +
    'file, as a new version (a stale expected_version is refused, nothing written). Larger or binary files: upload over REST.',
  args: Type.Object({
    name: Type.Optional(Name),
    text: Type.String({ description: 'The whole content.' }),
    id: Type.Optional(FileId),
    expected_version: Type.Optional(Type.Integer({ minimum: 1, description: 'With id: the version you read (files.info).' })),
    folder: Type.Optional(Folder),
    content_type: Type.Optional(Type.String({ maxLength: 127, description: 'Default text/plain; e.g. text/markdown, text/csv.' })),
    note_id: Type.Optional(NoteId),
  }),
  examples: [
    { args: { name: 'todo.md', text: '# Todo\n\n- [ ] call Ana\n', content_type: 'text/markdown' } },
    { args: { id: '0b0e6c9e-2f7a-4c1e-9d8e-8f1d2a3b4c5d', expected_version: 2, text: 'new content' } },
  ],
  requires: WRITE,
  handler: async (args, ctx) => {
    const files = ctx.services.files;
    if (args.id !== undefined) {
      if (args.expected_version === undefined)
        throw new BadArguments('replacing a file needs expected_version: the version you read (files.info)', [
          { path: 'expected_version', message: 'is required with id' },
        ]);
      return files.replaceText(args.id, args.expected_version, args.text, args.content_type);
    }
    if (args.name === undefined) throw new BadArguments('a new file needs a name', [{ path: 'name', message: 'is required without id' }]);
    return files.writeText({
      name: args.name,
      text: args.text,
      ...(args.folder !== undefined ? { folder: args.folder } : {}),
      ...(args.content_type !== undefined ? { content_type: args.content_type } : {}),
      ...(args.note_id !== undefined ? { note_id: args.note_id } : {}),
    });
  },
});

export const attach = defineFunction({
  title: 'Attach a file to a note',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  description: 'Attach a file to one of your notes (note_id: null detaches it). A note lists its files with files.attachments.',
  args: Type.Object({ id: FileId, note_id: Type.Union([NoteId, Type.Null()]) }),
  examples: [{ args: { id: '0b0e6c9e-2f7a-4c1e-9d8e-8f1d2a3b4c5d', note_id: '7c9e6679-7425-40de-944b-e07fc1f90ae7' } }],
  requires: WRITE,
  handler: async ({ id, note_id }, ctx) => ctx.services.files.attach(id, note_id),
});

export const attachments = defineFunction({
  title: "List a note's files",
  annotations: { readOnlyHint: true, openWorldHint: false },
  description: 'The files attached to one of your notes.',
  args: Type.Object({ note_id: NoteId }),
  examples: [{ args: { note_id: '7c9e6679-7425-40de-944b-e07fc1f90ae7' } }],
  requires: READ,
  handler: async ({ note_id }, ctx) => ({ files: await ctx.services.files.attachments(note_id) }),
});

export const del = defineFunction({
  title: 'Move a file to the trash',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  description: 'Move a file to the trash (files.restore brings it back; its share links stop answering meanwhile).',
  args: Type.Object({ id: FileId }),
  requires: WRITE,
  handler: async ({ id }, ctx) => ctx.services.files.trash(id),
});

export const restore = defineFunction({
  title: 'Restore a file from the trash',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  description: 'Bring a file back from the trash.',
  args: Type.Object({ id: FileId }),
  requires: WRITE,
  handler: async ({ id }, ctx) => ctx.services.files.untrash(id),
});

export const share = defineFunction({
  title: 'Create a share link',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  description:
    'Make a share link: anyone holding its url can download the file without an account. Optional expiry, password ' +
    '(sent as X-Share-Password), download limit, label, and a pinned version. The url is shown only now.',
  args: Type.Object({
    id: FileId,
    expires_in_seconds: Type.Optional(Type.Integer({ minimum: 1, description: 'The link stops working after this long.' })),
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
    max_downloads: Type.Optional(Type.Integer({ minimum: 1 })),
    version: Type.Optional(Version),
    label: Type.Optional(Type.String({ maxLength: 200, description: 'Who the link is for.' })),
  }),
  examples: [{ args: { id: '0b0e6c9e-2f7a-4c1e-9d8e-8f1d2a3b4c5d', expires_in_seconds: 86400, label: 'for Ana' } }],
  requires: WRITE,
  handler: async ({ id, ...opts }, ctx) => {
    const s = await ctx.services.files.createShare(id, opts);
    return { id: s.id, url: s.url, expires_at: s.expires_at, max_downloads: s.max_downloads, has_password: s.has_password, label: s.label };
  },
});

export const shares = defineFunction({
  title: 'List your share links',
  annotations: { readOnlyHint: true, openWorldHint: false },
  description: 'Your share links with their downloads, last access and state (active, expired, exhausted).',
  args: Type.Object({ file_id: Type.Optional(FileId) }),
  requires: READ,
  handler: async ({ file_id }, ctx) => ({ shares: await ctx.services.files.listShares(file_id !== undefined ? { file_id } : {}) }),
});

export const revoke_share = defineFunction({
  title: 'Revoke a share link',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  description: 'Revoke a share link (its id from files.shares): it stops working at once.',
  args: Type.Object({ id: Type.String({ format: 'uuid', description: 'The share link id.' }) }),
  requires: WRITE,
  handler: async ({ id }, ctx) => {
    await ctx.services.files.revokeShare(id);
    return { revoked: id };
  },
});
