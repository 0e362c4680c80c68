// What a small edit costs on disk: one-character appends to a 1 MB note, measured with the code
// before revisions were stored as deltas (every revision a full copy) and with the current code,
// on PGlite and, with DATABASE_URL, on PostgreSQL. Also the time to read the oldest and the newest
// revision.
//   npm run bench -- --only=revisions
//   npx node bench/revisions.ts [--appends=100] [--engines=pglite,postgres] [--baseline=<git ref>] [--quick]
// The "before" code is the tree of the commit before core/domain/notes/revision-delta.ts was added
// (or --baseline), taken with `git archive` into bench/.cache/ and run as it is, on a database its
// own migrations made. Each (code, engine) pair runs in a child process of its own.
import { execFile } from 'node:child_process';
import { mkdir, readdir, rename, stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { pino } from 'pino';
import type { Principal } from '../core/domain/identity/types.ts';
import { NODE, assertNode24, mean, percentile, progress, removeDir, round, sized, tempDir } from './util.ts';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..');
const CACHE = path.join(import.meta.dirname, '.cache');

export interface Measure {
  /** pg_database_size: every table, index and TOAST table, dead rows included. */
  database: number;
  /** pg_total_relation_size of note_revisions and of notes (with their TOAST and indexes). */
  revisions: number;
  notes: number;
  /** WAL written since the first measure (pg_current_wal_lsn difference). */
  wal: number;
  /** PGlite only: the bytes of every file in its data directory. */
  dataDir: number | null;
}

export interface RunResult {
  code: 'before' | 'after';
  engine: 'pglite' | 'postgres';
  commit: string;
  appends: number;
  noteBytes: number;
  /** Growth from the note's creation to after the appends, divided by the appends. */
  perAppend: Measure;
  /** The same after VACUUM FULL: the live data alone, what stays once dead rows are gone. */
  perAppendLive: Omit<Measure, 'wal' | 'dataDir'>;
  appendMs: { p50: number; mean: number };
  readOldestMs: number;
  readNewestMs: number;
}

export interface RevisionsResult {
  runs: RunResult[];
}

// --- the measured run, in a child process --------------------------------------------------------

async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true }))
    if (e.isFile()) total += (await stat(path.join(e.parentPath, e.name))).size;
  return total;
}

/** About 1 MB (10^6 bytes) of words, deterministic, ending in a newline: room for appends under the 1 MiB limit. */
function bigBody(): string {
  let s = 1;
  const words = ['note', 'meeting', 'decision', 'plan', 'review', 'release', 'customer', 'budget', 'the', 'and', 'of', 'for'];
  const lines: string[] = [];
  let size = 0;
  while (size < 1_000_000 - 100) {
    const line: string[] = [];
    for (let k = 0; k < 12; k++) {
      s = (s * 1664525 + 1013904223) >>> 0;
      line.push(`${words[s % words.length]}${s % 97}`);
    }
    const text = line.join(' ');
    lines.push(text);
    size += text.length + 1;
  }
  return lines.join('\n') + '\n';
}

