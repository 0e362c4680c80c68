// Where file bytes live: content-addressed blobs (sha256), behind one interface with two
// implementations, the disk under DATA_DIR (the embedded default) and an S3-compatible bucket,
// chosen by settings. The files domain stores every version's bytes as a blob; identical content is
// stored once; a blob nothing references is removed by a garbage-collection job, never inline.
//
// A write goes to a temporary object first and becomes visible under its hash only when it is
// complete and hashed (`commit`): a killed or abandoned upload leaves no partial blob behind
// (temporaries older than a grace period are swept by the same garbage collection).
import { createHash } from 'node:crypto';
import { finished, PassThrough, Transform, type Readable } from 'node:stream';
import { BlobStoreUnavailable } from '../../contract/errors.ts';
import { loadOnce } from '../load-once.ts';

/**
 * `source` fed to a store's pipeline through a stream of its own, so that the pipeline failing (too
 * many bytes, the disk full, the bucket refusing) does not destroy it: a pipeline destroys every
 * stream in it, and destroying an HTTP request not read to its end destroys its connection, and the
 * client would get no answer (or a reset that loses it) instead of the 413 it is owed. The source's
 * own failure (the client going away) fails the feed. `release()` after a failure: the source is
 * unhooked and paused, for the caller to drain (resume) or destroy.
 */
export function feedFrom(source: Readable, highWaterMark: number): { feed: PassThrough; release: () => void } {
  const feed = new PassThrough({ highWaterMark });
  // Its error, or its close before its end, now or already (a stream can fail before it is read).
  const unwatch = finished(source, (err) => {
    if (err) feed.destroy(err);
  });
  source.pipe(feed);
  return {
    feed,
    release: () => {
      unwatch();
      source.unpipe(feed);
      source.pause();
    },
  };
}

/** More bytes arrived than the write allows: what every store rejects `stage` with, over `maxBytes`. */
export class BlobLimitExceeded extends Error {
  override name = 'BlobLimitExceeded';
  readonly limit: number;
  constructor(limit: number) {
    super(`more than ${limit} bytes`);
    this.limit = limit;
  }
}

/** What `stage` takes besides the bytes. */
export interface StageOptions {
  /** More bytes than this fail the write with BlobLimitExceeded. */
  maxBytes?: number;
  signal?: AbortSignal;
  /** Keep a copy of the first `headBytes` bytes (for sniffing the content type) in `head`. */
  headBytes?: number;
}

/** A blob being written: complete and hashed, not yet visible under its hash. */
export interface StagedBlob {
  sha256: string;
  size: number;
  /** The first `headBytes` bytes (empty when none were asked for). */
  head: Buffer;
  /** Makes the blob visible under its hash (a no-op if that content is already stored). */
  commit(): Promise<void>;
  /** Drops the temporary object. Safe to call after commit (then it does nothing). */
  discard(): Promise<void>;
}

export interface BlobStat {
  size: number;
}

export interface ByteRange {
  /** First byte, inclusive. */
  start: number;
  /** Last byte, inclusive. */
  end: number;
}

/** What `check()` found: for /health and readiness. */
export interface BlobStoreCheck {
  kind: string;
  status: 'ok' | 'unreachable';
  /** How long the probe took (a cached answer keeps the figure of its probe). */
  latency_ms: number;
  /** Why it is unreachable (the store's own words: ECONNREFUSED, EROFS, ...). */
  error?: string;
}

export interface BlobStore {
  /** 'disk' or 's3', for logs and /health. */
  readonly kind: string;
  /**
   * A cheap probe: can the store be used right now? (S3: HeadBucket with a short timeout; disk: the
   * directory is writable.) Rejects when not; the guarded store (guardBlobStore) turns that into a
   * BlobStoreCheck and caches it for a few seconds.
   */
  check(): Promise<void>;
  /**
   * Streams `source` into a temporary object while hashing it. Rejects (and leaves nothing) when the
   * source errors, the signal aborts, or more than `maxBytes` arrive. A failure leaves `source` as it
   * is, not destroyed: when it is a request, destroying it would close the connection before the
   * refusal is answered (the caller drains it: see sourceOf).
   */
  stage(source: Readable, opts?: StageOptions): Promise<StagedBlob>;
  /** The blob's bytes, or a range of them. Rejects with NotFound when there is no such blob. */
  read(sha256: string, range?: ByteRange): Promise<Readable>;
  /** Size of a stored blob, or null when there is none. */
  stat(sha256: string): Promise<BlobStat | null>;
  /** Removes a blob; removing an absent one is not an error. */
  remove(sha256: string): Promise<void>;
  /** Every stored blob's hash, for garbage collection. */
  list(): AsyncIterable<string>;
  /** Removes temporary objects older than `olderThanMs` (abandoned writes); returns how many. */
  sweepStaging(olderThanMs: number): Promise<number>;
}

