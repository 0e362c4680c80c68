// Resumable uploads with the tus protocol (https://tus.io, v1.0.0: creation, creation-with-upload,
// termination, expiration), served by @tus/server at /api/v1/filedb/uploads. The bytes of an
// upload in progress go to a file under DATA_DIR/uploads (@tus/file-store), where a dropped
// connection leaves them: the client asks for the offset (HEAD) and sends the rest (PATCH). When the
// last byte arrives the upload is handed to the files service like any other upload (it streams
// into the blob store, hashed, type sniffed, the quota charged in the same transaction as the new
// file's rows) and its temporary file is removed.
//
// The file takes the upload's id, which makes the hand-over idempotent: a finish repeated after a
// crash, or asked for again by a HEAD once every byte is there, finds the file and stores nothing
// twice. Every request is authenticated by the REST surface first; an upload belongs to the user who
// created it (recorded server-side in its metadata) and is 404 to anyone else. The size is known
// from Upload-Length before any byte is accepted, so the per-file limit and the quota refuse an
// upload at creation. From then on the upload holds its declared length of its owner's quota (so
// unfinished uploads cannot pile up past it), until its bytes become the file's, or it is cancelled
// (DELETE), refused, or expires: incomplete uploads expire, and a job removes them and gives their
// quota back.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import path from 'node:path';
import { FileStore } from '@tus/file-store';
import { Server } from '@tus/server';
import type { Upload } from '@tus/utils';
import { NodeRequest } from 'srvx/node';
import {
  BadArguments,
  BlobStoreUnavailable,
  Conflict,
  FileTooLarge,
  FolioError,
  NotFound,
  QuotaExceeded,
  RetryLater,
  StorageFull,
  TusVersionUnsupported,
  UnsupportedMediaType,
} from '../../contract/errors.ts';
import type { Call, Reply } from '../../contract/rest.ts';
import type { Principal } from '../identity/types.ts';
import type { FilesServiceImpl } from './service.ts';
import type { FileMeta } from './types.ts';
import { FILE_ID_HEADER, TUS_EXTENSIONS, UPLOAD_404, UPLOADS_PATH } from './resumable.ts';

const OWNER = 'folio_owner';
const TUS_VERSION = '1.0.0';
/** Retry-After on HEAD while a full disk keeps a complete upload from being stored: space comes back slower than a network. */
const FULL_RETRY_SECONDS = 60;
const PATCH_TYPE = 'application/offset+octet-stream';
/** An upload that holds quota but has no bytes, younger than this, may be one being created right now. */
const ORPHAN_GRACE_MS = 10 * 60_000;

interface Exchange {
  principal: Principal;
  baseUrl: string;
  id: string | undefined;
  /** A refusal of Folio's own, answered as a problem rather than as tus's text. */
  failure?: FolioError;
  /** The file a finished upload became. */
  file?: FileMeta;
}

/** A tus error answer (status and text) as the typed outcome the REST surface words as a problem. */
function typed(status: number, text: string): Error {
  const msg = text.trim() || `the upload request was refused (${status})`;
  if (status === 404 || status === 410) return new NotFound(UPLOAD_404);
  if (status === 409) return new Conflict(`${msg}: ask for the upload's offset (HEAD) and send the bytes from there`);
  if (status === 415) return new UnsupportedMediaType(`${msg}: a PATCH sends Content-Type: application/offset+octet-stream`);
  if (status === 413) return new BadArguments(`${msg}: more bytes than the Upload-Length declared`);
  if (status === 412) return new TusVersionUnsupported(`${msg}: send Tus-Resumable: ${TUS_VERSION}`, TUS_VERSION);
  // An extension this server does not offer (concatenation, Upload-Concat): the request is the
  // client's to change, not a failure of the server's; what is offered is in OPTIONS' Tus-Extension.
  if (status === 501)
    return new BadArguments(`${msg} This server offers the tus extensions ${TUS_EXTENSIONS.join(', ')} (Tus-Extension in OPTIONS).`);
  if (status >= 500) return new InternalUploadError(`the resumable upload failed: ${msg}`);
  return new BadArguments(msg);
}

