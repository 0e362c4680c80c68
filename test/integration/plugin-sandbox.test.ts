// Plugins run in a sandboxed process each (core/kernel/isolation), tried as a hostile author
// would (test/fixtures/plugins/sandbox): taking all the memory, computing where no call waits,
// ending their own process, signalling other processes, reading and writing Folio's files,
// starting processes, opening sockets, reading the environment, flooding Folio with messages,
// filling the process's concurrent calls. In every case Folio and every other namespace keep
// answering, the bad call gets a clear answer, and plugin_status says why.
// What isolation.test.ts and isolation-hostile.test.ts try already (a spinning handler, rule or
// import, a heap overflow, malformed messages, another caller's data) is not tried again here.
import t, { type Test } from 'tap';
import { once } from 'node:events';
import { existsSync, readdirSync } from 'node:fs';
import { cp, mkdtemp, rename, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';
import { startTestServer, req, call, createUser, eventually, FIXTURES, type Reply } from '../helpers/server.ts';

const SANDBOX = path.join(FIXTURES, 'sandbox');

// The server's log, kept to look for error ids and messages; the flood's 100 000 lines are only counted.
const lines: Array<Record<string, any>> = [];
let floodLines = 0;
const log = pino(
  { level: 'info' },
  {
    write: (s: string) => {
      const line = JSON.parse(s) as Record<string, any>;
      if (line.msg === 'flood line') floodLines++;
      else lines.push(line);
    },
  },
);

// Both asked for by the plugin in granted/; the first is granted to it, the second is not.
process.env.FOLIO_TEST_GRANTED = 'granted value';
process.env.FOLIO_TEST_ASKED = 'asked, not granted';
t.teardown(() => {
  delete process.env.FOLIO_TEST_GRANTED;
  delete process.env.FOLIO_TEST_ASKED;
});

// A web server on the loopback, for the plugin granted the network to fetch from.
const web: Server = createServer((_req, res) => res.end('hello from the loopback'));
web.listen(0, '127.0.0.1');
await once(web, 'listening');
t.teardown(() => web.close());
const webUrl = `http://127.0.0.1:${(web.address() as AddressInfo).port}/`;

const s = await startTestServer({
  copyToScratch: ['memory', 'cpu', 'crash', 'granted', 'flood'].map((p) => path.join(SANDBOX, p)),
  log,
  overrides: {
    // Small, so that a message over what Folio reads from a plugin (twice this, and 1 MB) is quick to make.
    limits: { responseHardCapBytes: 1024 * 1024 },
    isolation: {
      // Required: CI installs bubblewrap (.ci/run), and what it holds is what these cases check.
      sandbox: 'bubblewrap',
      heapMb: 64,
      memoryMb: 160,
      cpuTimeoutMs: 1000,
      // Loading is not what this file tries, and a busy machine starts processes slowly.
      importTimeoutMs: 30_000,
      // Disabling a plugin that keeps crashing is isolation.test.ts's; here each crash restarts it.
      maxCrashes: 100,
      maxConcurrentCalls: 2,
      idleStopSeconds: 1,
      grants: { granted: { network: ['127.0.0.1'], env: ['FOLIO_TEST_GRANTED'] } },
    },
  },
});
t.teardown(() => s.close());
const admin = s.adminToken;
const bob = await createUser(s, 'bob@example.com');
const P = (...p: string[]) => path.join(s.scratchPlugins, ...p);

interface Capabilities {
  network: string[];
  env: string[];
  processes: boolean;
  workers: boolean;
}
interface Status {
  namespace: string | null;
  dir: string;
  state: string;
  sandbox: {
    kind: string;
    running: boolean;
    holds: string[];
    missing: string[];
    capabilities: { requested: Capabilities; granted: Capabilities; missing: Capabilities };
  } | null;
  last_error: string | null;
}
const status = async () => (await call(s, admin, 'admin', 'plugin_status')).json<Status[]>();
const statusOf = async (folder: string) => (await status()).find((p) => p.dir === P(folder));

// The plugin that reaches for Folio's things is told where they are: targets.json, written into its
// folder before the folder appears (staged, then renamed in), so that it loads once, with it.
const dataFile = readdirSync(s.folio.config.dataDir, { recursive: true, withFileTypes: true }).find((e) => e.isFile());
const stage = path.join(await mkdtemp(path.join(tmpdir(), 'folio-sandbox-stage-')), 'reach');
await cp(path.join(SANDBOX, 'reach'), stage, { recursive: true });
await writeFile(
  path.join(stage, 'targets.json'),
  JSON.stringify({
    dataDir: s.folio.config.dataDir,
    dataFile: dataFile ? path.join(dataFile.parentPath, dataFile.name) : path.join(s.folio.config.dataDir, 'none'),
    otherPlugin: P('granted'),
    packageRoot: PACKAGE_ROOT,
    folioPid: process.pid,
    folioPort: Number(new URL(s.url).port),
  }),
);
await rename(stage, P('reach'));

// Folder -> namespace.
const ALL = {
  memory: 'sandbox_memory',
  cpu: 'sandbox_cpu',
  crash: 'sandbox_crash',
  reach: 'sandbox_reach',
  granted: 'sandbox_granted',
  flood: 'sandbox_flood',
};
const loaded = await eventually(
  status,
  (all) => Object.entries(ALL).every(([folder, ns]) => all.some((p) => p.dir === P(folder) && p.namespace === ns && p.state === 'loaded')),
  30_000,
);
for (const [folder, ns] of Object.entries(ALL)) {
  const st = loaded.find((p) => p.dir === P(folder));
  if (st?.namespace !== ns || st.state !== 'loaded') throw new Error(`${folder} did not load: ${JSON.stringify(st)}`);
}

/** Folio and a namespace of its own still answer. */
async function stillServing(t: Test): Promise<void> {
  t.equal((await req(s, 'GET', '/health')).status, 200, '/health answers');
  t.equal((await call(s, admin, 'admin', 'plugin_status')).status, 200, 'admin.plugin_status answers');
}

/** A failure with an error id (which the log has too) and the reason. */
function failed(t: Test, r: Reply, what: string, reason: RegExp): void {
  t.equal(r.status, 500, `${what}: 500`);
  t.match(r.text, reason, `${what}: says why`);
  const id = /error id: ([0-9a-f-]{36})/.exec(r.text)?.[1];
  t.ok(id, `${what}: with an error id`);
  t.ok(
    lines.some((l) => JSON.stringify(l).includes(id!)),
    `${what}: the error id is in the log`,
  );
}

/** The last crash plugin_status says a plugin had: a test that must not kill it leaves this as it was. */
const lastError = async (folder: string) => (await statusOf(folder))?.last_error;

/** The plugin's process was started again and answers. */
async function answersAgain(t: Test, ns: string, fn = 'ok'): Promise<void> {
  const r = await eventually(
    () => call(s, bob.token, ns, fn),
    (x) => x.status === 200,
    15_000,
  );
  t.equal(r.status, 200, `${ns} was started again and answers`);
}

t.test('memory: whatever takes it, only the plugin’s process dies', async (t) => {
  const limit = /out of memory \(heap limit 64 MB\)|over its 160 MB ceiling/;
  const cases: Array<[string, RegExp]> = [
    ['arrays', limit],
    ['push', limit],
    // Buffers are outside the heap: only the resident-memory ceiling sees them.
    ['buffer', /used \d+ MB of memory, over its 160 MB ceiling; its process was killed/],
    ['buffers', /used \d+ MB of memory, over its 160 MB ceiling; its process was killed/],
  ];
  for (const [fn, reason] of cases) {
    const r = await call(s, bob.token, 'sandbox_memory', fn);
    failed(t, r, fn, new RegExp(`sandbox_memory\\.${fn} did not finish: the plugin .*(${reason.source})`));
    await stillServing(t);
    const st = await statusOf('memory');
    t.equal(st?.state, 'degraded', `${fn}: plugin_status says degraded`);
    t.match(st?.last_error, reason, `${fn}: plugin_status says why`);
    await answersAgain(t, 'sandbox_memory');
  }
});

t.test('CPU: a prompt that never finishes rendering, and a timer that spins after its call answered', async (t) => {
  const client = new Client({ name: 'sandbox-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${bob.token}` } } }),
  );
  t.teardown(() => client.close());
  const rendered = await client.getPrompt({ name: 'sandbox_cpu__spin', arguments: {} }).catch((e: Error) => e);
  t.ok(rendered instanceof Error, 'the render fails');
  t.match((rendered as Error).message, /error id/i, 'with an error id');
  await stillServing(t);
  let st = await eventually(
    () => statusOf('cpu'),
    (p) => /CPU deadline/.test(p?.last_error ?? ''),
    10_000,
  );
  t.equal(st?.state, 'degraded');
  t.match(st?.last_error, /computed for more than 1000 ms without a pause \(the CPU deadline\); its process was killed/);
  await answersAgain(t, 'sandbox_cpu');

  // It spins 50 ms after answering; the idle stop (1 s after the answer) comes before the CPU deadline.
  const before = st?.last_error;
  const scheduled = await call(s, bob.token, 'sandbox_cpu', 'spin_later');
  t.equal(scheduled.text, 'scheduled', 'the call answered before the spin');
  st = await eventually(
    () => statusOf('cpu'),
    (p) => p?.last_error !== before,
    10_000,
  );
  t.not(st?.last_error, before, 'plugin_status says it was stopped again');
  t.match(
    st?.last_error,
    /computed for more than 1000 ms without a pause/,
    'no call was waiting: the heartbeat stopped it, not the idle stop',
  );
  await stillServing(t);
  await answersAgain(t, 'sandbox_cpu');
});

t.test('a plugin that ends its own process: its call fails with the reason, it is started again', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['exit', /exited \(code 3\)/],
    ['abort', /was killed \(SIGABRT\)/],
    ['timer', /ended on an uncaught exception: Error: thrown in a timer/],
    ['rejection', /ended on a promise rejection nobody handled: Error: rejected and never handled/],
  ];
  for (const [fn, reason] of cases) {
    const r = await call(s, bob.token, 'sandbox_crash', fn);
    failed(t, r, fn, new RegExp(`sandbox_crash\\.${fn} did not finish: the plugin ${reason.source}`));
    await stillServing(t);
    const st = await statusOf('crash');
    t.equal(st?.state, 'degraded', `${fn}: plugin_status says degraded`);
    t.match(st?.last_error, reason, `${fn}: plugin_status says why`);
    await answersAgain(t, 'sandbox_crash');
  }
});

