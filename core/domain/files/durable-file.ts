// A file writer for blobs that must be on the disk before the store says "stored": what
// `createWriteStream(file, { flush: true })` promises, without its cost on large files. That stream
// leaves every byte to the page cache and fsyncs once at the end, so a 1 GiB upload waits for the
// whole gigabyte to be written back only after its last byte arrived. This writer asks the kernel
// to write back what it has behind the upload (an fdatasync every SYNC_EVERY bytes, one at a time,
// off the event loop), so the disk works while the network still delivers, and the final fsync
// has only the tail left. It also writes in batches (writev of what arrived while the previous
// write ran), as few syscalls as the stream allows.
import { open, type FileHandle } from 'node:fs/promises';
import { Writable } from 'node:stream';

/** Write back behind the upload every this many bytes. */
const SYNC_EVERY = 64 * 1024 * 1024;

export interface DurableFileOptions {
  /** Bytes the stream buffers before it pushes back (default 1 MiB). */
  highWaterMark?: number;
  /** Write back every this many bytes (default 64 MiB); tests use small values. */
  syncEvery?: number;
}

/**
 * A Writable into a new file (`wx`: never over an existing one). It finishes only when every byte
 * and the file's size are on the disk (fsync).
 */
export function durableFile(file: string, opts: DurableFileOptions = {}): Writable {
  const syncEvery = opts.syncEvery ?? SYNC_EVERY;
  let fh: FileHandle | undefined;
  let written = 0;
  let syncedAt = 0;
  // The write-back in flight, if any; its failure is the stream's failure, reported on the next
  // write or at the end.
  let behind: Promise<void> | undefined;
  let behindError: Error | undefined;

  const writeBehind = () => {
    if (behind || written - syncedAt < syncEvery || !fh) return;
    syncedAt = written;
    behind = fh.datasync().then(
      () => {
        behind = undefined;
      },
      (err: Error) => {
        behindError = err;
        behind = undefined;
      },
    );
  };

  const writeAll = async (chunks: Buffer[]) => {
    if (behindError) throw behindError;
    let bytes = 0;
    for (const c of chunks) bytes += c.length;
    let done = 0;
    // writev may write less than asked (a full disk reports ENOSPC on the next call); go on from there.
    while (done < bytes) {
      const { bytesWritten } = await fh!.writev(done === 0 ? chunks : rest(chunks, done));
      if (bytesWritten === 0) throw new Error('the disk accepted no bytes');
      done += bytesWritten;
    }
    written += bytes;
    writeBehind();
  };

  return new Writable({
    highWaterMark: opts.highWaterMark ?? 1024 * 1024,
    construct(callback) {
      open(file, 'wx').then(
        (h) => {
          fh = h;
          callback();
        },
        (err: Error) => callback(err),
      );
    },
    write(chunk: Buffer, _enc, callback) {
      writeAll([chunk]).then(() => callback(), callback);
    },
    writev(entries, callback) {
      writeAll(entries.map((e) => e.chunk as Buffer)).then(() => callback(), callback);
    },
    final(callback) {
      void (async () => {
        await behind;
        if (behindError) throw behindError;
        await fh!.sync();
        const h = fh!;
        fh = undefined;
        await h.close();
      })().then(() => callback(), callback);
    },
    destroy(err, callback) {
      const h = fh;
      fh = undefined;
      void Promise.resolve(behind)
        .then(() => h?.close())
        .then(
          () => callback(err),
          () => callback(err),
        );
    },
  });
}

/** The chunks after the first `skip` bytes. */
function rest(chunks: Buffer[], skip: number): Buffer[] {
  const out: Buffer[] = [];
  for (const c of chunks) {
    if (skip >= c.length) {
      skip -= c.length;
      continue;
    }
    out.push(skip > 0 ? c.subarray(skip) : c);
    skip = 0;
  }
  return out;
}
