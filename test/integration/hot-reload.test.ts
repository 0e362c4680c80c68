// Hot reload over real HTTP and a real file system: add, deep edit, remove, broken-then-fixed,
// bad manifests, duplicates, atomic swaps for calls in flight, debouncing, and bounded memory.
import t from 'tap';
import path from 'node:path';
import vm from 'node:vm';
import v8 from 'node:v8';
import { mkdir, writeFile, rm, cp, readFile } from 'node:fs/promises';
import { startTestServer, req, call, createUser, eventually, FIXTURES } from '../helpers/server.ts';

// In-process plugins here (the burst test counts loads on this thread); test/integration/isolation.test.ts
// covers reloading isolated plugins.
const s = await startTestServer({
  copyToScratch: [path.join(FIXTURES, 'typed/greeter')],
  overrides: { isolation: { mode: 'in-process' } },
});
t.teardown(() => s.close());
const admin = s.adminToken;
const bob = await createUser(s, 'bob@example.com');
const P = (...p: string[]) => path.join(s.scratchPlugins, ...p);

async function plugin(name: string, source: string): Promise<void> {
  await mkdir(P(name), { recursive: true });
  await writeFile(P(name, 'index.mjs'), source);
}

const versioned = (ns: string, version: string, extra = '') => `
${extra}
export default {
  namespace: '${ns}',
  description: 'Version ${version}.',
  functions: { version: { description: 'Which version answers.', handler: () => '${version}' } },
};`;

const answer =
  (ns: string, fn = 'version', token = bob.token) =>
  async () => {
    const r = await call(s, token, ns, fn);
    return `${r.status} ${r.text}`;
  };

t.test('add: a new plugin folder appears without a restart', async (t) => {
  t.equal((await call(s, bob.token, 'fresh', 'version')).status, 404);
  await plugin('fresh', versioned('fresh', 'one'));
  t.equal(await eventually(answer('fresh'), (v) => v === '200 one'), '200 one');
  const help = await req(s, 'GET', '/curl/help', { token: bob.token });
  t.match(help.text, /fresh\s+Version one\./);
});

t.test('edit: a change to the entry is served', async (t) => {
  await plugin('fresh', versioned('fresh', 'two'));
  t.equal(await eventually(answer('fresh'), (v) => v === '200 two'), '200 two');
});

t.test('deep edit: a change to a file the entry imports is served', async (t) => {
  const hello = async () => {
    const r = await call(s, bob.token, 'greeter', 'hello', { name: 'Ada' });
    return `${r.status} ${r.text}`;
  };
  t.equal(await hello(), '200 Hello, Ada!');
  const lib = P('greeter', 'lib', 'greeting.ts');
  await writeFile(lib, (await readFile(lib, 'utf8')).replace('Hello', 'Good morning'));
  t.equal(await eventually(hello, (v) => v === '200 Good morning, Ada!'), '200 Good morning, Ada!');
});

t.test('skills of a plugin reload with it', async (t) => {
  const skill = async () => (await req(s, 'GET', '/curl/skill/greeter', { token: bob.token })).text;
  await writeFile(P('greeter', 'skills', 'etiquette.md'), '---\nname: etiquette\ndescription: Be kind.\n---\nBe kind.\n');
  t.match(await eventually(skill, (v) => v.includes('etiquette')), /etiquette: Be kind\./);
});

t.test('broken, then fixed: the last good version keeps serving and admins see the error', async (t) => {
  const entry = P('greeter', 'index.ts');
  const good = await readFile(entry, 'utf8');
  await writeFile(entry, good.replace('export default definePlugin({', 'export default definePlugin({ ,,, '));
  const status = async () =>
    (await call(s, admin, 'admin', 'plugin_status')).json<Array<{ namespace: string; state: string; last_error: string | null }>>();
  const failed = await eventually(status, (all) => all.some((p) => p.namespace === 'greeter' && p.state === 'stale'));
  const g = failed.find((p) => p.namespace === 'greeter')!;
  t.equal(g.state, 'stale', 'stale: the reload failed, the previous version serves');
  t.match(g.last_error, /index\.ts:\d+:\d+/, 'the error says where');
  const r = await call(s, bob.token, 'greeter', 'hello', { name: 'Ada' });
  t.equal(r.status, 200, 'the last good version still answers');
  t.equal(r.text, 'Good morning, Ada!');
  const adminHelp = await req(s, 'GET', '/curl/help', { token: admin });
  t.match(adminHelp.text, /PLUGIN ERRORS[\s\S]*greeter/);
  const bobHelp = await req(s, 'GET', '/curl/help', { token: bob.token });
  t.notMatch(bobHelp.text, /PLUGIN ERRORS/, 'errors are for admins');
  t.equal((await call(s, bob.token, 'admin', 'plugin_status')).status, 403);

  await writeFile(entry, good.replace("description: 'Say hello to someone.'", "description: 'Say hello, fixed.'"));
  const fixed = await eventually(status, (all) => all.some((p) => p.namespace === 'greeter' && p.state === 'loaded'));
  t.equal(fixed.find((p) => p.namespace === 'greeter')!.last_error, null);
  const help = await req(s, 'GET', '/curl/help/greeter/hello', { token: bob.token });
  t.match(help.text, /Say hello, fixed\./);
});

