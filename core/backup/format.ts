// The backup archive: a zip (yazl writes it, yauzl reads it) holding
//   db/<schema>.<table>.jsonl   one row_to_json per line, in primary-key order
//   blobs/<sha256>              the file bytes the database references (content-addressed)
//   manifest.json               written last: what is in the archive, with a sha256 per entry
// Logical and engine-neutral: a PGlite backup restores into PostgreSQL and back.
import type pg from 'pg';

export const FORMAT = 'folio-backup';
export const FORMAT_VERSION = 1;
export const MANIFEST = 'manifest.json';

export interface TableEntry {
  schema: string;
  name: string;
  /** The columns each line holds, in table order (generated columns are left out: they are recomputed). */
  columns: string[];
  rows: number;
  entry: string;
  sha256: string;
  bytes: number;
}

export interface SequenceEntry {
  /** Qualified name, as `regclass` prints it. */
  name: string;
  table: string;
  column: string;
  lastValue: string;
  isCalled: boolean;
}

export interface BlobEntry {
  /** The blob's content address (its sha256), also its name in the store. */
  key: string;
  size: number;
  sha256: string;
  /** blobs/<key> when the bytes are in the archive; absent when only the bucket's key is recorded. */
  entry?: string;
}

export interface Manifest {
  format: typeof FORMAT;
  formatVersion: number;
  folioVersion: string;
  engine: 'postgres' | 'pglite';
  createdAt: string;
  /** The applied migrations, in the order they were applied. */
  migrations: string[];
  tables: TableEntry[];
  sequences: SequenceEntry[];
  blobs: {
    store: string;
    /** included: the bytes are in the archive; referenced: only their keys in `bucket` (S3). */
    mode: 'included' | 'referenced';
    bucket?: string;
    prefix?: string;
    items: BlobEntry[];
  };
}

/**
 * Tables that are not backed up: the job queue's own bookkeeping, rebuilt by its migration on
 * restore (its version, its schema-upgrade commands), or monitoring that means nothing on another
 * server (warnings, per-day queue statistics, registered instances). Jobs, queues and schedules are
 * kept: a queued text extraction or transcription must still run after a restore.
 */
export const TRANSIENT_TABLES = new Set(['pgboss.version', 'pgboss.bam', 'pgboss.warning', 'pgboss.queue_stats', 'pgboss.instance']);

/** The columns that hold blob keys (the files domain: a file's current bytes and every version's). */
export const BLOB_REFERENCES = [
  { table: 'public.files', column: 'sha256' },
  { table: 'public.file_versions', column: 'sha256' },
] as const;

export const SHA256 = /^[0-9a-f]{64}$/;

export class BackupError extends Error {
  override name = 'BackupError';
}

export function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export function qualified(t: { schema: string; name: string }): string {
  return `${ident(t.schema)}.${ident(t.name)}`;
}

export interface TableInfo {
  schema: string;
  name: string;
  columns: string[];
  primaryKey: string[];
}

/**
 * Every table of the database's own schemas (partitions are read through their parent), less the
 * transient ones, in name order.
 */
export async function listTables(client: pg.ClientBase): Promise<TableInfo[]> {
  const { rows } = await client.query<{ schema: string; name: string; columns: string[]; pk: string[] | null }>(
    `select n.nspname as schema, c.relname as name,
            array(select a.attname::text from pg_attribute a
                   where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''
                   order by a.attnum) as columns,
            (select array(select a.attname::text from unnest(i.indkey) with ordinality k(attnum, ord)
                            join pg_attribute a on a.attrelid = c.oid and a.attnum = k.attnum order by k.ord)
               from pg_index i where i.indrelid = c.oid and i.indisprimary) as pk
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where c.relkind in ('r', 'p') and not c.relispartition
        and n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg\\_%'
      order by 1, 2`,
  );
  return rows
    .filter((r) => !TRANSIENT_TABLES.has(`${r.schema}.${r.name}`))
    .map((r) => ({ schema: r.schema, name: r.name, columns: r.columns, primaryKey: r.pk ?? [] }));
}

/** The sequences that number a table's column (serial and identity columns). */
export async function listSequences(client: pg.ClientBase): Promise<Omit<SequenceEntry, 'lastValue' | 'isCalled'>[]> {
  const { rows } = await client.query<{ name: string; table: string; column: string }>(
    `select s.oid::regclass::text as name, t.oid::regclass::text as table, a.attname::text as column
       from pg_depend d
       join pg_class s on s.oid = d.objid and s.relkind = 'S'
       join pg_class t on t.oid = d.refobjid
       join pg_attribute a on a.attrelid = t.oid and a.attnum = d.refobjsubid
      where d.deptype in ('a', 'i') and d.classid = 'pg_class'::regclass and d.refclassid = 'pg_class'::regclass
      order by 1`,
  );
  return rows;
}

export function tableEntryName(t: { schema: string; name: string }): string {
  return `db/${t.schema}.${t.name}.jsonl`;
}

/** A cursor over a table's rows as JSON text, in primary-key order (every column when it has none). */
export function selectRows(t: TableInfo): string {
  const order = t.primaryKey.length ? t.primaryKey.map(ident).join(', ') : 'row_to_json(t)::text';
  return `select row_to_json(t)::text as j from ${qualified(t)} t order by ${order}`;
}

/** A fetch of about this many bytes of rows: many small rows per round trip, few large ones. */
const FETCH_BYTES = 4 * 1024 * 1024;

/**
 * Streams a table's rows (JSON text, one per call) through a cursor inside the caller's
 * transaction: never the whole table in memory. The rows per fetch follow their size (a note may
 * be a megabyte, a search word a few bytes).
 */
export async function* tableRows(client: pg.ClientBase, t: TableInfo): AsyncIterable<string> {
  const cursor = ident(`folio_backup_${t.schema}_${t.name}`);
  await client.query(`declare ${cursor} no scroll cursor for ${selectRows(t)}`);
  try {
    // The first fetch is small (the rows might be a megabyte each), the next ones sized to the
    // byte target by what the rows so far weighed, growing at most eightfold per fetch.
    let batch = 8;
    for (;;) {
      const { rows } = await client.query<{ j: string }>(`fetch forward ${batch} from ${cursor}`);
      let bytes = 0;
      for (const r of rows) {
        bytes += r.j.length;
        yield r.j;
      }
      if (rows.length < batch) break;
      const perRow = Math.max(1, bytes / rows.length);
      batch = Math.max(1, Math.min(5000, batch * 8, Math.floor(FETCH_BYTES / perRow)));
    }
  } finally {
    await client.query(`close ${cursor}`).catch(() => {}); // an aborted transaction has closed it
  }
}
