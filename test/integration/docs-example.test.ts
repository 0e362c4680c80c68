// The plugin walk-through of docs/plugins.md, over real HTTP: docs/examples is a plugins folder,
// and the bookmarks example behaves as the page says (help, skills, calls, per-user stores, the
// visible rule, per-user toggles, requires, hot reload). If this fails, fix the page or the example.
import t from 'tap';
import path from 'node:path';
import { readFile, writeFile } from 'node:fs/promises';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';
import { startTestServer, req, call, createUser, eventually } from '../helpers/server.ts';
// Type-only: keeps the example under `npm run typecheck` and the names below in step with it.
import type bookmarksPlugin from '../../docs/examples/bookmarks/index.ts';

type FunctionName = keyof (typeof bookmarksPlugin)['functions'];
const FUNCTIONS = ['add', 'list', 'remove', 'stats'] as const satisfies readonly FunctionName[];
// Fails to compile when the example gains a function this test does not know about.
const everyFunction: [Exclude<FunctionName, (typeof FUNCTIONS)[number]>] extends [never] ? true : false = true;
void everyFunction;

const EXAMPLES = path.join(PACKAGE_ROOT, 'docs/examples');
const EXAMPLE = path.join(EXAMPLES, 'bookmarks');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Bookmark {
  id: string;
  url: string;
  title: string;
  tags: string[];
  added_at: string;
}

const s = await startTestServer({ plugins: [EXAMPLES] });
t.teardown(() => s.close());
const admin = s.adminToken;
const ada = await createUser(s, 'ada@example.com');
const bob = await createUser(s, 'bob@example.com');
const gus = await createUser(s, 'gus@example.com', ['guest']);

const setAccess = async (userId: string, access: 'enabled' | 'disabled' | 'default') => {
  const r = await call(s, admin, 'admin', 'set_namespace_access', { user_id: userId, namespace: 'bookmarks', access });
  if (r.status !== 200) throw new Error(`set_namespace_access: ${r.status} ${r.text}`);
};

t.test('the example loads from docs/examples without errors', async (t) => {
  const r = await call(s, admin, 'admin', 'plugin_status');
  t.equal(r.status, 200);
  const mine = r.json<Array<Record<string, unknown>>>().find((p) => p.dir === EXAMPLE);
  t.match(mine, { namespace: 'bookmarks', version: '1.0.0', state: 'loaded', last_error: null }, 'version comes from package.json');
  const help = await req(s, 'GET', '/curl/help', { token: admin });
  t.notMatch(help.text, /PLUGIN ERRORS/);
});

t.test('help lists the namespace and every function, with signatures', async (t) => {
  const all = await req(s, 'GET', '/curl/help', { token: ada.token });
  t.equal(all.status, 200);
  t.match(all.text, /bookmarks\s+Your bookmarks: keep links with tags and find them again\.\s+\(4 functions\)/);
  const ns = await req(s, 'GET', '/curl/help/bookmarks', { token: ada.token });
  t.equal(ns.status, 200);
  for (const fn of FUNCTIONS) t.match(ns.text, new RegExp(`^  bookmarks\\.${fn}\\(`, 'm'), `${fn} is listed`);
  t.match(
    ns.text,
    'bookmarks.add(url: string, title?: string, tags?: string[]) -> { id: string, url: string, title: string, tags: string[], added_at: string }',
  );
  t.match(ns.text, 'bookmarks.list(tag?: string, limit?: integer = 20)');
  t.match(ns.text, 'Guides: GET /curl/skill/bookmarks');

  const add = await req(s, 'GET', '/curl/help/bookmarks/add', { token: ada.token });
  t.match(add.text, /url: string, required, at most 2048 characters/);
  t.match(add.text, /tags: string\[\], optional, at most 10 items, items unique\n {6}Tags to find it by later: lowercase letters/);
  t.match(add.text, 'No other arguments are accepted.');
  t.notMatch(add.text, /EXAMPLES/);
  const withExamples = await req(s, 'GET', '/curl/help/bookmarks/add?examples=true', { token: ada.token });
  t.match(
    withExamples.text,
    /EXAMPLES\n {2}# just the link\n {2}curl -s -X POST http:\/\/127\.0\.0\.1:\d+\/curl\/call\/bookmarks\/add .*-d '\{"url":"https:\/\/example\.com\/"\}'/,
  );

  const stats = await req(s, 'GET', '/curl/help/bookmarks/stats', { token: ada.token });
  t.equal(stats.status, 200, 'a function the caller may not call is still documented');
  t.match(stats.text, /REQUIRES\n {2}role admin/);
});

