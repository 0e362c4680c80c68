// Resumable (tus) uploads as the rest of the files domain sees them: their paths and words, and the
// service's handle on them, which loads the tus server (./uploads.ts: @tus/server, its file store
// and their dependencies, ~4 MB of heap) on the first tus request, not at start. Every module the
// server holds is marked by each of its garbage collections (bench/README (f)).
import { readdir } from 'node:fs/promises';
import type { Call, Reply } from '../../contract/rest.ts';
import { loadOnce } from '../load-once.ts';
import type { FilesServiceImpl } from './service.ts';

export const UPLOADS_PATH = '/api/v1/filedb/uploads';
export const UPLOAD_404 = 'no such upload. It may never have existed, have expired, or belong to another account.';
/** The tus extensions this server offers (OPTIONS' Tus-Extension); not concatenation. */
export const TUS_EXTENSIONS = ['creation', 'creation-with-upload', 'termination', 'expiration'] as const;
/** The header that names the file a finished upload became. */
export const FILE_ID_HEADER = 'Folio-File-Id';

export interface Uploads {
  /** Answers one tus request (POST, HEAD, PATCH, DELETE, OPTIONS under UPLOADS_PATH). */
  handle(call: Call<{ id?: string }, unknown, unknown>): Promise<Reply>;
  /** Removes the incomplete uploads past their expiry; answers how many. */
  sweep(): Promise<number>;
}

export function lazyUploads(files: FilesServiceImpl, dir: string, opts: { expiryMs: number }): Uploads {
  let asked = false;
  const made = loadOnce(async () => new (await import('./uploads.ts')).ResumableUploads(files, dir, opts));
  const uploads = () => {
    asked = true;
    return made();
  };
  return {
    handle: async (call) => (await uploads()).handle(call),
    sweep: async () => {
      // Nothing was ever uploaded here (no upload folder, or an empty one): nothing to load.
      if (!asked && (await readdir(dir).catch(() => [])).length === 0) return 0;
      return (await uploads()).sweep();
    },
  };
}
