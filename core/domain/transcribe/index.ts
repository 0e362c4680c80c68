// The transcribe domain as one registration: its table, its service over the files and notes
// services, the scope transcribe, the REST group `transcribe` (governed by the `transcribe`
// namespace), and its job on the queue.
import path from 'node:path';
import { transcriptsSearchSource } from './search-source.ts';
import { defineDomain } from '../../contract/domain.ts';
import type { FilesServiceImpl } from '../files/service.ts';
import type { IdentityService } from '../identity/service.ts';
import type { NotesService } from '../notes/types.ts';
import { transcribeEntities } from './entities.ts';
import { Migration20261126000000_transcriptions } from './migrations/Migration20261126000000_transcriptions.ts';
import { bindTranscribe } from './plugin-api.ts';
import { COMPONENTS, transcribeRoutes } from './rest/routes.ts';
import { TRANSCRIBE_JOB, TranscribeService } from './service.ts';
import type { TranscribeSettings } from './types.ts';

export const transcribeDomain = defineDomain<TranscribeService, TranscribeSettings>({
  name: 'transcribe',
  entities: transcribeEntities,
  migrations: [{ name: 'Migration20261126000000_transcriptions', class: Migration20261126000000_transcriptions }],
  scopes: {
    'transcribe:read': { description: 'Follow your transcription jobs and read their transcripts.' },
    transcribe: {
      description:
        'Transcribe your stored audio files: start, cancel, re-run and delete jobs (the transcript is written as a note without a notes scope). Implies transcribe:read.',
      implies: ['transcribe:read'],
    },
  },
  create: (env) => {
    const { db, log, settings, jobs, dataDir } = env;
    const service = new TranscribeService(
      {
        db,
        jobs,
        log,
        files: env.domain<FilesServiceImpl>('files'),
        notes: env.domain<NotesService>('notes'),
        identity: env.domain<IdentityService>('identity'),
        workDir: path.join(dataDir, 'transcribe'),
        events: env.events,
      },
      settings,
    );
    // An attempt may run as long as the engine's own deadline, and a little more to write it down.
    jobs.define<{ id: string }>(TRANSCRIBE_JOB, {
      handler: (data, job) => service.run(data, job),
      retryLimit: 2,
      expireInSeconds: settings.timeoutSeconds + 120,
      // A job whose process died is run again within about a minute and a half, not at expiry.
      heartbeatSeconds: 30,
      // The offline engine takes a core: one at a time by default (TRANSCRIBE_CONCURRENCY).
      concurrency: settings.concurrency,
    });
    return service;
  },
  rest: {
    tag: 'transcribe',
    description:
      'Audio-to-text transcription: jobs over your stored audio files, their progress, and the transcripts (txt, srt, vtt, json).',
    namespace: 'transcribe',
    routes: transcribeRoutes,
    components: COMPONENTS,
  },
  search: () => [transcriptsSearchSource],
  bind: (service, caller) => bindTranscribe(service, caller),
});