/**
 * A store whose implementation is loaded on first use: the S3 store brings the AWS SDK, which a
 * server that never touches a file should not hold (every module held makes each garbage
 * collection longer, see bench/README (f)). A load that fails fails that call, and the next call
 * tries again.
 */
export function lazyBlobStore(kind: string, load: () => Promise<BlobStore>): BlobStore {
  const store = loadOnce(load);
  return {
    kind,
    check: async () => (await store()).check(),
    stage: async (source, opts) => (await store()).stage(source, opts),
    read: async (sha256, range) => (await store()).read(sha256, range),
    stat: async (sha256) => (await store()).stat(sha256),
    remove: async (sha256) => (await store()).remove(sha256),
    async *list() {
      yield* (await store()).list();
    },
    sweepStaging: async (olderThanMs) => (await store()).sweepStaging(olderThanMs),
  };
}

/**
 * The one pass every store's write makes over the bytes on their way to storage: counts them
 * (failing past `maxBytes`), hashes them and keeps the head, in a single stream stage (each extra
 * stage is a hop per chunk on gigabyte uploads).
 */
export function meter(opts: Pick<StageOptions, 'maxBytes' | 'headBytes'>, highWaterMark?: number) {
  const hash = createHash('sha256');
  const max = opts.maxBytes ?? Infinity;
  const want = opts.headBytes ?? 0;
  const head: Buffer[] = [];
  let held = 0;
  let size = 0;
  const stream = new Transform({
    ...(highWaterMark ? { highWaterMark } : {}),
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > max) return done(new BlobLimitExceeded(max));
      hash.update(chunk);
      if (held < want) {
        const part = Buffer.from(chunk.subarray(0, want - held));
        head.push(part);
        held += part.length;
      }
      done(null, chunk);
    },
  });
  return { stream, done: () => ({ sha256: hash.digest('hex'), size, head: Buffer.concat(head) }) };
}

/**
 * Error codes that mean the store cannot be reached or used right now, whatever the request: the
 * network to S3 (refused, reset, timed out, no route, no name) and a data disk that fails (I/O error,
 * mounted read-only, a stale or gone network mount, no permission on DATA_DIR).
 */
const OUTAGE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EIO',
  'EROFS',
  'ESTALE',
  'ENOTCONN',
  'ENODEV',
  'ENXIO',
  'EACCES',
  'EPERM',
]);
/** Error names the AWS SDK gives an outage: its own timeouts, and S3's answers that it is down or busy. */
const OUTAGE_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'SlowDown', 'ServiceUnavailable', 'InternalError', 'NoSuchBucket']);

/** HTTP statuses from S3 that mean an outage: internal error, bad gateway, unavailable, gateway timeout. */
const OUTAGE_STATUSES = new Set([500, 502, 503, 504]);

/** Is this failure (or what it wraps) the store being unreachable, rather than the request being wrong? */
export function isStoreOutage(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    const x = e as { code?: unknown; name?: unknown; errors?: unknown; cause?: unknown; $metadata?: { httpStatusCode?: number } };
    if (typeof x.code === 'string' && OUTAGE_CODES.has(x.code)) return true;
    if (typeof x.name === 'string' && OUTAGE_NAMES.has(x.name)) return true;
    // S3 (or a proxy before it) answering that it is failing, down or overloaded. Not 501 (an
    // operation this S3-compatible server does not implement: asking again will not help) nor other
    // 5xx, which say nothing of the store being away.
    if (OUTAGE_STATUSES.has(x.$metadata?.httpStatusCode ?? 0)) return true;
    // A connection to a name with several addresses fails with each one's error.
    if (Array.isArray(x.errors) && x.errors.some((inner) => isStoreOutage(inner))) return true;
    e = x.cause;
  }
  return false;
}

