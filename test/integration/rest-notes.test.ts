// The notetaker group of the REST API over real HTTP and a real database: every endpoint, the ETag
// flow, section edits, trash, revisions, tags, search, reports, cursors and limit clamping. Every
// answer is also checked against the server's own OpenAPI document (rest-support.ts).
import t from 'tap';
import { startTestServer, createUser, req } from '../helpers/server.ts';
import { api, spec } from './rest-support.ts';

const s = await startTestServer();
t.teardown(() => s.close());
const alice = await createUser(s, 'alice@example.com');
const tok = { token: alice.token };

async function create(body: Record<string, unknown>) {
  const r = await api(s, 'POST', '/notetaker/notes', { ...tok, body });
  if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
  return r.json();
}

t.test('POST creates: 201, Location, ETag, the note', async (t) => {
  const r = await api(s, 'POST', '/notetaker/notes', {
    ...tok,
    body: { title: ' Standup ', body: '# Notes\n\nhello\n', tags: ['Work', 'daily'] },
  });
  t.equal(r.status, 201);
  const note = r.json();
  t.match(note, { title: 'Standup', body: '# Notes\n\nhello\n', tags: ['work', 'daily'], version: 1, source: 'manual', deleted_at: null });
  t.equal(r.headers.get('etag'), '"1"');
  t.equal(r.headers.get('location'), `/api/v1/notetaker/notes/${note.id}`);
  t.equal(r.headers.get('cache-control'), 'no-store');
  const got = await api(s, 'GET', `/notetaker/notes/${note.id}`, tok);
  t.equal(got.status, 200);
  t.same(got.json(), note);
  t.equal(got.headers.get('etag'), '"1"');
});

t.test('a note body of exactly 1 MiB can be sent in one create (its JSON is larger); one byte more is a 400 naming body', async (t) => {
  // Lines of Markdown with quotes: JSON escapes each newline and quote, so the request is well over 1 MiB.
  const line = '- "quoted" item\n';
  const full = line.repeat(Math.floor((1024 * 1024) / line.length));
  const body = full + 'x'.repeat(1024 * 1024 - Buffer.byteLength(full));
  t.equal(Buffer.byteLength(body), 1024 * 1024);
  t.ok(Buffer.byteLength(JSON.stringify({ title: 'big', body })) > 1024 * 1024, 'the request is over 1 MiB');
  const r = await api(s, 'POST', '/notetaker/notes', { ...tok, body: { title: 'big', body } });
  t.equal(r.status, 201, r.text.slice(0, 200));
  t.equal(r.json().body.length, body.length);
  const over = await api(s, 'POST', '/notetaker/notes', { ...tok, body: { title: 'big', body: body + 'y' } });
  t.equal(over.status, 400);
  t.match(over.json().errors[0], { path: '/body' });
});

t.test('GET with If-None-Match of the current version is 304', async (t) => {
  const note = await create({ title: 'cache me' });
  const same = await api(s, 'GET', `/notetaker/notes/${note.id}`, { ...tok, headers: { 'if-none-match': '"1"' } });
  t.equal(same.status, 304);
  t.equal(same.text, '');
  const stale = await api(s, 'GET', `/notetaker/notes/${note.id}`, { ...tok, headers: { 'if-none-match': '"9"' } });
  t.equal(stale.status, 200);
});

