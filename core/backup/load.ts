// `npm run restore`: an archive (format.ts) into an empty database or data directory.
//
// Nothing is written until everything is checked: the archive's manifest, that its schema is one
// this code knows (a migration name it does not have means a newer Folio made it), that the
// target is empty (checked holding the target's lock, held to the end: connect.ts claimTarget), and
// every entry's sha256. Then the target is marked "restore in progress" (a Folio refuses to start
// on it; a restore run again clears and redoes it), and: the blobs, into the configured store; the
// schema made by the migrations the archive had applied (so its rows fit); every table's rows
// loaded in one transaction, parents before children by the foreign keys (a database owner who is
// not superuser can restore); the sequences set; the migrations the archive predates applied last;
// and the mark removed. A failure removes what this run wrote, and nothing else.
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type pg from 'pg';
import type { Logger } from 'pino';
import yauzl from 'yauzl';
import type { Database } from '../db/database.ts';
import { DATABASE_SCHEMA } from '../domains.ts';
import { blobStoreOf, claimTarget, describe, openTarget, type BackupSettings } from './connect.ts';
import { BackupError, FORMAT, FORMAT_VERSION, ident, MANIFEST, qualified, SHA256, type Manifest, type TableEntry } from './format.ts';

export interface RestoreOptions {
  from: string;
  log: Logger;
}

export interface RestoreSummary {
  where: string;
  tables: number;
  rows: number;
  blobs: number;
  /** Migrations newer than the archive, applied after its rows were loaded. */
  migrated: string[];
  /** An unfinished earlier restore into the target was found, cleared and redone. */
  redone: boolean;
}

/** Rows per insert statement (also bounded by BATCH_BYTES of JSON). */
const BATCH_ROWS = 1000;
const BATCH_BYTES = 4 * 1024 * 1024;
const MAX_MANIFEST_BYTES = 512 * 1024 * 1024;

export async function restoreBackup(settings: BackupSettings, opts: RestoreOptions): Promise<RestoreSummary> {
  const where = describe(settings);
  const zip = await openArchive(opts.from);
  try {
    const entries = new Map<string, yauzl.Entry>();
    for await (const e of zip.eachEntry()) entries.set(e.fileName, e);
    const manifest = await readManifest(zip, entries, opts.from);
    checkSchema(manifest);
    // Held to the end: no server starts on the target, and no other restore writes it, meanwhile.
    const claim = await claimTarget(settings, opts.log);
    let db: Database | undefined;
    let marked = false;
    let leave = false;
    try {
      const store = blobStoreOf(settings);
      await verify(zip, entries, manifest, store);

      // From here on the target is written; until finish() it is marked as a restore in progress.
      try {
        await claim.mark(path.resolve(opts.from));
      } catch (err) {
        leave = true; // the target changed under it: not this run's to clear
        throw err;
      }
      marked = true;
      for (const item of manifest.blobs.items) {
        if (!item.entry) continue;
        const staged = await store.stage(await zip.openReadStreamPromise(entries.get(item.entry)!));
        if (staged.sha256 !== item.sha256) {
          await staged.discard();
          throw new BackupError(`blob ${item.key} changed while it was restored (the archive file was modified?)`);
        }
        await staged.commit();
      }
      db = await openTarget(settings, opts.log);
      await db.orm.migrator.up({ migrations: manifest.migrations });
      const pool = await db.orm.em.getConnection().getNativeClient();
      const client = await pool.connect();
      try {
        await loadRows(client, zip, entries, manifest);
      } finally {
        client.release();
      }
      const migrated = (await db.orm.migrator.up()).map((m) => m.name);
      await claim.finish();
      await db.close();
      db = undefined;
      return {
        where,
        tables: manifest.tables.length,
        rows: manifest.tables.reduce((n, t) => n + t.rows, 0),
        blobs: manifest.blobs.items.length,
        migrated,
        redone: claim.redone,
      };
    } catch (err) {
      await db?.close().catch(() => {});
      if (!leave && (marked || claim.redone)) {
        await claim.undo().catch((e: unknown) => opts.log.error({ err: e }, 'could not clear the partly restored target'));
      }
      throw err;
    } finally {
      await claim.release();
    }
  } finally {
    zip.close();
  }
}

