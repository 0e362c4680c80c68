// The transcribe group: start a transcription of one of your stored audio files, follow it, cancel
// or re-run it, and read the transcript as txt, srt, vtt or json. A route table over
// TranscribeService; the rules are the service's.
import { Readable } from 'node:stream';
import { Type } from 'typebox';
import { LIMIT_CLAMPED, pageReply, route, type Route } from '../../../contract/rest.ts';
import { JOB_404, type TranscribeService } from '../service.ts';
import { ACCEPTED } from '../input-formats.ts';
import { RESULT_FORMATS } from '../types.ts';

const SCOPES = ['transcribe'];
const READ = ['transcribe:read'];
const tags = ['transcribe'];
const Uuid = Type.String({ format: 'uuid' });
const Status = Type.Union(['queued', 'running', 'succeeded', 'failed', 'cancelled'].map((s) => Type.Literal(s)));
const Engine = Type.Union([Type.Literal('local'), Type.Literal('openai')]);

export const Job = Type.Object(
  {
    id: Uuid,
    file_id: Uuid,
    file_version: Type.Integer({ minimum: 1 }),
    status: Status,
    progress: Type.Integer({ minimum: 0, maximum: 100, description: 'Percent done.' }),
    engine: Engine,
    model: Type.Union([Type.String(), Type.Null()]),
    language: Type.Union([Type.String(), Type.Null()], { description: 'Given, or detected once done.' }),
    tags: Type.Array(Type.String(), { description: "The note's tags besides transcript." }),
    to_note: Type.Boolean(),
    note_id: Type.Union([Uuid, Type.Null()], { description: 'The note the transcript was written to.' }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'What went wrong, for a failed job.' }),
    duration: Type.Union([Type.Number(), Type.Null()], { description: "The audio's length in seconds." }),
    created_at: Type.String({ format: 'date-time' }),
    started_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    finished_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'TranscriptionJob' },
);
/** The most jobs one page holds (the service's own bound). */
const LIST_MAX = 100;

/** format=json: the engine's transcript (words only where the engine gives them). */
const TranscriptJson = Type.Object(
  {
    text: Type.String(),
    language: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    duration: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
    segments: Type.Optional(Type.Array(Type.Object({ start: Type.Number(), end: Type.Number(), text: Type.String() }))),
    words: Type.Optional(Type.Array(Type.Object({ start: Type.Number(), end: Type.Number(), word: Type.String() }))),
  },
  { $id: 'TranscriptJson', description: 'A transcript as JSON.' },
);

const JobPage = Type.Object(
  {
    items: Type.Array(Job),
    next_cursor: Type.Union([Type.String(), Type.Null()]),
    limit: Type.Integer({ minimum: 1, description: 'The limit actually used.' }),
    limit_clamped_from: Type.Optional(
      Type.Integer({
        description: `Present when the limit asked for was over ${LIST_MAX} and was lowered to it (the Folio-Limit-Clamped header says the same).`,
      }),
    ),
  },
  { $id: 'TranscriptionJobPage' },
);
const CreateJob = Type.Object(
  {
    file_id: Type.String({ format: 'uuid', description: 'One of your files (upload it to /filedb/files first).' }),
    version: Type.Optional(Type.Integer({ minimum: 1, description: 'That version of the file (default: the current one).' })),
    language: Type.Optional(Type.String({ pattern: '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$', description: 'The spoken language, e.g. en.' })),
    engine: Type.Optional(Engine),
    tags: Type.Optional(Type.Array(Type.String(), { maxItems: 20, description: 'Tags for the note, e.g. meeting.' })),
    to_note: Type.Optional(Type.Boolean({ default: true, description: 'Write the transcript as a note (default true).' })),
  },
  { additionalProperties: false },
);
const IdParams = Type.Object({ id: Type.String({ format: 'uuid', description: 'The job id.' }) });
const ListQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        default: 20,
        description: `How many to return; default 20, at most ${LIST_MAX}. A larger value is clamped to ${LIST_MAX} (not refused), as in every list.`,
      }),
    ),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'next_cursor of the previous page.' })),
    status: Type.Optional(Status),
  },
  { additionalProperties: false },
);
const ResultQuery = Type.Object(
  {
    format: Type.Optional(
      Type.Union(
        RESULT_FORMATS.map((f) => Type.Literal(f)),
        { default: 'json' },
      ),
    ),
  },
  { additionalProperties: false },
);
const Engines = Type.Object(
  {
    default: Engine,
    engines: Type.Record(
      Type.String(),
      Type.Object({ ok: Type.Boolean(), reason: Type.Optional(Type.String()), model: Type.Optional(Type.String()) }),
    ),
  },
  { $id: 'TranscriptionEngines' },
);

export const COMPONENTS = { TranscriptionJob: Job, TranscriptionJobPage: JobPage, TranscriptionEngines: Engines };

