// The files domain service. Owns the rules (names, versions, trash, limits, the quota) and the
// transactions; never sees HTTP. Every query carries `owner_id = <the principal's user>`, so another
// user's file is NotFound by construction.
//
// A write streams the bytes into the blob store's staging area first (outside any transaction: a
// gigabyte takes a while), then, in one short transaction: lock the file row, check its state and
// version, charge the quota, insert the version, update the file, and make the blob visible. The blob
// becomes visible before the transaction commits, so a committed row always has its bytes; a crash in
// between leaves at worst an unreferenced blob, which garbage collection removes (see references()).
//
// Quota: each file counts the bytes of each distinct content among its versions (a restore, or
// uploading the same bytes again, costs nothing); trashed files still count; a purge credits them.
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { JobQueue } from '../../db/jobs.ts';
import type { ResourceEvents } from '../../contract/search.ts';
import {
  Aborted,
  BadArguments,
  Conflict,
  FileTooLarge,
  NotFound,
  PreconditionFailed,
  QuotaExceeded,
  StorageFull,
} from '../../contract/errors.ts';
import type { StorageSettings } from '../../contract/domain.ts';
import { chargeStorage, storageUsage } from '../storage/usage.ts';
import type { Principal } from '../identity/types.ts';
import * as v from '../notes/validate.ts';
import type { BlobStore, BlobStoreCheck, GuardedBlobStore, StagedBlob } from './blob-store.ts';
import { extractTextJob, type ExtractOutcome, type IsolatedExtract } from './jobs.ts';
import { BlobLimitExceeded, guardBlobStore } from './blob-store.ts';
import type { S3BlobStoreSettings } from './s3-store.ts';
import { decideType, declaredType, SNIFF_BYTES } from './content-type.ts';
import { fileName, folderPath } from './names.ts';
import { FILE_COLUMNS, NOW_MS, toFile, toVersion, VERSION_COLUMNS, type FileDbRow, type VersionDbRow } from './rows.ts';
import { Shares } from './shares.ts';
import { lazyUploads, type Uploads } from './resumable.ts';
import type {
  ContentRef,
  CreatedShare,
  CreateFile,
  CreateShare,
  FileMeta,
  FilesService,
  FileText,
  FileVersion,
  ListFilesOptions,
  Page,
  ShareLink,
  Upload,
  VersionChange,
} from './types.ts';

export interface FilesSettings {
  /** The largest file (one version) in bytes. */
  maxFileBytes: number;
  /** Files in the trash longer than this are purged for good. */
  trashRetentionDays: number;
  trashSweepMinutes: number;
  /** Where the bytes live: on disk under DATA_DIR/blobs, or in an S3-compatible bucket. */
  blobStore: { kind: 'disk' | 's3'; s3: S3BlobStoreSettings };
  /** Text extraction's limits: its child process's, and the caps inside the extractors. */
  extraction: ExtractionSettings;
}

export interface ExtractionSettings {
  /** The extraction process's heap and resident memory, in MB: over it, it is killed. */
  memoryMb: number;
  /** How long one file's extraction may take: over it, it is killed. */
  timeSeconds: number;
  /** Most bytes a document's compressed parts (a DOCX's zip) may expand to; over it, it is not read. */
  maxDecompressedBytes: number;
  /** Most pages of a PDF read (the text ends there, marked truncated). */
  maxPages: number;
  /** Most characters of text kept per version (then marked truncated). */
  maxChars: number;
}

export const FILE_404 = 'no such file. It may never have existed, have been purged, or belong to another account.';
const notFound = () => new NotFound(FILE_404);
const STORAGE_KIND = 'files';
/** What resumable uploads in progress hold of the quota (their declared lengths), until they finish, are cancelled or expire. */
const UPLOADS_KIND = 'uploads';
/** The garbage-collection job's name. */
export const GC_JOB = 'files-gc-blobs';
/** The job that removes resumable uploads left incomplete past their expiry. */
export const EXPIRE_UPLOADS_JOB = 'files-expire-uploads';
/** The text-extraction job's name; its data is one version. */
export const EXTRACT_JOB = 'files-extract-text';
/** The kind of resource a file is, for search. */
export const FILE_KIND = 'file';
export interface ExtractJobData {
  file_id: string;
  version: number;
}

/**
 * Serialises a write that commits a blob with the collector's check-and-remove of that blob: the
 * write holds it shared until its rows commit, the collector exclusively while it decides.
 */
const BLOB_LOCK = `pg_advisory_xact_lock%s(hashtextextended('files-blob:' || ?, 0))`;

