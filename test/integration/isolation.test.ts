// Isolated plugins, tried as a hostile author would: a module that never finishes loading, a
// handler that computes for 3 s, a visibility rule that never returns, a plugin that exhausts its
// heap. Folio keeps answering everyone else, the bad plugin's callers get a clear answer, and
// plugin_status says what happened. Also: the plugin contract crosses the worker boundary intact,
// and reloading an isolated plugin leaves no worker behind.
import t from 'tap';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { existsSync, readdirSync } from 'node:fs';
import { cp, mkdir, rm, writeFile } from 'node:fs/promises';
import { pino } from 'pino';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, req, call, createUser, eventually, FIXTURES } from '../helpers/server.ts';

const HOSTILE = path.join(FIXTURES, 'hostile');
const lines: Array<Record<string, any>> = [];
const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) });

const s = await startTestServer({
  // Loaded at start: the server must come up without it.
  copyToScratch: [path.join(HOSTILE, 'import_spin')],
  log,
  overrides: { isolation: { cpuTimeoutMs: 2000, heapMb: 64, importTimeoutMs: 4000 } },
});
t.teardown(() => s.close());
const admin = s.adminToken;
const bob = await createUser(s, 'bob@example.com');
const carol = await createUser(s, 'carol@example.com');
const P = (...p: string[]) => path.join(s.scratchPlugins, ...p);

interface Status {
  namespace: string | null;
  dir: string;
  state: string;
  isolation: string;
  last_error: string | null;
}
const status = async () => (await call(s, admin, 'admin', 'plugin_status')).json<Status[]>();
const statusOf = async (folder: string) => (await status()).find((p) => p.dir.endsWith(path.sep + folder));

async function install(folder: string, namespace: string): Promise<void> {
  // Copied once: copying over an installed plugin changes its files, and the reload that starts
  // would race the test's next call (a prompt rendered by a worker being replaced).
  if (!existsSync(P(folder))) await cp(path.join(HOSTILE, folder), P(folder), { recursive: true });
  await eventually(statusOf.bind(null, folder), (p) => p?.namespace === namespace && p.state === 'loaded', 15_000);
}

t.test('a module that never finishes loading: Folio starts without it and says why', async (t) => {
  const health = await req(s, 'GET', '/health');
  t.equal(health.status, 200, 'the server is up');
  const spin = await statusOf('import_spin');
  t.equal(spin?.state, 'failed');
  t.equal(spin?.isolation, 'process', 'a plugin outside the first-party folder is isolated by default');
  t.match(spin?.last_error, /did not finish within 4000 ms/);
  const logged = lines.filter((l) => l.dir === P('import_spin') && /failed to load/.test(l.msg));
  t.equal(logged.length, 1, 'one log line');
  t.match(logged[0]!.err, /4000 ms/, 'naming the folder (dir) and the deadline');
  t.equal((await status()).find((p) => p.namespace === 'admin')?.isolation, 'in-process', "Folio's own plugins run in-process");
  t.equal((await call(s, bob.token, 'import_spin', 'hello')).status, 404);
  await rm(P('import_spin'), { recursive: true });
});

t.test('the plugin contract crosses the worker boundary', async (t) => {
  await install('services', 'crossing');
  const made = await call(s, bob.token, 'crossing', 'write_and_read', { title: 'Isolated' });
  t.equal(made.status, 200, made.text);
  t.match(made.json(), { title: 'Isolated', user: 'bob@example.com' }, 'ctx.services acted as the caller');
  const own = await req(s, 'GET', `/api/v1/notetaker/notes/${made.json<{ id: string }>().id}`, { token: bob.token });
  t.equal(own.status, 200, 'the note is really there, and it is bob’s');
  t.equal((await req(s, 'GET', `/api/v1/notetaker/notes/${made.json<{ id: string }>().id}`, { token: carol.token })).status, 404);
  const missing = await call(s, bob.token, 'crossing', 'missing');
  t.equal(missing.status, 404, 'a service NotFound reached the handler as a NotFound, and its NotFound answers 404');
  t.match(missing.text, /still not found/);
  const refused = await call(s, bob.token, 'crossing', 'refuse');
  t.equal(refused.status, 400);
  t.match(refused.text, /n must be even/);
  const file = await call(s, bob.token, 'crossing', 'file');
  t.equal(file.status, 200);
  t.equal(file.headers.get('content-type'), 'text/csv');
  t.equal(file.text, 'a,b\n1,2\n');
  const bad = await call(s, bob.token, 'crossing', 'write_and_read', { title: 3 });
  t.equal(bad.status, 400, 'arguments are validated on Folio’s side, as for any plugin');
});

