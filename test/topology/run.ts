// The deployment of deploy/compose.yaml as processes on loopback: a fresh PostgreSQL database, an
// S3 store (s3rver), the migration run once, two API nodes (JOBS_IN_PROCESS=false) and one worker,
// each started the production way (bin/folio-server). Then a smoke test against both nodes:
//   - a note written on one node is read on the other (and the write-to-read latency measured);
//   - a namespace switched off for a user on one node is off on the other;
//   - an upload on one node is downloaded, byte for byte, from the other;
//   - the text extraction job the upload queued is run by the worker (the API nodes run no jobs);
//   - one API node killed with SIGKILL in the middle of a burst of writes to both: every write
//     either node acknowledged is there afterwards, and the surviving node kept serving;
//   - SIGTERM stops the surviving node and the worker with exit code 0.
// Usage: npx node test/topology/run.ts   (DATABASE_URL: the PostgreSQL server to create the
// database on, default postgres://postgres@127.0.0.1:5432/postgres; TOPOLOGY_SAMPLES: how many
// write-then-read pairs to time, default 200; TOPOLOGY_DEADLINE_S: the whole run's bound, default
// 300). Prints one line per check; exits 1 if one fails. Whatever happens (a check failing, a node
// hanging, the deadline), every process it started is killed and its database dropped before it exits.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';
import { startS3rver } from '../helpers/blob-store-suite.ts';

const SERVER = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SAMPLES = Number(process.env['TOPOLOGY_SAMPLES'] ?? 200);
const DEADLINE_S = Number(process.env['TOPOLOGY_DEADLINE_S'] ?? 300);
/** The most writes one writer of the burst makes after api-b is killed (a safety valve: it stops sooner once told). */
const BURST_MAX_WRITES_AFTER_KILL = 2000;
const ADMIN = `topology-admin-${randomBytes(12).toString('hex')}`;
const BIN = path.join(PACKAGE_ROOT, 'bin/folio-server');

let failures = 0;
/** What the run is doing now: named when the deadline passes. */
let phase = 'starting';
/** Set by the watchdog: it reports and exits; the steps it cut short say nothing more. */
let timedOut = false;
function check(ok: boolean, what: string, detail = ''): void {
  if (!ok) failures++;
  console.log(`${ok ? 'ok' : 'not ok'} - ${what}${detail ? ` (${detail})` : ''}`);
}

async function admin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: SERVER });
  await c.connect();
  await c.query(sql).finally(() => c.end());
}

interface Node {
  name: string;
  child: ChildProcess;
  url: string;
  log: string;
  /** Everything the process has printed so far. */
  output: () => string;
  exited: Promise<number | null>;
}

/** Every process started, added as it is spawned: all are killed on the way out, whatever the way. */
const spawned: ChildProcess[] = [];
const work = await mkdtemp(path.join(tmpdir(), 'folio-topology-'));
const dbName = `folio_topo_${randomBytes(6).toString('hex')}`;
const dbUrl = new URL(SERVER);
dbUrl.pathname = `/${dbName}`;
const bucket = 'folio';
let s3: Awaited<ReturnType<typeof startS3rver>> | undefined = undefined;

async function stopAll(): Promise<void> {
  for (const c of spawned) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await Promise.all(
    spawned.map((c) =>
      c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : new Promise<void>((r) => c.once('close', () => r())),
    ),
  );
  await admin(`drop database if exists ${dbName} with (force)`).catch(() => {});
  await s3?.close().catch(() => {});
}

/** Cleans up (bounded to 10 s) and exits 1: the watchdog's and a signal's way out. */
function abort(why: string): void {
  timedOut = true;
  console.log(`not ok - ${why} (it was at: ${phase})`);
  console.log(`# logs kept in ${work}`);
  void Promise.race([stopAll(), new Promise((r) => setTimeout(r, 10_000))]).finally(() => process.exit(1));
}

// The whole run is bounded from its first step: past the deadline it fails, naming the step it was
// in, and cleans up (well before CI's own `timeout`, which would leave the nodes and the database
// behind). Not unref'd: the run's own end clears it.
const watchdog = setTimeout(() => abort(`the topology run did not finish within ${DEADLINE_S} s`), DEADLINE_S * 1000);
// Ctrl-C or CI's `timeout`: the nodes get the signal too, but the database would be left behind.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => abort(`the topology run got ${signal}`));