t.test('signals: the plugin sees only its own PID namespace, and Folio survives what it sends', async (t) => {
  const r = await call(s, bob.token, 'sandbox_reach', 'signals');
  t.equal(r.status, 200, r.text.slice(0, 300));
  const got = r.json<{ pid: number; seen: number[]; folio: { code: string }; parent: { ok: boolean }; init: { ok: boolean } }>();
  // kill(pid, 0) answers for thread ids too: bubblewrap's init (1), the plugin's process (2) and its
  // threads. Outside the sandbox it would answer for every process of the machine's user.
  t.ok(got.pid <= 2, `the plugin is PID ${got.pid} of its own namespace`);
  t.ok(
    got.seen.length <= 16 && got.seen.every((p) => p < 64),
    `of PIDs 1-65536 it can signal ${got.seen.length}, all its own: ${got.seen.join(', ')}`,
  );
  t.equal(got.folio.code, 'ESRCH', "Folio's PID names no process it can see");
  t.comment(`SIGKILL to its parent: ${JSON.stringify(got.parent)}; SIGTERM to PID 1: ${JSON.stringify(got.init)}`);
  await stillServing(t);
  t.equal((await call(s, bob.token, 'sandbox_granted', 'env')).status, 200, 'another plugin answers');
  t.equal(await lastError('reach'), null, 'its own process was not ended by what it sent');
});

