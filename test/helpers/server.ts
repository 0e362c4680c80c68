// A real Folio server per test file: real HTTP on a loopback port, a real database (a database of
// its own on the DATABASE_URL server, or an embedded PGlite in a temp dir), real plugin folders.
// The database starts as a copy of the migrated template (test/helpers/template.ts): `startFolio`
// finds every migration applied. `emptyDatabase: true` makes it migrate an empty one, as a first start.
import { randomBytes } from 'node:crypto';
import { mkdtemp, mkdir, rm, cp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { Logger } from 'pino';
import { startFolio, type Folio } from '../../core/app.ts';
import { loadConfig, PACKAGE_ROOT } from '../../core/kernel/config.ts';
import { testLogger } from './db.ts';
import { copyPgliteTemplate, createFromPostgresTemplate } from './template.ts';
import { answerChecker, checkAnswersByDefault, logTally, REST_PREFIX, type RecordedAnswer, type Tally } from './openapi-answers.ts';

export const ADMIN_TOKEN = 'test-bootstrap-admin-token-0123456789abcdef';
export const FIXTURES = path.join(PACKAGE_ROOT, 'test/fixtures/plugins');
export const FIRST_PARTY = path.join(PACKAGE_ROOT, 'plugins', '@folio');

export interface TestServer {
  folio: Folio;
  url: string;
  adminToken: string;
  /** A plugins folder this server watches, empty unless the test puts plugins in it. */
  scratchPlugins: string;
  /** A skills folder this server watches, likewise. */
  scratchSkills: string;
  /** The answers under /api/v1 so far, when `keepAnswers` (and the check) is on. */
  answers: RecordedAnswer[] | undefined;
  close(): Promise<void>;
}

export interface TestServerOptions {
  /** Plugin folders; the first-party plugins come first unless `firstParty` is false. */
  plugins?: string[];
  /** Serve the first-party plugins folder (default true); false when the test brings its own copies. */
  firstParty?: boolean;
  skills?: string[];
  /** Copies of these plugin folders go into `scratchPlugins` before start. */
  copyToScratch?: string[];
  overrides?: Record<string, unknown>;
  /** A PostgreSQL server to create this test's own database on (default: DATABASE_URL). */
  databaseUrl?: string;
  /** Use this database as it is (several servers sharing one database, as nodes would). */
  sharedDatabaseUrl?: string;
  /** The server's logger (default: silent unless TEST_LOG_LEVEL is set). */
  log?: Logger;
  /** Start on an empty database, migrated by startFolio, instead of a copy of the template. */
  emptyDatabase?: boolean;
  /**
   * Check every answer under /api/v1 against the OpenAPI document as it goes out
   * (./openapi-answers.ts); close() fails listing any that contradicts it. Default: on, unless
   * FOLIO_CHECK_ANSWERS=0.
   */
  checkAnswers?: boolean;
  /** Keep every checked answer in `answers` (a test of the check itself). */
  keepAnswers?: boolean;
}

/** A new database of its own on the server: empty, or with `fromTemplate` a copy of the migrated template. */
export async function fresh(serverUrl: string, opts: { fromTemplate?: boolean } = {}): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `folio_t_${randomBytes(6).toString('hex')}`;
  const run = async (sql: string) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  if (opts.fromTemplate) await createFromPostgresTemplate(serverUrl, name, testLogger());
  else await run(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`drop database if exists ${name} with (force)`) };
}