async function openArchive(file: string): Promise<yauzl.ZipFile> {
  try {
    return await yauzl.openPromise(file, { lazyEntries: true, autoClose: false });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new BackupError(`${file}: no such file`);
    throw new BackupError(`${file}: not a Folio backup archive (${(err as Error).message})`);
  }
}

async function readManifest(zip: yauzl.ZipFile, entries: Map<string, yauzl.Entry>, file: string): Promise<Manifest> {
  const entry = entries.get(MANIFEST);
  if (!entry) throw new BackupError(`${file}: not a Folio backup archive (no ${MANIFEST}; a backup that did not finish has none)`);
  if (entry.uncompressedSize > MAX_MANIFEST_BYTES) throw new BackupError(`${file}: ${MANIFEST} is implausibly large`);
  const chunks: Buffer[] = [];
  for await (const c of await zip.openReadStreamPromise(entry)) chunks.push(c as Buffer);
  let m: Manifest;
  try {
    m = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Manifest;
  } catch {
    throw new BackupError(`${file}: ${MANIFEST} is not valid JSON`);
  }
  if (m?.format !== FORMAT) throw new BackupError(`${file}: not a Folio backup archive (format ${JSON.stringify(m?.format)})`);
  if (typeof m.formatVersion !== 'number' || m.formatVersion > FORMAT_VERSION) {
    throw new BackupError(
      `${file}: archive format version ${m.formatVersion} is newer than this Folio reads (${FORMAT_VERSION}); use a newer Folio`,
    );
  }
  if (!Array.isArray(m.migrations) || !Array.isArray(m.tables) || !Array.isArray(m.sequences) || !Array.isArray(m.blobs?.items)) {
    throw new BackupError(`${file}: ${MANIFEST} is incomplete`);
  }
  return m;
}

/** A migration the code does not have: the archive is from a newer Folio. */
function checkSchema(m: Manifest): void {
  const known = new Set(DATABASE_SCHEMA.migrations.map((x) => x.name));
  const unknown = m.migrations.filter((n) => !known.has(n));
  if (unknown.length) {
    throw new BackupError(
      `the archive's schema is newer than this Folio (${m.folioVersion} made it; migrations this code does not have: ${unknown.join(', ')}): restore it with Folio ${m.folioVersion} or later`,
    );
  }
}

/** Every entry present and as the manifest says, before anything is written. */
async function verify(zip: yauzl.ZipFile, entries: Map<string, yauzl.Entry>, m: Manifest, store: ReturnType<typeof blobStoreOf>) {
  const check = async (name: string, sha256: string, bytes: number, lines?: number) => {
    const entry = entries.get(name);
    if (!entry) throw new BackupError(`the archive is damaged: ${name} is missing`);
    const hash = createHash('sha256');
    let size = 0;
    let newlines = 0;
    try {
      for await (const chunk of await zip.openReadStreamPromise(entry)) {
        const b = chunk as Buffer;
        hash.update(b);
        size += b.length;
        if (lines !== undefined) for (let i = b.indexOf(10); i !== -1; i = b.indexOf(10, i + 1)) newlines++;
      }
    } catch (err) {
      throw new BackupError(`the archive is damaged: ${name} cannot be read (${(err as Error).message})`);
    }
    const got = hash.digest('hex');
    if (got !== sha256 || size !== bytes || (lines !== undefined && newlines !== lines)) {
      throw new BackupError(
        `the archive is damaged: checksum mismatch in ${name} (sha256 ${got}, expected ${sha256}); nothing was restored`,
      );
    }
  };
  for (const t of m.tables) {
    if (t.entry !== `db/${t.schema}.${t.name}.jsonl`) throw new BackupError(`the archive's manifest names an odd entry: ${t.entry}`);
    await check(t.entry, t.sha256, t.bytes, t.rows);
  }
  const missing: string[] = [];
  for (const b of m.blobs.items) {
    if (!SHA256.test(b.key) || b.sha256 !== b.key) throw new BackupError(`the archive's manifest names an odd blob: ${b.key}`);
    if (b.entry) {
      if (b.entry !== `blobs/${b.key}`) throw new BackupError(`the archive's manifest names an odd entry: ${b.entry}`);
      await check(b.entry, b.sha256, b.size);
    } else if (!(await store.stat(b.key))) missing.push(b.key);
  }
  if (missing.length) {
    throw new BackupError(
      `the archive records its files' bytes by key only (bucket ${m.blobs.bucket ?? '?'}), and ${missing.length} of them are not in the configured ${store.kind} store (first: ${missing[0]}); nothing was restored`,
    );
  }
}

