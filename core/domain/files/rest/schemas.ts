// TypeBox schemas of the filedb REST group: they validate requests and make the OpenAPI document.
import { Type, type TSchema } from 'typebox';
import { LIST_LIMIT_MAX } from '../../notes/types.ts';
import { ListQuery } from '../../notes/rest/schemas.ts';

const DateTime = Type.String({ format: 'date-time' });
const Uuid = Type.String({ format: 'uuid' });
const Sha256 = Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the content, hex.' });

export const File = Type.Object(
  {
    id: Uuid,
    name: Type.String({ description: 'One name, no slashes, at most 255 bytes of UTF-8.' }),
    folder: Type.String({ description: "A folder path ('' for none), e.g. projects/2026." }),
    content_type: Type.String({ description: 'Sniffed from the bytes; else the declared type; else guessed from the name.' }),
    size: Type.Integer({ minimum: 0, description: 'Bytes.' }),
    sha256: Sha256,
    version: Type.Integer({ minimum: 1, description: 'Also the ETag: "<version>". Every new content increments it.' }),
    note_id: Type.Union([Uuid, Type.Null()], { description: 'The note this file is attached to.' }),
    created_at: DateTime,
    updated_at: DateTime,
    deleted_at: Type.Union([DateTime, Type.Null()], { description: 'Set while the file is in the trash.' }),
  },
  { description: 'A file (its current version).' },
);

export const FileVersion = Type.Object(
  {
    file_id: Uuid,
    version: Type.Integer({ minimum: 1 }),
    name: Type.String(),
    content_type: Type.String(),
    size: Type.Integer({ minimum: 0 }),
    sha256: Sha256,
    change: Type.Union([Type.Literal('upload'), Type.Literal('restore')], { description: 'What made this version.' }),
    created_at: DateTime,
  },
  { description: 'One version of a file.' },
);

export const FilePage = Type.Object(
  {
    items: Type.Array(File),
    next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass it back as `cursor`; null on the last page.' }),
    limit: Type.Integer({ minimum: 1 }),
    limit_clamped_from: Type.Optional(Type.Integer({ description: `Present when the limit asked for was over ${LIST_LIMIT_MAX}.` })),
  },
  { description: 'A page of files, most recently updated first.' },
);

export const VersionList = Type.Object({ items: Type.Array(FileVersion) }, { description: 'Every version, newest first.' });
export const FileList = Type.Object({ items: Type.Array(File) }, { description: 'Files.' });

export const ShareLink = Type.Object(
  {
    id: Uuid,
    file_id: Uuid,
    file_name: Type.String(),
    version: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: "The version served; null: the file's current one." }),
    label: Type.String(),
    has_password: Type.Boolean(),
    expires_at: Type.Union([DateTime, Type.Null()]),
    max_downloads: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
    downloads: Type.Integer({ minimum: 0 }),
    last_access_at: Type.Union([DateTime, Type.Null()]),
    created_at: DateTime,
    state: Type.Union([Type.Literal('active'), Type.Literal('expired'), Type.Literal('exhausted')]),
  },
  { description: 'A share link (never its token, which is shown once).' },
);

export const CreatedShare = Type.Object(
  {
    ...ShareLink.properties,
    token: Type.String({ description: 'The secret part of the URL. Shown only now; Folio keeps only its hash.' }),
    url: Type.String({ description: 'The full public URL: GET or HEAD it, no token needed (X-Share-Password if it has one).' }),
  },
  { description: 'A new share link.' },
);

export const ShareList = Type.Object({ items: Type.Array(ShareLink) }, { description: 'Share links, newest first.' });

export const UploadStatus = Type.Object(
  {
    id: Uuid,
    offset: Type.Integer({ minimum: 0, description: 'Bytes received so far: send the rest from here (PATCH with Upload-Offset).' }),
    length: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'The Upload-Length declared at creation.' }),
    expires_at: Type.Union([DateTime, Type.Null()], { description: 'When an unfinished upload is removed; null once finished.' }),
    file_id: Type.Union([Uuid, Type.Null()], { description: 'The file the finished upload became (the same id); null until then.' }),
  },
  { description: 'A resumable (tus) upload.' },
);

