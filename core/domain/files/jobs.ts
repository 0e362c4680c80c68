// The files domain's background jobs, as functions of what they need (the domain's service
// defines them on the job queue and hands these in):
//   gc-blobs      remove blobs nothing references, and staging objects of abandoned writes;
//   extract-text  the text of one stored file, for search.
import type { Readable } from 'node:stream';
import type { BlobStore } from './blob-store.ts';
import { ChildFailed, ChildLimitExceeded } from '../child-runner.ts';
import type { ExtractReply, ExtractRequest } from './extract-entry.ts';
import { canExtract, extractText, inChildProcess, UnreadableDocument, type ExtractedText, type ExtractOptions } from './extract.ts';

export interface GcResult {
  /** Blobs looked at. */
  checked: number;
  /** Blobs removed because nothing referenced them. */
  removed: number;
  /** Staging objects of abandoned writes removed. */
  staging: number;
}

/**
 * Offers every stored blob to `collect`, which removes it when nothing refers to it and says
 * whether it did, then removes staging objects older than `stagingGraceMs`. `collect` must count
 * every reference a blob can have (a version, a trash entry, a share link) and must not race a
 * write that commits the same blob with its row (the files service checks and removes under a
 * lock the write takes too). Stops between blobs when `signal` aborts.
 */
export async function gcBlobs(opts: {
  store: BlobStore;
  collect(sha256: string): Promise<boolean>;
  stagingGraceMs: number;
  signal?: AbortSignal;
  progress?(done: GcResult): Promise<void>;
}): Promise<GcResult> {
  const result: GcResult = { checked: 0, removed: 0, staging: 0 };
  for await (const sha256 of opts.store.list()) {
    opts.signal?.throwIfAborted();
    result.checked++;
    if (await opts.collect(sha256)) result.removed++;
    if (result.checked % 1000 === 0) await opts.progress?.({ ...result });
  }
  opts.signal?.throwIfAborted();
  result.staging = await opts.store.sweepStaging(opts.stagingGraceMs);
  return result;
}

export type ExtractOutcome =
  | ({ status: 'extracted' } & ExtractedText)
  /** Nothing to extract: a type without text, a file over `maxBytes`, or a file that is not what its type says. */
  | { status: 'skipped'; reason: string }
  /** The extractor went over its memory or time limit (or crashed) on the last attempt: no text, and why. */
  | { status: 'failed'; reason: string };

/** Runs the extraction of a parsed format in the child process (a ChildRunner over extract-entry.ts). */
export type IsolatedExtract = (req: ExtractRequest, signal?: AbortSignal) => Promise<ExtractReply>;

/**
 * The text of one file. `read` opens its bytes; at most `maxBytes` are read (a text file beyond
 * that is extracted from its beginning, a PDF or DOCX is skipped: it cannot be read in part). A
 * document that cannot be read is an outcome, not an error: retrying would not change it. Every
 * format but text is parsed by `isolated`; when that process is killed (memory, time) or crashes,
 * the attempt fails so the job is retried, unless it is the `lastAttempt`: then the outcome is
 * `failed` with the reason, and the file is never tried again.
 */
export async function extractTextJob(opts: {
  read(): Promise<Readable>;
  contentType: string;
  maxBytes: number;
  caps?: ExtractOptions;
  isolated: IsolatedExtract;
  lastAttempt?: boolean;
  signal?: AbortSignal;
}): Promise<ExtractOutcome> {
  if (!canExtract(opts.contentType)) return { status: 'skipped', reason: `no text to extract from ${opts.contentType}` };
  const source = await opts.read();
  const chunks: Buffer[] = [];
  let size = 0;
  let cut = false;
  try {
    for await (const chunk of source) {
      opts.signal?.throwIfAborted();
      const c = chunk as Buffer;
      if (size + c.length > opts.maxBytes) {
        chunks.push(c.subarray(0, opts.maxBytes - size));
        size = opts.maxBytes;
        cut = true;
        break;
      }
      chunks.push(c);
      size += c.length;
    }
  } finally {
    source.destroy();
  }
  const bytes = Buffer.concat(chunks, size);
  const type = opts.contentType.split(';')[0]!.trim().toLowerCase();
  const whole = type === 'application/pdf' || type.includes('officedocument');
  if (cut && whole) return { status: 'skipped', reason: `larger than ${opts.maxBytes} bytes` };
  const caps = opts.caps ?? {};
  let out: ExtractedText | null;
  if (inChildProcess(opts.contentType)) {
    let reply: ExtractReply;
    try {
      reply = await opts.isolated({ bytes, contentType: opts.contentType, opts: caps }, opts.signal);
    } catch (err) {
      opts.signal?.throwIfAborted();
      if (opts.lastAttempt && (err instanceof ChildLimitExceeded || err instanceof ChildFailed))
        return { status: 'failed', reason: `${err.message}; the file is stored, only its text is missing` };
      throw err;
    }
    if ('unreadable' in reply) return { status: 'skipped', reason: reply.unreadable };
    out = reply.text;
  } else {
    try {
      out = await extractText(bytes, opts.contentType, caps);
    } catch (err) {
      if (err instanceof UnreadableDocument) return { status: 'skipped', reason: err.message };
      throw err;
    }
  }
  if (!out) return { status: 'skipped', reason: `no text to extract from ${opts.contentType}` };
  return { status: 'extracted', ...out, truncated: out.truncated || cut };
}