t.test('skills are served: listed, described, and verbatim', async (t) => {
  const all = await req(s, 'GET', '/curl/skill', { token: ada.token });
  t.match(all.text, /bookmarks\s+\(how_it_works, tagging\)/);
  const list = await req(s, 'GET', '/curl/skill/bookmarks', { token: ada.token });
  t.equal(list.status, 200);
  t.match(list.text, /how_it_works: What the bookmarks namespace keeps/);
  t.match(list.text, /tagging: How to tag bookmarks/);
  for (const name of ['how_it_works', 'tagging']) {
    const one = await req(s, 'GET', `/curl/skill/bookmarks/${name}`, { token: ada.token });
    t.equal(one.status, 200);
    t.match(one.headers.get('content-type'), /^text\/plain/);
    t.equal(
      one.text,
      await readFile(path.join(EXAMPLE, 'skills', `${name}.md`), 'utf8'),
      `${name}.md is served as written, front matter included`,
    );
  }
  t.equal((await req(s, 'GET', '/curl/skill/bookmarks/nope', { token: ada.token })).status, 404);
});

t.test('calls: add, list, remove', async (t) => {
  const first = await call(s, ada.token, 'bookmarks', 'add', { url: 'https://example.com/' });
  t.equal(first.status, 200);
  t.match(first.headers.get('content-type'), /^application\/json/);
  const a = first.json<Bookmark>();
  t.match(a, { id: UUID, url: 'https://example.com/', title: 'https://example.com/', tags: [] }, 'the title defaults to the URL');
  t.ok(!Number.isNaN(Date.parse(a.added_at)));

  const second = await call(s, ada.token, 'bookmarks', 'add', {
    url: 'https://nodejs.org/api/',
    title: 'Node.js API',
    tags: ['node', 'docs'],
  });
  const b = second.json<Bookmark>();
  t.same(b.tags, ['docs', 'node'], 'tags come back sorted');

  const again = await call(s, ada.token, 'bookmarks', 'add', { url: 'https://example.com/', title: 'Example', tags: ['misc'] });
  t.match(again.json(), { id: a.id, title: 'Example', tags: ['misc'] }, 'the same URL keeps its id, with the new title and tags');

  const list = await call(s, ada.token, 'bookmarks', 'list');
  t.equal(list.status, 200);
  const listed = list.json<{ bookmarks: Bookmark[]; total: number }>();
  t.equal(listed.total, 2);
  t.same(
    listed.bookmarks.map((x) => x.url),
    ['https://nodejs.org/api/', 'https://example.com/'],
    'newest first',
  );
  const docs = await call(s, ada.token, 'bookmarks', 'list', { tag: 'docs' });
  t.same(
    docs.json().bookmarks.map((x: Bookmark) => x.id),
    [b.id],
  );
  const one = await call(s, ada.token, 'bookmarks', 'list', { limit: 1 });
  t.match(one.json(), { total: 2 });
  t.equal(one.json().bookmarks.length, 1, 'limit caps the list; total still counts every match');

  const removed = await call(s, ada.token, 'bookmarks', 'remove', { id: a.id });
  t.same(removed.json(), { removed: true });
  const gone = await call(s, ada.token, 'bookmarks', 'remove', { id: a.id });
  t.same(gone.json(), { removed: false }, 'removing twice answers removed: false, not an error');
  t.equal((await call(s, ada.token, 'bookmarks', 'list')).json().total, 1);
});

