// The search domain as one registration: its tables, its service over the sources the other
// domains register (core/contract/search.ts), the scope search, the REST group `search` (governed
// by the `search` namespace), and its job search-index, queued by every write a source's domain
// tells about, in that write's transaction. `npm run reindex` rebuilds the whole index; a server
// finding the index empty while there is something to find rebuilds it at start (upkeep).
import { defineDomain } from '../../contract/domain.ts';
import { searchEntities } from './entities.ts';
import { Migration20261128000000_search } from './migrations/Migration20261128000000_search.ts';
import { Migration20261201000000_search_statistics } from './migrations/Migration20261201000000_search_statistics.ts';
import { Migration20261211000000_search_pending } from './migrations/Migration20261211000000_search_pending.ts';
import { bindSearch } from './plugin-api.ts';
import { COMPONENTS, searchRoutes } from './rest/routes.ts';
import { SearchService } from './service.ts';
import type { ResourceChange } from '../../contract/search.ts';

export const SEARCH_INDEX_JOB = 'search-index';

export const searchDomain = defineDomain<SearchService>({
  name: 'search',
  entities: searchEntities,
  migrations: [
    { name: 'Migration20261128000000_search', class: Migration20261128000000_search },
    { name: 'Migration20261201000000_search_statistics', class: Migration20261201000000_search_statistics },
    { name: 'Migration20261211000000_search_pending', class: Migration20261211000000_search_pending },
  ],
  scopes: {
    search: {
      description:
        'Search across your resources with one query (GET /search). Hits include only the kinds your other scopes can read (notes:read, files:read, transcribe:read).',
    },
  },
  create: ({ db, log, jobs, events, searchSources, publicUrl }) => {
    const service = new SearchService(db, searchSources, {
      publicUrl,
      log,
      send: async (changes) => void (await jobs.send(SEARCH_INDEX_JOB, { changes })),
    });
    jobs.define<{ changes: ResourceChange[] }>(SEARCH_INDEX_JOB, {
      handler: async (data) => service.index(Array.isArray(data.changes) ? data.changes : []),
      // A change is searchable within about two seconds of its write.
      pollSeconds: 0.5,
      concurrency: 2,
    });
    // Every write a source's domain tells about queues its indexing, in the write's transaction:
    // one job per resource waiting (search_pending), however often it is written meanwhile.
    events.listen(async (em, changes) => {
      const fresh = await service.pending(em, changes);
      if (fresh.length > 0) await jobs.send(SEARCH_INDEX_JOB, { changes: fresh }, { em });
    });
    return service;
  },
  rest: {
    tag: 'search',
    description: 'Global search: one ranked list over your notes, files, transcripts and whatever else has text.',
    namespace: 'search',
    routes: searchRoutes,
    components: COMPONENTS,
  },
  bind: bindSearch,
  upkeep: {
    // Resources whose index job was lost (cancelled, dead-lettered) get another. And at start: a
    // database that had data before search came gets its index.
    everyMinutes: () => 5,
    run: async (service, log) => {
      await service.resendStale();
      if (!(await service.needsRebuild())) return;
      log.info('the search index is empty while there is something to find: rebuilding it');
      await service.rebuild();
    },
  },
});