t.test("Folio's environment and files, the system's and another plugin's cannot be read", async (t) => {
  const r = await call(s, bob.token, 'sandbox_reach', 'read');
  t.equal(r.status, 200, r.text.slice(0, 300));
  const { env, ...reads } = r.json<{ env: Record<string, string> } & Record<string, { ok: boolean; code?: string; value?: unknown }>>();
  t.same(Object.keys(env).sort(), ['HOME', 'PWD', 'TMPDIR'], 'an environment of its own (no variable of Folio’s)');
  for (const [what, got] of Object.entries(reads)) {
    t.notOk(got.ok, `${what}: refused`);
    t.ok(['ERR_ACCESS_DENIED', 'ENOENT'].includes(got.code!), `${what}: ${got.code}`);
    t.equal(got.value, undefined, `${what}: nothing of it`);
  }
  t.notMatch(r.text, /root:|FOLIO_TEST/, 'nothing of it anywhere in the answer');
  await stillServing(t);
});

t.test('writes: only its scratch folder takes them', async (t) => {
  const r = await call(s, bob.token, 'sandbox_reach', 'write');
  t.equal(r.status, 200, r.text.slice(0, 300));
  const {
    scratch,
    tmpdir: scratchDir,
    ...writes
  } = r.json<Record<string, { ok: boolean; code?: string; value?: string }> & { tmpdir: string }>();
  for (const [what, got] of Object.entries(writes)) {
    t.notOk(got.ok, `${what}: refused`);
    t.equal(got.code, 'ERR_ACCESS_DENIED', `${what}: ERR_ACCESS_DENIED`);
  }
  for (const p of [
    P('reach', 'planted.txt'),
    P('planted.txt'),
    path.join(s.folio.config.dataDir, 'planted.txt'),
    P('granted', 'planted.txt'),
  ])
    t.notOk(existsSync(p), `nothing was written at ${p}`);
  t.same(scratch, { ok: true, value: 'written in scratch' }, 'os.tmpdir() is its scratch folder, and takes a file');
  t.match(scratchDir, /folio-plugin-reach-/);
  await stillServing(t);
});

