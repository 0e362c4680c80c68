// The notes domain as one registration: its tables, its service, its scopes, and the REST group
// `notetaker`, which belongs to the `notetaker` namespace (switch that off for a user and the whole
// group is 404 for them, as it is over curl and MCP).
import { defineDomain } from '../../contract/domain.ts';
import { notesEntities } from './entities.ts';
import { bindNotes } from './plugin-api.ts';
import { Migration20261122000000_notes } from './migrations/Migration20261122000000_notes.ts';
import { Migration20261124000000_note_revision_deltas } from './migrations/Migration20261124000000_note_revision_deltas.ts';
import { notetakerRoutes } from './rest/routes.ts';
import { COMPONENTS } from './rest/schemas.ts';
import { NotesServiceImpl } from './service.ts';
import { withSummaryCache, type CachedNotes } from './summary-cache.ts';
import { notesSearchSource } from './search-source.ts';

export interface NotesSettings {
  trashRetentionDays: number;
  trashSweepMinutes: number;
  reportsPerUser: number;
  reportThreads: number | null;
}

export const notesDomain = defineDomain<CachedNotes, NotesSettings>({
  name: 'notes',
  entities: notesEntities,
  migrations: [
    { name: 'Migration20261122000000_notes', class: Migration20261122000000_notes },
    { name: 'Migration20261124000000_note_revision_deltas', class: Migration20261124000000_note_revision_deltas },
  ],
  scopes: {
    'notes:read': { description: 'Read your notes: list, get, search, revisions, tags, reports.' },
    'notes:write': {
      description: 'Create, edit, trash, restore and purge notes. Implies notes:read: every write answers with the note it wrote.',
      implies: ['notes:read'],
    },
  },
  create: ({ db, feed, settings, storage, publicUrl, events }) =>
    withSummaryCache(
      new NotesServiceImpl(db, {
        trashRetentionDays: settings.trashRetentionDays,
        storage,
        reportsPerUser: settings.reportsPerUser,
        reportThreads: settings.reportThreads,
        publicUrl,
        events,
      }),
      feed,
    ),
  rest: {
    tag: 'notetaker',
    description: 'Read, search and edit notes; trash and revisions; generate reports from notes.',
    namespace: 'notetaker',
    routes: notetakerRoutes,
    components: COMPONENTS,
  },
  bind: bindNotes,
  search: () => [notesSearchSource],
  upkeep: {
    everyMinutes: (settings) => settings.trashSweepMinutes,
    run: async (notes, log) => {
      const purged = await (notes.inner as NotesServiceImpl).purgeExpiredTrash();
      if (purged > 0) log.info({ purged }, 'purged notes past their trash retention');
    },
  },
});
