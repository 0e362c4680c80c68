// The files domain as one registration: its tables, its service over a blob store, its scopes, the
// REST group `filedb` (governed by the `files` namespace: switch that off for a user and the whole
// group is 404 for them, as it is over curl and MCP), and the public share-link route.
import path from 'node:path';
import { filesSearchSource } from './search-source.ts';
import { defineDomain } from '../../contract/domain.ts';
import { lazyBlobStore, type BlobStore } from './blob-store.ts';
import { DiskBlobStore } from './disk-store.ts';
import { filesEntities } from './entities.ts';
import { Migration20261124000000_files } from './migrations/Migration20261124000000_files.ts';
import { Migration20261125000000_file_text } from './migrations/Migration20261125000000_file_text.ts';
import { Migration20261203000000_file_uploads } from './migrations/Migration20261203000000_file_uploads.ts';
import { bindFiles } from './plugin-api.ts';
import { filesPublicRoutes } from './rest/public.ts';
import { filedbRoutes } from './rest/routes.ts';
import { COMPONENTS } from './rest/schemas.ts';
import { ChildRunner } from '../child-runner.ts';
import type { ExtractReply, ExtractRequest } from './extract-entry.ts';
import { gcBlobs } from './jobs.ts';
import { EXPIRE_UPLOADS_JOB, EXTRACT_JOB, FilesServiceImpl, GC_JOB, type ExtractJobData, type FilesSettings } from './service.ts';

export type { FilesSettings };

/** At most this much of a file is read for its text (a PDF or DOCX over it is skipped). */
const EXTRACT_MAX_BYTES = 32 * 1024 * 1024;
/** Staging files older than this are abandoned uploads. */
const STAGING_GRACE_MS = 24 * 3600_000;
/** A resumable upload not finished this long after it was created is removed. */
const UPLOAD_EXPIRY_MS = 24 * 3600_000;

export const filesDomain = defineDomain<FilesServiceImpl, FilesSettings>({
  name: 'files',
  entities: filesEntities,
  migrations: [
    { name: 'Migration20261124000000_files', class: Migration20261124000000_files },
    { name: 'Migration20261125000000_file_text', class: Migration20261125000000_file_text },
    { name: 'Migration20261203000000_file_uploads', class: Migration20261203000000_file_uploads },
  ],
  scopes: {
    'files:read': { description: 'Read your files: list, metadata, versions, download; list share links.' },
    'files:write': {
      description:
        'Upload, replace, restore, trash and purge files; attach them to notes; create and revoke share links. Implies files:read.',
      implies: ['files:read'],
    },
  },
  create: ({ db, log, settings, storage, dataDir, publicUrl, jobs, events }) => {
    const s3 = settings.blobStore.s3; // its bucket is checked with the config (kernel/config.ts)
    const store: BlobStore =
      settings.blobStore.kind === 's3'
        ? lazyBlobStore('s3', async () => (await import('./s3-store.ts')).S3BlobStore.fromSettings(s3))
        : new DiskBlobStore(path.join(dataDir, 'blobs'));
    const files = new FilesServiceImpl(db, store, settings, storage, {
      log,
      publicUrl,
      jobs,
      events,
      uploadsDir: path.join(dataDir, 'uploads'),
      uploadExpiryMs: UPLOAD_EXPIRY_MS,
    });
    // Removes blobs nothing references any more, and staging objects of abandoned uploads. Queued
    // by every purge (in its transaction) and by the upkeep below.
    jobs.define(GC_JOB, {
      handler: async (_data, job) => {
        const done = await gcBlobs({
          store,
          collect: (sha256) => files.collectBlob(sha256),
          stagingGraceMs: STAGING_GRACE_MS,
          signal: job.signal,
          progress: (p) => job.progress(p),
        });
        if (done.removed > 0 || done.staging > 0) log.info(done, 'garbage-collected file blobs');
        return done;
      },
    });
    // Resumable uploads abandoned before their last byte: their partial bytes under DATA_DIR/uploads.
    jobs.define(EXPIRE_UPLOADS_JOB, {
      handler: async () => {
        const removed = (await files.uploads?.sweep()) ?? 0;
        if (removed > 0) log.info({ removed }, 'removed expired incomplete uploads');
        return { removed };
      },
    });
    // Documents are parsed in a child process with memory and time limits: a hostile file (a zip
    // bomb, a PDF that computes for minutes) costs that process, never the server's requests.
    const { memoryMb, timeSeconds } = settings.extraction;
    const extractor = new ChildRunner<ExtractRequest, ExtractReply>({
      module: new URL('./extract-entry.ts', import.meta.url),
      label: 'extraction',
      limits: { memoryMb, timeoutMs: timeSeconds * 1000 },
    });
    // The text of a new version, for search: queued by every write in its transaction.
    jobs.define<ExtractJobData>(EXTRACT_JOB, {
      // An upload is searchable by its text within about two seconds.
      pollSeconds: 0.5,
      // Exactly one retry, whatever jobs.retryLimit says: lastAttempt below counts on it (with
      // none, a killed extraction would be dead-lettered and its text left pending for good).
      retryLimit: 1,
      handler: async (data, job) => {
        const out = await files.extractVersion(data, {
          maxBytes: EXTRACT_MAX_BYTES,
          isolated: (req, signal) => extractor.run(req, signal ? { signal } : {}),
          // An extraction killed for its limits is tried once more (the machine may have been
          // busy), then recorded as failed: never again, whatever restarts in between.
          lastAttempt: job.attempt >= 1,
          signal: job.signal,
        });
        return out && { status: out.status, ...(out.status === 'extracted' ? { chars: out.text.length } : { reason: out.reason }) };
      },
    });
    return files;
  },
  rest: {
    tag: 'filedb',
    description: 'Upload, download, version and share files; attach them to notes.',
    namespace: 'files',
    routes: filedbRoutes,
    components: COMPONENTS,
    publicRoutes: filesPublicRoutes,
  },
  search: () => [filesSearchSource],
  bind: bindFiles,
  upkeep: {
    everyMinutes: (settings) => settings.trashSweepMinutes,
    run: async (files, log) => {
      const purged = await files.purgeExpiredTrash();
      if (purged > 0) log.info({ purged }, 'purged files past their trash retention');
      await files.enqueueGc();
      await files.enqueueUploadSweep();
    },
  },
});
