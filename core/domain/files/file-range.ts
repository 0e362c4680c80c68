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
    if (this.#mode === 'stream') {
      // A mistake of the caller's: the response is cut (never left hanging), the stream's reader is untouched.
      const err = new Error('this file is already being read as a stream');
      out.destroy(err);
      throw err;
    }
    this.#mode = 'direct';
    let inFlight = 0;
    let wake: (() => void) | undefined;
    const resume = () => {
      const w = wake;
      wake = undefined;
      w?.();
    };
    // Set and woken in separate ticks: no wake-up is lost between a check and its wait.
    const waitWhile = async (busy: () => boolean) => {
      while (!out.destroyed && busy()) await new Promise<void>((r) => (wake = r));
    };
    out.on('drain', resume);
    out.on('close', resume);
    try {
      while (this.#pos < this.#end) {
        // At most IN_FLIGHT buffers with the socket; the next one is read while the last is sent.
        await waitWhile(() => inFlight >= IN_FLIGHT);
        if (out.destroyed || out.writableEnded) throw gone();
        const buf = take();
        const want = Math.min(CHUNK, this.#end - this.#pos);
        let bytesRead: number;
        try {
          ({ bytesRead } = await this.#fh.read(buf, 0, want, this.#pos));
          if (bytesRead === 0) throw new Error('the stored file ended early');
          // The socket is behind: it gets more once it has taken what it holds.
          await waitWhile(() => out.writableNeedDrain);
          if (out.destroyed) throw gone();
        } catch (err) {
          give(buf);
          throw err;
        }
        this.#pos += bytesRead;
        inFlight++;
        // The callback runs once the socket has the bytes (or the write failed): the buffer is free.
        out.write(bytesRead === buf.length ? buf : buf.subarray(0, bytesRead), () => {
          inFlight--;
          give(buf);
          resume();
        });
      }
      if (out.destroyed) throw gone();
      out.end();
      await finished(out);
    } catch (err) {
      out.destroy(err as Error);
      throw err;
    } finally {
      out.off('drain', resume);
      out.off('close', resume);
      await this.#close();
      this.destroy();
    }
  }
}
