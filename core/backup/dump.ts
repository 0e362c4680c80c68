// `npm run backup`: one archive (format.ts) of the database and every blob it references.
//
// The database is read in one REPEATABLE READ READ ONLY transaction: a real snapshot on PostgreSQL;
// on the embedded PGlite a transaction on the running server's socket, which serves no other
// connection until it ends (the server's requests wait for the dump: see README, "Backup and
// restore"). So the transaction only reads: the rows go raw to a local spool file next to the
// archive, and are compressed into the archive after it ends. Blobs are read after the snapshot
// ends, by the keys it listed; content-addressed, they never change, and one removed meanwhile
// fails the backup instead of leaving a hole.
//
// The archive is written under a temporary name next to the target, flushed to disk, renamed over
// the target and the directory flushed: a backup killed at any point leaves the previous archive
// as it was.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { mkdir, open, readdir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import type { Logger } from 'pino';
import yazl from 'yazl';
import { processAlive } from '../db/database.ts';
import { NotFound } from '../contract/errors.ts';
import { PACKAGE } from '../kernel/config.ts';
import { fsyncDir } from '../domain/files/disk-store.ts';
import { blobStoreOf, openSource, type BackupSettings } from './connect.ts';
import {
  BackupError,
  BLOB_REFERENCES,
  FORMAT,
  FORMAT_VERSION,
  ident,
  listSequences,
  listTables,
  MANIFEST,
  SHA256,
  tableEntryName,
  tableRows,
  type BlobEntry,
  type Manifest,
  type SequenceEntry,
  type TableEntry,
} from './format.ts';

export interface BackupOptions {
  out: string;
  /** S3 only: 'reference' records the bucket and keys instead of copying the bytes (default 'include'). */
  blobs?: 'include' | 'reference' | undefined;
  log: Logger;
  /** Stops the backup (a server shutting down): it fails, and leaves no archive. */
  signal?: AbortSignal | undefined;
}

export interface BackupSummary {
  out: string;
  engine: 'postgres' | 'pglite';
  tables: number;
  rows: number;
  blobs: number;
  blobBytes: number;
  archiveBytes: number;
  /** How long the database transaction was open (on PGlite, how long the server's queries waited at most). */
  snapshotMs: number;
  totalMs: number;
}

/** Buffered writes of an entry: flushed to the zip in chunks of about this many bytes. */
const FLUSH_BYTES = 256 * 1024;

export async function createBackup(settings: BackupSettings, opts: BackupOptions): Promise<BackupSummary> {
  const started = performance.now();
  const out = path.resolve(opts.out);
  const dir = path.dirname(out);
  const mode = opts.blobs ?? 'include';
  const store = blobStoreOf(settings);
  if (mode === 'reference' && store.kind !== 's3') throw new BackupError('--blobs reference is for the s3 blob store only');
  await mkdir(dir, { recursive: true });
  await removeStalePartials(dir, path.basename(out));

  const temp = path.join(dir, `.${path.basename(out)}.${process.pid}.partial`);
  // The snapshot's rows go to this file first, raw: the database transaction (on PGlite, every
  // request of the server) waits only for reading them, not for compressing and writing the archive.
  const spoolFile = path.join(dir, `.${path.basename(out)}.${process.pid}.spool`);
  const zip = new yazl.ZipFile();
  // The output's failure (a full disk) or the zip's own (a stream of the wrong size) fails the backup,
  // and the entry being written with it.
  const zipFailed = new Promise<never>((_, reject) => zip.on('error', reject));
  const written = Promise.race([
    pipeline(zip.outputStream, createWriteStream(temp, { flags: 'wx', flush: true, highWaterMark: 1024 * 1024 })),
    zipFailed,
  ]);
  written.catch(() => {}); // awaited below
  const createdAt = new Date();
  const archive = new ArchiveWriter(zip, written, createdAt, opts.signal);
  let complete = false;
  try {
    const session = await openSource(settings, opts.log);
    let snapshotMs: number;
    let db: Awaited<ReturnType<typeof dumpDatabase>>;
    const spool = await Spool.create(spoolFile, opts.signal);
    try {
      try {
        const t0 = performance.now();
        db = await dumpDatabase(session.client, session.engine, spool);
        snapshotMs = performance.now() - t0;
      } finally {
        await session.close();
      }
      await spool.done();
      for (const t of db.tables) {
        const copied = await archive.entry(t.entry, true, async (write) => {
          for await (const chunk of spool.read(t)) await write(chunk);
        });
        if (copied.sha256 !== t.sha256) throw new BackupError(`the spooled rows of ${t.entry} changed on the local disk`);
      }
    } finally {
      await spool.discard();
    }
    const items: BlobEntry[] = [];
    let blobBytes = 0;
    for (const key of db.blobKeys) {
      opts.signal?.throwIfAborted();
      const item = mode === 'include' ? await copyBlob(store, key, archive) : await referenceBlob(store, key);
      blobBytes += item.size;
      items.push(item);
    }
    const s3 = settings.files.blobStore.s3;
    const manifest: Manifest = {
      format: FORMAT,
      formatVersion: FORMAT_VERSION,
      folioVersion: PACKAGE.version,
      engine: db.engine,
      createdAt: createdAt.toISOString(),
      migrations: db.migrations,
      tables: db.tables.map((t) => ({
        schema: t.schema,
        name: t.name,
        columns: t.columns,
        rows: t.rows,
        entry: t.entry,
        sha256: t.sha256,
        bytes: t.bytes,
      })),
      sequences: db.sequences,
      blobs: {
        store: store.kind,
        mode: mode === 'include' ? 'included' : 'referenced',
        ...(mode === 'reference' ? { bucket: s3.bucket ?? '', prefix: s3.prefix } : {}),
        items,
      },
    };
    zip.addBuffer(Buffer.from(JSON.stringify(manifest, null, 1)), MANIFEST, { mtime: createdAt });
    zip.end();
    await written; // flushed to the disk (fsync) before it is closed
    await rename(temp, out);
    await fsyncDir(dir);
    complete = true;
    const archiveBytes = (await stat(out)).size;
    return {
      out,
      engine: db.engine,
      tables: db.tables.length,
      rows: db.tables.reduce((n, t) => n + t.rows, 0),
      blobs: items.length,
      blobBytes,
      archiveBytes,
      snapshotMs: Math.round(snapshotMs),
      totalMs: Math.round(performance.now() - started),
    };
  } finally {
    if (!complete) {
      (zip.outputStream as PassThrough).destroy();
      await written.catch(() => {});
      await rm(temp, { force: true });
    }
  }
}