t.test('processes and threads cannot be started; a fork bomb goes nowhere', async (t) => {
  const r = await call(s, bob.token, 'sandbox_reach', 'spawn');
  t.equal(r.status, 200, r.text.slice(0, 300));
  const { bomb, ...tries } = r.json<{ bomb: { started: number; codes: string[] } } & Record<string, { ok: boolean; code?: string }>>();
  for (const [what, got] of Object.entries(tries)) {
    t.notOk(got.ok, `${what}: refused`);
    t.equal(got.code, 'ERR_ACCESS_DENIED', `${what}: ERR_ACCESS_DENIED`);
  }
  t.same(bomb, { started: 0, codes: ['ERR_ACCESS_DENIED'] }, 'none of 200 processes started');
  await stillServing(t);
  t.equal((await call(s, bob.token, 'sandbox_reach', 'write')).status, 200, 'the plugin still answers');
});

t.test('network: none without a grant; with one, ctx.fetch reaches the granted host only', async (t) => {
  const r = await call(s, bob.token, 'sandbox_reach', 'network');
  t.equal(r.status, 200, r.text.slice(0, 300));
  const got = r.json<Record<string, { ok: boolean; code?: string; message?: string }>>();
  t.notOk(got.postgres!.ok, `a socket to 127.0.0.1:5432 fails (${got.postgres!.code})`);
  t.notOk(got.folio!.ok, `a socket to Folio's own port fails (${got.folio!.code})`);
  t.notOk(got.ctx_fetch!.ok);
  t.match(got.ctx_fetch!.message, /127\.0\.0\.1 is not among the hosts this plugin was granted \(none\)/, 'ctx.fetch names the host');
  t.notOk(got.fetch!.ok, 'fetch (not ctx.fetch) does not reach Folio either');

  const granted = await call(s, bob.token, 'sandbox_granted', 'get', { url: webUrl });
  t.same(granted.json(), { ok: true, status: 200, text: 'hello from the loopback' }, 'the granted host is reached');
  const other = await call(s, bob.token, 'sandbox_granted', 'get', { url: 'http://example.com/' });
  t.match(other.json(), { ok: false, message: /example\.com is not among the hosts this plugin was granted \(127\.0\.0\.1\)/ });
  const st = await statusOf('granted');
  t.same(st?.sandbox?.capabilities.granted.network, ['127.0.0.1'], 'plugin_status lists the grant');
  t.ok(
    st?.sandbox?.holds.some((h) => /network: granted for 127\.0\.0\.1/.test(h)),
    'and says the network is shared',
  );
  t.ok((await statusOf('reach'))?.sandbox?.holds.includes('no network (an empty network namespace)'), 'the ungranted one has none');
  await stillServing(t);
});

