// The blob store on an S3-compatible bucket (AWS S3, MinIO, Cloudflare R2, Backblaze B2, ...).
//
// Layout under the configured prefix: `blobs/<first two hex digits>/<sha256>` for stored blobs and
// `staging/<uuid>` for writes in progress. A write streams into a staging object (a multipart
// upload: parts of PART_BYTES, at most QUEUE_SIZE in memory at once) while it is hashed; `commit`
// copies it to its hash's key (unless that content is already stored) and deletes the staging
// object. A write that fails or is abandoned leaves at most a staging object (or, if the process
// died mid-upload, an incomplete multipart upload: give the bucket a lifecycle rule that aborts
// those after a day); `sweepStaging` removes staging objects older than the grace period.
import { randomUUID } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { NotFound } from '../../contract/errors.ts';
import { feedFrom, meter, type BlobStat, type BlobStore, type ByteRange, type StagedBlob, type StageOptions } from './blob-store.ts';

/** The config's `files.blobStore.s3` section. */
export interface S3BlobStoreSettings {
  /** The service's URL; null for AWS S3 itself. */
  endpoint: string | null;
  region: string;
  bucket: string | null;
  /** Key prefix inside the bucket ('' or ending in '/'). */
  prefix: string;
  /** Both null: the SDK's default credential chain. */
  accessKeyId: string | null;
  secretAccessKey: string | null;
  forcePathStyle: boolean;
  /**
   * When the SDK adds checksums to requests and checks them on responses. WHEN_REQUIRED (the
   * default here) only where an operation needs one: the SDK's own default (CRC32 on every upload)
   * is refused or mishandled by MinIO, R2 and B2.
   */
  checksums: 'WHEN_REQUIRED' | 'WHEN_SUPPORTED';
}

/** Multipart part size (S3's minimum is 5 MiB) and parts in flight: ~2 parts of memory per upload. */
const PART_BYTES = 5 * 1024 * 1024;
const QUEUE_SIZE = 2;
const SHA256_RE = /^[0-9a-f]{64}$/;
/** How long `check()` waits for HeadBucket: a health probe must answer fast, even when S3 does not. */
const CHECK_TIMEOUT_MS = 2000;
/**
 * Without these the SDK waits as long as the operating system does for a connection to a host that
 * does not answer (minutes), and for ever for an answer that does not come: an outage would hang
 * requests instead of failing them with a 503. REQUEST_TIMEOUT_MS bounds each request from its start
 * until S3's response headers arrive (sending a part's bytes included): it fails the request only with
 * `throwOnRequestTimeout` (without it the SDK merely logs a warning). The timer stops when the headers
 * arrive, so a long download is not cut; a body that stalls after its headers is not bounded here (a
 * slow client pausing the download looks the same to the socket).
 */
const CONNECT_TIMEOUT_MS = 5000;
const REQUEST_TIMEOUT_MS = 30_000;

export function s3Client(s: S3BlobStoreSettings): S3Client {
  return new S3Client({
    region: s.region,
    ...(s.endpoint ? { endpoint: s.endpoint } : {}),
    forcePathStyle: s.forcePathStyle,
    ...(s.accessKeyId && s.secretAccessKey ? { credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey } } : {}),
    requestChecksumCalculation: s.checksums,
    responseChecksumValidation: s.checksums,
    requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, throwOnRequestTimeout: true },
  });
}

export class S3BlobStore implements BlobStore {
  readonly kind = 's3';
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #prefix: string;

  constructor(opts: { client: S3Client; bucket: string; prefix?: string }) {
    this.#client = opts.client;
    this.#bucket = opts.bucket;
    this.#prefix = opts.prefix ?? '';
  }

  static fromSettings(s: S3BlobStoreSettings): S3BlobStore {
    if (!s.bucket) throw new Error('files.blobStore.s3.bucket is required for the s3 blob store');
    return new S3BlobStore({ client: s3Client(s), bucket: s.bucket, prefix: s.prefix });
  }