t.test('bad plugins never take down the server or other namespaces', async (t) => {
  for (const name of ['syntax', 'schema', 'unknown_field', 'bad_skill'])
    await cp(path.join(FIXTURES, 'bad', name), P(name), { recursive: true });
  const status = async () =>
    (await call(s, admin, 'admin', 'plugin_status')).json<Array<{ dir: string; state: string; last_error: string | null }>>();
  const expected: Record<string, RegExp> = {
    syntax: /index\.mjs:\d+/,
    schema: /functions\.f\.args is not a valid JSON Schema/,
    unknown_field: /unknown field 'handlr'/,
    bad_skill: /name 'not_guide' must match the file name 'guide'/,
  };
  // A folder seen half-copied fails first for a missing entry; wait for each one's own error.
  const all = await eventually(status, (a) =>
    Object.entries(expected).every(([n, re]) => a.some((p) => p.dir.endsWith(n) && p.state === 'failed' && re.test(p.last_error ?? ''))),
  );
  const err = (n: string) => all.find((p) => p.dir.endsWith(n))!.last_error;
  for (const [n, re] of Object.entries(expected)) t.match(err(n), re);
  for (const ns of ['syntax', 'schema', 'unknown_field', 'bad_skill'])
    t.equal((await req(s, 'GET', `/curl/help/${ns}`, { token: admin })).status, 404, `${ns} not served`);
  t.equal(await answer('fresh')(), '200 two', 'other namespaces still answer');
  for (const name of ['syntax', 'schema', 'unknown_field', 'bad_skill']) await rm(P(name), { recursive: true });
});

t.test('a duplicate namespace is refused; the first holder keeps it', async (t) => {
  await plugin('zz_copy', versioned('fresh', 'impostor'));
  const status = async () =>
    (await call(s, admin, 'admin', 'plugin_status')).json<Array<{ dir: string; state: string; last_error: string | null }>>();
  const all = await eventually(status, (a) => a.some((p) => p.dir.endsWith('zz_copy') && p.state === 'failed'));
  t.match(all.find((p) => p.dir.endsWith('zz_copy'))!.last_error, /duplicate namespace 'fresh'/);
  t.equal(await answer('fresh')(), '200 two');
  await rm(P('zz_copy'), { recursive: true });
});

t.test('remove: the namespace disappears (404), other namespaces stay', async (t) => {
  await rm(P('fresh'), { recursive: true });
  t.match(await eventually(answer('fresh'), (v) => v.startsWith('404')), /^404 /);
  const gone = await req(s, 'GET', '/curl/help', { token: bob.token });
  t.notMatch(gone.text, /\bfresh\b/);
  t.equal((await call(s, bob.token, 'greeter', 'hello', { name: 'Ada' })).status, 200);
});

t.test('a call in flight finishes on the version it started with', async (t) => {
  const slow = (v: string) => `
export default {
  namespace: 'inflight',
  description: 'Slow.',
  functions: { run: { description: 'Waits, then says its version.', handler: () => new Promise((r) => setTimeout(() => r('${v}'), 600)) } },
};`;
  await plugin('inflight', slow('v1'));
  await eventually(answer('inflight', 'run'), (v) => v === '200 v1');
  const pending = call(s, bob.token, 'inflight', 'run');
  await new Promise((r) => setTimeout(r, 50));
  await plugin('inflight', slow('v2'));
  await eventually(answer('inflight', 'run'), (v) => v === '200 v2');
  const first = await pending;
  t.equal(first.status, 200);
  t.equal(first.text, 'v1');
});