t.test('ETag flow: PATCH fields with If-Match or expected_version; stale -> 412 with the current note; none -> 428', async (t) => {
  const note = await create({ title: 'Plan', body: 'v1 body', tags: ['a'] });
  const ok = await api(s, 'PATCH', `/notetaker/notes/${note.id}`, {
    ...tok,
    headers: { 'if-match': '"1"' },
    body: { title: 'Plan B', tags: ['b'] },
  });
  t.equal(ok.status, 200);
  t.match(ok.json(), { title: 'Plan B', body: 'v1 body', tags: ['b'], version: 2 });
  t.equal(ok.headers.get('etag'), '"2"');

  const viaBody = await api(s, 'PATCH', `/notetaker/notes/${note.id}`, { ...tok, body: { expected_version: 2, body: 'v3 body' } });
  t.equal(viaBody.status, 200);
  t.equal(viaBody.json().version, 3);

  const weak = await api(s, 'PATCH', `/notetaker/notes/${note.id}`, {
    ...tok,
    headers: { 'if-match': 'W/"3"' },
    body: { title: 'weak ok' },
  });
  t.equal(weak.status, 200, 'W/"3" is taken as "3"');

  const stale = await api(s, 'PATCH', `/notetaker/notes/${note.id}`, {
    ...tok,
    headers: { 'if-match': '"1"' },
    body: { title: 'lost update' },
  });
  t.equal(stale.status, 412);
  const p = stale.json();
  t.equal(p.code, 'precondition_failed');
  t.match(p.current, { id: note.id, version: 4, title: 'weak ok', body: 'v3 body' });
  t.equal(stale.headers.get('etag'), '"4"');

  const never = await api(s, 'PATCH', `/notetaker/notes/${note.id}`, { ...tok, headers: { 'if-match': '"abc"' }, body: { title: 'x' } });
  t.equal(never.status, 412, 'a tag that is no version never matches');
  t.equal(never.json().current.version, 4);

  const none = await api(s, 'PATCH', `/notetaker/notes/${note.id}`, { ...tok, body: { title: 'blind write' } });
  t.equal(none.status, 428);
  t.equal(none.json().code, 'precondition_required');
  const star = await api(s, 'PATCH', `/notetaker/notes/${note.id}`, {
    ...tok,
    headers: { 'if-match': '*' },
    body: { title: 'blind write' },
  });
  t.equal(star.status, 428);

  const disagree = await api(s, 'PATCH', `/notetaker/notes/${note.id}`, {
    ...tok,
    headers: { 'if-match': '"4"' },
    body: { expected_version: 3, title: 'x' },
  });
  t.equal(disagree.status, 400);
  t.equal(disagree.json().code, 'bad_request');

  const after = await api(s, 'GET', `/notetaker/notes/${note.id}`, tok);
  t.match(after.json(), { title: 'weak ok', version: 4 }, 'nothing was overwritten by the refused writes');
});

t.test('PUT replaces title, body and tags; needs a version', async (t) => {
  const note = await create({ title: 'Old', body: 'old', tags: ['x'] });
  const none = await api(s, 'PUT', `/notetaker/notes/${note.id}`, { ...tok, body: { title: 'New', body: 'new', tags: [] } });
  t.equal(none.status, 428);
  const ok = await api(s, 'PUT', `/notetaker/notes/${note.id}`, {
    ...tok,
    headers: { 'if-match': '"1"' },
    body: { title: 'New', body: 'new', tags: [] },
  });
  t.equal(ok.status, 200);
  t.match(ok.json(), { title: 'New', body: 'new', tags: [], version: 2 });
  const stale = await api(s, 'PUT', `/notetaker/notes/${note.id}`, {
    ...tok,
    body: { expected_version: 1, title: 'Newer', body: '', tags: [] },
  });
  t.equal(stale.status, 412);
  t.equal(stale.json().current.title, 'New');
  const partial = await api(s, 'PUT', `/notetaker/notes/${note.id}`, {
    ...tok,
    headers: { 'if-match': '"2"' },
    body: { title: 'only a title' },
  });
  t.equal(partial.status, 400);
  t.same(
    partial
      .json()
      .errors.map((e: any) => e.path)
      .sort(),
    ['/body', '/tags'],
  );
});

