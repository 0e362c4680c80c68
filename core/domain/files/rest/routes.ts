// The filedb group: files, their versions and content, the trash, attachments to notes, and share
// links, as a route table over FilesService. Handlers map HTTP to service calls and back; the rules
// are the service's. Uploads are `upload` routes: their bodies stream, never through the JSON parser.
import { Conflict, PreconditionFailed, BadArguments } from '../../../contract/errors.ts';
import { etag, expectedVersion } from '../../../contract/preconditions.ts';
import { LIMIT_CLAMPED, pageReply, route, type HeaderDoc, type Reply, type Route, type UploadBody } from '../../../contract/rest.ts';
import { FILE_404, type FilesServiceImpl } from '../service.ts';
import { SHARE_404 } from '../shares.ts';
import type { ContentRef, FileMeta } from '../types.ts';
import { TUS_EXTENSIONS, UPLOAD_404 } from '../resumable.ts';
import { downloadReply } from './download.ts';
import * as S from './schemas.ts';

const READ = ['files:read'];
const WRITE = ['files:write'];
const tags = ['filedb'];
const VERSION_404 = 'no such file or version. The file may not exist or belong to another account; GET its versions for the ones it has.';
const NOTE_404 = 'no such note, or no such file. Either may not exist or belong to another account.';

const ETAG: HeaderDoc = {
  name: 'ETag',
  description: 'The file\'s version, "<version>". Send it back as If-Match.',
  schema: { type: 'string' },
};
const IF_MATCH: HeaderDoc = {
  name: 'If-Match',
  description:
    'The ETag of the version the new content replaces, e.g. "3". Required (428 without); a stale one is 412 with the current file.',
  schema: { type: 'string', examples: ['"3"'] },
};
const DOWNLOAD_HEADERS: HeaderDoc[] = [
  { name: 'If-None-Match', description: 'An ETag you hold: 304 when it is still current.', schema: { type: 'string' } },
  {
    name: 'Range',
    description: 'One byte range, e.g. bytes=0-1023 or bytes=-500: 206 with that part; past the end 416.',
    schema: { type: 'string' },
  },
  { name: 'If-Range', description: 'Honour Range only if the ETag still matches.', schema: { type: 'string' } },
];
const CONTENT_HEADERS: HeaderDoc[] = [
  ETAG,
  {
    name: 'Content-Disposition',
    description: 'attachment (inline for images, audio, video, plain text) with the file name, RFC 6266/5987.',
    schema: { type: 'string' },
  },
  { name: 'Content-Range', description: 'On 206: bytes <first>-<last>/<size>.', schema: { type: 'string' } },
  { name: 'Repr-Digest', description: 'sha-256 of the whole content (RFC 9530).', schema: { type: 'string' } },
];
const UPLOAD_DOC =
  'The bytes: the raw body (its Content-Type is the declared type, the fallback when the bytes do not say what they are), or multipart/form-data with the bytes in the part `file` (and the fields `name` and `folder`, if given, before it). Streamed to storage; never buffered.';

const fileReply = (f: FileMeta, status = 200, headers: Record<string, string> = {}): Reply => ({
  status,
  body: f,
  headers: { ETag: etag(f.version), ...headers },
});

/** A Conflict about a file at another version than the one asked for is the client's stale precondition: 412. */
async function conditional<T>(expected: number | undefined, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (expected === undefined || !(err instanceof Conflict)) throw err;
    const current = err.current as FileMeta | undefined;
    if (typeof current?.version !== 'number' || current.version === expected || current.deleted_at !== null) throw err;
    throw new PreconditionFailed(
      `the file is at version ${current.version}, not ${expected}: it changed since you read it; nothing was written. \`current\` is the file as it is now.`,
      current,
      etag(current.version),
    );
  }
}

function uploadOf(upload: UploadBody | undefined, signal: AbortSignal) {
  if (!upload) throw new BadArguments('this operation takes the file as the request body');
  return { source: upload.stream, declaredType: upload.contentType, length: upload.length, signal };
}