t.test("an isolated plugin's prompts are offered over MCP and rendered in its worker", async (t) => {
  await install('services', 'crossing');
  const client = new Client({ name: 'isolation-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${bob.token}` } } }),
  );
  t.teardown(() => client.close());
  const listed = (await client.listPrompts()).prompts.filter((p) => p.name.startsWith('crossing__'));
  t.same(
    listed.map((p) => p.name),
    ['crossing__broken', 'crossing__greet', 'crossing__throws'],
  );
  t.match(
    listed.find((p) => p.name === 'crossing__greet'),
    {
      title: 'Greet someone',
      description: 'Writes a greeting for the caller.',
      arguments: [{ name: 'who', description: 'Whom to greet', required: true }],
    },
  );
  const got = await client.getPrompt({ name: 'crossing__greet', arguments: { who: 'Ada' } });
  const text = (got.messages[0]?.content as { text: string }).text;
  t.match(
    text,
    /^Greet Ada on behalf of bob@example\.com, then call crossing__write_and_read/,
    'rendered with the caller and MCP tool names',
  );
  await t.rejects(
    client.getPrompt({ name: 'crossing__greet', arguments: {} }),
    /who/,
    'a missing required argument is refused before the worker',
  );
  const broken = client.getPrompt({ name: 'crossing__broken', arguments: {} });
  await t.rejects(broken, /error id/i, 'a render that is not text is a failure with an error id');
  const thrown = await client.getPrompt({ name: 'crossing__throws', arguments: {} }).catch((e: Error) => e);
  t.ok(thrown instanceof Error);
  t.notMatch((thrown as Error).message, /secret cause/, 'the cause stays in the log');
  t.equal((await call(s, bob.token, 'crossing', 'write_and_read', { title: 'still there' })).status, 200, 'the worker still serves');
});

t.test('a handler that computes for 3 s: everyone else is answered meanwhile; its caller gets the timeout answer', async (t) => {
  await install('handler_spin', 'spinner');
  const order: string[] = [];
  const spinning = call(s, bob.token, 'spinner', 'spin').then((r) => {
    order.push('spin');
    return r;
  });
  // The handler has started computing once its log line arrives.
  await eventually(
    async () => lines.some((l) => l.msg === 'spin started'),
    (v) => v,
    10_000,
  );
  const health = await req(s, 'GET', '/health');
  order.push('health');
  const other = await call(s, carol.token, 'crossing', 'write_and_read', { title: 'Meanwhile' });
  order.push('other user');
  t.equal(health.status, 200);
  t.equal(other.status, 200);
  const spun = await spinning;
  t.same(order, ['health', 'other user', 'spin'], '/health and another user’s call were answered while the handler computed');
  t.equal(spun.status, 500);
  t.match(spun.text, /spinner\.spin did not finish: the plugin computed for more than 2000 ms without a pause/);
  const st = await statusOf('handler_spin');
  t.equal(st?.state, 'degraded');
  t.match(st?.last_error, /CPU deadline/);
  const again = await eventually(
    () => call(s, bob.token, 'spinner', 'ok'),
    (r) => r.status === 200,
    10_000,
  );
  t.equal(again.text, 'ok', 'its worker was replaced and serves again');
  await rm(P('handler_spin'), { recursive: true });
});

t.test('a visibility rule that never returns hides its namespace and is stopped', async (t) => {
  await cp(path.join(HOSTILE, 'visible_spin'), P('visible_spin'), { recursive: true });
  await eventually(statusOf.bind(null, 'visible_spin'), (p) => p?.namespace === 'hidden_spin', 15_000);
  const help = await req(s, 'GET', '/curl/help', { token: bob.token });
  t.equal(help.status, 200, 'help answers');
  t.notMatch(help.text, /hidden_spin/, 'the namespace is hidden from the caller');
  t.match(help.text, /crossing/, 'others are listed');
  t.equal((await call(s, bob.token, 'hidden_spin', 'hello')).status, 404);
  const st = await eventually(statusOf.bind(null, 'visible_spin'), (p) => p?.state !== 'loaded', 20_000);
  t.match(st?.last_error, /CPU deadline/, 'its worker was stopped for computing too long');
  await rm(P('visible_spin'), { recursive: true });
});

t.test('a plugin that exhausts its heap: its worker dies, not Folio', async (t) => {
  await install('heap_hog', 'hog');
  const r = await call(s, bob.token, 'hog', 'grow');
  t.equal(r.status, 500);
  t.match(r.text, /hog\.grow did not finish: the plugin ran out of memory \(heap limit 64 MB\)/);
  t.equal((await req(s, 'GET', '/health')).status, 200, 'Folio is up');
  t.equal((await call(s, carol.token, 'crossing', 'refuse')).status, 400, 'other namespaces answer');
  const st = await statusOf('heap_hog');
  t.equal(st?.state, 'degraded');
  t.match(st?.last_error, /out of memory/);
  const again = await eventually(
    () => call(s, bob.token, 'hog', 'ok'),
    (x) => x.status === 200,
    10_000,
  );
  t.equal(again.text, 'ok, holding 0 blocks', 'the restarted worker starts from an empty heap');
  await rm(P('heap_hog'), { recursive: true });
});

t.test('a plugin that keeps crashing is disabled, with the reason, until its files change', async (t) => {
  await install('heap_hog', 'hog');
  for (let i = 0; i < 5; i++) {
    await eventually(
      () => call(s, bob.token, 'hog', 'ok'),
      (x) => x.status === 200,
      10_000,
    );
    await call(s, bob.token, 'hog', 'grow');
  }
  const st = await eventually(statusOf.bind(null, 'heap_hog'), (p) => p?.state === 'failed', 10_000);
  t.match(st?.last_error, /disabled after 5 crashes/);
  t.equal((await call(s, bob.token, 'hog', 'ok')).status, 404, 'no longer served');
  await writeFile(
    P('heap_hog', 'index.mjs'),
    `export default { namespace: 'hog', description: 'Fixed.', functions: { ok: { description: 'x', handler: () => 'fixed' } } };`,
  );
  const fixed = await eventually(
    () => call(s, bob.token, 'hog', 'ok'),
    (x) => x.status === 200,
    15_000,
  );
  t.equal(fixed.text, 'fixed');
  await rm(P('heap_hog'), { recursive: true });
});

t.test('reloading an isolated plugin leaves no worker and no memory behind', async (t) => {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  const threads = () => readdirSync('/proc/self/task').length;
  // Each version holds 1 MB and, as a hostile author would, keeps it on globalThis "for later":
  // in-process, every version's ballast would pile up there; a version's worker starts empty.
  const version = (v: number) =>
    `const ballast = ${JSON.stringify('z'.repeat(1_000_000))} + ${v};\n(globalThis.__kept ??= []).push(ballast);\nexport default { namespace: 'reloaded', description: 'v${v}', functions: { v: { description: 'Which version.', handler: () => 'v${v}:' + globalThis.__kept.length } } };`;
  await mkdir(P('reloaded'), { recursive: true });
  const reloadTo = async (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      await writeFile(P('reloaded', 'index.mjs'), version(i));
      await s.folio.registry.reload(P('reloaded'));
    }
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 20));
      gc();
    }
    return process.memoryUsage().heapUsed;
  };
  await reloadTo(0, 1);
  t.equal((await call(s, bob.token, 'reloaded', 'v')).text, 'v0:1');
  const before = threads();
  const base = await reloadTo(1, 6);
  const after = await reloadTo(6, 46);
  t.equal((await call(s, bob.token, 'reloaded', 'v')).text, 'v45:1', 'the 46th version holds one ballast, not 46');
  const grownMB = (after - base) / 1e6;
  t.ok(
    grownMB < 15,
    `40 reloads of an isolated plugin holding 1 MB grew Folio's heap by ${grownMB.toFixed(1)} MB (kept versions would be 40+ MB)`,
  );
  const left = await eventually(
    async () => threads(),
    (n) => n <= before,
    5000,
  );
  t.ok(left <= before, `threads after 45 reloads: ${left}, before: ${before} (one worker per version kept would be ${before + 45})`);
  await rm(P('reloaded'), { recursive: true });
});

t.test('a call in flight on an isolated plugin finishes on the version it started with', async (t) => {
  const slow = (v: string) =>
    `export default { namespace: 'inflight', description: 'Slow.', functions: { run: { description: 'Waits, then says its version.', handler: () => new Promise((r) => setTimeout(() => r('${v}'), 600)) } } };`;
  await mkdir(P('inflight'), { recursive: true });
  await writeFile(P('inflight', 'index.mjs'), slow('v1'));
  await s.folio.registry.reload(P('inflight'));
  const pending = call(s, bob.token, 'inflight', 'run');
  await new Promise((r) => setTimeout(r, 100));
  await writeFile(P('inflight', 'index.mjs'), slow('v2'));
  await s.folio.registry.reload(P('inflight'));
  const first = await pending;
  t.equal(first.status, 200);
  t.equal(first.text, 'v1', 'the old worker served its call to the end');
  t.equal((await call(s, bob.token, 'inflight', 'run')).text, 'v2');
  await rm(P('inflight'), { recursive: true });
});
