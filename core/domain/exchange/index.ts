// The exchange domain as one registration: export and import jobs (its table, its service over the
// notes and files services, the REST groups `exports` and `imports`, governed like the notes by the
// `notetaker` namespace), its job on the queue, and the upkeep that deletes expired archives and
// fails jobs whose queue job ended without finishing.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { defineDomain } from '../../contract/domain.ts';
import type { FilesServiceImpl } from '../files/service.ts';
import type { IdentityService } from '../identity/service.ts';
import type { CachedNotes } from '../notes/summary-cache.ts';
import { exchangeEntities } from './entities.ts';
import { Migration20261210000000_exchange } from './migrations/Migration20261210000000_exchange.ts';
import { COMPONENTS, exportRoutes, importRoutes } from './rest/routes.ts';
import { EXCHANGE_JOB, ExchangeService, RETRY_LIMIT } from './service.ts';
import type { ExchangeSettings } from './types.ts';

export const exchangeDomain = defineDomain<ExchangeService, ExchangeSettings>({
  name: 'exchange',
  entities: exchangeEntities,
  migrations: [{ name: 'Migration20261210000000_exchange', class: Migration20261210000000_exchange }],
  create: (env) => {
    const { db, log, settings, jobs, dataDir, feed } = env;
    const service = new ExchangeService(
      {
        db,
        jobs,
        log,
        notes: env.domain<CachedNotes>('notes'),
        files: env.domain<FilesServiceImpl>('files'),
        identity: env.domain<IdentityService>('identity'),
        dir: path.join(dataDir, 'exchange'),
        folioVersion: (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version,
        notesChanged: (owner) => feed.publish({ kind: 'notes', userId: owner }),
      },
      settings,
    );
    jobs.define<{ id: string }>(EXCHANGE_JOB, {
      handler: (data, job) => service.run(data, job),
      retryLimit: RETRY_LIMIT,
      expireInSeconds: 4 * 3600,
      heartbeatSeconds: 30,
      concurrency: 1,
    });
    return service;
  },
  rest: [
    {
      tag: 'exports',
      description:
        'Export your notes and files as a zip of Markdown with YAML front matter, attachments beside their notes, and a manifest.',
      namespace: 'notetaker',
      routes: exportRoutes,
      components: COMPONENTS,
    },
    {
      tag: 'imports',
      description: 'Import a zip of Markdown (a Folio export, an Obsidian vault, any Markdown folder) with a per-file report; idempotent.',
      namespace: 'notetaker',
      routes: importRoutes,
    },
  ],
  upkeep: {
    everyMinutes: () => 30,
    run: async (service, log) => {
      const n = await service.purgeExpired();
      if (n > 0) log.info({ purged: n }, 'deleted expired export and import jobs');
      const dead = await service.sweepDead();
      if (dead > 0) log.warn({ failed: dead }, 'failed export and import jobs whose queue job ended without finishing');
    },
  },
});