export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'folio-it-'));
  const scratch = await mkdtemp(path.join(tmpdir(), 'folio-plugins-'));
  const scratchPlugins = path.join(scratch, 'plugins');
  const scratchSkills = path.join(scratch, 'skills');
  await mkdir(scratchPlugins);
  await mkdir(scratchSkills);
  for (const dir of opts.copyToScratch ?? []) await cp(dir, path.join(scratchPlugins, path.basename(dir)), { recursive: true });
  const serverUrl = opts.databaseUrl ?? process.env['DATABASE_URL'];
  const fromTemplate = !opts.emptyDatabase;
  const database = opts.sharedDatabaseUrl ? undefined : serverUrl ? await fresh(serverUrl, { fromTemplate }) : undefined;
  if (!opts.sharedDatabaseUrl && !serverUrl && fromTemplate) await copyPgliteTemplate(dataDir, testLogger());
  const config = loadConfig({
    env: {},
    overrides: {
      port: 0,
      host: '127.0.0.1',
      dataDir,
      databaseUrl: opts.sharedDatabaseUrl ?? database?.url ?? null,
      pluginsDir: [...(opts.firstParty === false ? [] : [FIRST_PARTY]), ...(opts.plugins ?? []), scratchPlugins],
      skillsDir: [...(opts.skills ?? []), scratchSkills],
      bootstrapAdminToken: ADMIN_TOKEN,
      logLevel: 'silent',
      reload: { watch: true, debounceMs: 50 },
      // Every plugin is first loaded in a trial worker within the import deadline; on a loaded
      // machine the first-party ones can miss the default 5 s and a test would find no 'admin'.
      // Tests of the deadline itself set their own.
      isolation: { importTimeoutMs: 30_000 },
      ...opts.overrides,
    },
  });
  const folio = await startFolio(config, opts.log ?? testLogger());
  const checking = opts.checkAnswers ?? checkAnswersByDefault();
  // The document the answers are checked against, as this server serves it (read before recording:
  // each answer is checked as it goes out, and only what contradicts the document is kept).
  const checker = checking ? answerChecker(await (await fetch(`${folio.url}${REST_PREFIX}/openapi.json`)).text()) : undefined;
  const tally: Tally = { answers: 0, covered: new Map() };
  const mismatches: string[] = [];
  const answers: RecordedAnswer[] | undefined = opts.keepAnswers ? [] : undefined;
  if (checker)
    recordAnswers(folio.server, (a) => {
      mismatches.push(...checker.check(a, tally));
      answers?.push(a);
    });
  return {
    folio,
    url: folio.url,
    adminToken: ADMIN_TOKEN,
    scratchPlugins,
    scratchSkills,
    answers,
    async close() {
      if (checker) logTally(tally);
      await folio.close();
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
      await rm(scratch, { recursive: true, force: true });
      if (mismatches.length) throw new Error(`${mismatches.length} answer(s) contradict the OpenAPI document:\n${mismatches.join('\n')}`);
    },
  };
}

/** Bytes of a body kept for the check; a longer one (a download) is checked for its status and type only. */
const KEEP_BYTES = 1 << 20;

/** Hands over a copy of every answer under /api/v1 as it went out (status, Content-Type, body). */
function recordAnswers(server: Folio['server'], answered: (a: RecordedAnswer) => void): void {
  server.prependListener('request', (req, res) => {
    if (!req.url?.startsWith(`${REST_PREFIX}/`)) return;
    const chunks: Buffer[] = [];
    let kept = 0;
    let truncated = false;
    const keep = (chunk: unknown, encoding?: unknown) => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
      const buf = Buffer.isBuffer(chunk)
        ? chunk
        : typeof chunk === 'string'
          ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
          : Buffer.from(chunk as Uint8Array);
      if (kept + buf.length > KEEP_BYTES) {
        truncated = true;
        return;
      }
      chunks.push(buf);
      kept += buf.length;
    };
    const write = res.write.bind(res);
    const end = res.end.bind(res);
    res.write = ((chunk: unknown, ...rest: unknown[]) => (keep(chunk, rest[0]), (write as any)(chunk, ...rest))) as typeof res.write;
    res.end = ((chunk?: unknown, ...rest: unknown[]) => (keep(chunk, rest[0]), (end as any)(chunk, ...rest))) as typeof res.end;
    res.once('finish', () => {
      const type = res.getHeader('content-type');
      answered({
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        status: res.statusCode,
        contentType: type === undefined ? undefined : String(type),
        body: Buffer.concat(chunks),
        truncated,
      });
    });
  });
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json<T = any>(): T;
}

/** fetch with a token; `body` objects are sent as JSON, strings as they are. */
export async function req(
  server: { url: string },
  method: string,
  path: string,
  opts: { token?: string | null; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.body !== undefined) {
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(server.url + path, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
}

/** POST /curl/call/{ns}/{fn} as `token`. */
export function call(server: { url: string }, token: string, ns: string, fn: string, body: unknown = {}): Promise<Reply> {
  return req(server, 'POST', `/curl/call/${ns}/${fn}`, { token, body });
}

/** Creates a user through admin.create_user and returns its id and token. */
export async function createUser(server: TestServer, email: string, roles: string[] = []): Promise<{ id: string; token: string }> {
  const r = await call(server, server.adminToken, 'admin', 'create_user', { email, roles });
  if (r.status !== 200) throw new Error(`create_user failed: ${r.status} ${r.text}`);
  const { id, token } = r.json<{ id: string; token: string }>();
  return { id, token };
}

/** Polls until `check` passes or `ms` runs out; returns the last value. For hot reload. */
export async function eventually<T>(fn: () => Promise<T>, check: (v: T) => boolean, ms = 5000): Promise<T> {
  const until = Date.now() + ms;
  let last = await fn();
  while (!check(last) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 25));
    last = await fn();
  }
  return last;
}