phase = 'starting the S3 store and creating the database';
s3 = await startS3rver(bucket);
await admin(`create database ${dbName}`);

const common: Record<string, string> = {
  PATH: process.env['PATH'] ?? '',
  HOME: process.env['HOME'] ?? '',
  DATABASE_URL: dbUrl.toString(),
  BLOB_STORE: 's3',
  S3_ENDPOINT: s3.endpoint,
  S3_BUCKET: bucket,
  S3_ACCESS_KEY_ID: 'S3RVER',
  S3_SECRET_ACCESS_KEY: 'S3RVER',
  S3_FORCE_PATH_STYLE: 'true',
  BOOTSTRAP_ADMIN_TOKEN: ADMIN,
  RELOAD_WATCH: 'false',
  LOG_LEVEL: 'info',
  ...(process.env['NODE_COMPILE_CACHE'] ? { NODE_COMPILE_CACHE: process.env['NODE_COMPILE_CACHE'] } : {}),
};

/** `bin/folio-server <command>` with its output in a log file; resolves once `ready` is logged. */
async function start(name: string, command: string, ready: RegExp, env: Record<string, string> = {}): Promise<Node> {
  const log = path.join(work, `${name}.log`);
  const out = createWriteStream(log);
  const child = spawn(BIN, [command], {
    cwd: PACKAGE_ROOT,
    env: { ...common, DATA_DIR: path.join(work, name), PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  spawned.push(child);
  let text = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      out.write(chunk);
      text += chunk.toString();
      const m = ready.exec(text);
      if (m) resolve(m[1] ?? '');
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => reject(new Error(`${name} exited with ${code} before it was ready; its log: ${log}\n${text.slice(-3000)}`)));
  });
  return { name, child, url, log, output: () => text, exited };
}

const listening = /"url":"(http:\/\/[^"]+)".*"msg":"folio listening"/;