t.test('environment: a granted variable is given, one asked for and not granted is not', async (t) => {
  const r = await call(s, bob.token, 'sandbox_granted', 'env');
  t.equal(r.status, 200);
  const env = r.json<Record<string, string>>();
  t.equal(env.FOLIO_TEST_GRANTED, 'granted value');
  t.notOk('FOLIO_TEST_ASKED' in env, 'asked for, not granted: not given');
  t.same(Object.keys(env).sort(), ['FOLIO_TEST_GRANTED', 'HOME', 'PWD', 'TMPDIR'], 'nothing else of Folio’s');
  const st = await statusOf('granted');
  t.same(st?.sandbox?.capabilities.requested.env, ['FOLIO_TEST_GRANTED', 'FOLIO_TEST_ASKED'], 'plugin_status: requested');
  t.same(st?.sandbox?.capabilities.granted.env, ['FOLIO_TEST_GRANTED'], 'granted');
  t.same(st?.sandbox?.capabilities.missing.env, ['FOLIO_TEST_ASKED'], 'missing');
  await stillServing(t);
});

/** Calls a flooding function; Folio must answer meanwhile. What it answered, and how many messages it says it dropped. */
async function flood(t: Test, fn: string): Promise<{ r: Reply; dropped: number }> {
  const from = lines.length;
  const flooding = call(s, bob.token, 'sandbox_flood', fn);
  await stillServing(t);
  const r = await flooding;
  const dropped = lines.slice(from).find((l) => / were dropped: it sent them faster than Folio read them/.test(l.msg));
  return { r, dropped: (dropped?.dropped as number | undefined) ?? 0 };
}

t.test('floods of log lines and output: Folio keeps answering', async (t) => {
  const before = await lastError('flood');
  const logged = await flood(t, 'log');
  t.equal(logged.r.status, 200, `log: the flooding call answers (${logged.r.text.slice(0, 200)})`);
  t.equal(logged.r.text, '100000');
  // Dropped in the plugin's process (its output waiting unread) or in Folio (over the plugin's log lines a second).
  t.ok(floodLines + logged.dropped <= 100_000, `no line was logged twice (${floodLines} logged, ${logged.dropped} counted as dropped)`);
  t.ok(floodLines < 10_000, `ctx.log is logged within a rate: ${floodLines} of its 100 000 lines`);
  const printed = await flood(t, 'print');
  t.equal(printed.r.status, 200, `print: the flooding call answers (${printed.r.text.slice(0, 200)})`);
  const output = lines.filter((l) => l.msg === 'isolated plugin output').map((l) => String(l.output));
  const shown = output.join('').split('printed line').length - 1;
  t.ok(shown < 10_000, `stdout is logged within a rate: ${shown} of its 100 000 lines`);
  t.equal(await lastError('flood'), before, 'the process was not killed for either');
});

t.test('answers over limits.responseHardCapBytes are refused, with the reason', async (t) => {
  const before = await lastError('flood');
  for (const fn of ['big_text', 'big_bytes', 'big_json']) {
    const r = await call(s, bob.token, 'sandbox_flood', fn);
    t.equal(r.status, 413, `${fn}: 413 (${r.text.slice(0, 200)})`);
    t.match(
      r.text,
      new RegExp(
        `sandbox_flood\\.${fn} returned \\d+ bytes, over the 1048576 bytes any answer may have \\(limits\\.responseHardCapBytes\\)`,
      ),
    );
    await stillServing(t);
  }
  t.equal(await lastError('flood'), before, 'the process was not killed for any');
});