const TUS_HEADERS: HeaderDoc[] = [
  { name: 'Tus-Resumable', description: 'The tus protocol version: 1.0.0.', schema: { type: 'string', const: '1.0.0' }, required: true },
];
const TUS_DOC =
  'The tus resumable-upload protocol 1.0.0 (https://tus.io/protocols/resumable-upload): any tus client works (tus-js-client, Uppy, tusd-client, `folio files upload`).';

/** What OPTIONS on the upload URLs says of this server's tus (the protocol's discovery). */
const tusOptions = (files: FilesServiceImpl) => () => ({
  'Tus-Resumable': '1.0.0',
  'Tus-Version': '1.0.0',
  'Tus-Extension': TUS_EXTENSIONS.join(','),
  'Tus-Max-Size': String(files.maxFileBytes),
});

function tus(files: FilesServiceImpl) {
  return (call: Parameters<Route['handler']>[0]) => {
    if (!files.uploads) throw new BadArguments('resumable uploads are not available on this server');
    return files.uploads.handle(call as Parameters<NonNullable<FilesServiceImpl['uploads']>['handle']>[0]);
  };
}

export function filedbRoutes(files: FilesServiceImpl): Route[] {
  const download = (call: { method: string; header: (n: string) => string | undefined }, ref: ContentRef) =>
    downloadReply(call, ref, (range) => files.read(ref, range));
  return [
    route({
      id: 'createUpload',
      method: 'POST',
      path: '/filedb/uploads',
      summary: 'Start a resumable upload (tus)',
      description: `${TUS_DOC} Send Upload-Length (the size; required) and Upload-Metadata with \`name\` (or \`filename\`) and optionally \`filetype\`, \`folder\`, \`note_id\`, each base64-encoded. Over the per-file limit (413 file_too_large) or your quota (507 quota_exceeded) it is refused here, before any byte. 201 with the upload's URL in Location; send the bytes there with PATCH. The body may already carry bytes (creation-with-upload).`,
      tags,
      scopes: WRITE,
      headers: [
        ...TUS_HEADERS,
        { name: 'Upload-Length', description: 'The whole size in bytes.', schema: { type: 'string', pattern: '^\\d+$' }, required: true },
        {
          name: 'Upload-Metadata',
          description: 'key base64(value) pairs, comma-separated: name (required), filetype, folder, note_id.',
          schema: { type: 'string' },
          required: true,
        },
      ],
      raw: {
        description: 'Optionally the first bytes (Content-Type: application/offset+octet-stream).',
        media: ['application/offset+octet-stream'],
      },
      responses: {
        201: {
          description:
            'The upload exists; send its bytes to Location. An empty text/plain body, unless this request brought every byte (creation-with-upload): then the file is stored, the body is the file (JSON) and Folio-File-Id names it.',
          schema: S.File,
          media: ['text/plain'],
          headers: [
            { name: 'Location', description: 'The upload URL.', schema: { type: 'string' } },
            { name: 'Upload-Offset', description: 'Bytes received (with creation-with-upload).', schema: { type: 'string' } },
            { name: 'Upload-Expires', description: 'When an unfinished upload is removed.', schema: { type: 'string' } },
            { name: 'Folio-File-Id', description: 'The file it became, when this request finished it.', schema: { type: 'string' } },
          ],
        },
      },
      problems: [
        'tus_version_unsupported',
        'unsupported_media_type',
        'file_too_large',
        'quota_exceeded',
        'storage_full',
        'blob_store_unavailable',
      ],
      options: tusOptions(files),
      handler: tus(files),
    }),
    route({
      id: 'getUpload',
      method: 'GET',
      path: '/filedb/uploads/{id}',
      summary: 'Where a resumable upload stands (GET, or HEAD as tus asks)',
      description: `${TUS_DOC} HEAD (with Tus-Resumable) answers Upload-Offset, the bytes received, and Upload-Length; resume with PATCH from that offset. GET answers the same as JSON. Once finished, both name the file in ${'`'}Folio-File-Id${'`'} (the file has the upload's id); an upload whose every byte arrived but whose answer was lost is finished by this request.`,
      tags,
      scopes: WRITE,
      params: S.UploadParams,
      raw: { description: 'No body.' },
      responses: {
        200: {
          description: 'The upload.',
          schema: S.UploadStatus,
          headers: [
            { name: 'Upload-Offset', description: 'Bytes received (HEAD).', schema: { type: 'string' } },
            { name: 'Upload-Length', description: 'The declared size (HEAD).', schema: { type: 'string' } },
            { name: 'Folio-File-Id', description: 'The file it became, once finished.', schema: { type: 'string' } },
          ],
        },
        423: {
          description:
            'HEAD on an upload whose every byte arrived while the file storage cannot take it: the upload is kept whole; HEAD again after Retry-After (GET answers 503 blob_store_unavailable or 507 storage_full instead).',
          headers: [
            { name: 'Retry-After', description: 'Seconds to wait before asking again.', schema: { type: 'string' } },
            { name: 'Upload-Offset', description: 'Bytes received (all of them).', schema: { type: 'string' } },
            { name: 'Upload-Length', description: 'The declared size.', schema: { type: 'string' } },
          ],
        },
      },
      problems: ['tus_version_unsupported', 'storage_full', 'blob_store_unavailable'],
      notFound: UPLOAD_404,
      options: tusOptions(files),
      handler: tus(files),
    }),
    route({
      id: 'appendUpload',
      method: 'PATCH',
      path: '/filedb/uploads/{id}',
      summary: 'Send bytes of a resumable upload (tus)',
      description: `${TUS_DOC} Upload-Offset must be the offset the server has (409 conflict otherwise: HEAD for it). 204 with the new Upload-Offset; the request that brings the last byte stores the file and answers 200 with it (and Folio-File-Id).`,
      tags,
      scopes: WRITE,
      params: S.UploadParams,
      headers: [
        ...TUS_HEADERS,
        { name: 'Upload-Offset', description: 'Where these bytes start.', schema: { type: 'string' }, required: true },
      ],
      raw: { description: 'The next bytes.', media: ['application/offset+octet-stream'] },
      responses: {
        204: {
          description: 'Received.',
          headers: [{ name: 'Upload-Offset', description: 'Bytes received so far.', schema: { type: 'string' } }],
        },
        200: { description: 'The last bytes: the file is stored.', schema: S.File },
      },
      problems: [
        'tus_version_unsupported',
        'unsupported_media_type',
        'conflict',
        'file_too_large',
        'quota_exceeded',
        'storage_full',
        'blob_store_unavailable',
      ],
      notFound: UPLOAD_404,
      options: tusOptions(files),
      handler: tus(files),
    }),
    route({
      id: 'cancelUpload',
      method: 'DELETE',
      path: '/filedb/uploads/{id}',
      summary: 'Cancel a resumable upload (tus termination)',
      description: 'Removes an unfinished upload and its bytes.',
      tags,
      scopes: WRITE,
      params: S.UploadParams,
      headers: TUS_HEADERS,
      raw: { description: 'No body.' },
      responses: { 204: { description: 'Cancelled.' } },
      problems: ['tus_version_unsupported'],
      notFound: UPLOAD_404,
      options: tusOptions(files),
      handler: tus(files),
    }),
    route({
      id: 'uploadFile',
      method: 'POST',
      path: '/filedb/files',
      summary: 'Upload a file',
      description: `A new file at version 1. ${UPLOAD_DOC} Over the per-file limit: 413 file_too_large; over your quota: 507 quota_exceeded; nothing is stored in either case.`,
      tags,
      scopes: WRITE,
      query: S.UploadQuery,
      upload: { description: UPLOAD_DOC },
      responses: {
        201: {
          description: 'Stored.',
          schema: S.File,
          headers: [ETAG, { name: 'Location', description: 'The URL of the new file.', schema: { type: 'string' } }],
        },
      },
      problems: ['file_too_large', 'quota_exceeded', 'storage_full', 'blob_store_unavailable'],
      handler: async ({ principal, query, upload, signal }) => {
        const name = query.name ?? upload?.fields.name ?? upload?.filename;
        if (name === undefined)
          throw new BadArguments(
            "the file needs a name: ?name=report.pdf (or, in a multipart form, a `name` field or the part's filename).",
            [{ in: 'query', path: 'name', message: 'is required' }],
          );
        const f = await files.create(principal, {
          ...uploadOf(upload, signal),
          name,
          folder: query.folder ?? upload?.fields.folder,
          note_id: query.note_id,
        });
        return fileReply(f, 201, { Location: `/api/v1/filedb/files/${f.id}` });
      },
    }),
    route({
      id: 'listFiles',
      method: 'GET',
      path: '/filedb/files',
      summary: 'List files',
      description:
        'Your live files, most recently updated first. Filter by folder or id_prefix (the short ids lists print); page with limit and cursor.',
      tags,
      scopes: READ,
      query: S.FilesQuery,
      responses: { 200: { description: 'A page of files.', schema: S.FilePage, headers: [LIMIT_CLAMPED] } },
      handler: async ({ principal, query }) =>
        pageReply(
          await files.list(principal, {
            ...(query.limit !== undefined ? { limit: query.limit } : {}),
            ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
            ...(query.folder !== undefined ? { folder: query.folder } : {}),
            ...(query.id_prefix !== undefined ? { idPrefix: query.id_prefix } : {}),
          }),
          query.limit,
        ),
    }),
    route({
      id: 'getFile',
      method: 'GET',
      path: '/filedb/files/{id}',
      summary: "Get a file's metadata",
      description: 'Name, type, size, sha256, version (also the ETag) and attachment. A trashed file is returned too, with deleted_at set.',
      tags,
      scopes: READ,
      params: S.IdParams,
      headers: [{ name: 'If-None-Match', description: 'An ETag you hold; 304 when it is still current.', schema: { type: 'string' } }],
      responses: {
        200: { description: 'The file.', schema: S.File, headers: [ETAG] },
        304: { description: 'Not modified.', headers: [ETAG] },
      },
      notFound: FILE_404,
      handler: async ({ principal, params, header }) => {
        const f = await files.get(principal, params.id);
        const inm = header('if-none-match');
        if (inm && inm.split(',').some((t) => t.trim().replace(/^W\//, '') === etag(f.version) || t.trim() === '*'))
          return { status: 304, headers: { ETag: etag(f.version) } };
        return fileReply(f);
      },
    }),
    route({
      id: 'editFile',
      method: 'PATCH',
      path: '/filedb/files/{id}',
      summary: 'Rename, move or attach a file',
      description:
        'Changes the name, the folder, or the note it is attached to (note_id: null detaches). The content is not touched and the version stays. If-Match is optional here; when sent, a stale one is 412 with the current file and nothing changes.',
      tags,
      scopes: WRITE,
      params: S.IdParams,
      headers: [
        {
          name: 'If-Match',
          description: 'Optional: the ETag you read, e.g. "3"; the edit is made only while the file is still at that version.',
          schema: { type: 'string', examples: ['"3"'] },
        },
      ],
      body: S.PatchFile,
      responses: { 200: { description: 'The file.', schema: S.File, headers: [ETAG] } },
      problems: ['precondition_failed'],
      notFound: NOTE_404,
      handler: async ({ principal, params, body, header }) => {
        // Sent, If-Match is honoured (a client that sends it relies on it), though this edit never
        // needs it: it changes no content. `*` matches any existing file; a version is checked in
        // the same statement as the edit.
        const ifMatch = header('if-match')?.trim();
        const v = ifMatch === '*' ? undefined : expectedVersion({ header: ifMatch, bodyVersion: undefined }, false);
        if (v === 'mismatch') {
          const cur = await files.get(principal, params.id);
          throw new PreconditionFailed(`the file is at version ${cur.version}; nothing was changed.`, cur, etag(cur.version));
        }
        let f: FileMeta | undefined;
        if (body.name !== undefined || body.folder !== undefined)
          f = await files.rename(
            principal,
            params.id,
            {
              ...(body.name !== undefined ? { name: body.name } : {}),
              ...(body.folder !== undefined ? { folder: body.folder } : {}),
            },
            v,
          );
        if (body.note_id !== undefined) f = await files.attach(principal, params.id, body.note_id, v);
        return fileReply(f ?? (await files.get(principal, params.id)));
      },
    }),
    route({
      id: 'trashFile',
      method: 'DELETE',
      path: '/filedb/files/{id}',
      summary: 'Move a file to the trash',
      description:
        'The file leaves the lists, keeps its versions and share links (which stop answering), and can be restored until it is purged.',
      tags,
      scopes: WRITE,
      params: S.IdParams,
      responses: { 200: { description: 'The file, now in the trash.', schema: S.File, headers: [ETAG] } },
      problems: ['conflict'],
      notFound: FILE_404,
      handler: async ({ principal, params }) => fileReply(await files.trash(principal, params.id)),
    }),
    route({
      id: 'restoreFile',
      method: 'POST',
      path: '/filedb/files/{id}/restore',
      summary: 'Restore a file from the trash',
      description: 'The file is live again, as it was when trashed. Restoring a live file is 409 conflict.',
      tags,
      scopes: WRITE,
      params: S.IdParams,
      responses: { 200: { description: 'The file, live again.', schema: S.File, headers: [ETAG] } },
      problems: ['conflict'],
      notFound: FILE_404,
      handler: async ({ principal, params }) => fileReply(await files.untrash(principal, params.id)),
    }),
    route({
      id: 'listFileTrash',
      method: 'GET',
      path: '/filedb/trash',
      summary: 'List the trash',
      description:
        'Your trashed files, a page at a time (limit, cursor), optionally in one folder. Restore one with POST /filedb/files/{id}/restore, or purge it with DELETE /filedb/trash/{id}.',
      tags,
      scopes: READ,
      query: S.FilesQuery,
      responses: { 200: { description: 'A page of trashed files.', schema: S.FilePage } },
      handler: async ({ principal, query }) => ({
        status: 200,
        body: await files.list(principal, {
          trashed: true,
          ...(query.limit !== undefined ? { limit: query.limit } : {}),
          ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
          ...(query.folder !== undefined ? { folder: query.folder } : {}),
          ...(query.id_prefix !== undefined ? { idPrefix: query.id_prefix } : {}),
        }),
      }),
    }),
    route({
      id: 'purgeFile',
      method: 'DELETE',
      path: '/filedb/trash/{id}',
      summary: 'Purge a file for good',
      description: 'Removes a trashed file, all its versions and share links, and gives their bytes back to your quota. Cannot be undone.',
      tags,
      scopes: WRITE,
      params: S.IdParams,
      responses: { 204: { description: 'Purged.' } },
      problems: ['conflict'],
      notFound: FILE_404,
      handler: async ({ principal, params }) => {
        await files.purge(principal, params.id);
        return { status: 204 };
      },
    }),
    route({
      id: 'downloadFile',
      method: 'GET',
      path: '/filedb/files/{id}/content',
      summary: "Download a file's content (GET or HEAD)",
      description:
        'The current version\'s bytes. ETag is "<version>"; Range, If-Range and If-None-Match are honoured; HEAD gives the headers only.',
      tags,
      scopes: READ,
      params: S.IdParams,
      headers: DOWNLOAD_HEADERS,
      responses: {
        200: { description: 'The bytes.', media: ['*/*'], headers: CONTENT_HEADERS },
        206: { description: 'The range asked for.', media: ['*/*'], headers: CONTENT_HEADERS },
        304: { description: 'Not modified.', headers: [ETAG] },
      },
      problems: ['range_not_satisfiable', 'blob_store_unavailable'],
      notFound: FILE_404,
      handler: async (call) => download(call, await files.content(call.principal, call.params.id)),
    }),
    route({
      id: 'replaceFileContent',
      method: 'PUT',
      path: '/filedb/files/{id}/content',
      summary: 'Upload a new version',
      description: `New content for the file, as a new version (the old ones are kept). Needs If-Match: "<version>": 428 without, 412 with a stale one (nothing is read then). ${UPLOAD_DOC}`,
      tags,
      scopes: WRITE,
      params: S.IdParams,
      headers: [IF_MATCH],
      upload: { description: UPLOAD_DOC },
      responses: { 200: { description: 'The file at its new version.', schema: S.File, headers: [ETAG] } },
      problems: [
        'precondition_failed',
        'precondition_required',
        'conflict',
        'file_too_large',
        'quota_exceeded',
        'storage_full',
        'blob_store_unavailable',
      ],
      notFound: FILE_404,
      handler: async ({ principal, params, header, upload, signal }) => {
        const v = expectedVersion(
          { header: header('if-match'), bodyVersion: undefined },
          true,
          'a new version replaces the file\'s content, so it must say which version it is based on: send If-Match: "<version>" (the ETag of GET /api/v1/filedb/files/{id}).',
        );
        const expected = v === 'mismatch' ? 0 : v!;
        if (v === 'mismatch') {
          const cur = await files.get(principal, params.id);
          throw new PreconditionFailed('If-Match names no version of this file; nothing was written.', cur, etag(cur.version));
        }
        return fileReply(await conditional(expected, () => files.putContent(principal, params.id, expected, uploadOf(upload, signal))));
      },
    }),
    route({
      id: 'listFileVersions',
      method: 'GET',
      path: '/filedb/files/{id}/versions',
      summary: 'List the versions of a file',
      description:
        'Every stored version with its size, type, sha-256 and what made it (an upload or a restore), newest first. Download one from /filedb/files/{id}/versions/{version}/content.',
      tags,
      scopes: READ,
      params: S.IdParams,
      responses: { 200: { description: 'Every version, newest first.', schema: S.VersionList } },
      notFound: FILE_404,
      handler: async ({ principal, params }) => ({ status: 200, body: { items: await files.versions(principal, params.id) } }),
    }),
    route({
      id: 'downloadFileVersion',
      method: 'GET',
      path: '/filedb/files/{id}/versions/{version}/content',
      summary: 'Download one version (GET or HEAD)',
      description:
        'The bytes of that version, with the same conditional and range requests as the current content (If-None-Match, Range, If-Range).',
      tags,
      scopes: READ,
      params: S.VersionParams,
      headers: DOWNLOAD_HEADERS,
      responses: {
        200: { description: 'The bytes of that version.', media: ['*/*'], headers: CONTENT_HEADERS },
        206: { description: 'The range asked for.', media: ['*/*'], headers: CONTENT_HEADERS },
        304: { description: 'Not modified.', headers: [ETAG] },
      },
      problems: ['range_not_satisfiable', 'blob_store_unavailable'],
      notFound: VERSION_404,
      handler: async (call) => download(call, await files.content(call.principal, call.params.id, call.params.version)),
    }),
    route({
      id: 'restoreFileVersion',
      method: 'POST',
      path: '/filedb/files/{id}/versions/{version}/restore',
      summary: 'Restore a version',
      description: "Makes that version's content the current one, as a new version. If-Match is optional here and honoured when sent.",
      tags,
      scopes: WRITE,
      params: S.VersionParams,
      headers: [IF_MATCH],
      responses: { 200: { description: 'The file at its new version.', schema: S.File, headers: [ETAG] } },
      problems: ['precondition_failed', 'conflict', 'quota_exceeded'],
      notFound: VERSION_404,
      handler: async ({ principal, params, header }) => {
        const v = expectedVersion({ header: header('if-match'), bodyVersion: undefined }, false);
        const expected = v === 'mismatch' ? 0 : v;
        return fileReply(await conditional(expected, () => files.restoreVersion(principal, params.id, params.version, expected)));
      },
    }),
    route({
      id: 'getFileText',
      method: 'GET',
      path: '/filedb/files/{id}/text',
      summary: "A file's extracted text",
      description:
        'The text Folio extracted from the current version (or `version`): a PDF page by page (`page`), a DOCX, and text, Markdown, CSV and JSON as they are. Extraction runs in the background after each upload: until then `state` is pending; types without text are skipped.',
      tags,
      scopes: READ,
      params: S.IdParams,
      query: S.TextQuery,
      responses: { 200: { description: 'The text.', schema: S.FileText } },
      notFound: VERSION_404,
      handler: async ({ principal, params, query }) => ({
        status: 200,
        body: await files.text(principal, params.id, {
          ...(query.version !== undefined ? { version: query.version } : {}),
          ...(query.page !== undefined ? { page: query.page } : {}),
        }),
      }),
    }),
    route({
      id: 'listNoteFiles',
      method: 'GET',
      path: '/filedb/notes/{id}/files',
      summary: "List a note's attachments",
      description: 'The live files attached to one of your notes (attach one with `note_id` on upload); trashed ones are left out.',
      tags,
      scopes: READ,
      params: S.NoteParams,
      responses: { 200: { description: 'The live files attached to the note.', schema: S.FileList } },
      notFound: 'no such note. It may never have existed, have been purged, or belong to another account.',
      handler: async ({ principal, params }) => ({ status: 200, body: { items: await files.attachments(principal, params.id) } }),
    }),
    route({
      id: 'createShare',
      method: 'POST',
      path: '/filedb/files/{id}/shares',
      summary: 'Share a file by link',
      description:
        "A link anyone holding it can download from, without an account: the file's current version, or `version`. Optional expiry, password, download limit and label. The answer's `url` (with its token) is shown only now.",
      tags,
      scopes: WRITE,
      params: S.IdParams,
      body: S.CreateShareBody,
      bodyRequired: false,
      responses: { 201: { description: 'The new link.', schema: S.CreatedShare } },
      problems: ['conflict'],
      notFound: VERSION_404,
      handler: async ({ principal, params, body, baseUrl }) => {
        const share = await files.createShare(principal, params.id, body ?? {});
        return { status: 201, body: { ...share, url: `${baseUrl}/s/${share.token}` } };
      },
    }),
    route({
      id: 'listShares',
      method: 'GET',
      path: '/filedb/shares',
      summary: 'List your share links',
      description: 'Every link, with its downloads, last access and state (expired and exhausted links stay listed until revoked).',
      tags,
      scopes: READ,
      query: S.SharesQuery,
      responses: { 200: { description: 'Share links, newest first.', schema: S.ShareList } },
      handler: async ({ principal, query }) => ({
        status: 200,
        body: { items: await files.listShares(principal, query.file_id !== undefined ? { file_id: query.file_id } : {}) },
      }),
    }),
    route({
      id: 'revokeShare',
      method: 'DELETE',
      path: '/filedb/shares/{id}',
      summary: 'Revoke a share link',
      description: 'The link stops working at once and for good.',
      tags,
      scopes: WRITE,
      params: S.ShareParams,
      responses: { 204: { description: 'Revoked.' } },
      notFound: SHARE_404,
      handler: async ({ principal, params }) => {
        await files.revokeShare(principal, params.id);
        return { status: 204 };
      },
    }),
  ];
}