/** Seconds a client is told to wait (Retry-After) when the store is unreachable; also how long a check is cached. */
export const STORE_RETRY_SECONDS = 5;

/** How long /health waits for the store's check (as it waits for the database's ping): then it says unreachable. */
export const PROBE_TIMEOUT_MS = 2000;

export interface GuardedBlobStore extends BlobStore {
  /** The cached result of the store's probe (at most STORE_RETRY_SECONDS old); never rejects. */
  health(): Promise<BlobStoreCheck>;
}

/**
 * The store as the files domain uses it: a failure that means the store is unreachable becomes one
 * typed outcome, BlobStoreUnavailable (503, Retry-After), on every call, instead of a 500 or, for a
 * connection to S3 reset mid-upload, a "client went away". A failure of the write's source (the
 * client going away) or of its signal stays what it is. `onOutage` hears each one (for the log).
 */
export function guardBlobStore(inner: BlobStore, onOutage: (err: unknown, what: string) => void = () => {}): GuardedBlobStore {
  const unavailable = (err: unknown, what: string): unknown => {
    if (!isStoreOutage(err)) return err;
    onOutage(err, what);
    return new BlobStoreUnavailable(
      `the file storage (${inner.kind}) cannot be reached; nothing was ${what === 'read' ? 'read' : 'stored'}. Try again in a few seconds.`,
      STORE_RETRY_SECONDS,
    );
  };
  const guard =
    <A extends unknown[], R>(what: string, fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await fn(...args);
      } catch (err) {
        throw unavailable(err, what);
      }
    };
  let cached: { at: number; result: Promise<BlobStoreCheck> } | null = null;
  // The store's check still running (a hung mount, an S3 that never answers): the next probe waits
  // on it again rather than piling another request on a store that already does not answer.
  let running: Promise<void> | null = null;
  const probe = async (): Promise<BlobStoreCheck> => {
    const started = performance.now();
    const latency = () => Math.round(performance.now() - started);
    let timer: NodeJS.Timeout | undefined;
    try {
      if (!running) {
        const check = inner.check();
        running = check;
        check.then(
          () => (running = running === check ? null : running),
          () => (running = running === check ? null : running),
        );
      }
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(Object.assign(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`), { name: 'TimeoutError' })),
          PROBE_TIMEOUT_MS,
        );
      });
      await Promise.race([running, timeout]);
      return { kind: inner.kind, status: 'ok', latency_ms: latency() };
    } catch (err) {
      const e = err as { code?: unknown; name?: unknown; message?: unknown };
      const label = typeof e.code === 'string' ? e.code : typeof e.name === 'string' ? e.name : '';
      const message = typeof e.message === 'string' ? e.message : '';
      const why = [label, message].filter((x) => x !== '').join(': ');
      return { kind: inner.kind, status: 'unreachable', latency_ms: latency(), error: why || 'the probe failed' };
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    kind: inner.kind,
    check: () => inner.check(),
    health: () => {
      const now = Date.now();
      // One probe at a time, and its answer for a few seconds: /health polled every second costs
      // the store one request per STORE_RETRY_SECONDS, and none while one is still unanswered.
      if (!cached || now - cached.at >= STORE_RETRY_SECONDS * 1000) cached = { at: now, result: probe() };
      return cached.result;
    },
    stage: async (source, opts) => {
      let staged: StagedBlob;
      try {
        staged = await inner.stage(source, opts);
      } catch (err) {
        // The client went away (or was stopped): its own failure, whatever the store made of it.
        if (source.errored || opts?.signal?.aborted) throw err;
        throw unavailable(err, 'stage');
      }
      return { ...staged, commit: guard('commit', () => staged.commit()), discard: guard('discard', () => staged.discard()) };
    },
    read: guard('read', (sha256: string, range?: ByteRange) => inner.read(sha256, range)),
    stat: guard('read', (sha256: string) => inner.stat(sha256)),
    remove: guard('remove', (sha256: string) => inner.remove(sha256)),
    async *list() {
      try {
        yield* inner.list();
      } catch (err) {
        throw unavailable(err, 'read');
      }
    },
    sweepStaging: guard('remove', (olderThanMs: number) => inner.sweepStaging(olderThanMs)),
  };
}
