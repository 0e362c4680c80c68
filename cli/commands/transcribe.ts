// `folio transcribe ...`: the transcribe REST group (/api/v1/transcribe). `start` takes a local
// audio file (uploaded first, resumable) or the id of a stored one, waits with a progress bar on
// stderr, then prints the transcript (or saves it with -o); the note it wrote is named on stderr.
import { stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import type { components } from '../generated/openapi.d.ts';
import { ok, type Target } from '../lib/client.ts';
import { CliError, EXIT } from '../lib/errors.ts';
import { examples, type Cli, type CommandGroup } from '../lib/group.ts';
import { onInterrupt } from '../lib/interrupt.ts';
import { fullId } from '../lib/ids.ts';
import { emit, table, when, withOutput, type OutputOptions } from '../lib/output.ts';
import { meter, resumableUpload } from './files.ts';

type Job = components['schemas']['TranscriptionJob'];
type Format = 'txt' | 'srt' | 'vtt' | 'json';

const FORMATS: Format[] = ['txt', 'srt', 'vtt', 'json'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const collect = (value: string, previous: string[]) => [...previous, value];
const format = (value: string): Format => {
  if (!FORMATS.includes(value as Format)) throw new InvalidArgumentError(`must be one of ${FORMATS.join(', ')}`);
  return value as Format;
};
const info = (line: string) => process.stderr.write(line + '\n');
const DONE = new Set(['succeeded', 'failed', 'cancelled']);

const jobColumns = [
  { header: 'ID', get: (j: Job) => j.id },
  { header: 'STATUS', get: (j: Job) => j.status },
  { header: '%', get: (j: Job) => String(j.progress) },
  { header: 'NOTE', get: (j: Job) => j.note_id ?? '-' },
  { header: 'CREATED', get: (j: Job) => when(j.created_at) },
  { header: 'ERROR', get: (j: Job) => j.error ?? '', flexible: true },
];

export const transcribe: CommandGroup = {
  register(program: Command, cli: Cli) {
    const group = program.command('transcribe').description('transcription: audio to text and notes');
    examples(group, 'folio transcribe start standup.m4a --tag meeting', 'folio transcribe list');

    /** The transcript of a succeeded job, as text in the given format. */
    const result = async (target: Target, api: ReturnType<Cli['client']>['api'], id: string, f: Format): Promise<string> => {
      const r = await api.GET('/transcribe/jobs/{id}/result', { params: { path: { id }, query: { format: f } }, parseAs: 'text' });
      // An empty transcript (a silent recording) is an empty body, which openapi-fetch gives as undefined.
      const text: string | undefined = await ok<string>(target, r);
      return text ?? '';
    };
    const save = async (text: string, out: string | undefined) => {
      if (out && out !== '-') {
        await writeFile(out, text);
        info(`saved ${out}`);
      } else process.stdout.write(text.endsWith('\n') || text === '' ? text : `${text}\n`);
    };

    const start = group
      .command('start')
      .description('transcribe an audio file (a local path is uploaded first; or a stored file id), wait, print the transcript')
      .argument('<path-or-file-id>', 'a local audio file, or the id of one you stored')
      .option('--tag <tag>', 'tag the note (repeatable), e.g. meeting', collect, [])
      .option('--language <code>', 'the spoken language, e.g. en')
      .option('--engine <engine>', 'local or openai (when the server lets you choose)')
      .option('--no-note', 'do not write the transcript as a note')
      .option('--no-wait', 'print the job id and return at once')
      .option('-f, --format <format>', 'txt, srt, vtt or json', format, 'txt')
      .option('-o, --output <path>', 'save the transcript here instead of printing it')
      .action(
        async (
          source: string,
          o: { tag: string[]; language?: string; engine?: string; note: boolean; wait: boolean; format: Format; output?: string },
        ) => {
          const { api, target } = cli.client();
          let fileId: string;
          const st = await stat(source).catch(() => null);
          if (st?.isFile()) {
            // The engine first: a server that cannot transcribe is told before the upload, not after it.
            // (Not told, e.g. a token without the scope to ask: the server's own answer to the job says it.)
            const { data: engines } = await api.GET('/transcribe/engines');
            const engine = o.engine ?? engines?.default ?? '';
            const state = engines?.engines[engine];
            if (state && !state.ok)
              throw new CliError(
                `the ${engine} transcription engine cannot run on this server${state.reason ? `: ${state.reason}` : ''}; nothing was uploaded (code engine_unavailable)`,
                EXIT.server,
              );
            fileId = (await resumableUpload(target, source, st.size, { name: path.basename(source) })).id;
          } else {
            fileId = await fullId(target, 'file', source).catch((err: unknown) => {
              if (err instanceof CliError && err.exitCode === EXIT.notFound)
                throw new CliError(`${source} is neither a file here nor a file id`, EXIT.usage);
              throw err;
            });
            if (!UUID.test(fileId)) throw new CliError(`${source} is neither a file here nor a file id`, EXIT.usage);
          }
          let job = await ok(
            target,
            await api.POST('/transcribe/jobs', {
              body: {
                file_id: fileId,
                ...(o.tag.length ? { tags: o.tag } : {}),
                ...(o.language ? { language: o.language } : {}),
                ...(o.engine ? { engine: o.engine as 'local' | 'openai' } : {}),
                to_note: o.note,
              },
            }),
          );
          if (!o.wait) {
            process.stdout.write(job.id + '\n');
            return;
          }
          // Ctrl-C stops waiting, not the job: the message says how to follow or stop it.
          const forget = onInterrupt(() => `the job goes on: folio transcribe status ${job.id} (or folio transcribe cancel ${job.id})`);
          // Percent done and the stage (queued: waiting for a worker; running: being transcribed).
          const bar = meter('transcribing', 100, 'percent');
          try {
            bar.to(job.progress, job.status);
            while (!DONE.has(job.status)) {
              await new Promise((r) => setTimeout(r, 1000));
              job = await ok(target, await api.GET('/transcribe/jobs/{id}', { params: { path: { id: job.id } } }));
              bar.to(job.progress, job.status);
            }
          } finally {
            bar.end();
            forget();
          }
          if (job.status !== 'succeeded')
            throw new CliError(`the transcription ${job.status}${job.error ? `: ${job.error}` : ''} (job ${job.id})`, EXIT.server);
          if (job.note_id) info(`note ${job.note_id}`);
          await save(await result(target, api, job.id, o.format), o.output);
        },
      );
    examples(
      start,
      'folio transcribe start standup.m4a --tag meeting',
      'folio transcribe start $ID --format srt -o standup.srt',
      'JOB=$(folio transcribe start call.wav --no-wait)',
    );

    const list = withOutput(group.command('list').alias('ls').description('your transcription jobs, newest first'))
      .option('--status <status>', 'only queued, running, succeeded, failed or cancelled ones')
      .action(async (o: OutputOptions & { status?: string }) => {
        const { api, target } = cli.client();
        const page = await ok(
          target,
          await api.GET('/transcribe/jobs', {
            params: { query: { limit: 100, ...(o.status ? { status: o.status as Job['status'] } : {}) } },
          }),
        );
        await emit(page.items, o, () => table(page.items, jobColumns, 'no transcription jobs'));
      });
    examples(list, 'folio transcribe list --status failed');

    const status = withOutput(group.command('status').description("a job's status, progress, note and error"))
      .argument('<id>', 'the job id')
      .action(async (id: string, o: OutputOptions) => {
        const { api, target } = cli.client();
        const job = await ok(target, await api.GET('/transcribe/jobs/{id}', { params: { path: { id } } }));
        await emit(job, o, () => table([job], jobColumns));
      });
    examples(status, 'folio transcribe status $ID');

    const resultCmd = group
      .command('result')
      .description('print (or save) the transcript of a finished job')
      .argument('<id>', 'the job id')
      .option('-f, --format <format>', 'txt, srt, vtt or json', format, 'txt')
      .option('-o, --output <path>', 'save it here')
      .action(async (id: string, o: { format: Format; output?: string }) => {
        const { api, target } = cli.client();
        await save(await result(target, api, id, o.format), o.output);
      });
    examples(resultCmd, 'folio transcribe result $ID -f vtt -o talk.vtt');

    const cancelCmd = group
      .command('cancel')
      .description('stop a queued or running job (no note is written)')
      .argument('<id>', 'the job id')
      .action(async (id: string) => {
        const { api, target } = cli.client();
        const job = await ok(target, await api.POST('/transcribe/jobs/{id}/cancel', { params: { path: { id } } }));
        info(`job ${job.id} ${job.status}`);
      });
    examples(cancelCmd, 'folio transcribe cancel $ID');
  },
};