function req(
  node: Node,
  method: string,
  p: string,
  token: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  const isJson = body !== undefined && !(body instanceof Uint8Array);
  return fetch(`${node.url}${p}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(isJson ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body === undefined ? {} : { body: isJson ? JSON.stringify(body) : body }),
  });
}

async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms: number): Promise<T> {
  const until = Date.now() + ms;
  let last = await fn();
  while (!ok(last) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    last = await fn();
  }
  return last;
}

try {
  // The migration, once, before any node starts (the Job of deploy/kubernetes, the `migrate`
  // service of deploy/compose.yaml).
  phase = 'the migration';
  const migrate = spawn(BIN, ['migrate'], { cwd: PACKAGE_ROOT, env: { ...common, LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
  spawned.push(migrate);
  let migrateOut = '';
  migrate.stdout.on('data', (d: Buffer) => (migrateOut += d.toString()));
  migrate.stderr.on('data', (d: Buffer) => (migrateOut += d.toString()));
  const migrated = await new Promise<number | null>((resolve) => migrate.on('close', resolve));
  check(migrated === 0, 'bin/folio-server migrate applies the migrations to the fresh database', migrateOut.trim().split('\n')[0]);

  // The first node creates the admin (BOOTSTRAP_ADMIN_TOKEN); then the second and the worker.
  phase = 'starting the nodes';
  const a = await start('api-a', 'server', listening, { JOBS_IN_PROCESS: 'false' });
  const [b, worker] = await Promise.all([
    start('api-b', 'server', listening, { JOBS_IN_PROCESS: 'false' }),
    start('worker', 'worker', /"msg":"folio worker running"()/),
  ]);
  console.log(`# api-a ${a.url}, api-b ${b.url}, worker, PostgreSQL ${dbName}, S3 ${s3.endpoint}; logs in ${work}`);

  const made = await req(a, 'POST', '/curl/call/admin/create_user', ADMIN, { email: 'topology@example.com' });
  const user = (await made.json()) as { id: string; token: string };
  check(made.status === 200, 'the admin creates a user on api-a');

  // Write on one node, read on the other: alternating directions, timed from the write's start to
  // the other node's answer with the note. Interleaved with the same on one node (the baseline:
  // what the write and the read cost without a second node), so that a busy machine slows both.
  phase = 'writes read on the other node';
  let retried = 0;
  const hop = async (w: Node, r: Node, title: string): Promise<{ ms: number; ok: boolean }> => {
    let reads = 0;
    const t0 = performance.now();
    const wrote = await req(w, 'POST', '/api/v1/notetaker/notes', user.token, { title, body: `written on ${w.name}` });
    const id = ((await wrote.json()) as { id: string }).id;
    const read = await eventually(
      async () => {
        reads++;
        const res = await req(r, 'GET', `/api/v1/notetaker/notes/${id}`, user.token);
        return { status: res.status, title: res.status === 200 ? ((await res.json()) as { title: string }).title : '' };
      },
      (v) => v.status === 200,
      5000,
    );
    if (reads > 1) retried++;
    return { ms: performance.now() - t0, ok: wrote.status === 201 && read.title === title };
  };
  const other: number[] = [];
  const same: number[] = [];
  let mismatched = 0;
  for (let i = 0; i < SAMPLES; i++) {
    const [w, r] = i % 2 === 0 ? [a, b] : [b, a];
    const across = await hop(w, r, `hop ${i}`);
    other.push(across.ms);
    if (!across.ok) mismatched++;
    const local = await hop(w, w, `stay ${i}`);
    same.push(local.ms);
    if (!local.ok) mismatched++;
  }
  const pct = (xs: number[], p: number) => {
    const sorted = [...xs].sort((x, y) => x - y);
    return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
  };
  check(
    mismatched === 0,
    `${SAMPLES} notes written on one node are read on the other (and ${SAMPLES} on the same one)`,
    `${mismatched} not`,
  );
  const line = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(1)} ms, p95 ${pct(xs, 95).toFixed(1)} ms, max ${pct(xs, 100).toFixed(1)} ms`;
  console.log(`# write-to-read latency over ${SAMPLES} notes, read on the other node: ${line(other)}`);
  console.log(`# write-to-read latency over ${SAMPLES} notes, read on the same node (baseline): ${line(same)}`);
  console.log(`# p95 other node / same node: ${(pct(other, 95) / pct(same, 95)).toFixed(2)}; reads that had to be repeated: ${retried}`);

  phase = 'a namespace switched on one node';
  // A namespace switched off for the user on api-a is off on api-b, and back on.
  const listOnB = async () => (await req(b, 'POST', '/curl/call/notetaker/list', user.token, {})).status;
  check((await listOnB()) === 200, 'api-b serves notetaker.list to the user');
  const off = await req(a, 'POST', '/curl/call/admin/set_namespace_access', ADMIN, {
    user_id: user.id,
    namespace: 'notetaker',
    access: 'disabled',
  });
  check(off.status === 200, 'the admin switches notetaker off for the user on api-a');
  check((await eventually(listOnB, (s) => s === 404, 5000)) === 404, 'api-b hides notetaker from the user (404)');
  await req(a, 'POST', '/curl/call/admin/set_namespace_access', ADMIN, { user_id: user.id, namespace: 'notetaker', access: 'default' });
  check((await eventually(listOnB, (s) => s === 200, 5000)) === 200, 'switched back on api-a: api-b serves it again');

  phase = 'an upload downloaded from the other node';
  // An upload on api-a (its blob in S3), downloaded from api-b.
  const text = `# Topology\n\nUploaded on api-a, ${randomBytes(8).toString('hex')}.\n` + 'line of text\n'.repeat(20000);
  const upload = await req(a, 'POST', '/api/v1/filedb/files?name=topology.md', user.token, new TextEncoder().encode(text));
  const file = (await upload.json()) as { id: string; sha256: string };
  check(upload.status === 201, 'an upload on api-a is stored', `${text.length} bytes`);
  const down = await req(b, 'GET', `/api/v1/filedb/files/${file.id}/content`, user.token);
  const got = Buffer.from(await down.arrayBuffer());
  check(
    down.status === 200 && createHash('sha256').update(got).digest('hex') === createHash('sha256').update(text).digest('hex'),
    'api-b downloads the same bytes',
  );

  // Its text extraction is a job. Only the worker runs jobs here: the API nodes (JOBS_IN_PROCESS=false)
  // start no job workers, and say so by not logging that they did.
  phase = 'the extraction job';
  const started = /"msg":"job workers started"/;
  check(
    !started.test(a.output()) && !started.test(b.output()) && started.test(worker.output()),
    'job workers run on the worker only (the API nodes started none)',
  );
  const extracted = await eventually(
    async () =>
      (await (await req(b, 'GET', `/api/v1/filedb/files/${file.id}/text`, user.token)).json()) as { state: string; text?: string },
    (v) => v.state !== 'pending',
    30_000,
  );
  check(extracted.state === 'extracted' && extracted.text === text, 'the worker ran the extraction job the upload queued', extracted.state);
  // And the job's row says it completed: it was picked up from the queue, by the only process that works it.
  const jobs = new pg.Client({ connectionString: dbUrl.toString() });
  await jobs.connect();
  const done = await jobs
    .query<{ state: string }>(`select state from pgboss.job where name = 'files-extract-text' and data->>'file_id' = $1`, [file.id])
    .finally(() => jobs.end());
  check(
    done.rows.some((r) => r.state === 'completed'),
    "the extraction job's row in the queue is completed",
    done.rows.map((r) => r.state).join(', ') || 'no row',
  );

  // Writes to both nodes; api-b killed with SIGKILL once it has acknowledged some.
  phase = 'the burst of writes with api-b killed';
  const acked: { id: string; title: string; on: string }[] = [];
  let seq = 0;
  let aFailed = 0;
  let stop = false;
  let killed = false;
  const writer = async (node: Node) => {
    // Bounded in time before the kill (the wait below), in writes after it.
    for (let afterKill = 0; !stop && afterKill < BURST_MAX_WRITES_AFTER_KILL;) {
      if (killed) afterKill++;
      const title = `burst ${seq++} on ${node.name}`;
      try {
        const r = await req(node, 'POST', '/api/v1/notetaker/notes', user.token, { title, body: title });
        if (r.status === 201) acked.push({ id: ((await r.json()) as { id: string }).id, title, on: node.name });
        else if (node === a) aFailed++;
      } catch {
        if (node === a) aFailed++;
        else return; // api-b is gone: what it had not answered was never acknowledged
      }
    }
  };
  const writers = [a, a, a, b, b, b].map(writer);
  const waitUntil = Date.now() + 30_000;
  while (acked.filter((x) => x.on === 'api-b').length < 50 && Date.now() < waitUntil) await new Promise((r) => setTimeout(r, 5));
  if (acked.filter((x) => x.on === 'api-b').length < 50) {
    stop = true;
    throw new Error('api-b did not acknowledge 50 writes of the burst within 30 s');
  }
  b.child.kill('SIGKILL');
  killed = true;
  await b.exited;
  const atKill = acked.length;
  await new Promise((r) => setTimeout(r, 1000));
  stop = true;
  await Promise.all(writers);
  check(aFailed === 0 && acked.length > atKill, 'api-a kept acknowledging writes while api-b died', `${aFailed} failed on api-a`);
  const missing: string[] = [];
  for (const { id, title } of acked) {
    const r = await req(a, 'GET', `/api/v1/notetaker/notes/${id}`, user.token);
    if (r.status !== 200 || ((await r.json()) as { title: string }).title !== title) missing.push(title);
  }
  check(
    missing.length === 0,
    `every acknowledged write of the burst is in the database (${acked.length}, ${acked.filter((x) => x.on === 'api-b').length} of them by the killed api-b)`,
    missing.slice(0, 5).join(', '),
  );

  // The rest stop cleanly.
  phase = 'SIGTERM to api-a and the worker';
  a.child.kill('SIGTERM');
  worker.child.kill('SIGTERM');
  const [ca, cw] = await Promise.all([a.exited, worker.exited]);
  check(ca === 0 && cw === 0, 'SIGTERM stops api-a and the worker with exit code 0', `api-a ${ca}, worker ${cw}`);
} catch (err) {
  failures++;
  if (!timedOut) console.log(`not ok - the topology run stopped: ${err instanceof Error ? err.message : String(err)}`);
} finally {
  phase = 'cleaning up';
  await stopAll();
  clearTimeout(watchdog);
}
if (timedOut) await new Promise(() => {}); // the watchdog exits
if (failures === 0) await rm(work, { recursive: true, force: true });
else console.log(`# logs kept in ${work}`);
console.log(failures === 0 ? '# topology: all checks passed' : `# topology: ${failures} check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