async function rows<T>(em: EntityManager, sql: string, params: unknown[] = []): Promise<T[]> {
  return await em.execute<T[]>(sql, params);
}

/** Errors that mean the sender went away mid-body. */
function senderGone(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; name?: unknown } | undefined;
  return (
    e?.code === 'ECONNRESET' ||
    e?.code === 'ERR_STREAM_PREMATURE_CLOSE' ||
    e?.message === 'aborted' ||
    e?.name === 'AbortError' ||
    e?.code === 'ABORT_ERR'
  );
}

export class FilesServiceImpl implements FilesService {
  readonly #orm: MikroORM;
  readonly store: GuardedBlobStore;
  readonly #settings: FilesSettings;
  readonly #storage: StorageSettings;
  readonly #shares: Shares;
  /** The server's base URL, for links in answers. */
  readonly publicUrl: () => string;
  readonly #jobs: JobQueue | undefined;
  /** Told of every file whose name, content, text or state changed, in the write's transaction. */
  readonly #events: ResourceEvents | undefined;
  /** Resumable (tus) uploads in progress, under DATA_DIR/uploads; undefined without a data dir. */
  readonly uploads: Uploads | undefined;

  constructor(
    db: { orm: MikroORM },
    store: BlobStore,
    settings: FilesSettings,
    storage: StorageSettings,
    opts: {
      log?: Logger;
      publicUrl?: () => string;
      jobs?: JobQueue;
      events?: ResourceEvents;
      uploadsDir?: string;
      uploadExpiryMs?: number;
    } = {},
  ) {
    this.#jobs = opts.jobs;
    this.#events = opts.events;
    this.#orm = db.orm;
    this.publicUrl = opts.publicUrl ?? (() => '');
    // An unreachable store is one outcome (503 blob_store_unavailable) everywhere; the operator
    // reads why in the log.
    const log = opts.log;
    this.store = guardBlobStore(store, (err, what) =>
      log?.warn(
        { err: { message: (err as Error).message, code: (err as { code?: unknown }).code }, store: store.kind, what },
        'blob store unreachable',
      ),
    );
    this.#settings = settings;
    this.#storage = storage;
    this.#shares = new Shares(() => this.#em(), opts.log);
    this.uploads = opts.uploadsDir ? lazyUploads(this, opts.uploadsDir, { expiryMs: opts.uploadExpiryMs ?? 24 * 3600_000 }) : undefined;
  }

  get shares(): Shares {
    return this.#shares;
  }

  /** The most bytes one file may have on this server. */
  get maxFileBytes(): number {
    return this.#settings.maxFileBytes;
  }