t.test('a burst of writes is debounced into few reloads, and the last one wins', async (t) => {
  const g = globalThis as { __burstLoads?: number };
  g.__burstLoads = 0;
  // Written back to back: on a loaded machine a write can take longer than the debounce window
  // (50 ms here), so how many loads a burst becomes depends on the machine; fewer than the writes
  // it must be.
  for (let i = 1; i <= 10; i++)
    await plugin('burst', versioned('burst', `b${i}`, 'globalThis.__burstLoads = (globalThis.__burstLoads ?? 0) + 1;'));
  t.equal(await eventually(answer('burst'), (v) => v === '200 b10'), '200 b10');
  await new Promise((r) => setTimeout(r, 300));
  t.ok(g.__burstLoads < 10, `10 writes became ${g.__burstLoads} loads`);
  t.equal(await answer('burst')(), '200 b10');
});

t.test('standalone skills folders hot-reload too', async (t) => {
  const list = async () => (await req(s, 'GET', '/curl/skill', { token: bob.token })).text;
  await mkdir(path.join(s.scratchSkills, 'house'), { recursive: true });
  await writeFile(path.join(s.scratchSkills, 'house', 'style.md'), '---\nname: style\ndescription: How we write.\n---\nShort.\n');
  t.match(await eventually(list, (v) => v.includes('house')), /house\s+\(style\)/);
  const one = await req(s, 'GET', '/curl/skill/house/style', { token: bob.token });
  t.match(one.text, /Short\./);
  await rm(path.join(s.scratchSkills, 'house'), { recursive: true });
  t.notMatch(await eventually(list, (v) => !v.includes('house')), /house/);
});

t.test('an old version is garbage once replaced: memory stays bounded', async (t) => {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  const body = (v: number) =>
    versioned('leak', `v${v}`, `const ballast = ${JSON.stringify('x'.repeat(100_000))}; globalThis.__keep = ballast.length;`);
  await plugin('leak', body(0));
  await s.folio.registry.reload(P('leak'));
  // Only a weak reference to the first version: nothing in this test keeps it alive.
  const ref = (() => new WeakRef(s.folio.registry.snapshot.namespaces.get('leak')!.functions.get('version')!.handler))();
  for (let i = 1; i <= 5; i++) {
    await plugin('leak', body(i));
    await s.folio.registry.reload(P('leak'));
  }
  t.equal(await answer('leak')(), '200 v5');
  let collected = false;
  for (let i = 0; i < 20 && !collected; i++) {
    await new Promise((r) => setTimeout(r, 20));
    gc();
    collected = ref.deref() === undefined;
  }
  t.ok(collected, 'the first version of the plugin was garbage-collected');

  // And nothing else keeps old versions either (V8's compilation cache would keep every source).
  const megabyte = (v: number) =>
    versioned('leak', `m${v}`, `const ballast = ${JSON.stringify('y'.repeat(1_000_000) + v)}; globalThis.__keep = ballast.length;`);
  const heapAfter = async (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      await plugin('leak', megabyte(i));
      await s.folio.registry.reload(P('leak'));
    }
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 20));
      gc();
    }
    return process.memoryUsage().heapUsed;
  };
  const base = await heapAfter(0, 5);
  const after = await heapAfter(5, 45);
  t.equal(await answer('leak')(), '200 m44');
  const grownMB = (after - base) / 1e6;
  t.ok(grownMB < 15, `40 reloads of a plugin with a 1 MB constant grew the heap by ${grownMB.toFixed(1)} MB (unbounded would be 40+ MB)`);
});

t.test('when the holder of a namespace goes, a folder that lost the clash takes it', async (t) => {
  await plugin('dup_one', versioned('dupe', 'one'));
  t.equal(await eventually(answer('dupe'), (v) => v === '200 one'), '200 one');
  await plugin('dup_two', versioned('dupe', 'two'));
  const status = async () => (await call(s, admin, 'admin', 'plugin_status')).json<Array<{ dir: string; state: string }>>();
  await eventually(status, (a) => a.some((p) => p.dir.endsWith('dup_two') && p.state === 'failed'));
  t.equal(await answer('dupe')(), '200 one');
  await rm(P('dup_one'), { recursive: true });
  t.equal(await eventually(answer('dupe'), (v) => v === '200 two'), '200 two');
  const after = await status();
  t.equal(after.find((p) => p.dir.endsWith('dup_two'))!.state, 'loaded');
});