async function loadRows(client: pg.PoolClient, zip: yauzl.ZipFile, entries: Map<string, yauzl.Entry>, m: Manifest): Promise<void> {
  await client.query('begin');
  try {
    // No superuser needed (managed PostgreSQL has none to give): the tables load parents first, by
    // the target's foreign keys; a key to its own table (a token's parent token) is filled in after
    // all of that table's rows are in; deferrable keys are checked at commit.
    await client.query(`set local timezone = 'UTC'`);
    await client.query('set constraints all deferred');
    const keys = await foreignKeys(client);
    const order = loadOrder(m.tables, keys);
    // Rows the migrations put there (the migrations table, the job queue's own) are replaced by
    // the archive's: children first.
    for (const t of [...order].reverse()) await client.query(`delete from ${qualified(t)}`);
    for (const t of order) {
      const self = keys.filter((k) => k.child === key(t) && k.parent === key(t) && !k.deferrable).flatMap((k) => k.columns);
      await loadTable(client, () => zip.openReadStreamPromise(entries.get(t.entry)!), t, self);
    }
    for (const s of m.sequences) {
      const [schema, table] = s.table.includes('.') ? (s.table.split('.') as [string, string]) : ['public', s.table];
      const { rows } = await client.query<{ m: string | null }>(
        `select max(${ident(s.column)})::text as m from ${qualified({ schema: unquote(schema), name: unquote(table) })}`,
      );
      const max = rows[0]?.m;
      if (max !== null && max !== undefined && BigInt(max) > BigInt(s.lastValue)) {
        await client.query('select setval($1::regclass, $2::bigint, true)', [s.name, max]);
      } else {
        await client.query('select setval($1::regclass, $2::bigint, $3)', [s.name, s.lastValue, s.isCalled]);
      }
    }
    await client.query('commit');
  } catch (err) {
    await client.query('rollback').catch(() => {});
    throw err;
  }
}

interface ForeignKey {
  /** schema.name of the referencing table (a partition's: its parent's). */
  child: string;
  parent: string;
  deferrable: boolean;
  columns: string[];
}

const key = (t: { schema: string; name: string }) => `${t.schema}.${t.name}`;

async function foreignKeys(client: pg.PoolClient): Promise<ForeignKey[]> {
  const { rows } = await client.query<ForeignKey>(
    `select cn.nspname || '.' || cc.relname as child, pn.nspname || '.' || pc.relname as parent,
            k.condeferrable as deferrable,
            array(select a.attname::text from unnest(k.conkey) x(n) join pg_attribute a on a.attrelid = k.conrelid and a.attnum = x.n) as columns
       from pg_constraint k
       join pg_class cc on cc.oid = coalesce((select inhparent from pg_inherits where inhrelid = k.conrelid limit 1), k.conrelid)
       join pg_namespace cn on cn.oid = cc.relnamespace
       join pg_class pc on pc.oid = coalesce((select inhparent from pg_inherits where inhrelid = k.confrelid limit 1), k.confrelid)
       join pg_namespace pn on pn.oid = pc.relnamespace
      where k.contype = 'f'`,
  );
  return rows;
}