export const FileText = Type.Object(
  {
    file_id: Uuid,
    version: Type.Integer({ minimum: 1 }),
    state: Type.Union([Type.Literal('pending'), Type.Literal('extracted'), Type.Literal('skipped'), Type.Literal('failed')], {
      description:
        'pending: not extracted yet (a job does it after each upload); skipped: nothing to extract (see note); failed: extraction went over its memory or time limit (see note). The file itself is stored either way.',
    }),
    note: Type.Union([Type.String(), Type.Null()], { description: 'Why it was skipped or failed, or truncated when the text was cut.' }),
    pages: Type.Integer({ minimum: 0, description: 'Pages of a PDF (0 for other types).' }),
    page: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'The page this text is, when one was asked for.' }),
    text: Type.String({ description: 'The text (empty unless extracted).' }),
  },
  { description: "A version's extracted text." },
);

// ---- requests

export const UploadParams = Type.Object({
  id: Type.String({ format: 'uuid', description: 'The upload id (the last segment of its URL).' }),
});
export const TextQuery = Type.Object(
  {
    version: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647, description: 'A version (default: the current one).' })),
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100000, description: 'One page of a PDF (1 is the first).' })),
  },
  { additionalProperties: false },
);

export const IdParams = Type.Object({ id: Type.String({ format: 'uuid', description: 'The file id.' }) });
export const ShareParams = Type.Object({ id: Type.String({ format: 'uuid', description: 'The share link id.' }) });
export const NoteParams = Type.Object({ id: Type.String({ format: 'uuid', description: 'The note id.' }) });
export const VersionParams = Type.Object({
  id: Type.String({ format: 'uuid', description: 'The file id.' }),
  version: Type.Integer({ minimum: 1, maximum: 2147483647, description: 'A version of the file.' }),
});

export const IdPrefix = Type.String({
  minLength: 4,
  maxLength: 36,
  pattern: '^[0-9a-fA-F-]+$',
  description: 'Only those whose id starts with this: at least 4 hex digits, as lists show ids shortened (e.g. d5a51b13).',
});

export const FilesQuery = Type.Object(
  {
    ...ListQuery.properties,
    folder: Type.Optional(Type.String({ maxLength: 1024, description: 'Only files in this folder.' })),
    id_prefix: Type.Optional(IdPrefix),
  },
  { additionalProperties: false },
);

export const UploadQuery = Type.Object(
  {
    name: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description: "The file's name (one name, no slashes). Multipart: else the form field `name`, else the part's filename.",
      }),
    ),
    folder: Type.Optional(Type.String({ maxLength: 1024, description: 'A folder path, e.g. projects/2026 (default: none).' })),
    note_id: Type.Optional(Type.String({ format: 'uuid', description: 'Attach the file to this note of yours.' })),
  },
  { additionalProperties: false },
);

export const PatchFile = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'A new name.' })),
    folder: Type.Optional(Type.String({ maxLength: 1024, description: "A new folder ('' for none)." })),
    note_id: Type.Optional(
      Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'Attach to this note; null detaches.' }),
    ),
  },
  { additionalProperties: false, description: 'What to change; the content is changed with PUT .../content.' },
);

export const CreateShareBody = Type.Object(
  {
    expires_in_seconds: Type.Optional(Type.Integer({ minimum: 1, description: 'The link stops working this many seconds from now.' })),
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'Needed to open the link (X-Share-Password).' })),
    max_downloads: Type.Optional(Type.Integer({ minimum: 1, description: 'The link stops working after this many downloads.' })),
    version: Type.Optional(Type.Integer({ minimum: 1, description: "Serve this version; default: always the file's current version." })),
    label: Type.Optional(Type.String({ maxLength: 200, description: 'A note to yourself: who the link is for.' })),
  },
  { additionalProperties: false },
);

export const SharesQuery = Type.Object(
  { file_id: Type.Optional(Type.String({ format: 'uuid', description: 'Only the links of this file.' })) },
  { additionalProperties: false },
);

export const COMPONENTS: Record<string, TSchema> = {
  File,
  FileVersion,
  FilePage,
  ShareLink,
  CreatedShare,
  CreateShare: CreateShareBody,
  PatchFile,
  UploadStatus,
  FileText,
};
