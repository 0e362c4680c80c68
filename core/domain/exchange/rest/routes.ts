// The exports and imports groups: start an export of your notes and files and download its zip;
// upload a zip (a Folio export, an Obsidian vault, any Markdown folder) to import, and read its
// per-file report. A route table over ExchangeService; the rules are the service's.
import { Type } from 'typebox';
import { route, type Route } from '../../../contract/rest.ts';
import { JOB_404, type ExchangeService } from '../service.ts';

const tagsExport = ['exports'];
const tagsImport = ['imports'];
const Uuid = Type.String({ format: 'uuid' });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

const ReportEntry = Type.Object(
  {
    path: Type.String({ description: 'The path in the archive.' }),
    kind: Type.Union([Type.Literal('note'), Type.Literal('file'), Type.Literal('other')]),
    status: Type.Union([Type.Literal('imported'), Type.Literal('skipped'), Type.Literal('failed')]),
    id: Type.Optional(Type.String({ description: 'The note or file it became (imported) or matched (skipped).' })),
    reason: Type.Optional(Type.String({ description: 'Why it was skipped or failed; for an imported note, links not resolved.' })),
  },
  { $id: 'ImportReportEntry' },
);

export const Job = Type.Object(
  {
    id: Uuid,
    kind: Type.Union([Type.Literal('export'), Type.Literal('import')]),
    status: Type.Union(['queued', 'running', 'succeeded', 'failed'].map((s) => Type.Literal(s))),
    progress: Type.Integer({ minimum: 0, maximum: 100, description: 'Percent done.' }),
    options: Type.Object({ revisions: Type.Optional(Type.Boolean()), files: Type.Optional(Type.Boolean()) }),
    counts: Type.Object(
      {
        notes: Type.Optional(Type.Integer()),
        files: Type.Optional(Type.Integer()),
        revisions: Type.Optional(Type.Integer()),
        imported: Type.Optional(Type.Integer()),
        skipped: Type.Optional(Type.Integer()),
        failed: Type.Optional(Type.Integer()),
      },
      { description: 'An export: what it holds. An import: entries imported, skipped and failed.' },
    ),
    size: Nullable(Type.Integer({ description: 'The archive in bytes.' })),
    error: Nullable(Type.String({ description: 'Why the job failed as a whole.' })),
    report: Type.Optional(Type.Array(ReportEntry, { description: "An import's line per archive entry, once it has run." })),
    created_at: Type.String({ format: 'date-time' }),
    finished_at: Nullable(Type.String({ format: 'date-time' })),
    expires_at: Type.String({ format: 'date-time', description: 'When the job (and its archive) is deleted.' }),
  },
  { $id: 'ExchangeJob' },
);

const CreateExport = Type.Object(
  {
    revisions: Type.Optional(
      Type.Boolean({ default: false, description: 'Also every revision of every note (notes/<note>.revisions/<n>.md).' }),
    ),
    files: Type.Optional(Type.Boolean({ default: true, description: 'Include your files (needs files:read); false: notes only.' })),
  },
  { additionalProperties: false },
);
const IdParams = Type.Object({ id: Type.String({ format: 'uuid', description: 'The job id.' }) });

export const COMPONENTS = { ExchangeJob: Job, ImportReportEntry: ReportEntry };

const LAYOUT =
  "The zip holds notes/<title>.md (YAML front matter: id, title, tags, source, created, updated, attachments), each note's attached files in notes/<title>/, other files in files/<folder>/, with revisions notes/<title>.revisions/<n>.md, and manifest.json (format version, Folio version, user, counts, and per entry its path, kind, ids, sha256 and size). Links between notes (/api/v1/notetaker/notes/<id>) and to exported files (/api/v1/filedb/files/<id>/content) become relative paths.";

