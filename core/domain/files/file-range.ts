// A stored file's bytes (or a range of them) as a stream, read from an open file handle.
//
// Read as a Readable (the curl and MCP surfaces, the text extractor), each chunk is a new buffer,
// as fs.createReadStream makes them. Written straight to an HTTP response (the REST surface's
// downloads, through WRITE_TO), it reuses a few buffers: each one goes back to a shared pool once
// the socket has taken its bytes. A gigabyte download then allocates nothing per chunk; with new
// buffers it would be ~1,000 buffers of 1 MiB outside V8's heap, and each 64 MB of those makes V8
// mark the whole server heap (bench/README (f)).
import type { FileHandle } from 'node:fs/promises';
import { Readable, type Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { WRITE_TO, type WritesItself } from '../../contract/rest.ts';

/** Bytes per read. */
const CHUNK = 1024 * 1024;
/** Buffers one direct write has handed to the socket and not got back yet. */
const IN_FLIGHT = 2;
/** Spare buffers kept between downloads (at most this many MiB held while idle). */
const POOL_MAX = 16;
const pool: Buffer[] = [];

/** The client left mid-download (a code the request log knows as "client gone", not a failure). */
function gone(): Error {
  return Object.assign(new Error('the response closed before the file was sent'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
}

function take(): Buffer {
  return pool.pop() ?? Buffer.allocUnsafeSlow(CHUNK);
}

function give(buf: Buffer): void {
  if (pool.length < POOL_MAX) pool.push(buf);
}

export class FileRange extends Readable implements WritesItself {
  readonly #fh: FileHandle;
  #pos: number;
  /** One past the last byte. */
  readonly #end: number;
  #closed: Promise<void> | undefined;
  /** Taken by one reader: the Readable side or WRITE_TO, never both. */
  #mode: 'stream' | 'direct' | undefined;

  /** `start`..`end` inclusive, like fs.createReadStream's options; the whole file without them. */
  constructor(fh: FileHandle, size: number, range?: { start: number; end: number }) {
    super({ highWaterMark: CHUNK });
    this.#fh = fh;
    this.#pos = range?.start ?? 0;
    this.#end = range ? Math.min(range.end + 1, size) : size;
  }

  #close(): Promise<void> {
    return (this.#closed ??= this.#fh.close().catch(() => {}));
  }

  override _read(): void {
    this.#mode ??= 'stream';
    const want = Math.min(CHUNK, this.#end - this.#pos);
    if (want <= 0) {
      this.push(null);
      return;
    }
    const buf = Buffer.allocUnsafeSlow(want);
    this.#fh.read(buf, 0, want, this.#pos).then(
      ({ bytesRead }) => {
        if (bytesRead === 0) {
          // The file is shorter than it was said to be: fail rather than send a short body.
          this.destroy(new Error('the stored file ended early'));
          return;
        }
        this.#pos += bytesRead;
        this.push(bytesRead === want ? buf : buf.subarray(0, bytesRead));
      },
      (err: Error) => this.destroy(err),
    );
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    this.#close().then(() => callback(err), callback);
  }

  /**
   * Writes the bytes to `out` and ends it; resolves once `out` has finished. Rejects (after
   * destroying `out`) when a read fails, and when `out` closes before the end (the client left).
   */
  async [WRITE_TO](out: Writable): Promise<void> {
    if (this.#mode === 'stream') throw new Error('this file is already being read as a stream');
    this.#mode = 'direct';
    let inFlight = 0;
    let wake: (() => void) | undefined;
    const resume = () => {
      const w = wake;
      wake = undefined;
      w?.();
    };
    const onClose = () => resume();
    out.on('drain', resume);
    out.on('close', onClose);
    try {
      while (this.#pos < this.#end) {
        if (out.destroyed || out.writableEnded) throw gone();
        const buf = take();
        const want = Math.min(CHUNK, this.#end - this.#pos);
        let bytesRead: number;
        try {
          ({ bytesRead } = await this.#fh.read(buf, 0, want, this.#pos));
        } catch (err) {
          give(buf);
          throw err;
        }
        if (bytesRead === 0) {
          give(buf);
          throw new Error('the stored file ended early');
        }
        this.#pos += bytesRead;
        inFlight++;
        // The callback runs once the socket has the bytes (or the write failed): the buffer is free.
        const more = out.write(bytesRead === buf.length ? buf : buf.subarray(0, bytesRead), () => {
          inFlight--;
          give(buf);
          resume();
        });
        // Wait while the socket is behind or holds IN_FLIGHT of our buffers (set and woken in
        // separate ticks: no wake-up is lost between the check and the wait).
        while (!out.destroyed && ((!more && out.writableNeedDrain) || inFlight >= IN_FLIGHT)) await new Promise<void>((r) => (wake = r));
      }
      if (out.destroyed) throw gone();
      out.end();
      await finished(out);
    } catch (err) {
      out.destroy(err as Error);
      throw err;
    } finally {
      out.off('drain', resume);
      out.off('close', onClose);
      await this.#close();
      this.destroy();
    }
  }
}
