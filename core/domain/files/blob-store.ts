// Where file bytes live: content-addressed blobs (sha256), behind one interface with two
// implementations, the disk under DATA_DIR (the embedded default) and an S3-compatible bucket,
// chosen by settings. The files domain stores every version's bytes as a blob; identical content is
// stored once; a blob nothing references is removed by a garbage-collection job, never inline.
//
// A write goes to a temporary object first and becomes visible under its hash only when it is
// complete and hashed (`commit`): a killed or abandoned upload leaves no partial blob behind
// (temporaries older than a grace period are swept by the same garbage collection).
import type { Readable } from 'node:stream';

/** More bytes arrived than the write allows: what every store rejects `stage` with, over `maxBytes`. */
export class BlobLimitExceeded extends Error {
  override name = 'BlobLimitExceeded';
  readonly limit: number;
  constructor(limit: number) {
    super(`more than ${limit} bytes`);
    this.limit = limit;
  }
}

/** A blob being written: complete and hashed, not yet visible under its hash. */
export interface StagedBlob {
  sha256: string;
  size: number;
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

export interface BlobStore {
  /** 'disk' or 's3', for logs and /health. */
  readonly kind: string;
  /**
   * Streams `source` into a temporary object while hashing it. Rejects (and leaves nothing) when the
   * source errors, the signal aborts, or more than `maxBytes` arrive.
   */
  stage(source: Readable, opts?: { maxBytes?: number; signal?: AbortSignal }): Promise<StagedBlob>;
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