  #em(): EntityManager {
    return this.#orm.em.fork();
  }

  async #changed(em: EntityManager, owner: string, id: string): Promise<void> {
    await this.#events?.changed(em, [{ kind: FILE_KIND, owner, id }]);
  }

  // --- uploads -----------------------------------------------------------------------------------

  #tooLarge(): FileTooLarge {
    const max = this.#settings.maxFileBytes;
    return new FileTooLarge(`the file is larger than this server's limit of ${max} bytes per file; nothing was stored.`, max);
  }

  #overQuota(used: number, quota: number, needed: number, what: string): QuotaExceeded {
    return new QuotaExceeded(
      `${what}, but you use ${used} of your ${quota}-byte quota; nothing was stored. Delete and purge something, or ask an operator for more space.`,
      { used, quota, needed },
    );
  }

  /**
   * Refuses a file of `length` bytes before any of it is read: over the per-file limit (413
   * file_too_large) or over what is left of the owner's quota (507 quota_exceeded). The quota is
   * charged for good only when the file commits. Without a length (a chunked or multipart body),
   * answers how many bytes the owner may still store (Infinity without a quota), the most staging
   * will take before it stops reading.
   */
  async admit(ownerId: string, length: number | undefined): Promise<number> {
    if (length !== undefined && length > this.#settings.maxFileBytes) throw this.#tooLarge();
    if (this.#storage.quotaBytesPerUser === null) return Infinity;
    const usage = await storageUsage(this.#em(), ownerId, this.#storage);
    if (usage.quota === null) return Infinity;
    if (length !== undefined && usage.total + length > usage.quota)
      throw this.#overQuota(usage.total, usage.quota, length, `This file is ${length} bytes`);
    return Math.max(0, usage.quota - usage.total);
  }

  /**
   * Starts a resumable upload of `length` bytes: checks what the file will be created with (name,
   * folder, note) before its bytes arrive, and holds `length` bytes of the owner's quota for it
   * until it becomes a file (create with its id), is cancelled or expires (releaseUpload). Over the
   * per-file limit, 413 file_too_large; over what is left of the quota, counting the other uploads
   * in progress, 507 quota_exceeded.
   */
  async reserveUpload(
    p: Principal,
    input: { id: string; name: string; folder?: string | undefined; note_id?: string | undefined; length: number },
  ): Promise<void> {
    fileName(input.name);
    folderPath(input.folder);
    if (input.note_id !== undefined) await this.#requireNote(this.#em(), p.user.id, input.note_id);
    if (input.length > this.#settings.maxFileBytes) throw this.#tooLarge();
    await this.#em().transactional(async (em) => {
      await em.execute(`insert into file_uploads (id, owner_id, length) values (?, ?, ?)`, [input.id, p.user.id, input.length]);
      await chargeStorage(em, p.user.id, UPLOADS_KIND, input.length, this.#storage);
    });
  }

  /** Whether the blob store can be used now (cached for a few seconds): for /health and readiness. */
  checkBlobStore(): Promise<BlobStoreCheck> {
    return this.store.health();
  }

  /** Gives back what a resumable upload held of the quota (cancelled, expired, refused); nothing when it holds nothing. */
  async releaseUpload(ownerId: string, id: string): Promise<void> {
    if (!v.isUuid(id)) return;
    await this.#em().transactional((em) => this.#release(em, ownerId, id));
  }

  async #release(em: EntityManager, ownerId: string, id: string): Promise<void> {
    const [held] = await rows<{ length: string }>(em, `delete from file_uploads where id = ? and owner_id = ? returning length`, [
      id,
      ownerId,
    ]);
    if (held) await chargeStorage(em, ownerId, UPLOADS_KIND, -Number(held.length), this.#storage);
  }

  /** The resumable uploads holding quota, oldest first, for the expiry sweep. */
  async heldUploads(limit = 1000): Promise<Array<{ id: string; owner_id: string; created_ms: number }>> {
    const found = await rows<{ id: string; owner_id: string; created_ms: string }>(
      this.#em(),
      `select id, owner_id, (extract(epoch from created_at) * 1000)::bigint as created_ms from file_uploads order by created_at limit ?`,
      [limit],
    );
    return found.map((r) => ({ id: r.id, owner_id: r.owner_id, created_ms: Number(r.created_ms) }));
  }

  /**
   * Streams the upload into the store's staging area, refusing it early when a limit is already
   * known to be exceeded: a declared length over a limit before any byte; a body of unknown length
   * (chunked, multipart) as soon as it passes the per-file limit or what is left of the quota. A
   * `reserved` upload (a resumable one's) holds its quota already.
   */
  async #stage(ownerId: string, upload: Upload, reserved = false): Promise<{ staged: StagedBlob; head: Buffer }> {
    const max = this.#settings.maxFileBytes;
    const room = reserved ? Infinity : await this.admit(ownerId, upload.length);
    try {
      const staged = await this.store.stage(upload.source, {
        maxBytes: Math.min(max, room),
        headBytes: SNIFF_BYTES,
        ...(upload.signal ? { signal: upload.signal } : {}),
      });
      return { staged, head: staged.head };
    } catch (err) {
      upload.source.resume();
      if (err instanceof BlobLimitExceeded) {
        if (err.limit >= max) throw this.#tooLarge();
        const quota = this.#storage.quotaBytesPerUser ?? 0;
        throw this.#overQuota(quota - room, quota, room + 1, `This file passed ${room} bytes, all that is left of your quota`);
      }
      if ((err as NodeJS.ErrnoException).code === 'ENOSPC')
        throw new StorageFull("the server's storage is full; nothing was stored. Try again later, or tell the operator.", { cause: err });
      if (senderGone(err)) throw new Aborted('the upload ended before all its bytes arrived; nothing was stored.');
      throw err;
    }
  }

  /** Runs `write` in a transaction that ends by making the staged blob visible; discards it otherwise. */
  async #commitWith<T>(staged: StagedBlob, write: (em: EntityManager) => Promise<T>): Promise<T> {
    try {
      return await this.#em().transactional(async (em) => {
        const out = await write(em);
        await em.execute(`select ${BLOB_LOCK.replace('%s', '_shared')}`, [staged.sha256]);
        await staged.commit();
        return out;
      });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOSPC')
        throw new StorageFull("the server's storage is full; nothing was stored. Try again later, or tell the operator.", { cause: err });
      throw err;
    } finally {
      await staged.discard();
    }
  }

  /** Charges the quota for `size` bytes unless this file already has a version with that content. */
  async #charge(em: EntityManager, ownerId: string, fileId: string, sha256: string, size: number): Promise<void> {
    const [seen] = await rows<{ n: number }>(em, `select count(*)::int as n from file_versions where file_id = ? and sha256 = ?`, [
      fileId,
      sha256,
    ]);
    if ((seen?.n ?? 0) === 0) await chargeStorage(em, ownerId, STORAGE_KIND, size, this.#storage);
  }

  /**
   * A new file at version 1. With `id` (a resumable upload's, which the file takes) the call is
   * idempotent: when the caller already has a file of that id, it is returned and nothing is stored.
   */
  async create(p: Principal, input: CreateFile & { id?: string }): Promise<FileMeta> {
    const name = fileName(input.name);
    const folder = folderPath(input.folder);
    const noteId = input.note_id ?? null;
    const owner = p.user.id;
    if (input.id !== undefined) {
      const [done] = await rows<FileDbRow>(this.#em(), `select ${FILE_COLUMNS} from files where id = ? and owner_id = ?`, [
        input.id,
        owner,
      ]);
      if (done) return toFile(done);
    }
    if (noteId !== null) await this.#requireNote(this.#em(), owner, noteId);
    // A resumable upload's bytes are held in the quota since its creation; they become the file's.
    const { staged, head } = await this.#stage(owner, input, input.id !== undefined);
    const type = await decideType(head, declaredType(input.declaredType), name);
    const id = input.id ?? randomUUID();
    return this.#commitWith(staged, async (em) => {
      if (noteId !== null) await this.#requireNote(em, owner, noteId);
      const [row] = await rows<FileDbRow>(
        em,
        `insert into files (id, owner_id, name, folder, content_type, size, sha256, version, note_id, created_at, updated_at)
         select ?, ?, ?, ?, ?, ?, ?, 1, ?, c.ts, c.ts from (select ${NOW_MS} as ts) c
         on conflict (id) do nothing
         returning ${FILE_COLUMNS}`,
        [id, owner, name, folder, type, staged.size, staged.sha256, noteId],
      );
      if (!row) {
        // The same resumable upload finished by a concurrent request: that one stored it.
        const [done] = await rows<FileDbRow>(em, `select ${FILE_COLUMNS} from files where id = ? and owner_id = ?`, [id, owner]);
        if (!done) throw new Conflict('a file with this id exists already');
        return toFile(done);
      }
      if (input.id !== undefined) await this.#release(em, owner, input.id);
      await chargeStorage(em, owner, STORAGE_KIND, staged.size, this.#storage);
      await this.#insertVersion(em, owner, toFile(row), 'upload');
      return toFile(row);
    });
  }

  async #insertVersion(em: EntityManager, owner: string, f: FileMeta, change: VersionChange): Promise<void> {
    await em.execute(
      `insert into file_versions (file_id, version, owner_id, name, content_type, size, sha256, change, created_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [f.id, f.version, owner, f.name, f.content_type, f.size, f.sha256, change, f.updated_at],
    );
    // Its text, for search, once the version commits.
    const data: ExtractJobData = { file_id: f.id, version: f.version };
    await this.#jobs?.send(EXTRACT_JOB, data, { em });
    await this.#changed(em, owner, f.id);
  }

  /** Locks the caller's file row for the transaction; a trashed file takes no new content. */
  async #lockLive(em: EntityManager, owner: string, id: string, expectedVersion: number | undefined): Promise<FileMeta> {
    const [row] = await rows<FileDbRow>(em, `select ${FILE_COLUMNS} from files where id = ? and owner_id = ? for update`, [id, owner]);
    if (!row) throw notFound();
    const cur = toFile(row);
    if (cur.deleted_at !== null) throw new Conflict('the file is in the trash; restore it first', cur);
    if (expectedVersion !== undefined && expectedVersion !== cur.version)
      throw new Conflict(
        `the file is at version ${cur.version}, not ${expectedVersion}: it changed since you read it; nothing was written`,
        cur,
      );
    return cur;
  }

  async #newVersion(
    em: EntityManager,
    owner: string,
    cur: FileMeta,
    content: { size: number; sha256: string; content_type: string; name?: string },
    change: VersionChange,
  ): Promise<FileMeta> {
    await this.#charge(em, owner, cur.id, content.sha256, content.size);
    const [row] = await rows<FileDbRow>(
      em,
      `update files set content_type = ?, size = ?, sha256 = ?, name = ?, version = files.version + 1, updated_at = c.ts
         from (select ${NOW_MS} as ts) c
        where files.id = ? and files.owner_id = ? returning ${FILE_COLUMNS}`,
      [content.content_type, content.size, content.sha256, content.name ?? cur.name, cur.id, owner],
    );
    const next = toFile(row!);
    await this.#insertVersion(em, owner, next, change);
    return next;
  }

  async putContent(p: Principal, id: string, expectedVersion: number, upload: Upload): Promise<FileMeta> {
    if (!v.isUuid(id)) throw notFound();
    const expected = v.version(expectedVersion, 'expected_version');
    const owner = p.user.id;
    // Refuse before reading a gigabyte: the file must exist, be live and be at that version.
    const before = await this.get(p, id);
    if (before.deleted_at !== null) throw new Conflict('the file is in the trash; restore it first', before);
    if (before.version !== expected)
      throw new Conflict(
        `the file is at version ${before.version}, not ${expected}: it changed since you read it; nothing was written`,
        before,
      );
    const { staged, head } = await this.#stage(owner, upload);
    const type = await decideType(head, declaredType(upload.declaredType), before.name);
    return this.#commitWith(staged, async (em) => {
      const cur = await this.#lockLive(em, owner, id, expected);
      return this.#newVersion(em, owner, cur, { size: staged.size, sha256: staged.sha256, content_type: type }, 'upload');
    });
  }

  async restoreVersion(p: Principal, id: string, version: number, expectedVersion?: number): Promise<FileMeta> {
    if (!v.isUuid(id)) throw notFound();
    const wanted = v.version(version, 'version');
    const expected = expectedVersion === undefined ? undefined : v.version(expectedVersion, 'expected_version');
    const owner = p.user.id;
    return this.#em().transactional(async (em) => {
      const cur = await this.#lockLive(em, owner, id, expected);
      const [old] = await rows<VersionDbRow>(
        em,
        `select ${VERSION_COLUMNS} from file_versions where file_id = ? and owner_id = ? and version = ?`,
        [id, owner, wanted],
      );
      if (!old) throw new NotFound(`file ${id} has no version ${wanted}`);
      const o = toVersion(old);
      return this.#newVersion(em, owner, cur, { size: o.size, sha256: o.sha256, content_type: o.content_type, name: o.name }, 'restore');
    });
  }

  // --- reads -------------------------------------------------------------------------------------

  async list(p: Principal, opts: ListFilesOptions = {}): Promise<Page<FileMeta>> {
    const { limit, clampedFrom } = v.limit(opts.limit);
    const list = `${opts.trashed ? 'files-trash' : 'files'}:${p.user.id}`;
    const cursor = v.decodeCursor(opts.cursor, 'tu', list);
    const params: unknown[] = [p.user.id];
    let where = `owner_id = ? and deleted_at is ${opts.trashed ? 'not null' : 'null'}`;
    if (opts.folder !== undefined) {
      where += ` and folder = ?`;
      params.push(folderPath(opts.folder));
    }
    if (opts.idPrefix !== undefined) {
      where += ` and id between ?::uuid and ?::uuid`;
      params.push(...v.idPrefixRange(opts.idPrefix));
    }
    if (cursor) {
      where += ` and (updated_at, id) < (?::timestamptz, ?::uuid)`;
      params.push(new Date(cursor[0] as number).toISOString(), cursor[1]);
    }
    params.push(limit + 1);
    const found = (
      await rows<FileDbRow>(
        this.#em(),
        `select ${FILE_COLUMNS} from files where ${where} order by updated_at desc, id desc limit ?`,
        params,
      )
    ).map(toFile);
    const items = found.slice(0, limit);
    const last = items[items.length - 1];
    const out: Page<FileMeta> = {
      items,
      next_cursor: found.length > limit && last ? v.encodeCursor([Date.parse(last.updated_at), last.id], list) : null,
      limit,
    };
    if (clampedFrom !== undefined) out.limit_clamped_from = clampedFrom;
    return out;
  }

  /** Does `owner` have a file with this id (live or trashed)? For upkeep that knows the owner from its own records. */
  async isStored(owner: string, id: string): Promise<boolean> {
    if (!v.isUuid(id)) return false;
    const found = await rows<{ id: string }>(this.#em(), `select id from files where id = ? and owner_id = ?`, [id, owner]);
    return found.length > 0;
  }

  async get(p: Principal, id: string): Promise<FileMeta> {
    if (!v.isUuid(id)) throw notFound();
    const [row] = await rows<FileDbRow>(this.#em(), `select ${FILE_COLUMNS} from files where id = ? and owner_id = ?`, [id, p.user.id]);
    if (!row) throw notFound();
    return toFile(row);
  }

  async versions(p: Principal, id: string): Promise<FileVersion[]> {
    await this.get(p, id);
    const found = await rows<VersionDbRow>(
      this.#em(),
      `select ${VERSION_COLUMNS} from file_versions where file_id = ? and owner_id = ? order by version desc`,
      [id, p.user.id],
    );
    return found.map(toVersion);
  }

  async content(p: Principal, id: string, version?: number): Promise<ContentRef> {
    if (!v.isUuid(id)) throw notFound();
    if (version === undefined) {
      const f = await this.get(p, id);
      return { file_id: f.id, version: f.version, name: f.name, content_type: f.content_type, size: f.size, sha256: f.sha256 };
    }
    const [row] = await rows<VersionDbRow>(
      this.#em(),
      `select ${VERSION_COLUMNS} from file_versions where file_id = ? and owner_id = ? and version = ?`,
      [id, p.user.id, v.version(version, 'version')],
    );
    if (!row) throw new NotFound('no such file or version. The file may not exist or belong to another account; GET its versions.');
    const r = toVersion(row);
    return { file_id: r.file_id, version: r.version, name: r.name, content_type: r.content_type, size: r.size, sha256: r.sha256 };
  }

  async text(p: Principal, id: string, opts: { version?: number; page?: number } = {}): Promise<FileText> {
    const ref = await this.content(p, id, opts.version);
    const [row] = await rows<{ state: FileText['state']; note: string | null; text: string | null; pages: string[] | null }>(
      this.#em(),
      `select extraction_state as state, extraction_note as note, extracted_text as text, extracted_pages as pages
         from file_versions where file_id = ? and owner_id = ? and version = ?`,
      [ref.file_id, p.user.id, ref.version],
    );
    if (!row) throw notFound();
    const pages = Array.isArray(row.pages) ? row.pages : [];
    let text = row.text ?? '';
    let page: number | null = null;
    if (opts.page !== undefined) {
      if (row.state === 'extracted' && (pages.length === 0 || opts.page > pages.length))
        throw new BadArguments(
          pages.length === 0
            ? `this file has no pages (it is ${ref.content_type}); ask for its whole text, without page`
            : `page ${opts.page} is past the last page (${pages.length})`,
          [{ path: 'page', message: pages.length === 0 ? 'the file has no pages' : `must be at most ${pages.length}` }],
        );
      page = opts.page;
      text = pages[opts.page - 1] ?? '';
    }
    return { file_id: ref.file_id, version: ref.version, state: row.state, note: row.note, pages: pages.length, page, text };
  }

  read(ref: ContentRef, range?: { start: number; end: number }): Promise<Readable> {
    return this.store.read(ref.sha256, range);
  }

  // --- state -------------------------------------------------------------------------------------

  /** `expected`: only while the file is at that version (else PreconditionFailed with the file). */
  async rename(p: Principal, id: string, input: { name?: string; folder?: string }, expected?: number): Promise<FileMeta> {
    if (!v.isUuid(id)) throw notFound();
    const name = input.name === undefined ? undefined : fileName(input.name);
    const folder = input.folder === undefined ? undefined : folderPath(input.folder);
    return this.#em().transactional(async (em) => {
      const [row] = await rows<FileDbRow>(
        em,
        `update files set name = coalesce(?, name), folder = coalesce(?, folder), updated_at = ${NOW_MS}
          where id = ? and owner_id = ? and (?::int is null or version = ?) returning ${FILE_COLUMNS}`,
        [name ?? null, folder ?? null, id, p.user.id, expected ?? null, expected ?? null],
      );
      if (!row) throw await this.#notAt(em, p, id);
      await this.#changed(em, p.user.id, id);
      return toFile(row);
    });
  }

  async trash(p: Principal, id: string): Promise<FileMeta> {
    return this.#setTrashed(p, id, true);
  }

  async untrash(p: Principal, id: string): Promise<FileMeta> {
    return this.#setTrashed(p, id, false);
  }

  async #setTrashed(p: Principal, id: string, trashed: boolean): Promise<FileMeta> {
    if (!v.isUuid(id)) throw notFound();
    return this.#em().transactional(async (em) => {
      const [row] = await rows<FileDbRow>(em, `select ${FILE_COLUMNS} from files where id = ? and owner_id = ? for update`, [
        id,
        p.user.id,
      ]);
      if (!row) throw notFound();
      const cur = toFile(row);
      if ((cur.deleted_at !== null) === trashed)
        throw new Conflict(trashed ? 'the file is already in the trash' : 'the file is not in the trash', cur);
      const [next] = await rows<FileDbRow>(
        em,
        `update files set deleted_at = ${trashed ? NOW_MS : 'null'}, updated_at = ${NOW_MS} where id = ? and owner_id = ? returning ${FILE_COLUMNS}`,
        [id, p.user.id],
      );
      await this.#changed(em, p.user.id, id);
      return toFile(next!);
    });
  }

  async purge(p: Principal, id: string): Promise<void> {
    if (!v.isUuid(id)) throw notFound();
    await this.#em().transactional(async (em) => {
      const [row] = await rows<FileDbRow>(em, `select ${FILE_COLUMNS} from files where id = ? and owner_id = ? for update`, [
        id,
        p.user.id,
      ]);
      if (!row) throw notFound();
      if (row.deleted_ms === null) throw new Conflict('only a file in the trash can be purged; delete it first', toFile(row));
      await this.#purgeRow(em, p.user.id, id);
    });
  }

  async #purgeRow(em: EntityManager, owner: string, id: string): Promise<void> {
    const [held] = await rows<{ bytes: string | null }>(
      em,
      `select sum(size)::bigint as bytes from (select distinct sha256, size from file_versions where file_id = ?) d`,
      [id],
    );
    await em.execute(`delete from files where id = ? and owner_id = ?`, [id, owner]);
    await this.#changed(em, owner, id);
    const bytes = Number(held?.bytes ?? 0);
    if (bytes > 0) await chargeStorage(em, owner, STORAGE_KIND, -bytes, this.#storage);
    // The purge may have freed blobs: collect them once it commits (a job, not inline).
    await this.enqueueGc(em);
  }

  /** Queues a garbage collection (at most one waits at a time), in `em`'s transaction when given. */
  async enqueueGc(em?: EntityManager): Promise<void> {
    await this.#jobs?.send(GC_JOB, {}, { singletonKey: GC_JOB, ...(em ? { em } : {}) });
  }

  /** Queues a sweep of expired incomplete resumable uploads (at most one waits at a time). */
  async enqueueUploadSweep(): Promise<void> {
    await this.#jobs?.send(EXPIRE_UPLOADS_JOB, {}, { singletonKey: EXPIRE_UPLOADS_JOB });
  }

  /** Purges files trashed longer than the retention; returns how many. */
  async purgeExpiredTrash(): Promise<number> {
    const expired = await rows<{ id: string; owner_id: string }>(
      this.#em(),
      `select id, owner_id from files where deleted_at is not null and deleted_at < now() - make_interval(days => ?) limit 500`,
      [this.#settings.trashRetentionDays],
    );
    for (const f of expired) await this.#em().transactional((em) => this.#purgeRow(em, f.owner_id, f.id));
    return expired.length;
  }

  // --- notes -------------------------------------------------------------------------------------

  async #requireNote(em: EntityManager, owner: string, noteId: string): Promise<void> {
    const missing = () => new NotFound('no such note. It may never have existed, have been purged, or belong to another account.');
    if (!v.isUuid(noteId)) throw missing();
    const [n] = await rows<{ id: string }>(em, `select id from notes where id = ? and owner_id = ? for key share`, [noteId, owner]);
    if (!n) throw missing();
  }

  /** `expected`: only while the file is at that version (else PreconditionFailed with the file). */
  async attach(p: Principal, id: string, noteId: string | null, expected?: number): Promise<FileMeta> {
    if (!v.isUuid(id)) throw notFound();
    return this.#em().transactional(async (em) => {
      if (noteId !== null) await this.#requireNote(em, p.user.id, noteId);
      const [row] = await rows<FileDbRow>(
        em,
        `update files set note_id = ?, updated_at = ${NOW_MS}
          where id = ? and owner_id = ? and (?::int is null or version = ?) returning ${FILE_COLUMNS}`,
        [noteId, id, p.user.id, expected ?? null, expected ?? null],
      );
      if (!row) throw await this.#notAt(em, p, id);
      return toFile(row);
    });
  }

  /** Why an update that names the file by id (and maybe a version) changed nothing. */
  async #notAt(em: EntityManager, p: Principal, id: string): Promise<Error> {
    const [cur] = await rows<FileDbRow>(em, `select ${FILE_COLUMNS} from files where id = ? and owner_id = ?`, [id, p.user.id]);
    if (!cur) return notFound();
    const f = toFile(cur);
    return new PreconditionFailed(`the file is at version ${f.version}; nothing was changed.`, f, `"${f.version}"`);
  }

  async attachments(p: Principal, noteId: string): Promise<FileMeta[]> {
    const em = this.#em();
    await this.#requireNote(em, p.user.id, noteId);
    const found = await rows<FileDbRow>(
      em,
      `select ${FILE_COLUMNS} from files where note_id = ? and owner_id = ? and deleted_at is null order by name, id limit 1000`,
      [noteId, p.user.id],
    );
    return found.map(toFile);
  }

  // --- sharing -----------------------------------------------------------------------------------

  async createShare(p: Principal, fileId: string, input: CreateShare): Promise<CreatedShare> {
    const f = await this.get(p, fileId);
    if (f.deleted_at !== null) throw new Conflict('the file is in the trash; restore it before sharing it', f);
    if (input.version !== undefined) await this.content(p, fileId, input.version);
    return this.#shares.create(p.user.id, f.id, input);
  }

  listShares(p: Principal, opts: { file_id?: string } = {}): Promise<ShareLink[]> {
    if (opts.file_id !== undefined && !v.isUuid(opts.file_id)) throw notFound();
    return this.#shares.list(p.user.id, opts.file_id);
  }

  revokeShare(p: Principal, shareId: string): Promise<void> {
    return this.#shares.revoke(p.user.id, shareId);
  }

  // --- garbage collection --------------------------------------------------------------------------

  /**
   * Is this blob referenced by any file version (live or trashed file; a share link serves a
   * version, so it is covered)? The garbage collector removes only blobs for which this is false
   * (see collectBlob).
   */
  async references(sha256: string, em: EntityManager = this.#em()): Promise<boolean> {
    const [r] = await rows<{ n: number }>(
      em,
      `select (exists (select 1 from file_versions where sha256 = ?) or exists (select 1 from files where sha256 = ?))::int as n`,
      [sha256, sha256],
    );
    return (r?.n ?? 0) === 1;
  }

  /**
   * Removes the blob when nothing references it; says whether it did. A write commits its blob
   * inside its transaction just before its rows commit: it holds the blob's lock shared until then,
   * so the check here either waits and sees its rows, or runs first, and the write's commit then
   * stores the bytes again from its staging copy (the blob is absent, so it is renamed in, not
   * touched).
   */
  async collectBlob(sha256: string): Promise<boolean> {
    return this.#em().transactional(async (em) => {
      await em.execute(`select ${BLOB_LOCK.replace('%s', '')}`, [sha256]);
      if (await this.references(sha256, em)) return false;
      await this.store.remove(sha256);
      return true;
    });
  }

  /**
   * Extracts and stores the text of one version (the extract-text job). A version purged in the
   * meantime is nothing to do. Documents are parsed by `isolated`; on the `lastAttempt` an
   * extraction killed for its limits is stored as failed, with the reason.
   */
  async extractVersion(
    data: ExtractJobData,
    opts: { maxBytes: number; isolated: IsolatedExtract; lastAttempt: boolean; signal?: AbortSignal },
  ): Promise<ExtractOutcome | null> {
    const [row] = await rows<{ sha256: string; content_type: string; owner_id: string }>(
      this.#em(),
      `select sha256, content_type, owner_id from file_versions where file_id = ? and version = ?`,
      [data.file_id, data.version],
    );
    if (!row) return null;
    const out = await extractTextJob({
      read: () => this.store.read(row.sha256),
      contentType: row.content_type,
      maxBytes: opts.maxBytes,
      caps: {
        maxChars: this.#settings.extraction.maxChars,
        maxPages: this.#settings.extraction.maxPages,
        maxDecompressedBytes: this.#settings.extraction.maxDecompressedBytes,
      },
      isolated: opts.isolated,
      lastAttempt: opts.lastAttempt,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    await this.#em().transactional(async (em) => {
      await em.execute(
        `update file_versions set extraction_state = ?, extraction_note = ?, extracted_text = ?, extracted_pages = ?::jsonb
        where file_id = ? and version = ?`,
        out.status === 'extracted'
          ? [
              'extracted',
              out.truncated ? 'truncated' : null,
              out.text,
              out.pages ? JSON.stringify(out.pages) : null,
              data.file_id,
              data.version,
            ]
          : [out.status, out.reason, null, null, data.file_id, data.version],
      );
      // The text is searchable now.
      await this.#changed(em, row.owner_id, data.file_id);
    });
    return out;
  }
}