/** A failure of the upload machinery itself (the disk under DATA_DIR/uploads, ...): a 500 with an error id. */
class InternalUploadError extends Error {
  override name = 'InternalUploadError';
}

/**
 * What tus 1.0 asks of a request before anything else: the version it speaks (412 with Tus-Version
 * otherwise), and a PATCH's media type (415). GET is Folio's JSON view of an upload, not tus.
 */
function refuseOffProtocol(call: Call<{ id?: string }, unknown, unknown>): void {
  if (call.method === 'GET' || call.method === 'OPTIONS') return;
  const version = call.header('tus-resumable');
  if (version !== TUS_VERSION)
    throw new TusVersionUnsupported(
      version === undefined
        ? `send Tus-Resumable: ${TUS_VERSION} with every resumable-upload request`
        : `tus version ${JSON.stringify(version.slice(0, 32))} is not supported here; send Tus-Resumable: ${TUS_VERSION}`,
      TUS_VERSION,
    );
  if (call.method === 'PATCH') {
    const type = (call.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== PATCH_TYPE)
      throw new UnsupportedMediaType(
        `a PATCH of a resumable upload sends its bytes as Content-Type: ${PATCH_TYPE}${type ? `, not ${type}` : ''}`,
      );
  }
}

/** A request that says it brings no bytes (Content-Length: 0, or no length and no chunked body). */
function emptyBody(call: Call<{ id?: string }, unknown, unknown>): boolean {
  const length = call.header('content-length');
  if (length !== undefined) return length.trim() === '0';
  return call.header('transfer-encoding') === undefined;
}

/** The refusal of a PATCH that brings no byte to an upload that still misses some: it makes no progress. */
function noProgress(upload: Upload): BadArguments {
  return new BadArguments(
    `a PATCH must bring bytes: this upload is at offset ${upload.offset} of ${upload.size}. Send the bytes from Upload-Offset: ${upload.offset} in the body.`,
    [{ in: 'header', path: 'Content-Length', message: 'must be more than 0 until the upload is complete' }],
  );
}

/** Upload-Metadata without the owner's pair. */
function withoutOwner(header: string): string {
  return header
    .split(',')
    .filter((pair) => pair.trim().split(' ')[0] !== OWNER)
    .join(',');
}

const meta = (u: Upload) => (u.metadata ?? {}) as Record<string, string | null | undefined>;
const str = (v: string | null | undefined) => (v === null || v === undefined || v === '' ? undefined : v);

export class ResumableUploads {
  readonly #files: FilesServiceImpl;
  readonly #store: FileStore;
  readonly #server: Server;
  readonly #dir: string;
  readonly #expiryMs: number;
  readonly #als = new AsyncLocalStorage<Exchange>();
  /** Hand-overs in progress, by upload id: a HEAD repeated while one runs waits for it rather than storing again. */
  readonly #finishing = new Map<string, Promise<FileMeta>>();