export function transcribeRoutes(t: TranscribeService): Route[] {
  return [
    route({
      id: 'createTranscription',
      method: 'POST',
      path: '/transcribe/jobs',
      summary: 'Transcribe one of your audio files',
      description: `Queues a transcription of a stored file (${ACCEPTED}; a file whose bytes are not a recording, such as a photo or a PDF, is 415 unsupported_media_type at once and nothing is queued; another container, a playlist or a list of other files among them, fails the job saying so). 202 with the job and its URL in Location; poll it (Retry-After says when). By default the transcript is written as a note tagged transcript and the given tags. An engine that cannot run here is 503 engine_unavailable, naming what to install; nothing is queued. An account may have so many jobs queued or running at a time (5 by default): one more is 429 too_many_queued_jobs, naming the limit; nothing is queued.`,
      tags,
      scopes: SCOPES,
      body: CreateJob,
      bodyRequired: true,
      responses: {
        202: {
          description: 'Queued.',
          schema: Job,
          headers: [
            { name: 'Location', description: 'The job.', schema: { type: 'string' } },
            { name: 'Retry-After', description: 'Seconds until it is worth asking.', schema: { type: 'string' } },
          ],
        },
      },
      problems: ['engine_unavailable', 'too_many_queued_jobs'],
      notFound: 'no such file or version. It may not exist or belong to another account.',
      handler: async ({ principal, body }) => {
        const job = await t.create(principal, body);
        return { status: 202, body: job, headers: { Location: `/api/v1/transcribe/jobs/${job.id}`, 'Retry-After': '2' } };
      },
    }),
    route({
      id: 'listTranscriptions',
      method: 'GET',
      path: '/transcribe/jobs',
      summary: 'List your transcription jobs',
      description: 'Newest first; filter by status; page with limit and cursor.',
      tags,
      scopes: READ,
      query: ListQuery,
      responses: {
        200: {
          description: 'A page of jobs.',
          schema: JobPage,
          headers: [LIMIT_CLAMPED],
        },
      },
      handler: async ({ principal, query }) => {
        const limit = Math.min(query.limit ?? 20, LIST_MAX);
        const page = await t.list(principal, {
          limit,
          ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
          ...(query.status !== undefined ? { status: query.status } : {}),
        });
        return pageReply({ ...page, limit }, query.limit);
      },
    }),
    route({
      id: 'transcriptionEngines',
      method: 'GET',
      path: '/transcribe/engines',
      summary: 'Which transcription engines can run here',
      description: 'The default engine, and for each engine whether it can run and, if not, what is missing.',
      tags,
      scopes: READ,
      responses: { 200: { description: 'The engines.', schema: Engines } },
      handler: async () => ({ status: 200, body: await t.engines() }),
    }),
    route({
      id: 'getTranscription',
      method: 'GET',
      path: '/transcribe/jobs/{id}',
      summary: 'A transcription job',
      description: 'Its status, progress (percent), note_id once the note is written, and error when it failed.',
      tags,
      scopes: READ,
      params: IdParams,
      responses: { 200: { description: 'The job.', schema: Job } },
      notFound: JOB_404,
      handler: async ({ principal, params }) => {
        const job = await t.get(principal, params.id);
        return { status: 200, body: job, headers: job.status === 'queued' || job.status === 'running' ? { 'Retry-After': '2' } : {} };
      },
    }),
    route({
      id: 'cancelTranscription',
      method: 'POST',
      path: '/transcribe/jobs/{id}/cancel',
      summary: 'Cancel a transcription job',
      description:
        'A queued job never runs; a running one is stopped (its engine process killed). No note is written. A finished job is 409.',
      tags,
      scopes: SCOPES,
      params: IdParams,
      responses: { 200: { description: 'The cancelled job.', schema: Job } },
      problems: ['conflict'],
      notFound: JOB_404,
      handler: async ({ principal, params }) => ({ status: 200, body: await t.cancel(principal, params.id) }),
    }),
    route({
      id: 'retryTranscription',
      method: 'POST',
      path: '/transcribe/jobs/{id}/retry',
      summary: 'Run a finished transcription job again',
      description:
        'Queues it again (a failed, cancelled or succeeded one). Its note, if it wrote one, gets a new version; no second note is made. One retry is queued however many arrive at once: a job queued or running (a retry of it came first) is 409 with the job as it is in `current`. It counts against the per-account limit of jobs queued at a time (429 too_many_queued_jobs).',
      tags,
      scopes: SCOPES,
      params: IdParams,
      responses: { 202: { description: 'Queued again.', schema: Job } },
      problems: ['conflict', 'engine_unavailable', 'too_many_queued_jobs'],
      notFound: JOB_404,
      handler: async ({ principal, params }) => ({
        status: 202,
        body: await t.retry(principal, params.id),
        headers: { 'Retry-After': '2' },
      }),
    }),
    route({
      id: 'deleteTranscription',
      method: 'DELETE',
      path: '/transcribe/jobs/{id}',
      summary: 'Delete a transcription job',
      description: 'Removes the job and its transcript (a running job is stopped first). A note it wrote is kept.',
      tags,
      scopes: SCOPES,
      params: IdParams,
      responses: { 204: { description: 'Deleted.' } },
      notFound: JOB_404,
      handler: async ({ principal, params }) => {
        await t.delete(principal, params.id);
        return { status: 204 };
      },
    }),
    route({
      id: 'transcriptionResult',
      method: 'GET',
      path: '/transcribe/jobs/{id}/result',
      summary: 'The transcript',
      description:
        'format=json (default): text, language, duration, segments (start, end, text) and words (start, end, word, confidence where the engine gives one); txt: the text; srt or vtt: subtitles by segment. 409 while the job has not succeeded.',
      tags,
      scopes: READ,
      params: IdParams,
      query: ResultQuery,
      responses: {
        200: {
          description: 'The transcript: JSON for format=json (the default), else text or subtitles.',
          schema: TranscriptJson,
          media: ['text/plain', 'text/vtt', 'application/x-subrip'],
        },
      },
      problems: ['conflict'],
      notFound: JOB_404,
      handler: async ({ principal, params, query }) => {
        const format = (query.format as 'json' | undefined) ?? 'json';
        const r = await t.result(principal, params.id, format);
        if (format === 'json') return { status: 200, body: r.result };
        const bytes = Buffer.from(r.text, 'utf8');
        return {
          status: 200,
          headers: { 'Content-Type': r.contentType, 'Content-Length': String(bytes.byteLength) },
          stream: Readable.from([bytes]),
        };
      },
    }),
  ];
}