  #blobKey(sha256: string): string {
    return `${this.#prefix}blobs/${sha256.slice(0, 2)}/${sha256}`;
  }

  async check(): Promise<void> {
    // HeadBucket: one small request that needs the endpoint, the credentials and the bucket. No
    // retries here: the probe says how S3 is now, and it is repeated often enough.
    await this.#client.send(new HeadBucketCommand({ Bucket: this.#bucket }), { abortSignal: AbortSignal.timeout(CHECK_TIMEOUT_MS) });
  }

  async stage(source: Readable, opts: StageOptions = {}): Promise<StagedBlob> {
    const key = `${this.#prefix}staging/${randomUUID()}`;
    const m = meter(opts);
    const body = new PassThrough();
    const upload = new Upload({
      client: this.#client,
      params: { Bucket: this.#bucket, Key: key, Body: body },
      partSize: PART_BYTES,
      queueSize: QUEUE_SIZE,
      leavePartsOnError: false,
    });
    const abort = () => void upload.abort().catch(() => {});
    opts.signal?.addEventListener('abort', abort, { once: true });
    const fed = feedFrom(source, 64 * 1024);
    try {
      opts.signal?.throwIfAborted();
      // The source's error, an abort or too many bytes fail the pipeline, which ends `body` with the
      // error, which fails the upload (and aborts a multipart one).
      await Promise.all([pipeline(fed.feed, m.stream, body, ...(opts.signal ? [{ signal: opts.signal }] : [])), upload.done()]);
      opts.signal?.throwIfAborted();
    } catch (err) {
      fed.release();
      fed.feed.destroy();
      body.destroy();
      abort();
      // A single-part upload may have completed just before the failure: leave nothing.
      await this.#delete(key).catch(() => {});
      throw err;
    } finally {
      opts.signal?.removeEventListener('abort', abort);
    }
    const { sha256, size, head } = m.done();
    let settled = false;
    return {
      sha256,
      size,
      head,
      commit: async () => {
        if (settled) return;
        const target = this.#blobKey(sha256);
        // Identical content is stored once. When it is there already, it is copied onto itself
        // instead, which renews its date: a garbage collector spares recent blobs, and this one is
        // about to be referenced again.
        const exists = (await this.stat(sha256)) !== null;
        await this.#client.send(
          new CopyObjectCommand({
            Bucket: this.#bucket,
            Key: target,
            CopySource: `${this.#bucket}/${encodeKey(exists ? target : key)}`,
            ...(exists ? { MetadataDirective: 'REPLACE' as const } : {}),
          }),
        );
        settled = true;
        await this.#delete(key);
      },
      discard: async () => {
        if (settled) return;
        settled = true;
        await this.#delete(key);
      },
    };
  }

  async read(sha256: string, range?: ByteRange): Promise<Readable> {
    if (!SHA256_RE.test(sha256)) throw new NotFound(`no blob ${sha256}`);
    try {
      const res = await this.#client.send(
        new GetObjectCommand({
          Bucket: this.#bucket,
          Key: this.#blobKey(sha256),
          ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
        }),
      );
      return res.Body as Readable;
    } catch (err) {
      if (isMissing(err)) throw new NotFound(`no blob ${sha256}`);
      throw err;
    }
  }

  async stat(sha256: string): Promise<BlobStat | null> {
    if (!SHA256_RE.test(sha256)) return null;
    try {
      const res = await this.#client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: this.#blobKey(sha256) }));
      return { size: res.ContentLength ?? 0 };
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async remove(sha256: string): Promise<void> {
    if (!SHA256_RE.test(sha256)) return;
    await this.#delete(this.#blobKey(sha256));
  }

  async *list(): AsyncIterable<string> {
    for await (const obj of this.#objects(`${this.#prefix}blobs/`)) {
      const name = obj.key.slice(obj.key.lastIndexOf('/') + 1);
      if (SHA256_RE.test(name)) yield name;
    }
  }

  async sweepStaging(olderThanMs: number): Promise<number> {
    const cutoff = Date.now() - olderThanMs;
    let removed = 0;
    for await (const obj of this.#objects(`${this.#prefix}staging/`)) {
      if (obj.lastModified.getTime() > cutoff) continue;
      await this.#delete(obj.key);
      removed++;
    }
    return removed;
  }

  async #delete(key: string): Promise<void> {
    // S3 answers a delete of an absent key with success.
    await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: key }));
  }

  async *#objects(prefix: string): AsyncIterable<{ key: string; lastModified: Date }> {
    let token: string | undefined;
    do {
      const page = await this.#client.send(
        new ListObjectsV2Command({ Bucket: this.#bucket, Prefix: prefix, ...(token ? { ContinuationToken: token } : {}) }),
      );
      for (const o of page.Contents ?? []) if (o.Key) yield { key: o.Key, lastModified: o.LastModified ?? new Date(0) };
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }
}

function isMissing(err: unknown): boolean {
  return err instanceof S3ServiceException && (err.name === 'NoSuchKey' || err.name === 'NotFound' || err.$metadata.httpStatusCode === 404);
}

/** CopySource is a URL path: each key segment percent-encoded, the slashes kept. */
function encodeKey(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/');
}
