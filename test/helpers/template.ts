// Migrated template databases: the tests build a freshly migrated database once per set of
// migrations, and every test file starts from a copy of it instead of creating and migrating its own.
//   PGlite:     a closed, migrated data dir, <tmpdir>/folio-test-templates/pglite-<key>/pglite, that
//               each test copies into its own temp data dir;
//   PostgreSQL: a `folio_tpl_<key>` database on the server, each test's database made from it with
//               `create database ... template folio_tpl_<key>`.
// <key> hashes everything that decides what a freshly migrated database holds (every file under
// core/db/, the domains' migrations, and the versions of PGlite, MikroORM and pg-boss), so an edited migration makes a new template
// and a stale one is never used. The template is exactly what `openDatabase` leaves behind on an
// empty database: no rows, no ANALYZE, nothing else.
//
// Several test processes (or several checkouts on one machine) may want one at the same time. A
// template is built under a name of its own and published by an atomic rename, so a half-built one
// is never seen and a race costs at most a duplicate build; a lock (a pid file, or a PostgreSQL
// advisory lock) saves that duplicate work. When a new template is built, those of other keys built
// more than a day ago are dropped; a test whose template vanished under it builds it again.
//
// The fresh path (an empty database migrated on open) stays covered: test/unit/db-database.test.ts
// and test/integration/process.test.ts open empty databases on purpose.
import { createHash, randomBytes } from 'node:crypto';
import { copyFile, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { Logger } from 'pino';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';
import { DATABASE_SCHEMA } from '../../core/domains.ts';

/** Where the PGlite templates live (shared by every checkout on this machine, keyed apart). */
export const TEMPLATES_DIR = path.join(tmpdir(), 'folio-test-templates');

/** A template of another key built longer ago than this is dropped when a new one is built. */
const STALE_MS = 24 * 60 * 60_000;

/** Whatever decides the schema of a freshly migrated database, and how PGlite lays out its files. */
const KEY_PACKAGES = ['@electric-sql/pglite', '@mikro-orm/core', '@mikro-orm/migrations', '@mikro-orm/postgresql', 'pg-boss'];

let keyPromise: Promise<string> | undefined;

/**
 * 16 hex digits of a sha256 over every file under core/db/, every domain's migrations (their
 * source: a class's toString is its text) and the versions in KEY_PACKAGES.
 */
export function templateKey(): Promise<string> {
  return (keyPromise ??= (async () => {
    const hash = createHash('sha256');
    const dbDir = path.join(PACKAGE_ROOT, 'core/db');
    const files = (await readdir(dbDir, { recursive: true, withFileTypes: true }))
      .filter((e) => e.isFile())
      .map((e) => path.relative(dbDir, path.join(e.parentPath, e.name)))
      .sort();
    for (const file of files) {
      hash.update(`file ${file}\0`);
      hash.update(await readFile(path.join(dbDir, file)));
      hash.update('\0');
    }
    for (const m of DATABASE_SCHEMA.migrations) hash.update(`migration ${m.name}\0${m.class.toString()}\0`);
    for (const name of KEY_PACKAGES) {
      const pkg = JSON.parse(await readFile(path.join(PACKAGE_ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string };
      hash.update(`package ${name}@${pkg.version}\0`);
    }
    return hash.digest('hex').slice(0, 16);
  })());
}

// --- PGlite ---------------------------------------------------------------------------------------

/** Makes `<dataDir>/pglite` a copy of the migrated PGlite template (built first if need be). */
export async function copyPgliteTemplate(dataDir: string, log: Logger): Promise<void> {
  const target = path.join(dataDir, 'pglite');
  for (let attempt = 0; ; attempt++) {
    const template = await pgliteTemplate(log);
    try {
      await copyTree(path.join(template, 'pglite'), target);
      return;
    } catch (err) {
      await rm(target, { recursive: true, force: true });
      // Dropped under us as stale by a run of another checkout: build it again, once.
      if (attempt > 0 || (err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}

/** The directory of the migrated PGlite template (it holds `pglite/`); builds it when missing. */
export async function pgliteTemplate(log: Logger): Promise<string> {
  const key = await templateKey();
  const dir = path.join(TEMPLATES_DIR, `pglite-${key}`);
  if (await exists(path.join(dir, 'pglite', 'PG_VERSION'))) return dir;
  await mkdir(TEMPLATES_DIR, { recursive: true });
  return withPidLock(path.join(TEMPLATES_DIR, `pglite-${key}.lock`), async () => {
    if (await exists(path.join(dir, 'pglite', 'PG_VERSION'))) return dir; // built while we waited
    const build = `${dir}.build-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      const { openDatabase } = await import('../../core/db/database.ts');
      const db = await openDatabase({ schema: DATABASE_SCHEMA, dataDir: build, log, migrate: true });
      await db.close(); // flushes PGlite and removes its lock file: a valid, closed data dir
      try {
        await rename(build, dir);
      } catch (err) {
        // Published by someone else in the meantime (a rename onto a non-empty dir fails): use theirs.
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
      }
    } finally {
      await rm(build, { recursive: true, force: true });
    }
    await dropStalePgliteTemplates(key);
    return dir;
  });
}

/**
 * Copies a PGlite data dir (about 1000 files, 40 MB): directories first, then the files, several at
 * a time with copyFile, which keeps their modes. fs.cp copies one file at a time with more system
 * calls each: about 1.25 s a copy against 0.8 s here, measured on a busy 2-core machine. The template
 * was closed cleanly, so it holds no folio.lock; one is skipped anyway, to be sure.
 */
async function copyTree(from: string, to: string): Promise<void> {
  const dirs: string[] = [];
  const files: string[] = [];
  for (const entry of await readdir(from, { recursive: true, withFileTypes: true })) {
    const rel = path.relative(from, path.join(entry.parentPath, entry.name));
    if (entry.isDirectory()) dirs.push(rel);
    else if (entry.isFile()) {
      if (entry.name !== 'folio.lock') files.push(rel);
    } else throw new Error(`unexpected entry in the PGlite template: ${rel}`);
  }
  // A parent's path is shorter than its children's: created first.
  for (const rel of ['', ...dirs.sort((a, b) => a.length - b.length)]) {
    await mkdir(path.join(to, rel), { mode: (await stat(path.join(from, rel))).mode });
  }
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const rel = files[next++]!;
      await copyFile(path.join(from, rel), path.join(to, rel));
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

async function dropStalePgliteTemplates(key: string): Promise<void> {
  for (const entry of await readdir(TEMPLATES_DIR).catch(() => [] as string[])) {
    const full = path.join(TEMPLATES_DIR, entry);
    const build = /^pglite-[0-9a-f]+\.build-(\d+)-/.exec(entry);
    if (build) {
      // A build whose process is gone (killed mid-build) is garbage.
      if (!processAlive(Number(build[1]))) await rm(full, { recursive: true, force: true });
    } else if (/^pglite-[0-9a-f]+$/.test(entry) && entry !== `pglite-${key}`) {
      const info = await stat(full).catch(() => undefined);
      if (info && Date.now() - info.mtimeMs > STALE_MS) await rm(full, { recursive: true, force: true });
    }
  }
}

/**
 * Runs `fn` holding a pid file. A lock whose process is gone is taken over. Only saves duplicate
 * work: correctness comes from the atomic rename, so a lock lost to a takeover race is harmless.
 */
async function withPidLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 5 * 60_000;
  for (;;) {
    try {
      await writeFile(file, String(process.pid), { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number((await readFile(file, 'utf8').catch(() => '')).trim());
      const age = Date.now() - ((await stat(file).catch(() => undefined))?.mtimeMs ?? 0);
      // No pid yet is a lock being written, unless it has stayed empty for a while.
      const stale = pid ? !processAlive(pid) : age > 10_000;
      if (stale || Date.now() > deadline) await rm(file, { force: true });
      else await sleep(100);
    }
  }
  try {
    return await fn();
  } finally {
    await rm(file, { force: true });
  }
}

// --- PostgreSQL -----------------------------------------------------------------------------------

/** Creates database `name` on the server as a copy of the migrated template (built first if need be). */
export async function createFromPostgresTemplate(serverUrl: string, name: string, log: Logger): Promise<void> {
  const template = `folio_tpl_${await templateKey()}`;
  await withAdmin(serverUrl, async (admin) => {
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.query(`create database ${name} template ${template}`);
        return;
      } catch (err) {
        // 3D000: no template yet (or it was dropped as stale by a run of another checkout).
        if (attempt > 1 || (err as { code?: string }).code !== '3D000') throw err;
        await ensurePostgresTemplate(admin, serverUrl, template, log);
      }
    }
  });
}

async function ensurePostgresTemplate(admin: pg.Client, serverUrl: string, name: string, log: Logger): Promise<void> {
  if (await databaseExists(admin, name)) return;
  // Serialises builders connected to the same database; others are handled by the rename.
  await admin.query(`select pg_advisory_lock(hashtext('folio test template'))`);
  try {
    if (await databaseExists(admin, name)) return; // built while we waited
    const build = `${name}_b${Math.floor(Date.now() / 1000)}_${randomBytes(3).toString('hex')}`;
    await admin.query(`create database ${build}`);
    let published = false;
    try {
      const url = new URL(serverUrl);
      url.pathname = `/${build}`;
      const { openDatabase } = await import('../../core/db/database.ts');
      const db = await openDatabase({ schema: DATABASE_SCHEMA, databaseUrl: url.toString(), dataDir: tmpdir(), log, migrate: true });
      await db.close();
      // No connections from now on (a connected template cannot be copied), and marked a template.
      await admin.query(`comment on database ${build} is 'folio test template, built ${new Date().toISOString()}'`);
      await admin.query(`alter database ${build} with allow_connections false is_template true`);
      // The backends of the pool just closed may take a moment to leave (55006 meanwhile).
      await retryWhileBusy(() => admin.query(`alter database ${build} rename to ${name}`));
      published = true;
    } catch (err) {
      if ((err as { code?: string }).code !== '42P04') throw err; // 42P04: published by someone else
    } finally {
      if (!published) await dropDatabase(admin, build).catch(() => {});
    }
    await dropStalePostgresTemplates(admin, name);
  } finally {
    await admin.query(`select pg_advisory_unlock(hashtext('folio test template'))`);
  }
}

async function dropStalePostgresTemplates(admin: pg.Client, current: string): Promise<void> {
  const { rows } = await admin.query<{ name: string; note: string | null }>(
    `select datname as name, shobj_description(oid, 'pg_database') as note
       from pg_database where datname like 'folio\\_tpl\\_%' and datname <> $1`,
    [current],
  );
  for (const { name, note } of rows) {
    const build = /^folio_tpl_[0-9a-f]+_b(\d+)_[0-9a-f]+$/.exec(name);
    const built = build ? Number(build[1]) * 1000 : Date.parse(/built (\S+)$/.exec(note ?? '')?.[1] ?? '');
    // A build older than an hour was abandoned; a template of other migrations is dropped after a day.
    const limit = build ? 60 * 60_000 : STALE_MS;
    if (Number.isFinite(built) && Date.now() - built > limit) await dropDatabase(admin, name).catch(() => {});
  }
}

async function dropDatabase(admin: pg.Client, name: string): Promise<void> {
  await admin.query(`alter database ${name} with is_template false`);
  await admin.query(`drop database if exists ${name} with (force)`);
}

async function databaseExists(admin: pg.Client, name: string): Promise<boolean> {
  const { rowCount } = await admin.query('select 1 from pg_database where datname = $1', [name]);
  return (rowCount ?? 0) > 0;
}

async function retryWhileBusy<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if ((err as { code?: string }).code !== '55006' || attempt >= 100) throw err;
      await sleep(50);
    }
  }
}

/** A short-lived connection to the server's own database (the one DATABASE_URL names). */
export async function withAdmin<T>(serverUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

// --- helpers --------------------------------------------------------------------------------------

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