t.test('section edits: append and prepend (no version), under a heading; replace_section (versioned)', async (t) => {
  const note = await create({
    title: 'Meeting',
    body: '# Agenda\n\n- budget\n\n# Decisions\n\nnone yet\n\n# Actions\n\n- [ ] write it down\n',
  });
  const id = note.id;
  const end = await api(s, 'PATCH', `/notetaker/notes/${id}`, { ...tok, body: { append: { text: 'Closing remark.' } } });
  t.equal(end.status, 200);
  t.match(end.json().body, /Closing remark\.\n?$/);
  const under = await api(s, 'PATCH', `/notetaker/notes/${id}`, { ...tok, body: { append: { text: '- hiring', heading: 'agenda' } } });
  t.equal(under.status, 200);
  t.match(under.json().body, /# Agenda\n\n- budget\n- hiring\n/);
  const top = await api(s, 'PATCH', `/notetaker/notes/${id}`, { ...tok, body: { prepend: { text: 'Attendees: A, B' } } });
  t.match(top.json().body, /^Attendees: A, B\n/);
  t.equal(top.json().version, 4);

  const noVersion = await api(s, 'PATCH', `/notetaker/notes/${id}`, {
    ...tok,
    body: { replace_section: { heading: 'Decisions', text: 'Ship it.' } },
  });
  t.equal(noVersion.status, 428);
  const rep = await api(s, 'PATCH', `/notetaker/notes/${id}`, {
    ...tok,
    headers: { 'if-match': '"4"' },
    body: { replace_section: { heading: 'Decisions', text: 'Ship it.' } },
  });
  t.equal(rep.status, 200);
  t.match(rep.json().body, /# Decisions\n+Ship it\.\n/);
  t.notMatch(rep.json().body, /none yet/);
  t.match(rep.json().body, /# Actions/, 'the other sections stay');

  const missing = await api(s, 'PATCH', `/notetaker/notes/${id}`, { ...tok, body: { append: { text: 'x', heading: 'No such heading' } } });
  t.equal(missing.status, 400, 'a heading that is not there');
  const versioned = await api(s, 'PATCH', `/notetaker/notes/${id}`, {
    ...tok,
    headers: { 'if-match': '"5"' },
    body: { append: { text: 'x' } },
  });
  t.equal(versioned.status, 400, 'an append takes no version');
  t.match(versioned.json().detail, /never overwrites/);
  const mixed = await api(s, 'PATCH', `/notetaker/notes/${id}`, { ...tok, body: { title: 't', append: { text: 'x' } } });
  t.equal(mixed.status, 400);
  t.equal(mixed.json().code, 'validation_failed');
  t.same(
    mixed.json().errors.map((e: any) => e.path),
    ['/title', '/append'],
  );
  const empty = await api(s, 'PATCH', `/notetaker/notes/${id}`, { ...tok, body: {} });
  t.equal(empty.status, 400);
  const onlyVersion = await api(s, 'PATCH', `/notetaker/notes/${id}`, { ...tok, body: { expected_version: 5 } });
  t.equal(onlyVersion.status, 400);
  t.match(onlyVersion.json().errors[0].message, /names no edit/);
});

t.test('trash, list the trash, restore, purge', async (t) => {
  const note = await create({ title: 'Disposable', tags: ['tmp'] });
  const del = await api(s, 'DELETE', `/notetaker/notes/${note.id}`, tok);
  t.equal(del.status, 200);
  t.match(del.json(), { id: note.id, version: 2 });
  t.ok(del.json().deleted_at);
  t.equal(del.headers.get('etag'), '"2"');

  const live = await api(s, 'GET', '/notetaker/notes?limit=100', tok);
  t.notOk(
    live.json().items.some((n: any) => n.id === note.id),
    'gone from the list',
  );
  const trash = await api(s, 'GET', '/notetaker/trash', tok);
  t.equal(trash.status, 200);
  t.ok(
    trash.json().items.some((n: any) => n.id === note.id),
    'in the trash',
  );
  const again = await api(s, 'DELETE', `/notetaker/notes/${note.id}`, tok);
  t.equal(again.status, 409, 'already in the trash');
  t.equal(again.json().code, 'conflict');

  const back = await api(s, 'POST', `/notetaker/notes/${note.id}/restore`, tok);
  t.equal(back.status, 200);
  t.match(back.json(), { deleted_at: null, version: 3 });
  const notTrashed = await api(s, 'POST', `/notetaker/notes/${note.id}/restore`, tok);
  t.equal(notTrashed.status, 409);
  const purgeLive = await api(s, 'DELETE', `/notetaker/trash/${note.id}`, tok);
  t.equal(purgeLive.status, 409, 'only a trashed note can be purged');

  const staleDel = await api(s, 'DELETE', `/notetaker/notes/${note.id}`, { ...tok, headers: { 'if-match': '"1"' } });
  t.equal(staleDel.status, 412, 'DELETE honours If-Match');
  t.equal(staleDel.json().current.version, 3);
  const del2 = await api(s, 'DELETE', `/notetaker/notes/${note.id}`, { ...tok, headers: { 'if-match': '"3"' } });
  t.equal(del2.status, 200);
  const purge = await api(s, 'DELETE', `/notetaker/trash/${note.id}`, tok);
  t.equal(purge.status, 204);
  t.equal(purge.text, '');
  t.equal((await api(s, 'GET', `/notetaker/notes/${note.id}`, tok)).status, 404);
  t.equal((await api(s, 'GET', `/notetaker/notes/${note.id}/revisions`, tok)).status, 404);
});

t.test('revisions: list, one, diff, restore', async (t) => {
  const note = await create({ title: 'Draft', body: 'line one\n' });
  await api(s, 'PATCH', `/notetaker/notes/${note.id}`, { ...tok, body: { append: { text: 'line two' } } });
  await api(s, 'PATCH', `/notetaker/notes/${note.id}`, { ...tok, headers: { 'if-match': '"2"' }, body: { title: 'Final' } });
  const list = await api(s, 'GET', `/notetaker/notes/${note.id}/revisions`, tok);
  t.equal(list.status, 200);
  t.same(
    list.json().items.map((r: any) => [r.version, r.change]),
    [
      [3, 'update'],
      [2, 'append'],
      [1, 'create'],
    ],
  );
  const paged = await api(s, 'GET', `/notetaker/notes/${note.id}/revisions?limit=2`, tok);
  t.equal(paged.json().items.length, 2);
  const rest = await api(
    s,
    'GET',
    `/notetaker/notes/${note.id}/revisions?limit=2&cursor=${encodeURIComponent(paged.json().next_cursor)}`,
    tok,
  );
  t.same(
    rest.json().items.map((r: any) => r.version),
    [1],
  );
  t.equal(rest.json().next_cursor, null);

  const one = await api(s, 'GET', `/notetaker/notes/${note.id}/revisions/1`, tok);
  t.equal(one.status, 200);
  t.match(one.json(), { version: 1, title: 'Draft', body: 'line one\n', change: 'create' });
  t.equal((await api(s, 'GET', `/notetaker/notes/${note.id}/revisions/99`, tok)).status, 404);
  t.equal((await api(s, 'GET', `/notetaker/notes/${note.id}/revisions/zero`, tok)).status, 404);

  const diff = await api(s, 'GET', `/notetaker/notes/${note.id}/revisions/1/diff`, tok);
  t.equal(diff.status, 200);
  t.match(diff.json(), { from_version: 1, to_version: 3, coarse: false });
  t.match(diff.json().diff, /-Title: Draft\n\+Title: Final/);
  t.match(diff.json().diff, /\+line two/);

  const stale = await api(s, 'POST', `/notetaker/notes/${note.id}/revisions/1/restore`, { ...tok, headers: { 'if-match': '"2"' } });
  t.equal(stale.status, 412);
  const restored = await api(s, 'POST', `/notetaker/notes/${note.id}/revisions/1/restore`, { ...tok, headers: { 'if-match': '"3"' } });
  t.equal(restored.status, 200);
  t.match(restored.json(), { title: 'Draft', body: 'line one\n', version: 4 });
  t.equal(restored.headers.get('etag'), '"4"');
  const unconditional = await api(s, 'POST', `/notetaker/notes/${note.id}/revisions/3/restore`, tok);
  t.equal(unconditional.status, 200, 'If-Match is optional for a restore');
  t.equal(unconditional.json().title, 'Final');
});

t.test('the diff of a note rewritten line by line is bounded: a coarse diff that says so, and the server answers meanwhile', async (t) => {
  const lines = (prefix: string) => Array.from({ length: 10_000 }, (_, i) => `${prefix} ${i}`).join('\n') + '\n';
  const note = await create({ title: 'Journal', body: lines('old') });
  const edit = await api(s, 'PATCH', `/notetaker/notes/${note.id}`, {
    ...tok,
    headers: { 'if-match': '"1"' },
    body: { body: lines('new') },
  });
  t.equal(edit.status, 200);
  let diffDone = false;
  const diff = api(s, 'GET', `/notetaker/notes/${note.id}/revisions/1/diff`, tok).finally(() => (diffDone = true));
  const health = await req(s, 'GET', '/health');
  t.equal(health.status, 200);
  t.notOk(diffDone, 'the server answered another request while the diff was being computed');
  const d = await diff;
  t.equal(d.status, 200);
  t.match(d.json(), { from_version: 1, to_version: 2, coarse: true });
  t.equal(d.json().diff.match(/^@@/gm).length, 1, 'one block');
  t.match(d.json().diff, /^-old 9999$/m);
  t.match(d.json().diff, /^\+new 0$/m);
  const small = await api(s, 'GET', `/notetaker/notes/${note.id}/revisions/2/diff`, tok);
  t.match(small.json(), { from_version: 2, to_version: 2, coarse: false, diff: /^(?!.*@@)/s });
});

t.test('usage: what the caller stores, by kind, and the quota (none here)', async (t) => {
  const r = await api(s, 'GET', '/notetaker/usage', tok);
  t.equal(r.status, 200);
  const u = r.json<{ used: number; quota: number | null; by_kind: Record<string, number> }>();
  t.equal(u.quota, null);
  t.ok(u.used > 0, 'the notes written above count');
  t.equal(u.by_kind['notes'], u.used);
});

t.test('lists: most recent first, tag filter, opaque cursors, default and clamped limits', async (t) => {
  const bob = await createUser(s, 'lister@example.com');
  const b = { token: bob.token };
  const ids: string[] = [];
  for (let i = 0; i < 25; i++) {
    const r = await api(s, 'POST', '/notetaker/notes', { ...b, body: { title: `n${i}`, tags: i % 2 ? ['odd'] : ['even', 'all'] } });
    ids.push(r.json().id);
  }
  const first = await api(s, 'GET', '/notetaker/notes', b);
  t.equal(first.json().limit, 20, 'default 20');
  t.equal(first.json().items.length, 20);
  t.same(
    first
      .json()
      .items.slice(0, 3)
      .map((n: any) => n.title),
    ['n24', 'n23', 'n22'],
    'most recently updated first',
  );
  t.notOk('body' in first.json().items[0], 'summaries carry no body');
  t.type(first.json().next_cursor, 'string');
  t.notOk(first.headers.get('folio-limit-clamped'));
  const second = await api(s, 'GET', `/notetaker/notes?cursor=${encodeURIComponent(first.json().next_cursor)}`, b);
  t.equal(second.json().items.length, 5);
  t.equal(second.json().next_cursor, null);
  const all = [...first.json().items, ...second.json().items].map((n: any) => n.id);
  t.same([...all].sort(), [...ids].sort(), 'the pages cover every note once');
  // A cursor works only on the list that handed it out: not the trash, not files, not another user's notes.
  const cursor = encodeURIComponent(first.json().next_cursor);
  for (const [what, path, token] of [
    ['the trash', `/notetaker/trash?cursor=${cursor}`, bob.token],
    ['the files list', `/filedb/files?cursor=${cursor}`, bob.token],
    ["another user's notes", `/notetaker/notes?cursor=${cursor}`, alice.token],
  ] as const) {
    const r = await api(s, 'GET', path, { token });
    t.equal(r.status, 400, `${what}: 400`);
    t.match(r.json().errors?.[0] ?? {}, { in: 'query', path: '/cursor' }, what);
  }

  const clamped = await api(s, 'GET', '/notetaker/notes?limit=1000', b);
  t.equal(clamped.status, 200);
  t.equal(clamped.json().limit, 100);
  t.equal(clamped.json().limit_clamped_from, 1000);
  t.equal(clamped.headers.get('folio-limit-clamped'), 'requested=1000; limit=100');
  t.equal(clamped.json().items.length, 25);

  const odd = await api(s, 'GET', '/notetaker/notes?tag=odd&limit=100', b);
  t.equal(odd.json().items.length, 12);
  const both = await api(s, 'GET', '/notetaker/notes?tag=even&tag=ALL&limit=100', b);
  t.equal(both.json().items.length, 13, 'repeated tag: notes carrying every one');
  const badTag = await api(s, 'GET', '/notetaker/notes?tag=ok&tag=not%20ok!', b);
  t.equal(badTag.status, 400);
  t.match(badTag.json().errors[0], { in: 'query', path: '/tag/1' });
  const none = await api(s, 'GET', '/notetaker/notes?tag=odd&tag=even', b);
  t.equal(none.json().items.length, 0);

  const badCursor = await api(s, 'GET', '/notetaker/notes?cursor=not-a-cursor', b);
  t.equal(badCursor.status, 400);
  t.match(badCursor.json().errors[0], { in: 'query', path: '/cursor' });
  for (const l of ['0', '-1', 'ten', '1.5']) {
    const r = await api(s, 'GET', `/notetaker/notes?limit=${l}`, b);
    t.equal(r.status, 400, `limit=${l}`);
    t.equal(r.json().errors[0].path, '/limit');
  }

  const tags = await api(s, 'GET', '/notetaker/tags', b);
  t.equal(tags.status, 200);
  t.same(tags.json().items, [
    { tag: 'all', count: 13 },
    { tag: 'even', count: 13 },
    { tag: 'odd', count: 12 },
  ]);
});

t.test('search: words, phrases, exclusion, tags, dates, typo tolerance, paging', async (t) => {
  const carol = await createUser(s, 'searcher@example.com');
  const c = { token: carol.token };
  const mk = (title: string, body: string, tags: string[] = []) =>
    api(s, 'POST', '/notetaker/notes', { ...c, body: { title, body, tags } });
  await mk('Quarterly budget review', 'We discussed the marketing budget and hiring plans.', ['finance']);
  await mk('Hiring pipeline', 'Three candidates for the backend role; budget approved.', ['hr']);
  await mk('Garden', 'Tomatoes need more sun.', []);
  await mk('会議メモ', '予算について話し合った。', ['jp']);

  const q = (query: string) => api(s, 'GET', `/notetaker/search?${query}`, c);
  const budget = await q('q=budget');
  t.equal(budget.status, 200);
  t.equal(budget.json().items.length, 2);
  t.match(budget.json().items[0], { match: 'fulltext', snippet: /«budget»/i });
  const phrase = await q(`q=${encodeURIComponent('"marketing budget"')}`);
  t.same(
    phrase.json().items.map((h: any) => h.title),
    ['Quarterly budget review'],
  );
  const minus = await q(`q=${encodeURIComponent('budget -hiring')}`);
  t.same(
    minus.json().items.map((h: any) => h.title),
    [],
    'both budget notes mention hiring',
  );
  const tagged = await q('q=budget&tag=hr');
  t.same(
    tagged.json().items.map((h: any) => h.title),
    ['Hiring pipeline'],
  );
  const typo = await q('q=tomatos');
  t.equal(typo.json().items[0]?.title, 'Garden');
  const jp = await q(`q=${encodeURIComponent('予算')}`);
  t.equal(jp.json().items[0]?.title, '会議メモ');
  const future = await q('q=budget&from=2999-01-01');
  t.equal(future.json().items.length, 0);
  const today = new Date().toISOString().slice(0, 10);
  const range = await q(`q=budget&from=2000-01-01&to=${today}`);
  t.equal(range.json().items.length, 2);
  const page1 = await q('q=budget&limit=1');
  t.equal(page1.json().items.length, 1);
  const page2 = await q(`q=budget&limit=1&cursor=${encodeURIComponent(page1.json().next_cursor)}`);
  t.equal(page2.json().items.length, 1);
  t.not(page2.json().items[0].id, page1.json().items[0].id);
  const clamped = await q('q=budget&limit=101');
  t.equal(clamped.json().limit_clamped_from, 101);
  t.ok(clamped.headers.get('folio-limit-clamped'));

  const noQ = await q('tag=hr');
  t.equal(noQ.status, 400);
  t.same(noQ.json().errors, [{ in: 'query', path: '/q', message: 'is required' }]);
  const badDate = await q('q=x&from=yesterday');
  t.equal(badDate.status, 400);
  t.equal(badDate.json().errors[0].path, '/from');
});

t.test('reports: streamed in the format asked, saved as a note on request', async (t) => {
  const dave = await createUser(s, 'reporter@example.com');
  const d = { token: dave.token };
  for (const [title, tags] of [
    ['Mon standup', ['standup']],
    ['Tue standup', ['standup']],
    ['Design review', ['design']],
  ] as const)
    await api(s, 'POST', '/notetaker/notes', { ...d, body: { title, body: `${title} notes\n\n- [ ] follow up`, tags: [...tags] } });

  const md = await api(s, 'POST', '/notetaker/reports', { ...d, body: { group_by: 'tag', format: 'markdown' } });
  t.equal(md.status, 200);
  t.match(md.headers.get('content-type'), /^text\/markdown/);
  t.match(md.headers.get('content-disposition'), /^inline; filename="report-tag-\d{4}-\d{2}-\d{2}\.md"$/);
  t.notOk(md.headers.get('folio-saved-note-id'));
  t.match(md.text, /^# Notes report by tag/);
  t.match(md.text, /#design/);
  t.match(md.text, /Mon standup/);

  const html = await api(s, 'POST', '/notetaker/reports', {
    ...d,
    body: { q: 'standup', group_by: 'day', format: 'html', title: 'Standups' },
  });
  t.equal(html.status, 200);
  t.match(html.headers.get('content-type'), /^text\/html/);
  t.match(html.text, /Standups/);
  t.notMatch(html.text, /Design review/);

  const pdfRes = await fetch(`${s.url}/api/v1/notetaker/reports`, {
    method: 'POST',
    headers: { authorization: `Bearer ${dave.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ group_by: 'week', format: 'pdf' }),
  });
  t.equal(pdfRes.status, 200);
  t.equal(pdfRes.headers.get('content-type'), 'application/pdf');
  const pdf = Buffer.from(await pdfRes.arrayBuffer());
  t.equal(pdf.subarray(0, 5).toString(), '%PDF-');

  const saved = await api(s, 'POST', '/notetaker/reports', {
    ...d,
    body: { tags: ['standup'], group_by: 'day', format: 'markdown', save_as_note: true },
  });
  t.equal(saved.status, 200);
  const id = saved.headers.get('folio-saved-note-id');
  t.match(id, /^[0-9a-f-]{36}$/);
  const note = await api(s, 'GET', `/notetaker/notes/${id}`, d);
  t.equal(note.status, 200);
  t.match(note.json().body, /Tue standup/);

  const defaults = await api(s, 'POST', '/notetaker/reports', { ...d, body: {} });
  t.equal(defaults.status, 200, 'group_by and format have defaults');
  t.match(defaults.headers.get('content-type'), /^text\/markdown/);
  const bad = await api(s, 'POST', '/notetaker/reports', { ...d, body: { group_by: 'month', format: 'docx' } });
  t.equal(bad.status, 400);
  t.same(
    bad
      .json()
      .errors.map((e: any) => e.path)
      .sort(),
    ['/format', '/group_by'],
  );
  t.match(bad.json().errors.find((e: any) => e.path === '/group_by').message, /"day", "week", "tag"/);
});

t.test('a large report streams: the first bytes arrive before the end is written', async (t) => {
  const erin = await createUser(s, 'bulk@example.com');
  // 1200 notes, through the service directly to keep the test fast; the REST call is what is measured.
  const { NotesServiceImpl } = await import('../../core/domain/notes/service.ts');
  const notes = new NotesServiceImpl(s.folio.db);
  const principal = {
    user: { id: erin.id, email: 'bulk@example.com', name: null, roles: [] },
    scopes: ['*'],
    tokenKind: 'api' as const,
    tokenId: 'x',
    tokenExpiresAt: null,
  };
  const filler = 'lorem ipsum dolor sit amet '.repeat(20);
  for (let i = 0; i < 1200; i += 50)
    await Promise.all(
      Array.from({ length: 50 }, (_, j) => notes.create(principal, { title: `bulk ${i + j}`, body: filler, tags: [`t${(i + j) % 7}`] })),
    );
  const res = await fetch(`${s.url}/api/v1/notetaker/reports`, {
    method: 'POST',
    headers: { authorization: `Bearer ${erin.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ group_by: 'tag', format: 'markdown' }),
  });
  t.equal(res.status, 200);
  t.notOk(res.headers.get('content-length'), 'chunked, not buffered into one body');
  const reader = res.body!.getReader();
  let chunks = 0;
  let bytes = 0;
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks++;
    bytes += value.byteLength;
    text += Buffer.from(value).toString();
  }
  t.ok(chunks > 1, `arrived in ${chunks} chunks`);
  t.ok(bytes > 100_000, `${bytes} bytes`);
  t.equal(text.match(/^### bulk \d+$/gm)?.length, 1200, 'every note is in it');
});

t.test('every operation was exercised with a success status', async (t) => {
  const sp = await spec(s);
  // The notetaker group's operations (tokens and users are exercised in rest-identity.test.ts).
  for (const o of sp.operations.filter((x) => x.template.startsWith('/notetaker/'))) {
    const seen = sp.seen.get(o.op.operationId) ?? new Set();
    t.ok(
      [...seen].some((x) => /^[23]\d\d$/.test(x)),
      `${o.op.operationId} answered a success (${[...seen].join(', ')})`,
    );
  }
});