t.test('a log entry or a service request larger than Folio reads fails alone; the process goes on', async (t) => {
  const before = await lastError('flood');
  // The floods before spent this second's log lines (Folio logs a plugin's lines within a rate).
  await new Promise((r) => setTimeout(r, 1100));
  const r = await call(s, bob.token, 'sandbox_flood', 'big_log');
  t.equal(r.status, 200, r.text.slice(0, 300));
  t.equal(r.text, 'logged');
  t.ok(
    lines.some((l) => JSON.stringify(l).includes('(a log entry too large to send)')),
    'the log says an entry was too large',
  );
  const refused = await call(s, bob.token, 'sandbox_flood', 'big_service');
  t.equal(refused.status, 200, refused.text.slice(0, 300));
  t.match(
    refused.text,
    /^refused: a message of \d+ bytes is over the channel's limit of 3145728/,
    'the handler is told, its process is not killed',
  );
  t.equal(await lastError('flood'), before, 'the process was not killed for either');
  await stillServing(t);
});

t.test('maxConcurrentCalls: a third call at once is answered 429 plugin_busy', async (t) => {
  const holding = () => lines.filter((l) => l.msg === 'holding').length;
  const before = holding();
  const controllers = [new AbortController(), new AbortController()];
  const held = controllers.map((c) =>
    fetch(`${s.url}/curl/call/sandbox_flood/hold`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bob.token}`, 'content-type': 'application/json' },
      body: '{}',
      signal: c.signal,
    }).catch((e: Error) => e),
  );
  await eventually(
    async () => holding(),
    (n) => n >= before + 2,
    15_000,
  );
  const third = await call(s, bob.token, 'sandbox_flood', 'ok');
  t.equal(third.status, 429, `429 (plugin_busy): ${third.text}`);
  t.match(third.text, /sandbox_flood\.ok was not started: its plugin is already running 2 calls, as many as it may at once/);
  t.ok(third.headers.get('retry-after'), 'with Retry-After');
  await stillServing(t);
  for (const c of controllers) c.abort();
  await Promise.all(held);
  await answersAgain(t, 'sandbox_flood');
});

t.test('idle stop: a process with nothing to do is stopped, and the next call starts it again', async (t) => {
  t.equal((await call(s, bob.token, 'sandbox_granted', 'env')).status, 200);
  t.equal((await statusOf('granted'))?.sandbox?.running, true, 'running after a call');
  const stopped = await eventually(
    () => statusOf('granted'),
    (p) => p?.sandbox?.running === false,
    10_000,
  );
  t.equal(stopped?.sandbox?.running, false, 'stopped after a second with nothing to do');
  t.equal(stopped?.state, 'loaded', 'an idle stop is not a crash');
  const r = await call(s, bob.token, 'sandbox_granted', 'env');
  t.equal(r.status, 200, 'the next call is answered');
  t.equal(r.json<Record<string, string>>().FOLIO_TEST_GRANTED, 'granted value', 'by a process started as the first was');
  t.equal((await statusOf('granted'))?.sandbox?.running, true, 'running again');
});

// Last: until the leak below is gone, the flood leaves its process near the memory ceiling, and the
// next call to it would end it.
t.test('a flood of progress reports: Folio keeps answering', async (t) => {
  const progress = await flood(t, 'progress');
  t.equal(progress.r.status, 200, `the flooding call answers (${progress.r.text.slice(0, 200)})`, {
    todo: 'each message a plugin process sends (v8.serialize, channel.ts) grows its resident memory for good on Node 24, ~1 KB each: 100 000 take it past the 160 MB ceiling',
  });
  if (progress.r.status !== 200) failed(t, progress.r, 'progress', /over its 160 MB ceiling; its process was killed/);
  await stillServing(t);
});