  constructor(files: FilesServiceImpl, dir: string, opts: { expiryMs: number }) {
    this.#files = files;
    this.#dir = path.resolve(dir);
    this.#expiryMs = opts.expiryMs;
    this.#store = new FileStore({ directory: this.#dir, expirationPeriodInMilliseconds: opts.expiryMs });
    const ex = () => {
      const e = this.#als.getStore();
      if (!e) throw new Error('a tus request outside an authenticated exchange');
      return e;
    };
    /** Records Folio's own refusal and hands tus an answer to abort with. */
    const refuse = (err: unknown): never => {
      if (err instanceof FolioError) {
        ex().failure = err;
        // @tus/server's hooks refuse by throwing a plain { status_code, body } (its documented contract).
        // eslint-disable-next-line @typescript-eslint/only-throw-error
        throw { status_code: err.status, body: err.message };
      }
      throw err;
    };
    this.#server = new Server({
      path: UPLOADS_PATH,
      datastore: this.#store,
      relativeLocation: false,
      // Folio's REST API answers no cross-origin requests; tus would otherwise allow any origin.
      allowedOrigins: () => false,
      namingFunction: () => randomUUID(),
      getFileIdFromRequest: () => ex().id,
      generateUrl: (_req, { id }) => `${ex().baseUrl}${UPLOADS_PATH}/${id}`,
      onUploadCreate: async (_req, upload) => {
        const { principal } = ex();
        const m = meta(upload);
        try {
          if (upload.sizeIsDeferred || upload.size === undefined)
            throw new BadArguments('send Upload-Length: a resumable upload must say its size when it is created (no Upload-Defer-Length)');
          const name = str(m['name']) ?? str(m['filename']);
          if (name === undefined)
            throw new BadArguments('the upload needs a name: Upload-Metadata with `name` (or `filename`), base64-encoded', [
              { in: 'header', path: 'Upload-Metadata', message: 'name is required' },
            ]);
          await this.#files.reserveUpload(principal, {
            id: upload.id,
            name,
            folder: str(m['folder']),
            note_id: str(m['note_id']),
            length: upload.size,
          });
        } catch (err) {
          refuse(err);
        }
        // Whose upload this is: set here, never taken from the client.
        return { metadata: { ...upload.metadata, [OWNER]: principal.user.id } };
      },
      onUploadFinish: async (req, upload) => {
        // The temporary file is removed once tus has answered (handle()): a creation that brought
        // every byte reads the upload again after this hook, and found none (a 404 for a stored file).
        const f = await this.#finish(ex().principal, upload, { keep: true }).catch(refuse);
        ex().file = f;
        // A creation keeps its 201 and Location (tus clients need both); the PATCH that brings the
        // last byte answers 200 with the file.
        return {
          ...(req.method === 'POST' ? {} : { status_code: 200 }),
          headers: { 'Content-Type': 'application/json', [FILE_ID_HEADER]: f.id },
          body: JSON.stringify(f),
        };
      },
    });
  }

  /** The upload, or null when there is none (or none any more). */
  async #get(id: string): Promise<Upload | null> {
    try {
      return await this.#store.getUpload(id);
    } catch {
      return null;
    }
  }

  /** Hands a complete upload to the files service, then drops its temporary file (one hand-over per upload at a time). */
  #finish(p: Principal, upload: Upload, opts: { keep?: boolean } = {}): Promise<FileMeta> {
    const running = this.#finishing.get(upload.id);
    if (running) return running;
    const done = this.#handOver(p, upload, opts).finally(() => this.#finishing.delete(upload.id));
    this.#finishing.set(upload.id, done);
    return done;
  }

  async #handOver(p: Principal, upload: Upload, opts: { keep?: boolean }): Promise<FileMeta> {
    const m = meta(upload);
    // Closed however the create ends (refused before reading it, or part way): a failed stage leaves
    // its source to its caller, and this one is a file, not a connection to drain.
    const source = createReadStream(path.join(this.#dir, upload.id), { highWaterMark: 1024 * 1024 });
    // Read, its errors reach the store through the stage; unread (refused first), they go nowhere.
    source.on('error', () => {});
    try {
      const f = await this.#files.create(p, {
        id: upload.id,
        name: str(m['name']) ?? str(m['filename']) ?? 'upload',
        folder: str(m['folder']),
        note_id: str(m['note_id']),
        declaredType: str(m['filetype']) ?? str(m['content_type']),
        length: upload.size,
        source,
      });
      if (!opts.keep) await this.#store.remove(upload.id).catch(() => {});
      return f;
    } catch (err) {
      // Refusals that another try would meet again: the upload is dropped, nothing was stored. A
      // full disk or a database that went away keeps it; a HEAD finishes it later.
      if (err instanceof QuotaExceeded || err instanceof FileTooLarge || err instanceof BadArguments || err instanceof NotFound)
        await this.#drop(p.user.id, upload.id);
      throw err;
    } finally {
      source.destroy();
    }
  }

  /** Removes an unfinished upload's bytes and gives back the quota it held. */
  async #drop(owner: string, id: string): Promise<void> {
    await this.#store.remove(id).catch(() => {});
    await this.#files.releaseUpload(owner, id);
  }

  /** One tus request on /uploads or /uploads/{id}, by an authenticated caller. */
  async handle(call: Call<{ id?: string }, unknown, unknown>): Promise<Reply> {
    if (!call.raw) throw new Error('a tus route must be raw');
    const p = call.principal;
    const id = call.params.id;
    const exchange: Exchange = { principal: p, baseUrl: call.baseUrl, id };
    refuseOffProtocol(call);
    /** A PATCH on an unfinished upload, as it stood before: refused below if its body (chunked) brought nothing. */
    let stalled: Upload | undefined;
    if (id !== undefined) {
      const upload = await this.#get(id);
      const reading = call.method === 'HEAD' || call.method === 'GET';
      if (!upload) {
        // Finished already (the answer to the last PATCH may have been lost): the file says so.
        const done = reading ? await this.#files.get(p, id).catch(() => null) : null;
        if (!done) throw new NotFound(UPLOAD_404);
        return this.#finished(done, call.method);
      }
      if (meta(upload)[OWNER] !== p.user.id) throw new NotFound(UPLOAD_404);
      // Every byte is there but the hand-over did not happen (a crash, a full disk, the blob store
      // unreachable): do it now.
      if (reading && upload.size !== undefined && upload.offset === upload.size) {
        try {
          return this.#finished(await this.#finish(p, upload), call.method);
        } catch (err) {
          // The store is still away, or full: the upload is kept, whole. 423 is what tus clients
          // retry the same upload on (after Retry-After), where a 5xx on HEAD makes tus-js-client
          // start a new one and send every byte again.
          if ((err instanceof BlobStoreUnavailable || err instanceof StorageFull) && call.method === 'HEAD')
            return this.#locked(upload, err instanceof RetryLater ? err.retryAfter : FULL_RETRY_SECONDS);
          throw err;
        }
      }
      // Past its expiry and unfinished: gone, as HEAD and PATCH say (tus answers them 410, Folio 404).
      if (upload.size !== upload.offset && this.#expired(upload)) throw new NotFound(UPLOAD_404);
      if (call.method === 'PATCH' && upload.size !== undefined && upload.offset < upload.size) {
        if (emptyBody(call)) throw noProgress(upload);
        stalled = upload;
      }
      if (call.method === 'GET')
        return {
          status: 200,
          headers: { 'Cache-Control': 'no-store' },
          body: {
            id,
            offset: upload.offset,
            length: upload.size ?? null,
            expires_at: upload.creation_date ? new Date(Date.parse(upload.creation_date) + this.#expiryMs).toISOString() : null,
            file_id: null,
          },
        };
    }
    const request = new NodeRequest({ req: call.raw.req, res: call.raw.res });
    let response: Response;
    let text: string;
    try {
      response = await this.#als.run(exchange, () => this.#server.handleWeb(request));
      text = call.method === 'HEAD' ? '' : await response.text();
    } finally {
      // Stored: the upload's temporary file can go, whatever tus answers next (a crash before this
      // leaves a complete upload, which a HEAD or the sweep finishes: see sweep()).
      if (exchange.file) await this.#store.remove(exchange.file.id).catch(() => {});
    }
    // Cancelled (tus termination): the bytes are gone, the quota they held is given back.
    if (call.method === 'DELETE' && id !== undefined && response.status === 204) await this.#files.releaseUpload(p.user.id, id);
    if (exchange.failure) throw exchange.failure;
    if (response.status >= 400) throw typed(response.status, text);
    // A chunked body that ended without a byte: nothing changed, refused as an empty Content-Length is.
    if (stalled && response.status === 204 && response.headers.get('upload-offset') === String(stalled.offset)) throw noProgress(stalled);
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      if (!/^(access-control-|content-length$|connection$)/i.test(name)) headers[name] = value;
    });
    // Who owns the upload is the server's note to itself, not part of what the client sent.
    if (headers['upload-metadata'] !== undefined) headers['upload-metadata'] = withoutOwner(headers['upload-metadata']);
    if (exchange.file) return { status: response.status, headers, body: exchange.file };
    return { status: response.status, headers, body: '' };
  }

  #expired(upload: Upload): boolean {
    return upload.creation_date !== undefined && Date.parse(upload.creation_date) + this.#expiryMs < Date.now();
  }

  /** HEAD on a complete upload whose hand-over waits for the blob store (away, or full). */
  #locked(upload: Upload, retryAfter: number): Reply {
    return {
      status: 423,
      headers: {
        'Tus-Resumable': TUS_VERSION,
        'Upload-Offset': String(upload.offset),
        'Upload-Length': String(upload.size ?? upload.offset),
        'Cache-Control': 'no-store',
        'Retry-After': String(retryAfter),
      },
      body: '',
    };
  }

  #finished(f: FileMeta, method: string): Reply {
    if (method === 'GET')
      return {
        status: 200,
        headers: { 'Cache-Control': 'no-store', [FILE_ID_HEADER]: f.id },
        body: { id: f.id, offset: f.size, length: f.size, expires_at: null, file_id: f.id },
      };
    return {
      status: 200,
      headers: {
        'Tus-Resumable': TUS_VERSION,
        'Upload-Offset': String(f.size),
        'Upload-Length': String(f.size),
        'Cache-Control': 'no-store',
        [FILE_ID_HEADER]: f.id,
      },
      body: '',
    };
  }

  /**
   * Removes incomplete uploads past their expiry and gives back the quota they held; returns how
   * many. An upload that holds quota but has no bytes any more (its creation failed, or the process
   * died between removing them and giving the quota back) gives it back too, once it is older than
   * a creation takes.
   */
  async sweep(): Promise<number> {
    let removed = 0;
    const now = Date.now();
    for (const held of await this.#files.heldUploads()) {
      const upload = await this.#get(held.id);
      const created = upload?.creation_date !== undefined ? Date.parse(upload.creation_date) : held.created_ms;
      const complete = upload?.size !== undefined && upload.offset === upload.size;
      if (upload ? created + this.#expiryMs < now && !complete : held.created_ms + ORPHAN_GRACE_MS < now) {
        await this.#drop(held.owner_id, held.id);
        if (upload) removed++;
      }
    }
    // Uploads that hold no quota (made before uploads did).
    removed += await this.#store.deleteExpired();
    // tus's sweep leaves complete uploads alone. One is complete but still here when the process
    // died between storing it and removing its temporary file (gone now: the file is stored), or
    // before handing it over and nobody asked since (a HEAD would finish it): past its expiry, it goes.
    for (const id of (await this.#store.configstore.list?.()) ?? []) {
      const upload = await this.#get(id);
      if (!upload || upload.size === undefined || upload.offset !== upload.size) continue;
      const owner = meta(upload)[OWNER];
      const stored = typeof owner === 'string' && (await this.#files.isStored(owner, id));
      const expired = upload.creation_date !== undefined && Date.parse(upload.creation_date) + this.#expiryMs < now;
      if (stored || expired) {
        if (typeof owner === 'string') await this.#drop(owner, id);
        else await this.#store.remove(id).catch(() => {});
        removed++;
      }
    }
    return removed;
  }
}
