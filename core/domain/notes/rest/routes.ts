// The notetaker group: notes, trash, revisions, tags, search and reports, as a route table over
// NotesService. Handlers map HTTP to service calls and back; the rules (ownership, versions,
// limits) are the service's.
import type { Principal } from '../../identity/types.ts';
import { BadArguments, PreconditionFailed, type ArgProblem } from '../../../contract/errors.ts';
import type { NotesService, Note } from '../types.ts';
import { LIMIT_CLAMPED, pageReply, route, type HeaderDoc, type Reply, type Route } from '../../../contract/rest.ts';
import { conditional, etag, expectedVersion } from '../../../contract/preconditions.ts';
import { streamReport } from './report.ts';
import * as S from './schemas.ts';

const READ = ['notes:read'];
const WRITE = ['notes:write'];
const tags = ['notetaker'];

const NOTE_404 = 'no such note. It may never have existed, have been deleted for good, or belong to another account.';
const TRASH_404 =
  'no such note in your trash. It may never have existed, be live (not trashed), have been purged, or belong to another account.';
const REVISION_404 =
  'no such note or revision. The note may not exist or belong to another account; GET its revisions for the versions it has.';

const IF_MATCH: HeaderDoc = {
  name: 'If-Match',
  description:
    'The ETag of the version the edit is based on, e.g. "3" (W/"3" is accepted too). Equivalent to expected_version in the body. A stale one: 412 with the current note.',
  schema: { type: 'string', examples: ['"3"'] },
};

const ETAG: HeaderDoc = {
  name: 'ETag',
  description: 'The note\'s version as a strong entity tag, "<version>". Send it back as If-Match.',
  schema: { type: 'string' },
};

/** Drops undefined members, for the service's exact optional types. */
function compact<T extends Record<string, unknown>>(o: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}

function noteReply(note: Note, status = 200, headers: Record<string, string> = {}): Reply {
  return { status, body: note, headers: { ETag: etag(note.version), ...headers } };
}

const FIELDS = ['title', 'body', 'tags'] as const;
const SECTION_EDITS = ['append', 'prepend', 'replace_section'] as const;