interface DatabaseDump {
  engine: 'postgres' | 'pglite';
  migrations: string[];
  tables: SpooledTable[];
  sequences: SequenceEntry[];
  blobKeys: string[];
}

/** Everything the database holds, inside one read-only snapshot. */
async function dumpDatabase(client: pg.ClientBase, engine: DatabaseDump['engine'], spool: Spool): Promise<DatabaseDump> {
  await client.query('begin isolation level repeatable read read only');
  try {
    // Local to the transaction: on PGlite the session is the server's own.
    await client.query(`set local timezone = 'UTC'`);
    const { rows: applied } = await client.query<{ name: string }>(`select name from public.mikro_orm_migrations order by id`);
    const tables: SpooledTable[] = [];
    for (const t of await listTables(client)) {
      const entry = tableEntryName(t);
      let rows = 0;
      const done = await spool.table(async (write) => {
        for await (const line of tableRows(client, t)) {
          rows++;
          await write(line + '\n');
        }
      });
      tables.push({
        schema: t.schema,
        name: t.name,
        columns: t.columns,
        rows,
        entry,
        sha256: done.sha256,
        bytes: done.bytes,
        start: done.start,
      });
    }
    const sequences: SequenceEntry[] = [];
    for (const s of await listSequences(client)) {
      const { rows } = await client.query<{ last_value: string; is_called: boolean }>(`select last_value::text, is_called from ${s.name}`);
      sequences.push({ ...s, lastValue: rows[0]!.last_value, isCalled: rows[0]!.is_called });
    }
    const keys = new Set<string>();
    for (const ref of BLOB_REFERENCES) {
      const [schema, name] = ref.table.split('.') as [string, string];
      const { rows } = await client.query<{ k: string }>(
        `select distinct ${ident(ref.column)} as k from ${ident(schema)}.${ident(name)} where ${ident(ref.column)} is not null`,
      );
      for (const r of rows) keys.add(r.k);
    }
    await client.query('commit');
    return { engine, migrations: applied.map((r) => r.name), tables, sequences, blobKeys: [...keys].sort() };
  } catch (err) {
    await client.query('rollback').catch(() => {});
    throw err;
  }
}

async function copyBlob(store: ReturnType<typeof blobStoreOf>, key: string, archive: ArchiveWriter): Promise<BlobEntry> {
  if (!SHA256.test(key)) throw new BackupError(`the database references a blob with a malformed key: ${JSON.stringify(key)}`);
  let source;
  try {
    source = await store.read(key);
  } catch (err) {
    if (err instanceof NotFound) throw vanished(key);
    throw err;
  }
  const entry = `blobs/${key}`;
  const done = await archive.entry(entry, false, async (write) => {
    for await (const chunk of source as AsyncIterable<Buffer>) await write(chunk);
  });
  if (done.sha256 !== key) {
    throw new BackupError(
      `blob ${key} in the ${store.kind} store does not hold what its name says (sha256 ${done.sha256}): damaged storage`,
    );
  }
  return { key, size: done.bytes, sha256: done.sha256, entry };
}