export function exportRoutes(x: ExchangeService): Route[] {
  return [
    route({
      id: 'createExport',
      method: 'POST',
      path: '/exports',
      summary: 'Export your notes and files as a zip',
      description: `Queues an export of your live notes and files. 202 with the job and its URL in Location; poll it, then GET its archive. ${LAYOUT} At most exchange.maxQueuedPerUser export and import jobs per account at a time (429 too_many_queued_jobs).`,
      tags: tagsExport,
      scopes: ['notes:read'],
      body: CreateExport,
      responses: {
        202: {
          description: 'Queued.',
          schema: Job,
          headers: [{ name: 'Location', description: 'The job.', schema: { type: 'string' } }],
        },
      },
      problems: ['too_many_queued_jobs'],
      handler: async ({ principal, body, requireScope }) => {
        const b = body ?? {};
        if (b.files !== false) requireScope('files:read');
        const job = await x.createExport(principal, b);
        return { status: 202, body: job, headers: { Location: `/api/v1/exports/${job.id}`, 'Retry-After': '1' } };
      },
    }),
    route({
      id: 'getExport',
      method: 'GET',
      path: '/exports/{id}',
      summary: 'An export job',
      description: 'Its status, progress (percent), counts and archive size; error when it failed.',
      tags: tagsExport,
      scopes: ['notes:read'],
      params: IdParams,
      responses: { 200: { description: 'The job.', schema: Job } },
      notFound: JOB_404,
      handler: async ({ principal, params }) => {
        const job = await x.get(principal, params.id, 'export');
        return { status: 200, body: job, headers: job.status === 'queued' || job.status === 'running' ? { 'Retry-After': '1' } : {} };
      },
    }),
    route({
      id: 'getExportArchive',
      method: 'GET',
      path: '/exports/{id}/archive',
      summary: "An export's zip",
      description:
        'The archive of a succeeded export, streamed. 409 while the job has not succeeded; 404 when there is no such job, or its archive is no longer on the server (the message says which).',
      tags: tagsExport,
      scopes: ['notes:read'],
      params: IdParams,
      responses: { 200: { description: 'The zip.', media: ['application/zip'] } },
      problems: ['conflict'],
      // No blanket 404 text here: the service says whether the job or only its archive is missing.
      handler: async ({ principal, params }) => {
        const a = await x.archive(principal, params.id);
        return {
          status: 200,
          headers: {
            'Content-Type': 'application/zip',
            'Content-Length': String(a.size),
            'Content-Disposition': `attachment; filename="${a.filename}"`,
          },
          stream: a.stream,
        };
      },
    }),
  ];
}

export function importRoutes(x: ExchangeService): Route[] {
  return [
    route({
      id: 'createImport',
      method: 'POST',
      path: '/imports',
      summary: 'Import a zip of Markdown notes and files',
      description:
        'The body is the zip (Content-Type: application/zip): a Folio export, an Obsidian vault, or any folder of .md files and attachments. Streamed to disk, refused past exchange.maxImportBytes (413 payload_too_large). 202 with the job; poll it for progress and, once done, its report: one line per entry, imported, skipped (already here: same id in front matter, or imported before with the same content) or failed, with the reason. Front matter (title, tags, source, created, updated) is kept; Obsidian [[wiki links]], ![[embeds]] and inline #tags are resolved. Unsafe entries (../, absolute paths, backslashes, drive letters, symlinks, names that are not UTF-8, duplicates by case or Unicode normalization, members over exchange.maxMemberBytes) fail on their own; more than exchange.maxEntries entries fail the job. Limits and the quota are those of any write.',
      tags: tagsImport,
      scopes: ['notes:write', 'files:write'],
      upload: { description: 'The zip archive (application/zip).' },
      responses: {
        202: {
          description: 'Queued.',
          schema: Job,
          headers: [{ name: 'Location', description: 'The job.', schema: { type: 'string' } }],
        },
      },
      problems: ['payload_too_large', 'unsupported_media_type', 'too_many_queued_jobs'],
      handler: async ({ principal, upload, signal }) => {
        if (!upload) throw new Error('upload route without a body');
        const job = await x.createImport(principal, upload, signal);
        return { status: 202, body: job, headers: { Location: `/api/v1/imports/${job.id}`, 'Retry-After': '1' } };
      },
    }),
    route({
      id: 'getImport',
      method: 'GET',
      path: '/imports/{id}',
      summary: 'An import job and its report',
      description:
        'Its status, progress (percent), counts (imported, skipped, failed) and, once it has run, the report: one line per archive entry.',
      tags: tagsImport,
      scopes: ['notes:read'],
      params: IdParams,
      responses: { 200: { description: 'The job.', schema: Job } },
      notFound: JOB_404,
      handler: async ({ principal, params }) => {
        const job = await x.get(principal, params.id, 'import');
        return { status: 200, body: job, headers: job.status === 'queued' || job.status === 'running' ? { 'Retry-After': '1' } : {} };
      },
    }),
  ];
}