t.test('arguments the function will not take are a 400 with the signature', async (t) => {
  const bad = await call(s, ada.token, 'bookmarks', 'add', { url: 'ftp://example.com/', colour: 'red' });
  t.equal(bad.status, 400);
  t.match(bad.text, /^400 Bad Request: bookmarks\.add will not take these arguments/);
  t.match(bad.text, /- colour: is not an argument of this function/);
  t.match(bad.text, /- url: must match pattern/);
  t.match(bad.text, /signature: bookmarks\.add\(url: string/);
  const tag = await call(s, ada.token, 'bookmarks', 'add', { url: 'https://example.org/', tags: ['Read Later'] });
  t.equal(tag.status, 400);
  t.match(tag.text, /tags\.0: must match pattern/);
  const limit = await call(s, ada.token, 'bookmarks', 'list', { limit: '5' });
  t.equal(limit.status, 400, 'no type coercion: "5" is not an integer');
  const user = await call(s, ada.token, 'bookmarks', 'list', { user: bob.id });
  t.equal(user.status, 400);
  t.match(user.text, /the server supplies the user/);
  const small = await call(s, ada.token, 'bookmarks', 'list', { max_bytes_llm: 20 });
  t.equal(small.status, 413, 'max_bytes_llm is taken by the server, not passed to the handler');
});

t.test('each user has their own store', async (t) => {
  const mine = (await call(s, ada.token, 'bookmarks', 'list')).json<{ bookmarks: Bookmark[]; total: number }>();
  t.equal(mine.total, 1);
  const adasId = mine.bookmarks[0]!.id;

  t.same((await call(s, bob.token, 'bookmarks', 'list')).json(), { bookmarks: [], total: 0 }, "bob does not see ada's bookmarks");
  t.same((await call(s, bob.token, 'bookmarks', 'remove', { id: adasId })).json(), { removed: false }, "bob cannot remove ada's bookmark");
  const bobs = (await call(s, bob.token, 'bookmarks', 'add', { url: 'https://nodejs.org/api/', tags: ['bob'] })).json<Bookmark>();
  t.not(bobs.id, adasId, 'the same URL is a separate bookmark for another user');
  const after = (await call(s, ada.token, 'bookmarks', 'list')).json<{ bookmarks: Bookmark[] }>();
  t.same(
    after.bookmarks.map((x) => x.id),
    [adasId],
    "ada's store is untouched",
  );
  t.same(after.bookmarks[0]!.tags, ['docs', 'node']);
});

t.test('the visible rule hides the namespace from guests: 404 everywhere, like a namespace that does not exist', async (t) => {
  const help = await req(s, 'GET', '/curl/help', { token: gus.token });
  t.notMatch(help.text, /bookmarks/);
  const who = await req(s, 'GET', '/curl/whoami', { token: gus.token });
  t.notMatch(who.text, /bookmarks/);
  t.match((await req(s, 'GET', '/curl/whoami', { token: ada.token })).text, /namespaces: .*bookmarks/);

  const hidden = await call(s, gus.token, 'bookmarks', 'list');
  const absent = await call(s, gus.token, 'nosuchns', 'list');
  t.equal(hidden.status, 404);
  t.equal(hidden.text.replace('bookmarks', 'X'), absent.text.replace('nosuchns', 'X'), 'same body as a namespace that does not exist');
  t.equal((await req(s, 'GET', '/curl/help/bookmarks', { token: gus.token })).status, 404);
  t.equal((await req(s, 'GET', '/curl/skill/bookmarks/how_it_works', { token: gus.token })).status, 404);
  t.notMatch((await req(s, 'GET', '/curl/skill', { token: gus.token })).text, /bookmarks/);
});

t.test('operators toggle the namespace per user with admin.set_namespace_access', async (t) => {
  await setAccess(gus.id, 'enabled');
  const on = await call(s, gus.token, 'bookmarks', 'list');
  t.equal(on.status, 200, "'enabled' beats the visible rule");
  t.same(on.json(), { bookmarks: [], total: 0 });
  t.match((await req(s, 'GET', '/curl/help', { token: gus.token })).text, /bookmarks/);
  const stats = await call(s, gus.token, 'bookmarks', 'stats');
  t.equal(stats.status, 403, "'enabled' shows the namespace; it grants no roles");

  await setAccess(ada.id, 'disabled');
  t.equal((await call(s, ada.token, 'bookmarks', 'list')).status, 404, "'disabled' hides it even when the rule would show it");
  t.notMatch((await req(s, 'GET', '/curl/help', { token: ada.token })).text, /bookmarks/);

  await setAccess(ada.id, 'default');
  await setAccess(gus.id, 'default');
  t.equal((await call(s, ada.token, 'bookmarks', 'list')).status, 200, "'default' returns to the rule");
  t.equal((await call(s, gus.token, 'bookmarks', 'list')).status, 404);

  const notAdmin = await call(s, ada.token, 'admin', 'set_namespace_access', {
    user_id: ada.id,
    namespace: 'bookmarks',
    access: 'enabled',
  });
  t.equal(notAdmin.status, 403, 'only admins toggle namespaces');
});

t.test('requires: a visible function the caller is not entitled to is a 403 that names what is missing', async (t) => {
  const r = await call(s, ada.token, 'bookmarks', 'stats');
  t.equal(r.status, 403);
  t.equal(r.text, '403 Forbidden: bookmarks.stats needs role admin, which your user does not have.\n');
  const ok = await call(s, admin, 'bookmarks', 'stats');
  t.equal(ok.status, 200);
  t.same(ok.json(), { users: 2, bookmarks: 2 }, 'ada and bob have one bookmark each');
});

t.test("catalogue: 'public' puts the namespace in the tokenless HTML catalogue", async (t) => {
  const r = await req(s, 'GET', '/curl/help', { headers: { accept: 'text/html' } });
  t.equal(r.status, 200);
  t.match(r.text, /bookmarks\.add\(url: string/, 'whatever the visible rule says: the catalogue has no caller');
});

t.test('dropped into a watched plugins folder, edits reload; a broken edit keeps the last good version', async (t) => {
  const h = await startTestServer({ copyToScratch: [EXAMPLE] });
  t.teardown(() => h.close());
  const dir = path.join(h.scratchPlugins, 'bookmarks');
  const entry = path.join(dir, 'index.ts');
  const original = await readFile(entry, 'utf8');
  const carol = await createUser(h, 'carol@example.com');
  t.equal((await call(h, carol.token, 'bookmarks', 'add', { url: 'https://example.com/' })).status, 200);

  const helpText = async () => (await req(h, 'GET', '/curl/help', { token: carol.token })).text;
  await writeFile(entry, original.replace('Your bookmarks: keep links', 'Your saved links: keep links'));
  t.match(await eventually(helpText, (v) => v.includes('Your saved links')), /Your saved links/, 'the edit is served');
  t.same(
    (await call(h, carol.token, 'bookmarks', 'list')).json(),
    { bookmarks: [], total: 0 },
    'a new version starts with empty module state',
  );

  await call(h, carol.token, 'bookmarks', 'add', { url: 'https://example.com/' });
  await writeFile(entry, original.replace("catalogue: 'public',", "catalogue: 'public', colour: 'red',"));
  const status = async () => {
    const r = await call(h, h.adminToken, 'admin', 'plugin_status');
    return r.json<Array<Record<string, unknown>>>().find((p) => p.dir === dir)!;
  };
  const failed = await eventually(status, (p) => p.state === 'stale');
  t.match(failed, { namespace: 'bookmarks', state: 'stale', version: '1.0.0', last_error: /unknown field 'colour'/ });
  const list = await call(h, carol.token, 'bookmarks', 'list');
  t.equal(list.status, 200, 'the last good version keeps serving');
  t.equal(list.json().total, 1, 'with its state');
  t.match(await helpText(), /Your saved links/);
  t.notMatch(await helpText(), /PLUGIN ERRORS/, 'plugin errors are not shown to other users');
  const adminHelp = await req(h, 'GET', '/curl/help', { token: h.adminToken });
  t.match(adminHelp.text, /PLUGIN ERRORS .*\n {2}.*bookmarks: unknown field 'colour'/);

  await writeFile(entry, original);
  t.match(await eventually(status, (p) => p.state === 'loaded'), { state: 'loaded', last_error: null }, 'fixed: loaded again');
  t.match(await helpText(), /Your bookmarks: keep links/);
});