/** The tables, parents before children (by the keys that are checked as each row goes in). */
function loadOrder(tables: TableEntry[], keys: ForeignKey[]): TableEntry[] {
  const byKey = new Map(tables.map((t) => [key(t), t]));
  const out: TableEntry[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (t: TableEntry, path: string[]) => {
    const k = key(t);
    if (state.get(k) === 'done') return;
    if (state.get(k) === 'visiting') {
      throw new BackupError(
        `the tables' foreign keys form a cycle (${[...path, k].join(' -> ')}) that is not deferrable; restore needs those keys made DEFERRABLE`,
      );
    }
    state.set(k, 'visiting');
    for (const fk of keys) {
      if (fk.child !== k || fk.parent === k || fk.deferrable) continue;
      const parent = byKey.get(fk.parent);
      if (parent) visit(parent, [...path, k]);
    }
    state.set(k, 'done');
    out.push(t);
  };
  for (const t of tables) visit(t, []);
  return out;
}

/**
 * One table's rows. `selfRefs`: columns of a key to the table itself, inserted null and set once
 * every row is in (a second read of the entry).
 */
async function loadTable(client: pg.PoolClient, open: () => Promise<Readable>, t: TableEntry, selfRefs: string[]): Promise<void> {
  const cols = t.columns.map(ident).join(', ');
  const nulls = selfRefs.length ? t.columns.map((c) => (selfRefs.includes(c) ? 'null' : ident(c))).join(', ') : cols;
  // `overriding system value`: an identity column generated always (audit_events.id) takes the
  // archived values as it would from a client; tables without one are unaffected.
  const insert = `insert into ${qualified(t)} (${cols}) overriding system value select ${nulls} from json_populate_recordset(null::${qualified(t)}, $1::json)`;
  try {
    await eachBatch(await open(), (batch) => client.query(insert, [batch]));
    if (selfRefs.length) {
      const { rows } = await client.query<{ pk: string[] | null }>(
        `select array(select a.attname::text from unnest(i.indkey) x(n) join pg_attribute a on a.attrelid = i.indrelid and a.attnum = x.n) as pk
           from pg_index i where i.indrelid = $1::regclass and i.indisprimary`,
        [qualified(t)],
      );
      const pk = rows[0]?.pk;
      if (!pk?.length) throw new BackupError(`${key(t)} refers to itself and has no primary key`);
      const update =
        `update ${qualified(t)} t set ${selfRefs.map((c) => `${ident(c)} = r.${ident(c)}`).join(', ')} ` +
        `from json_populate_recordset(null::${qualified(t)}, $1::json) r ` +
        `where ${pk.map((c) => `t.${ident(c)} = r.${ident(c)}`).join(' and ')} and (${selfRefs.map((c) => `r.${ident(c)} is not null`).join(' or ')})`;
      await eachBatch(await open(), (batch) => client.query(update, [batch]));
    }
  } catch (err) {
    throw new BackupError(`restoring ${t.schema}.${t.name} failed: ${(err as Error).message}`, { cause: err });
  }
}

/** The entry's rows as JSON arrays of up to BATCH_ROWS rows or about BATCH_BYTES. */
async function eachBatch(source: Readable, run: (json: string) => Promise<unknown>): Promise<void> {
  let batch: string[] = [];
  let bytes = 0;
  const flush = async () => {
    if (!batch.length) return;
    await run(`[${batch.join(',')}]`);
    batch = [];
    bytes = 0;
  };
  for await (const line of lines(source)) {
    if (line === '') continue;
    batch.push(line);
    bytes += line.length;
    if (batch.length >= BATCH_ROWS || bytes >= BATCH_BYTES) await flush();
  }
  await flush();
}

/**
 * The lines of a JSONL stream, split on the byte 0x0A only. (readline also breaks on U+2028 and
 * U+2029, which JSON text holds unescaped; a row split there would be corrupted.) A line is decoded
 * whole, so a multi-byte character split across chunks is never mangled.
 */
export async function* lines(source: AsyncIterable<Buffer | string>): AsyncIterable<string> {
  let rest: Buffer[] = [];
  for await (const chunk of source) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let start = 0;
    for (let i = b.indexOf(10); i !== -1; i = b.indexOf(10, start)) {
      const piece = b.subarray(start, i);
      if (rest.length) {
        rest.push(piece);
        yield Buffer.concat(rest).toString('utf8');
        rest = [];
      } else yield piece.toString('utf8');
      start = i + 1;
    }
    if (start < b.length) rest.push(b.subarray(start));
  }
  if (rest.length) yield Buffer.concat(rest).toString('utf8');
}

function unquote(name: string): string {
  return name.startsWith('"') && name.endsWith('"') ? name.slice(1, -1).replaceAll('""', '"') : name;
}