export function notetakerRoutes(notes: NotesService): Route[] {
  return [
    route({
      id: 'listNotes',
      method: 'GET',
      path: '/notetaker/notes',
      summary: 'List notes',
      description:
        'Your live notes, most recently updated first, without bodies. Filter with tag (every given tag must be on the note) or id_prefix (the short ids lists print). Page with limit and cursor.',
      tags,
      scopes: READ,
      query: S.NotesQuery,
      responses: { 200: { description: 'A page of note summaries.', schema: S.NotePage, headers: [LIMIT_CLAMPED] } },
      handler: async ({ principal, query }) =>
        pageReply(
          await notes.list(principal, compact({ limit: query.limit, cursor: query.cursor, tags: query.tag, idPrefix: query.id_prefix })),
          query.limit,
        ),
    }),
    route({
      id: 'getNote',
      method: 'GET',
      path: '/notetaker/notes/{id}',
      summary: 'Get a note',
      description:
        'The whole note. Its ETag is its version; keep it for a later If-Match. A trashed note is returned too, with deleted_at set.',
      tags,
      scopes: READ,
      params: S.IdParams,
      headers: [{ name: 'If-None-Match', description: 'An ETag you hold; 304 when it is still current.', schema: { type: 'string' } }],
      responses: {
        200: { description: 'The note.', schema: S.Note, headers: [ETAG] },
        304: { description: 'Not modified: your copy (If-None-Match) is current.', headers: [ETAG] },
      },
      notFound: NOTE_404,
      handler: async ({ principal, params, header }) => {
        const note = await notes.get(principal, params.id);
        const tag = etag(note.version);
        const inm = header('if-none-match');
        if (inm && inm.split(',').some((t) => t.trim().replace(/^W\//, '') === tag || t.trim() === '*'))
          return { status: 304, headers: { ETag: tag } };
        return noteReply(note);
      },
    }),
    route({
      id: 'createNote',
      method: 'POST',
      path: '/notetaker/notes',
      summary: 'Create a note',
      description: 'A new note at version 1. The answer carries its Location and ETag.',
      tags,
      scopes: WRITE,
      body: S.CreateNote,
      problems: ['quota_exceeded'],
      responses: {
        201: {
          description: 'Created.',
          schema: S.Note,
          headers: [ETAG, { name: 'Location', description: 'The URL of the new note.', schema: { type: 'string' } }],
        },
      },
      handler: async ({ principal, body }) => {
        const note = await notes.create(
          principal,
          compact({ title: body.title, body: body.body, tags: body.tags, source: body.source }) as { title: string },
        );
        return noteReply(note, 201, { Location: `/api/v1/notetaker/notes/${note.id}` });
      },
    }),
    route({
      id: 'editNote',
      method: 'PATCH',
      path: '/notetaker/notes/{id}',
      summary: 'Edit a note',
      description: [
        'One kind of edit per request:',
        '',
        '- `{"title": ..., "body": ..., "tags": [...]}` (any of them) replaces those fields;',
        '- `{"replace_section": {"heading": "Decisions", "text": "..."}}` replaces the text under a heading;',
        '- `{"append": {"text": "...", "heading"?: "..."}}` adds at the end of the note (or of that heading\'s section);',
        '- `{"prepend": {"text": "...", "heading"?: "..."}}` adds at the start of the note (or just under that heading).',
        '',
        'Replacing edits need the version they are based on: If-Match: "<version>" or expected_version (428 without, 412 with a stale one, carrying the current note). Appends and prepends never overwrite, so they take no version (sending one is 400). A heading that is not in the note is 400.',
      ].join('\n'),
      tags,
      scopes: WRITE,
      params: S.IdParams,
      headers: [IF_MATCH],
      body: S.PatchNote,
      responses: { 200: { description: 'The note after the edit.', schema: S.Note, headers: [ETAG] } },
      problems: ['precondition_failed', 'precondition_required', 'conflict', 'quota_exceeded'],
      notFound: NOTE_404,
      handler: async ({ principal, params, body, header }) => {
        const fields = FIELDS.filter((k) => body[k] !== undefined);
        const sections = SECTION_EDITS.filter((k) => body[k] !== undefined);
        if (sections.length + (fields.length ? 1 : 0) !== 1) {
          const given = [...fields, ...sections];
          const errors: ArgProblem[] = given.length
            ? given.map((k) => ({
                in: 'body',
                path: k,
                message: 'cannot be combined with ' + given.filter((g) => g !== k).join(', '),
              }))
            : [{ in: 'body', path: '(body)', message: 'names no edit: give title/body/tags, or one of append, prepend, replace_section' }];
          throw new BadArguments(
            'one kind of edit per request: fields (title, body, tags), or exactly one of append, prepend, replace_section.',
            errors,
          );
        }
        const kind = sections[0];
        if (kind === 'append' || kind === 'prepend') {
          if (header('if-match') !== undefined || body.expected_version !== undefined)
            throw new BadArguments(`${kind} never overwrites, so it takes no version: drop If-Match and expected_version.`);
          const input = compact({ text: body[kind]!.text, heading: body[kind]!.heading }) as { text: string };
          return noteReply(
            kind === 'append' ? await notes.append(principal, params.id, input) : await notes.prepend(principal, params.id, input),
          );
        }
        const version = await versionOf(notes, principal, params.id, header('if-match'), body.expected_version);
        if (kind === 'replace_section') {
          const { heading, text } = body.replace_section!;
          return noteReply(
            await conditional(version, () => notes.replaceSection(principal, params.id, { expected_version: version, heading, text })),
          );
        }
        return noteReply(
          await conditional(version, () =>
            notes.update(principal, params.id, {
              expected_version: version,
              ...compact({ title: body.title, body: body.body, tags: body.tags }),
            }),
          ),
        );
      },
    }),
    route({
      id: 'replaceNote',
      method: 'PUT',
      path: '/notetaker/notes/{id}',
      summary: 'Replace a note',
      description: 'Sets title, body and tags at once. Needs the version it is based on (If-Match or expected_version).',
      tags,
      scopes: WRITE,
      params: S.IdParams,
      headers: [IF_MATCH],
      body: S.PutNote,
      responses: { 200: { description: 'The note after the edit.', schema: S.Note, headers: [ETAG] } },
      problems: ['precondition_failed', 'precondition_required', 'conflict', 'quota_exceeded'],
      notFound: NOTE_404,
      handler: async ({ principal, params, body, header }) => {
        const version = await versionOf(notes, principal, params.id, header('if-match'), body.expected_version);
        return noteReply(
          await conditional(version, () =>
            notes.update(principal, params.id, { expected_version: version, title: body.title, body: body.body, tags: body.tags }),
          ),
        );
      },
    }),
    route({
      id: 'trashNote',
      method: 'DELETE',
      path: '/notetaker/notes/{id}',
      summary: 'Move a note to the trash',
      description:
        'The note leaves the lists and search, keeps its revisions, and can be restored (POST .../restore) until it is purged. If-Match is optional here and honoured when sent.',
      tags,
      scopes: WRITE,
      params: S.IdParams,
      headers: [IF_MATCH],
      responses: { 200: { description: 'The note, now in the trash (deleted_at set).', schema: S.Note, headers: [ETAG] } },
      problems: ['precondition_failed', 'conflict', 'bad_request', 'quota_exceeded'],
      notFound: NOTE_404,
      handler: async ({ principal, params, header }) => {
        const v = await versionOf(notes, principal, params.id, header('if-match'), undefined, false);
        return noteReply(await conditional(v, () => notes.trash(principal, params.id, v)));
      },
    }),
    route({
      id: 'restoreNote',
      method: 'POST',
      path: '/notetaker/notes/{id}/restore',
      summary: 'Restore a note from the trash',
      description: 'Brings a trashed note back to the live notes, as a new version.',
      tags,
      scopes: WRITE,
      params: S.IdParams,
      responses: { 200: { description: 'The note, live again.', schema: S.Note, headers: [ETAG] } },
      problems: ['conflict', 'quota_exceeded'],
      notFound: NOTE_404,
      handler: async ({ principal, params }) => noteReply(await notes.untrash(principal, params.id)),
    }),
    route({
      id: 'listTrash',
      method: 'GET',
      path: '/notetaker/trash',
      summary: 'List the trash',
      description: 'Your trashed notes, most recently trashed first.',
      tags,
      scopes: READ,
      query: S.TrashQuery,
      responses: { 200: { description: 'A page of trashed note summaries.', schema: S.NotePage, headers: [LIMIT_CLAMPED] } },
      handler: async ({ principal, query }) =>
        pageReply(
          await notes.list(principal, compact({ limit: query.limit, cursor: query.cursor, trashed: true, idPrefix: query.id_prefix })),
          query.limit,
        ),
    }),
    route({
      id: 'purgeNote',
      method: 'DELETE',
      path: '/notetaker/trash/{id}',
      summary: 'Delete a note for good',
      description: 'Removes a trashed note and all its revisions. Only a note in the trash can be purged; this cannot be undone.',
      tags,
      scopes: WRITE,
      params: S.IdParams,
      responses: { 204: { description: 'Gone.' } },
      problems: ['conflict'],
      notFound: TRASH_404,
      handler: async ({ principal, params }) => {
        await notes.purge(principal, params.id);
        return { status: 204 };
      },
    }),
    route({
      id: 'listRevisions',
      method: 'GET',
      path: '/notetaker/notes/{id}/revisions',
      summary: 'List revisions',
      description: 'Every version of the note, newest first, without bodies.',
      tags,
      scopes: READ,
      params: S.IdParams,
      query: S.ListQuery,
      responses: { 200: { description: 'A page of revisions.', schema: S.RevisionPage, headers: [LIMIT_CLAMPED] } },
      notFound: NOTE_404,
      handler: async ({ principal, params, query }) =>
        pageReply(await notes.revisions(principal, params.id, compact({ limit: query.limit, cursor: query.cursor })), query.limit),
    }),
    route({
      id: 'getRevision',
      method: 'GET',
      path: '/notetaker/notes/{id}/revisions/{version}',
      summary: 'Get a revision',
      description: 'The title, body and tags of the note as they were at that version.',
      tags,
      scopes: READ,
      params: S.RevisionParams,
      responses: { 200: { description: 'The revision.', schema: S.Revision } },
      notFound: REVISION_404,
      handler: async ({ principal, params }) => ({ status: 200, body: await notes.revision(principal, params.id, params.version) }),
    }),
    route({
      id: 'diffRevision',
      method: 'GET',
      path: '/notetaker/notes/{id}/revisions/{version}/diff',
      summary: 'Diff a revision against the current note',
      description: 'A unified diff from that version to the current one.',
      tags,
      scopes: READ,
      params: S.RevisionParams,
      responses: { 200: { description: 'The diff.', schema: S.Diff } },
      notFound: REVISION_404,
      handler: async ({ principal, params }) => ({ status: 200, body: await notes.diff(principal, params.id, params.version) }),
    }),
    route({
      id: 'restoreRevision',
      method: 'POST',
      path: '/notetaker/notes/{id}/revisions/{version}/restore',
      summary: 'Restore a revision',
      description:
        "Makes that version's title, body and tags current again, as a new version (nothing is lost: the replaced version stays in the revisions). If-Match is optional and honoured when sent.",
      tags,
      scopes: WRITE,
      params: S.RevisionParams,
      headers: [IF_MATCH],
      responses: { 200: { description: 'The note after the restore.', schema: S.Note, headers: [ETAG] } },
      problems: ['precondition_failed', 'conflict', 'bad_request', 'quota_exceeded'],
      notFound: REVISION_404,
      handler: async ({ principal, params, header }) => {
        const v = await versionOf(notes, principal, params.id, header('if-match'), undefined, false);
        return noteReply(await conditional(v, () => notes.restoreRevision(principal, params.id, params.version, v)));
      },
    }),
    route({
      id: 'listTags',
      method: 'GET',
      path: '/notetaker/tags',
      summary: 'List tags',
      description: 'Every tag on your live notes with how many notes carry it.',
      tags,
      scopes: READ,
      responses: { 200: { description: 'The tags.', schema: S.TagList } },
      handler: async ({ principal }) => ({ status: 200, body: { items: await notes.tags(principal) } }),
    }),
    route({
      id: 'getStorageUse',
      method: 'GET',
      path: '/notetaker/usage',
      summary: 'Storage use',
      description:
        'The bytes you store against your storage quota: note revisions as stored (a snapshot or a delta each, with its title and tags) and files. A write that would take used over quota is refused with 507 quota_exceeded and stores nothing; purging notes from the trash frees their bytes.',
      tags,
      scopes: READ,
      responses: { 200: { description: 'Your storage use.', schema: S.StorageUse } },
      handler: async ({ principal }) => ({ status: 200, body: await notes.storageUse(principal) }),
    }),
    route({
      id: 'searchNotes',
      method: 'GET',
      path: '/notetaker/search',
      summary: 'Search notes',
      description:
        'Full-text search over titles and bodies of your live notes, best match first. q takes web-search syntax: words (all must match), "a quoted phrase", -excluded, a OR b. Any language; typos are tolerated (such hits have match=fuzzy). Narrow with tag, from and to (on updated_at, inclusive).',
      tags,
      scopes: READ,
      query: S.SearchQuery,
      responses: { 200: { description: 'A page of hits.', schema: S.SearchPage, headers: [LIMIT_CLAMPED] } },
      handler: async ({ principal, query }) =>
        pageReply(
          await notes.search(principal, {
            q: query.q,
            ...compact({ tags: query.tag, from: query.from, to: query.to, limit: query.limit, cursor: query.cursor }),
          }),
          query.limit,
        ),
    }),
    route({
      id: 'createReport',
      method: 'POST',
      path: '/notetaker/reports',
      summary: 'Generate a report',
      description:
        'Selects notes (q, tags, from, to; all optional), groups them (by day, week or tag) and streams the report as markdown, HTML or PDF as it is written. With save_as_note the report is also saved as a new note (needs notes:write); its id is in the Folio-Saved-Note-Id header (or, for a report over 1 MiB, in an HTTP trailer of that name). A note holds 1 MiB: a report larger than that as Markdown is refused (400, naming save_as_note) and nothing is saved; past the first MiB sent, the refusal can only cut the stream short. Each user may have 2 reports being generated at a time (the operator may change it): one more is refused at once with 429 too_many_reports and a Retry-After.',
      tags,
      scopes: READ,
      body: S.ReportRequest,
      problems: ['too_many_reports'],
      responses: {
        200: {
          description: 'The report, streamed, in the content type of the format.',
          media: ['text/markdown', 'text/html', 'application/pdf'],
          headers: [
            { name: 'Content-Disposition', description: 'inline, with a file name for the report.', schema: { type: 'string' } },
            {
              name: 'Folio-Saved-Note-Id',
              description: 'With save_as_note: the id of the note the report was saved as.',
              schema: { type: 'string', format: 'uuid' },
            },
          ],
        },
      },
      handler: async ({ principal, body, requireScope }) => {
        if (body.save_as_note) requireScope('notes:write');
        const report = await notes.report(
          principal,
          compact({
            q: body.q,
            tags: body.tags,
            from: body.from,
            to: body.to,
            group_by: body.group_by,
            format: body.format,
            title: body.title,
            save_as_note: body.save_as_note,
          }) as {
            group_by: typeof body.group_by;
            format: typeof body.format;
          },
        );
        return streamReport(report);
      },
    }),
  ];
}

/**
 * The version a conditional write is based on. With `required` (replacing edits), none is 428.
 * An If-Match that can never match a version (e.g. "abc") is 412 with the current note.
 */
async function versionOf(
  notes: NotesService,
  principal: Principal,
  id: string,
  ifMatch: string | undefined,
  bodyVersion: number | undefined,
): Promise<number>;
async function versionOf(
  notes: NotesService,
  principal: Principal,
  id: string,
  ifMatch: string | undefined,
  bodyVersion: undefined,
  required: false,
): Promise<number | undefined>;
async function versionOf(
  notes: NotesService,
  principal: Principal,
  id: string,
  ifMatch: string | undefined,
  bodyVersion: number | undefined,
  required = true,
): Promise<number | undefined> {
  const v = expectedVersion({ header: ifMatch, bodyVersion }, required);
  if (v !== 'mismatch') return v;
  const current = await notes.get(principal, id);
  throw new PreconditionFailed(
    `If-Match ${ifMatch} is not a version of this note; its current version is ${current.version}. Nothing was written.`,
    current,
    etag(current.version),
  );
}
