// First-party plugin: transcription of the user's stored audio for agents and scripts. Every call
// goes through ctx.services.transcribe, bound to the caller: another user's job or file is simply
// not found, and the scope transcribe is checked there too (declared here for help and a clean 403).
import { Type } from 'typebox';
import { definePlugin, defineFunction, type Transcription } from 'folio/sdk';

const SCOPE = { scopes: ['transcribe'] };
const READ = { scopes: ['transcribe:read'] };
const JobId = Type.String({ format: 'uuid', description: 'The job id (from transcribe.start or transcribe.list).' });
const DONE = new Set(['succeeded', 'failed', 'cancelled']);

const brief = (j: Transcription) => ({
  id: j.id,
  status: j.status,
  progress: j.progress,
  file_id: j.file_id,
  ...(j.note_id ? { note_id: j.note_id } : {}),
  ...(j.error ? { error: j.error } : {}),
  ...(j.duration !== null ? { duration: j.duration } : {}),
  engine: j.engine,
  created_at: j.created_at,
});

const start = defineFunction({
  title: 'Transcribe an audio file',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  description:
    'Start transcribing one of your stored audio files (upload it with the files functions first). By default the transcript becomes a note tagged transcript (and `tags`). wait_seconds > 0 waits that long for it, reporting progress; otherwise follow it with transcribe.status.',
  args: Type.Object({
    file_id: Type.String({ format: 'uuid', description: 'The audio file (files.list shows ids).' }),
    version: Type.Optional(Type.Integer({ minimum: 1, description: 'A version of the file (default: the current one).' })),
    language: Type.Optional(Type.String({ pattern: '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$', description: 'The spoken language, e.g. en.' })),
    tags: Type.Optional(Type.Array(Type.String(), { maxItems: 20, description: "Tags for the note, e.g. ['meeting']." })),
    to_note: Type.Optional(Type.Boolean({ default: true, description: 'Write the transcript as a note.' })),
    wait_seconds: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 50, default: 0, description: 'Wait up to this long for it to finish.' }),
    ),
  }),
  examples: [{ args: { file_id: '0b0e6c9e-2f7a-4c1e-9d8e-8f1d2a3b4c5d', tags: ['meeting'], wait_seconds: 30 } }],
  requires: SCOPE,
  handler: async (args, ctx) => {
    let job = await ctx.services.transcribe.start({
      file_id: args.file_id,
      ...(args.version !== undefined ? { version: args.version } : {}),
      ...(args.language !== undefined ? { language: args.language } : {}),
      ...(args.tags !== undefined ? { tags: args.tags } : {}),
      ...(args.to_note !== undefined ? { to_note: args.to_note } : {}),
    });
    const until = Date.now() + (args.wait_seconds ?? 0) * 1000;
    while (!DONE.has(job.status) && Date.now() < until && !ctx.signal.aborted) {
      await new Promise((r) => setTimeout(r, 1000));
      job = await ctx.services.transcribe.get(job.id);
      ctx.progress(job.progress, 100, job.status);
    }
    return {
      job: brief(job),
      next: DONE.has(job.status)
        ? job.status === 'succeeded'
          ? ctx.ref('transcribe.transcript', { id: job.id })
          : null
        : ctx.ref('transcribe.status', { id: job.id }),
    };
  },
});

const status = defineFunction({
  title: 'Show a transcription',
  annotations: { readOnlyHint: true, openWorldHint: false },
  description:
    "A transcription job's status (queued, running, succeeded, failed, cancelled), progress in percent, note_id once written, error when it failed.",
  args: Type.Object({ id: JobId }),
  requires: READ,
  handler: async ({ id }, ctx) => brief(await ctx.services.transcribe.get(id)),
});

const list = defineFunction({
  title: 'List transcriptions',
  annotations: { readOnlyHint: true, openWorldHint: false },
  description: 'Your transcription jobs, newest first. Follow next_cursor for more.',
  args: Type.Object({
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'next_cursor of the previous page.' })),
  }),
  requires: READ,
  handler: async (args, ctx) => {
    const page = await ctx.services.transcribe.list({
      ...(args.limit !== undefined ? { limit: args.limit } : {}),
      ...(args.cursor !== undefined ? { cursor: args.cursor } : {}),
    });
    return { jobs: page.items.map(brief), next_cursor: page.next_cursor };
  },
});

const transcript = defineFunction({
  title: 'Read a transcript',
  annotations: { readOnlyHint: true, openWorldHint: false },
  description:
    'The transcript of a finished job, in parts that fit this call: segments with start and end times (seconds). Call again with offset = next_offset until it is null.',
  args: Type.Object({
    id: JobId,
    offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'next_offset of the previous part.' })),
  }),
  requires: READ,
  handler: async ({ id, offset }, ctx) => {
    const part = await ctx.services.transcribe.transcript(id, { offset: offset ?? 0, maxChars: Math.max(200, ctx.budget - 400) });
    return { ...part, next: part.next_offset === null ? null : ctx.ref('transcribe.transcript', { id, offset: part.next_offset }) };
  },
});

const cancel = defineFunction({
  title: 'Cancel a transcription',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  description: 'Stops a queued or running transcription; no note is written.',
  args: Type.Object({ id: JobId }),
  requires: SCOPE,
  handler: async ({ id }, ctx) => brief(await ctx.services.transcribe.cancel(id)),
});

const retry = defineFunction({
  title: 'Run a transcription again',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  description: 'Queues a finished job again; its note gets a new version, never a second note.',
  args: Type.Object({ id: JobId }),
  requires: SCOPE,
  handler: async ({ id }, ctx) => brief(await ctx.services.transcribe.retry(id)),
});

export default definePlugin({
  namespace: 'transcribe',
  description: "Transcribe the user's stored audio files into text and notes; follow the jobs; read transcripts in parts.",
  catalogue: 'public',
  functions: { start, status, list, transcript, cancel, retry },
});