async function child(opts: { code: string; engine: 'pglite' | 'postgres'; databaseUrl?: string; appends: number }): Promise<void> {
  // The modules of that code tree; their types are the current ones (the calls made here exist in both).
  const load = async <M>(f: string) => (await import(pathToFileURL(path.join(opts.code, f)).href)) as M;
  const { openDatabase } = await load<typeof import('../core/db/database.ts')>('core/db/database.ts');
  const { DATABASE_SCHEMA } = await load<typeof import('../core/domains.ts')>('core/domains.ts');
  const { IdentityService } = await load<typeof import('../core/domain/identity/service.ts')>('core/domain/identity/service.ts');
  const { NotesServiceImpl } = await load<typeof import('../core/domain/notes/service.ts')>('core/domain/notes/service.ts');
  const dataDir = await tempDir('revisions');
  const db = await openDatabase({
    schema: DATABASE_SCHEMA,
    dataDir,
    ...(opts.databaseUrl ? { databaseUrl: opts.databaseUrl } : {}),
    log: pino({ level: 'silent' }),
    migrate: true,
  });
  try {
    const sql = async <T>(q: string): Promise<T[]> => db.orm.em.fork().execute<T[]>(q);
    const identity = new IdentityService(db);
    const user = await identity.createUser({ email: 'bench@example.com', name: 'bench', roles: [] });
    const p: Principal = {
      user: { id: user.id, email: user.email, name: 'bench', roles: [] },
      scopes: ['*'],
      tokenKind: 'api',
      tokenId: user.id,
      tokenExpiresAt: null,
    };
    const notes = new NotesServiceImpl(db);
    const body = bigBody();
    const note = await notes.create(p, { title: 'Big', body });
    await sql('vacuum full');
    await sql('checkpoint');
    const lsn = (await sql<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn'))[0]!.lsn;
    const measure = async (): Promise<Measure> => {
      const [r] = await sql<{ database: number; revisions: number; notes: number; wal: number }>(
        `select pg_database_size(current_database())::float8 as database,
                pg_total_relation_size('note_revisions')::float8 as revisions,
                pg_total_relation_size('notes')::float8 as notes,
                pg_wal_lsn_diff(pg_current_wal_lsn(), '${lsn}')::float8 as wal`,
      );
      return { ...r!, dataDir: opts.engine === 'pglite' ? await dirBytes(dataDir) : null };
    };
    const m0 = await measure();
    const times: number[] = [];
    for (let i = 0; i < opts.appends; i++) {
      const t = performance.now();
      await notes.append(p, note.id, { text: 'x' });
      times.push(performance.now() - t);
    }
    const m1 = await measure();
    await sql('vacuum full');
    const m2 = await measure();
    const per = (a: number | null, b: number | null) => (a === null || b === null ? null : round((b - a) / opts.appends, 0));
    const readMs = async (version: number) => {
      const ms: number[] = [];
      for (let i = 0; i < 7; i++) {
        const t = performance.now();
        const r = await notes.revision(p, note.id, version);
        ms.push(performance.now() - t);
        if (version === 1 && r.body !== body) throw new Error('the oldest revision does not read back');
      }
      return round(percentile(ms, 50), 2);
    };
    const result: Omit<RunResult, 'code' | 'commit'> = {
      engine: opts.engine,
      appends: opts.appends,
      noteBytes: Buffer.byteLength(body),
      perAppend: {
        database: per(m0.database, m1.database)!,
        revisions: per(m0.revisions, m1.revisions)!,
        notes: per(m0.notes, m1.notes)!,
        wal: per(0, m1.wal)!,
        dataDir: per(m0.dataDir, m1.dataDir),
      },
      perAppendLive: {
        database: per(m0.database, m2.database)!,
        revisions: per(m0.revisions, m2.revisions)!,
        notes: per(m0.notes, m2.notes)!,
      },
      appendMs: { p50: round(percentile(times, 50), 1), mean: round(mean(times), 1) },
      readOldestMs: await readMs(1),
      readNewestMs: await readMs(opts.appends + 1),
    };
    process.stdout.write(JSON.stringify(result) + '\n');
  } finally {
    await db.close();
    await removeDir(dataDir);
  }
}

// --- the parent: the code trees, the databases, the table ----------------------------------------

/** The commit before delta revisions (or `ref`), its tree extracted once under bench/.cache/. */
async function baselineTree(ref: string | undefined): Promise<{ dir: string; commit: string }> {
  const git = async (...args: string[]) => (await run('git', ['-C', ROOT, ...args])).stdout.trim();
  let commit: string;
  if (ref) commit = await git('rev-parse', '--verify', `${ref}^{commit}`);
  else {
    const added = (await git('log', '--diff-filter=A', '--format=%H', '--', 'core/domain/notes/revision-delta.ts')).split('\n').pop();
    if (!added) throw new Error('cannot find the commit that introduced delta revisions; pass --baseline=<git ref>');
    commit = await git('rev-parse', `${added}^`);
  }
  const dir = path.join(CACHE, `revisions-baseline-${commit.slice(0, 12)}`);
  if (!(await stat(dir).catch(() => null))) {
    const tmp = `${dir}.tmp-${process.pid}`;
    await mkdir(tmp, { recursive: true });
    await run('sh', ['-c', `git -C "${ROOT}" archive ${commit} core | tar -x -C "${tmp}"`]);
    await rename(tmp, dir);
  }
  return { dir, commit };
}

async function freshDb(serverUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `folio_bench_rev_${process.pid}_${Date.now()}`;
  const admin = async (q: string) => {
    const c = new pg.Client({ connectionString: serverUrl });
    await c.connect();
    try {
      await c.query(q);
    } finally {
      await c.end();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`drop database if exists ${name} with (force)`) };
}

export async function runRevisions(opts: {
  quick?: boolean;
  appends?: number;
  engines?: Array<'pglite' | 'postgres'>;
  baseline?: string;
}): Promise<RevisionsResult> {
  const appends = opts.appends ?? sized(opts.quick, 100, 20, 3);
  const serverUrl = process.env['DATABASE_URL'] || undefined;
  const engines = opts.engines ?? (serverUrl ? ['pglite', 'postgres'] : ['pglite']);
  if (engines.includes('postgres') && !serverUrl) throw new Error('the postgres engine needs DATABASE_URL');
  const before = await baselineTree(opts.baseline);
  const head = (await run('git', ['-C', ROOT, 'rev-parse', 'HEAD'])).stdout.trim();
  const runs: RunResult[] = [];
  for (const engine of engines) {
    for (const [code, dir, commit] of [
      ['before', before.dir, before.commit],
      ['after', ROOT, head],
    ] as const) {
      progress(`revisions: ${code} (${commit.slice(0, 12)}) on ${engine}, ${appends} appends to a 1 MB note`);
      const database = engine === 'postgres' ? await freshDb(serverUrl!) : undefined;
      try {
        const args = [import.meta.filename, '--child', `--code=${dir}`, `--engine=${engine}`, `--appends=${appends}`];
        if (database) args.push(`--database-url=${database.url}`);
        const { stdout } = await run(NODE, args, { maxBuffer: 16 * 1024 * 1024, env: { ...process.env, DATABASE_URL: '' } });
        runs.push({
          code,
          commit: commit.slice(0, 12),
          ...(JSON.parse(stdout.trim().split('\n').pop()!) as Omit<RunResult, 'code' | 'commit'>),
        });
      } finally {
        await database?.drop();
      }
    }
  }
  return { runs };
}

const kb = (n: number | null) => (n === null ? '-' : n >= 10_240 ? `${round(n / 1024 / 1024, 2)} MiB` : `${n} B`);

export function formatRevisions(r: RevisionsResult): string {
  const out = ['revisions: bytes stored per one-character append to a 1 MB note, and reading revisions', ''];
  const head = [
    'engine',
    'code',
    'database',
    'note_revisions',
    'notes',
    'WAL',
    'data dir',
    'live (VACUUM FULL)',
    'append p50',
    'read v1',
    'read newest',
  ];
  const rows = r.runs.map((x) => [
    x.engine,
    `${x.code} ${x.commit}`,
    kb(x.perAppend.database),
    kb(x.perAppend.revisions),
    kb(x.perAppend.notes),
    kb(x.perAppend.wal),
    kb(x.perAppend.dataDir),
    kb(x.perAppendLive.database),
    `${x.appendMs.p50} ms`,
    `${x.readOldestMs} ms`,
    `${x.readNewestMs} ms`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (row: string[]) =>
    row
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  out.push(line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line), '');
  for (const engine of new Set(r.runs.map((x) => x.engine))) {
    const b = r.runs.find((x) => x.engine === engine && x.code === 'before');
    const a = r.runs.find((x) => x.engine === engine && x.code === 'after');
    if (a && b)
      out.push(
        `${engine}: note_revisions grows ${round(b.perAppend.revisions / Math.max(1, a.perAppend.revisions), 0)}x less per append; ` +
          `database ${round(b.perAppend.database / Math.max(1, a.perAppend.database), 1)}x less, WAL ${round(b.perAppend.wal / Math.max(1, a.perAppend.wal), 1)}x less; ` +
          `live data ${round(b.perAppendLive.database / Math.max(1, a.perAppendLive.database), 0)}x less`,
      );
  }
  out.push(
    '',
    'Per append: growth from the note at version 1 to after the appends, divided by the appends; "data dir" is PGlite\'s files (WAL',
    "segments included). Dead rows (each append rewrites the note's row: body and search vector) count until a VACUUM makes their",
    'space reusable; "live (VACUUM FULL)" is the growth of the live data alone. Reads: median of 7.',
  );
  return out.join('\n');
}

export function revisionsSummaryRows(r: RevisionsResult): string[][] {
  return r.runs.map((x) => [
    'revisions',
    `${x.engine} ${x.code} B/append`,
    String(x.perAppend.revisions),
    `database ${kb(x.perAppend.database)}, WAL ${kb(x.perAppend.wal)}, live ${kb(x.perAppendLive.database)}; read v1 ${x.readOldestMs} ms`,
    '',
  ]);
}

if (import.meta.filename === process.argv[1]) {
  assertNode24();
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  if (process.argv.includes('--child')) {
    const databaseUrl = arg('database-url');
    await child({
      code: arg('code')!,
      engine: arg('engine') as 'pglite' | 'postgres',
      appends: Number(arg('appends')),
      ...(databaseUrl ? { databaseUrl } : {}),
    });
  } else {
    const engines = arg('engines')?.split(',') as Array<'pglite' | 'postgres'> | undefined;
    const appends = arg('appends');
    const baseline = arg('baseline');
    const result = await runRevisions({
      quick: process.argv.includes('--quick'),
      ...(appends ? { appends: Number(appends) } : {}),
      ...(engines ? { engines } : {}),
      ...(baseline ? { baseline } : {}),
    });
    process.stdout.write(formatRevisions(result) + '\n' + JSON.stringify(result) + '\n');
  }
}
