// Folio-specific helpers of the benchmarks: starting Folio in this process, fresh databases,
// calls and tokens. Everything listens on and talks to 127.0.0.1 only.
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { startFolio, type Folio } from '../core/app.ts';
import { loadConfig, PACKAGE_ROOT } from '../core/kernel/config.ts';
import { removeDir, tempDir } from './util.ts';

export * from './util.ts';

export const ROOT = PACKAGE_ROOT;
export const BENCH_DIR = path.join(ROOT, 'bench');
export const FIRST_PARTY_PLUGINS = path.join(ROOT, 'plugins', '@folio');
export const BENCH_PLUGINS = path.join(BENCH_DIR, 'fixtures/plugins');
/** The bootstrap admin token of every bench server (32+ characters, loopback only). */
export const ADMIN_TOKEN = 'bench-bootstrap-admin-token-0123456789abcdef';

// --- databases -----------------------------------------------------------------------------------

/** A fresh database on the server at `serverUrl`, dropped by `drop()` (as test/helpers/server.ts). */
export async function freshDatabase(serverUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `folio_bench_${randomBytes(6).toString('hex')}`;
  const run = async (sql: string) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await run(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`drop database if exists ${name} with (force)`) };
}

// --- Folio in this process -----------------------------------------------------------------------

export interface BenchFolio {
  folio: Folio;
  url: string;
  engine: string;
  close(): Promise<void>;
}

export interface BenchFolioOptions {
  /** Plugin folders after the first-party ones. */
  plugins: string[];
  /** A PostgreSQL database URL (used as is); without it an embedded PGlite in a temp dir. */
  databaseUrl?: string | undefined;
  watch?: boolean;
  debounceMs?: number;
  /**
   * An empty folder for Folio's data, owned by the caller (who removes it). Default: a temp dir
   * made here and removed by close(). A parent that may have to kill its child passes one.
   */
  dataDir?: string | undefined;
  /** Configuration deep-merged last (e.g. `{ isolation: {...} }`). */
  overrides?: Record<string, unknown>;
}

export async function startBenchFolio(opts: BenchFolioOptions): Promise<BenchFolio> {
  const ownDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? (await tempDir('data'));
  const skillsDir = path.join(dataDir, 'skills-empty');
  await mkdir(skillsDir);
  let folio: Folio;
  try {
    const config = loadConfig({
      env: {},
      overrides: {
        port: 0,
        host: '127.0.0.1',
        dataDir,
        databaseUrl: opts.databaseUrl ?? null,
        pluginsDir: [FIRST_PARTY_PLUGINS, ...opts.plugins],
        skillsDir: [skillsDir],
        bootstrapAdminToken: ADMIN_TOKEN,
        logLevel: 'silent',
        reload: { watch: opts.watch ?? true, debounceMs: opts.debounceMs ?? 20 },
        ...opts.overrides,
      },
    });
    folio = await startFolio(config, pino({ level: 'silent' }));
  } catch (err) {
    if (ownDir) await removeDir(dataDir);
    throw err;
  }
  return {
    folio,
    url: folio.url,
    engine: folio.db.engine,
    async close() {
      try {
        await folio.close();
      } finally {
        if (ownDir) await removeDir(dataDir);
      }
    },
  };
}

export interface CallReply {
  status: number;
  text: string;
}

/** POST /curl/call/{ns}/{fn} with a bearer token and a JSON body. */
export async function callFn(url: string, token: string, ns: string, fn: string, body: unknown = {}): Promise<CallReply> {
  const res = await fetch(`${url}/curl/call/${ns}/${fn}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

/** A plain (non-admin) user's API token, made through admin.create_user as the bootstrap admin. */
export async function createUserToken(url: string): Promise<{ token: string; userId: string }> {
  const r = await callFn(url, ADMIN_TOKEN, 'admin', 'create_user', { email: `bench-${randomBytes(4).toString('hex')}@example.com` });
  if (r.status !== 200) throw new Error(`admin.create_user answered ${r.status}: ${r.text.slice(0, 300)}`);
  const { token, id } = JSON.parse(r.text) as { token: string; id: string };
  return { token, userId: id };
}
