// The disk implementation of the blob store: content-addressed files under <root>/ab/cd/<sha256>.
// A write streams into <root>/.staging/<uuid> while it is hashed, is written back to the disk
// behind the transfer and flushed (fsync) when it ends (durable-file.ts), and becomes visible under its hash by an atomic rename (`commit`), followed by an
// fsync of the directory so the rename itself survives a crash. Readers therefore only ever see
// complete blobs; a killed write leaves a staging file, which sweepStaging removes.
import { randomUUID } from 'node:crypto';
import { access, constants, mkdir, open, readdir, rename, rm, stat, unlink, utimes } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { NotFound } from '../../contract/errors.ts';
import { durableFile } from './durable-file.ts';
import { FileRange } from './file-range.ts';
import { feedFrom, meter, type BlobStat, type BlobStore, type ByteRange, type StagedBlob, type StageOptions } from './blob-store.ts';

const SHA256 = /^[0-9a-f]{64}$/;
const STAGING = '.staging';
/** Bigger chunks than the 64 KiB default: fewer syscalls on gigabyte transfers, still bounded memory. */
const CHUNK = 1024 * 1024;

/** Flushes a directory's entries (a rename into it) to disk. */
export async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } catch {
    // Some file systems refuse fsync on a directory; the rename is still atomic there.
  } finally {
    await fh.close();
  }
}

export class DiskBlobStore implements BlobStore {
  readonly kind = 'disk';
  readonly #root: string;
  readonly #staging: string;

  constructor(root: string) {
    this.#root = path.resolve(root);
    this.#staging = path.join(this.#root, STAGING);
  }

  #path(sha256: string): string {
    if (!SHA256.test(sha256)) throw new NotFound('no such blob');
    return path.join(this.#root, sha256.slice(0, 2), sha256.slice(2, 4), sha256);
  }

  async check(): Promise<void> {
    // Writable: what every upload needs. A read-only or gone mount, or a DATA_DIR this process may
    // not write, fails here.
    await mkdir(this.#staging, { recursive: true });
    await access(this.#staging, constants.W_OK);
  }

  async stage(source: Readable, opts: StageOptions = {}): Promise<StagedBlob> {
    // Hold a source that is already flowing until the pipeline takes it, so nothing passes unread.
    source.pause();
    await mkdir(this.#staging, { recursive: true });
    const temp = path.join(this.#staging, randomUUID());
    const m = meter(opts, CHUNK);
    // The data is on the disk before the stream reports it finished.
    const out = durableFile(temp, { highWaterMark: CHUNK });
    const fed = feedFrom(source, CHUNK);
    try {
      await pipeline(fed.feed, m.stream, out, ...(opts.signal ? [{ signal: opts.signal }] : []));
    } catch (err) {
      fed.release();
      await rm(temp, { force: true });
      throw err;
    }
    const { sha256, size, head } = m.done();
    const target = this.#path(sha256);
    let state: 'staged' | 'committed' | 'discarded' = 'staged';
    return {
      sha256,
      size,
      head,
      commit: async () => {
        if (state !== 'staged') return;
        await mkdir(path.dirname(target), { recursive: true });
        const existing = await stat(target).catch(() => null);
        if (existing) {
          // Identical content is stored once. Touch it: a garbage collector spares recent blobs, and
          // this one is about to be referenced again.
          await unlink(temp);
          const now = new Date();
          await utimes(target, now, now);
        } else {
          await rename(temp, target);
          await fsyncDir(path.dirname(target));
        }
        state = 'committed';
      },
      discard: async () => {
        if (state !== 'staged') return;
        state = 'discarded';
        await rm(temp, { force: true });
      },
    };
  }

  async read(sha256: string, range?: ByteRange): Promise<Readable> {
    const file = this.#path(sha256);
    let fh;
    try {
      fh = await open(file, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFound('no such blob');
      throw err;
    }
    try {
      return new FileRange(fh, (await fh.stat()).size, range);
    } catch (err) {
      await fh.close();
      throw err;
    }
  }

  async stat(sha256: string): Promise<BlobStat | null> {
    if (!SHA256.test(sha256)) return null;
    const s = await stat(this.#path(sha256)).catch(() => null);
    return s ? { size: s.size } : null;
  }

  async remove(sha256: string): Promise<void> {
    if (!SHA256.test(sha256)) return;
    await rm(this.#path(sha256), { force: true });
  }

  async *list(): AsyncIterable<string> {
    const dirs = async (dir: string) => (await readdir(dir, { withFileTypes: true }).catch(() => [])).filter((d) => d.isDirectory());
    for (const a of await dirs(this.#root)) {
      if (!/^[0-9a-f]{2}$/.test(a.name)) continue;
      for (const b of await dirs(path.join(this.#root, a.name))) {
        for (const f of await readdir(path.join(this.#root, a.name, b.name)).catch(() => [])) if (SHA256.test(f)) yield f;
      }
    }
  }

  async sweepStaging(olderThanMs: number): Promise<number> {
    const names = await readdir(this.#staging).catch(() => [] as string[]);
    const cutoff = Date.now() - olderThanMs;
    let removed = 0;
    for (const name of names) {
      const file = path.join(this.#staging, name);
      const s = await stat(file).catch(() => null);
      if (s && s.mtimeMs < cutoff) {
        await rm(file, { force: true });
        removed++;
      }
    }
    return removed;
  }
}