async function referenceBlob(store: ReturnType<typeof blobStoreOf>, key: string): Promise<BlobEntry> {
  const stat = await store.stat(key);
  if (!stat) throw vanished(key);
  return { key, size: stat.size, sha256: key };
}

function vanished(key: string): BackupError {
  return new BackupError(
    `blob ${key}, referenced by the database snapshot, is gone from the blob store (removed by the file garbage collection while the backup ran, or lost): run the backup again`,
  );
}

/** A table's rows in the spool file: `bytes` from offset `start`. */
type SpooledTable = TableEntry & { start: number };

/** A local file the snapshot's rows are written to as they are read, then copied into the archive. */
class Spool {
  readonly #file: string;
  readonly #fh: FileHandle;
  readonly #signal: AbortSignal | undefined;
  #offset = 0;

  private constructor(file: string, fh: FileHandle, signal: AbortSignal | undefined) {
    this.#file = file;
    this.#fh = fh;
    this.#signal = signal;
  }

  static async create(file: string, signal: AbortSignal | undefined): Promise<Spool> {
    return new Spool(file, await open(file, 'wx', 0o600), signal);
  }

  async table(
    produce: (write: (chunk: string) => Promise<void>) => Promise<void>,
  ): Promise<{ start: number; bytes: number; sha256: string }> {
    const start = this.#offset;
    const hash = createHash('sha256');
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const flush = async () => {
      if (!pendingBytes) return;
      const buf = Buffer.concat(pending);
      pending = [];
      pendingBytes = 0;
      await this.#fh.write(buf, 0, buf.length, this.#offset);
      this.#offset += buf.length;
    };
    await produce(async (chunk) => {
      this.#signal?.throwIfAborted();
      const buf = Buffer.from(chunk);
      hash.update(buf);
      pending.push(buf);
      pendingBytes += buf.length;
      if (pendingBytes >= FLUSH_BYTES) await flush();
    });
    await flush();
    return { start, bytes: this.#offset - start, sha256: hash.digest('hex') };
  }

  async done(): Promise<void> {
    await this.#fh.close();
  }

  async *read(t: SpooledTable): AsyncIterable<Buffer> {
    if (t.bytes === 0) return;
    yield* createReadStream(this.#file, { start: t.start, end: t.start + t.bytes - 1, highWaterMark: FLUSH_BYTES });
  }

  async discard(): Promise<void> {
    await this.#fh.close().catch(() => {});
    await rm(this.#file, { force: true });
  }
}

/** Writes entries one after another into the zip, hashing what goes in. */
class ArchiveWriter {
  readonly #zip: yazl.ZipFile;
  readonly #failed: Promise<never>;

  readonly #mtime: Date;
  readonly #signal: AbortSignal | undefined;

  constructor(zip: yazl.ZipFile, written: Promise<void>, mtime: Date, signal: AbortSignal | undefined) {
    this.#zip = zip;
    this.#mtime = mtime;
    this.#signal = signal;
    this.#failed = written.then(
      () => Promise.reject(new Error('the archive ended early')),
      (err: unknown) => Promise.reject(err instanceof Error ? err : new Error(String(err))),
    );
    this.#failed.catch(() => {});
  }

  async entry(
    name: string,
    compress: boolean,
    produce: (write: (chunk: string | Buffer) => Promise<void>) => Promise<void>,
  ): Promise<{ sha256: string; bytes: number }> {
    const pass = new PassThrough({ highWaterMark: FLUSH_BYTES });
    this.#zip.addReadStream(pass, name, { compress, mtime: this.#mtime });
    const hash = createHash('sha256');
    let bytes = 0;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const flush = async () => {
      if (pendingBytes === 0) return;
      const buf = pending.length === 1 ? pending[0]! : Buffer.concat(pending);
      pending = [];
      pendingBytes = 0;
      if (!pass.write(buf)) await Promise.race([once(pass, 'drain'), this.#failed]);
    };
    const write = async (chunk: string | Buffer) => {
      this.#signal?.throwIfAborted();
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      hash.update(buf);
      bytes += buf.length;
      pending.push(buf);
      pendingBytes += buf.length;
      if (pendingBytes >= FLUSH_BYTES) await flush();
    };
    await produce(write);
    await flush();
    pass.end();
    return { sha256: hash.digest('hex'), bytes };
  }
}

/** Temporary files of earlier backups to the same name whose process is gone (killed mid-way). */
async function removeStalePartials(dir: string, base: string): Promise<void> {
  const prefix = `.${base}.`;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const suffix = name.endsWith('.partial') ? '.partial' : name.endsWith('.spool') ? '.spool' : null;
    if (!name.startsWith(prefix) || !suffix) continue;
    const pid = Number(name.slice(prefix.length, -suffix.length));
    if (pid && pid !== process.pid && !processAlive(pid)) await rm(path.join(dir, name), { force: true });
  }
}
