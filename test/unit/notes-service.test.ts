// NotesServiceImpl against a real database (PGlite, or the PostgreSQL server in DATABASE_URL):
// CRUD, versions and conflicts, concurrency, sections, trash, revisions, counters, isolation.
import t, { type Test } from 'tap';
import { BadArguments, Conflict, NotFound } from '../../core/contract/errors.ts';
import { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, type Note } from '../../core/domain/notes/types.ts';
import { encodeCursor } from '../../core/domain/notes/validate.ts';
import { buildNote, openNotesFixture } from '../helpers/notes.ts';

/** Checks the exact class of a rejection and returns the error for more checks. */
async function rejectsAs<E extends Error>(
  t: Test,
  work: Promise<unknown>,
  cls: abstract new (...args: never[]) => E,
  message?: string,
): Promise<E> {
  const outcome = await work.then(
    () => 'resolved',
    (err: unknown) => err,
  );
  t.ok(outcome instanceof cls, message ?? `rejects with ${cls.name}`, { found: outcome });
  return outcome as E;
}

const fx = await openNotesFixture(t);
const { notes } = fx;

t.test('create, get: defaults, normalisation, versions start at 1', async (t) => {
  const p = await fx.newPrincipal();
  const n = await notes.create(p, { title: '  Groceries  ', body: '- milk\n', tags: ['Home', 'home', 'Errands/Weekly', 'v1.2'] });
  t.match(n.id, /^[0-9a-f-]{36}$/);
  t.equal(n.title, 'Groceries', 'title trimmed');
  t.same(n.tags, ['home', 'errands/weekly', 'v1.2'], 'tags lowercased, de-duplicated, order kept');
  t.equal(n.source, 'manual', 'source defaults to manual');
  t.equal(n.version, 1);
  t.equal(n.deleted_at, null);
  t.equal(n.created_at, n.updated_at);
  t.ok(Date.parse(n.created_at) > Date.now() - 60_000);
  t.same(await notes.get(p, n.id), n, 'get returns what create returned');

  const bare = await notes.create(p, { title: 'Empty', source: 'agent' });
  t.equal(bare.body, '');
  t.same(bare.tags, []);
  t.equal(bare.source, 'agent');
  const unicode = await notes.create(p, { title: '東京 🗼', body: 'emoji 🎉 and ünïcödé' });
  t.same(await notes.get(p, unicode.id), unicode, 'non-ASCII round-trips');
});

t.test('validation: every rule is BadArguments naming the argument', async (t) => {
  const p = await fx.newPrincipal();
  const cases: Array<[string, unknown, string]> = [
    ['empty title', { title: '   ' }, 'title'],
    ['title too long', { title: 'x'.repeat(501) }, 'title'],
    ['title with newline', { title: 'a\nb' }, 'title'],
    ['title not a string', { title: 42 }, 'title'],
    ['body too large', { title: 't', body: 'x'.repeat(1024 * 1024 + 1) }, 'body'],
    ['body with NUL', { title: 't', body: 'a\u0000b' }, 'body'],
    ['body with a lone surrogate', { title: 't', body: 'a\ud800b' }, 'body'],
    ['bad tag', { title: 't', tags: ['-nope'] }, 'tags.0'],
    ['tag with space', { title: 't', tags: ['ok', 'two words'] }, 'tags.1'],
    ['tag too long', { title: 't', tags: ['a'.repeat(65)] }, 'tags.0'],
    ['too many tags', { title: 't', tags: Array.from({ length: 33 }, (_, i) => `t${i}`) }, 'tags'],
    ['tags not a list', { title: 't', tags: 'x' }, 'tags'],
    ['unknown source', { title: 't', source: 'web' }, 'source'],
  ];
  for (const [name, input, path] of cases) {
    const err = await rejectsAs(t, notes.create(p, input as never), BadArguments, name);
    t.equal(err.problems?.[0]?.path, path, `${name}: names ${path}`);
  }
  t.ok(
    await notes.create(p, { title: 'x'.repeat(500), body: 'é'.repeat(512 * 1024), tags: Array.from({ length: 32 }, (_, i) => `t${i}`) }),
    'limits are inclusive',
  );
  t.equal((await notes.list(p)).items.length, 1, 'nothing else was stored');

  const n = await notes.create(p, buildNote());
  await rejectsAs(t, notes.update(p, n.id, { title: 'x' } as never), BadArguments, 'update without expected_version');
  await rejectsAs(t, notes.update(p, n.id, { expected_version: 0, title: 'x' }), BadArguments, 'expected_version 0');
  await rejectsAs(t, notes.update(p, n.id, { expected_version: 1 }), BadArguments, 'update with nothing to change');
  await rejectsAs(t, notes.append(p, n.id, { text: '' }), BadArguments, 'empty append');
  await rejectsAs(t, notes.replaceSection(p, n.id, { text: 'x', heading: 'h' } as never), BadArguments, 'replaceSection without version');
  await rejectsAs(t, notes.revision(p, n.id, 1.5), BadArguments, 'fractional version');
  await rejectsAs(t, notes.list(p, { limit: 0 }), BadArguments, 'limit 0');
  await rejectsAs(t, notes.list(p, { cursor: 'garbage!' }), BadArguments, 'garbage cursor');
  await rejectsAs(t, notes.list(p, { cursor: Buffer.from('[1,2]').toString('base64url') }), BadArguments, 'well-formed but wrong cursor');
  const uuid = '00000000-0000-4000-8000-000000000000';
  await rejectsAs(t, notes.list(p, { cursor: encodeCursor([1e300, uuid]) }), BadArguments, 'a cursor with an impossible time');
  await rejectsAs(
    t,
    notes.search(p, { q: 'x', cursor: encodeCursor(['t', 1e300, 0, uuid]) }),
    BadArguments,
    'a cursor with an impossible rank',
  );
  await rejectsAs(t, notes.revisions(p, uuid, { cursor: encodeCursor([0.5]) }), BadArguments, 'a cursor with an impossible version');
  t.equal((await notes.get(p, n.id)).version, 1, 'no failed call changed the note');
});

t.test('ids that are not uuids, unknown ids: NotFound, never a database error', async (t) => {
  const p = await fx.newPrincipal();
  for (const id of ['nope', "'; drop table notes; --", '', '00000000-0000-4000-8000-000000000000']) {
    await rejectsAs(t, notes.get(p, id), NotFound, `get ${JSON.stringify(id)}`);
    await rejectsAs(t, notes.update(p, id, { expected_version: 1, title: 'x' }), NotFound, `update ${JSON.stringify(id)}`);
    await rejectsAs(t, notes.append(p, id, { text: 'x' }), NotFound, `append ${JSON.stringify(id)}`);
    await rejectsAs(t, notes.revisions(p, id), NotFound, `revisions ${JSON.stringify(id)}`);
    await rejectsAs(t, notes.purge(p, id), NotFound, `purge ${JSON.stringify(id)}`);
  }
});

t.test('update: every change increments the version; stale expected_version is a Conflict carrying the current note', async (t) => {
  const p = await fx.newPrincipal();
  const n = await notes.create(p, buildNote({ title: 'Plan', body: 'v1', tags: ['a'] }));
  const u1 = await notes.update(p, n.id, { expected_version: 1, body: 'v2' });
  t.equal(u1.version, 2);
  t.equal(u1.body, 'v2');
  t.equal(u1.title, 'Plan', 'fields not given are kept');
  t.same(u1.tags, ['a']);
  t.ok(u1.updated_at >= n.updated_at);
  t.equal(u1.created_at, n.created_at);
  const u2 = await notes.update(p, n.id, { expected_version: 2, title: 'Plan B', tags: ['B', 'c'] });
  t.equal(u2.version, 3);
  t.same(u2.tags, ['b', 'c']);

  const err = await rejectsAs(t, notes.update(p, n.id, { expected_version: 2, body: 'lost update' }), Conflict, 'stale version');
  t.same(err.current, u2, 'the conflict carries the current note');
  t.match(err.message, /version 3/);
  t.same(await notes.get(p, n.id), u2, 'nothing was overwritten');
  await rejectsAs(t, notes.update(p, n.id, { expected_version: 4, body: 'future' }), Conflict, 'a version from the future is stale too');

  const a = await notes.append(p, n.id, { text: 'more' });
  t.equal(a.version, 4, 'appends increment too');
  t.equal(a.body, 'v2\nmore');
});

t.test('appends and prepends need no version and add text on lines of their own', async (t) => {
  const p = await fx.newPrincipal();
  const n = await notes.create(p, buildNote({ body: 'first' }));
  t.equal((await notes.append(p, n.id, { text: 'second' })).body, 'first\nsecond');
  t.equal((await notes.append(p, n.id, { text: 'third\n' })).body, 'first\nsecond\nthird\n');
  t.equal((await notes.append(p, n.id, { text: 'fourth' })).body, 'first\nsecond\nthird\nfourth');
  t.equal((await notes.prepend(p, n.id, { text: 'zero' })).body, 'zero\nfirst\nsecond\nthird\nfourth');
  const e = await notes.create(p, buildNote({ body: '' }));
  t.equal((await notes.append(p, e.id, { text: 'only' })).body, 'only');
  const big = await notes.create(p, buildNote({ body: 'x'.repeat(1024 * 1024 - 2) }));
  const err = await rejectsAs(t, notes.append(p, big.id, { text: 'yz' }), BadArguments, 'an append past 1 MiB');
  t.equal(err.problems[0]?.path, 'text');
  t.equal((await notes.get(p, big.id)).version, 1);
});

t.test('concurrency: 10 concurrent appends all land, once each, in commit (version) order', async (t) => {
  const p = await fx.newPrincipal();
  const n = await notes.create(p, buildNote({ body: 'log:' }));
  const results = await Promise.all(Array.from({ length: 10 }, (_, i) => notes.append(p, n.id, { text: `entry ${i}` })));
  const final = await notes.get(p, n.id);
  t.equal(final.version, 11, 'ten new versions');
  t.same(
    results.map((r) => r.version).sort((a, b) => a - b),
    [2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
    'each append got its own version',
  );
  const lines = final.body.split('\n');
  t.equal(lines.length, 11);
  for (let i = 0; i < 10; i++) t.equal(lines.filter((l) => l === `entry ${i}`).length, 1, `entry ${i} is there once`);
  // The order in the body is the order of the versions each append was given.
  const byVersion = [...results].sort((a, b) => a.version - b.version).map((r) => r.body.split('\n').at(-1));
  t.same(lines.slice(1), byVersion, 'body order = commit order');
  // And each revision holds exactly the body as of that append.
  for (const r of results) t.equal((await notes.revision(p, n.id, r.version)).body, r.body);
});

t.test('concurrency: replacing edits on the same expected_version: exactly one wins', async (t) => {
  const p = await fx.newPrincipal();
  const n = await notes.create(p, buildNote({ body: 'base' }));
  const outcomes = await Promise.allSettled(
    Array.from({ length: 8 }, (_, i) => notes.update(p, n.id, { expected_version: 1, body: `writer ${i}` })),
  );
  const won = outcomes.filter((o): o is PromiseFulfilledResult<Note> => o.status === 'fulfilled');
  const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
  t.equal(won.length, 1, 'one winner');
  t.equal(lost.length, 7);
  t.ok(
    lost.every((o) => o.reason instanceof Conflict),
    'the others are Conflicts',
  );
  const final = await notes.get(p, n.id);
  t.equal(final.version, 2);
  t.equal(final.body, won[0]!.value.body, "the winner's body is what is stored");
  t.ok(
    lost.every((o) => (o.reason as Conflict).current !== undefined),
    'each conflict carries a current note',
  );

  const s = await notes.create(p, buildNote({ body: '# A\nold\n' }));
  const sections = await Promise.allSettled(
    Array.from({ length: 4 }, (_, i) => notes.replaceSection(p, s.id, { expected_version: 1, heading: 'A', text: `new ${i}` })),
  );
  t.equal(sections.filter((o) => o.status === 'fulfilled').length, 1, 'one section replacement wins');
});

t.test('sections: append/prepend/replace under a heading, missing heading, fenced code', async (t) => {
  const p = await fx.newPrincipal();
  const body = [
    '# Meeting',
    'intro',
    '',
    '## Decisions',
    '- ship it',
    '',
    '### Details',
    'detail text',
    '',
    '## Action items',
    '- [ ] write tests',
    '',
    '```md',
    '## Fake heading',
    'in a code block',
    '```',
    '',
    '~~~',
    '# Also fake',
    '~~~',
    '## Notes',
    'last line',
    '',
  ].join('\n');
  const n = await notes.create(p, buildNote({ body }));

  const a = await notes.append(p, n.id, { text: '- also ship docs', heading: 'decisions' });
  t.match(
    a.body,
    /## Decisions\n- ship it\n\n### Details\ndetail text\n- also ship docs\n\n## Action items/,
    'appended at the end of the section, after its sub-sections, before the next same-level heading',
  );
  const b = await notes.prepend(p, n.id, { text: '- first decision', heading: '## Decisions' });
  t.match(b.body, /## Decisions\n- first decision\n- ship it\n/, 'prepended right under the heading (leading #s in the argument are fine)');
  const c = await notes.append(p, n.id, { text: '- [ ] review', heading: 'ACTION ITEMS' });
  t.match(
    c.body,
    /## Action items\n- \[ \] write tests\n\n```md\n## Fake heading\nin a code block\n```\n\n~~~\n# Also fake\n~~~\n- \[ \] review\n## Notes/,
    'a heading inside fenced code does not end the section',
  );
  const d = await notes.append(p, n.id, { text: 'appendix', heading: 'Notes' });
  t.ok(d.body.endsWith('## Notes\nlast line\nappendix\n'), 'last section: before the trailing newline');

  const err = await rejectsAs(
    t,
    notes.append(p, n.id, { text: 'x', heading: 'Fake heading' }),
    BadArguments,
    'a heading inside a code block is not a heading',
  );
  t.equal(err.problems[0]?.path, 'heading');
  t.match(err.problems[0]?.message, /Fake heading/, 'the error names the missing heading');
  t.match(err.problems[0]?.message, /"Decisions"/, 'and lists the real ones');
  await rejectsAs(t, notes.prepend(p, n.id, { text: 'x', heading: 'Nope' }), BadArguments);
  await rejectsAs(t, notes.replaceSection(p, n.id, { expected_version: d.version, heading: 'Nope', text: 'x' }), BadArguments);
  t.equal((await notes.get(p, n.id)).version, d.version, 'a missing heading writes nothing (no silent duplicate heading)');

  const r = await notes.replaceSection(p, n.id, { expected_version: d.version, heading: 'Decisions', text: '- only this' });
  t.equal(r.version, d.version + 1);
  t.match(
    r.body,
    /## Decisions\n- only this\n\n## Action items/,
    'replaced up to the next heading of the same or higher level (sub-sections included)',
  );
  t.notMatch(r.body, /### Details/);
  t.match(r.body, /^# Meeting\nintro\n/, 'text before the section is untouched');
  const r2 = await notes.replaceSection(p, n.id, { expected_version: r.version, heading: 'meeting', text: 'whole doc' });
  t.equal(r2.body, '# Meeting\nwhole doc\n', 'a top-level heading spans to the end');
  await rejectsAs(t, notes.replaceSection(p, n.id, { expected_version: r.version, heading: 'Meeting', text: 'stale' }), Conflict);
});

t.test('trash, untrash, purge, expiry', async (t) => {
  const p = await fx.newPrincipal();
  const keep = await notes.create(p, buildNote({ title: 'keep', tags: ['x'] }));
  const n = await notes.create(p, buildNote({ title: 'bin me', tags: ['x', 'y'] }));
  t.same(await notes.summary(p.user.id), { count: 2, tags: { x: 2, y: 1 } });

  await rejectsAs(t, notes.trash(p, n.id, 7), Conflict, 'trash with a stale version');
  const tr = await notes.trash(p, n.id, 1);
  t.equal(tr.version, 2, 'trash is a new version');
  t.ok(tr.deleted_at);
  t.equal((await notes.get(p, n.id)).deleted_at, tr.deleted_at, 'a trashed note can still be read');
  t.same(
    (await notes.list(p)).items.map((i) => i.id),
    [keep.id],
    'not in the live list',
  );
  t.same(
    (await notes.list(p, { trashed: true })).items.map((i) => i.id),
    [n.id],
    'in the trash list',
  );
  t.same(await notes.summary(p.user.id), { count: 1, tags: { x: 1 } }, 'summary counts live notes only');
  t.same(await notes.tags(p), [{ tag: 'x', count: 1 }]);

  await rejectsAs(t, notes.append(p, n.id, { text: 'x' }), Conflict, 'no edits in the trash');
  await rejectsAs(t, notes.trash(p, n.id), Conflict, 'trashing twice');
  await rejectsAs(t, notes.purge(p, keep.id), Conflict, 'purge only from the trash');
  t.ok(await notes.get(p, keep.id), 'the live note survived the refused purge');
  await rejectsAs(t, notes.untrash(p, keep.id), Conflict, 'untrash a live note');

  const back = await notes.untrash(p, n.id);
  t.equal(back.version, 3);
  t.equal(back.deleted_at, null);
  t.same(await notes.summary(p.user.id), { count: 2, tags: { x: 2, y: 1 } });

  await notes.trash(p, n.id);
  await notes.purge(p, n.id);
  await rejectsAs(t, notes.get(p, n.id), NotFound, 'purged for good');
  await rejectsAs(t, notes.revisions(p, n.id), NotFound, 'with its revisions');
  await rejectsAs(t, notes.purge(p, n.id), NotFound);

  // Expiry: only notes trashed before the cut-off go.
  const old = await notes.create(p, buildNote({ title: 'old' }));
  const recent = await notes.create(p, buildNote({ title: 'recent' }));
  await notes.trash(p, old.id);
  await fx.db.orm.em.fork().execute(`update notes set deleted_at = now() - interval '40 days' where id = ?`, [old.id]);
  await notes.trash(p, recent.id);
  const purged = await notes.purgeExpiredTrash(new Date(Date.now() - 30 * 86_400_000));
  t.ok(purged >= 1);
  await rejectsAs(t, notes.get(p, old.id), NotFound, 'expired trash purged');
  t.ok(await notes.get(p, recent.id), 'recent trash kept');
  t.ok(await notes.get(p, keep.id), 'live notes never expire');
  t.equal(await notes.purgeExpiredTrash(new Date(Date.now() - 30 * 86_400_000)), 0, 'nothing left to purge');
  t.equal(await notes.purgeExpiredTrash(new Date(Date.now() + 1000)), 1, 'a later cut-off takes the recent one');
});

t.test('revisions: list, read, diff, restore', async (t) => {
  const p = await fx.newPrincipal();
  const n = await notes.create(p, buildNote({ title: 'Doc', body: 'line one\nline two\n', tags: ['a'] }));
  await notes.update(p, n.id, { expected_version: 1, body: 'line one\nline 2\nline three\n', tags: ['b'] });
  await notes.append(p, n.id, { text: 'line four' });

  const list = await notes.revisions(p, n.id);
  t.same(
    list.items.map((r) => [r.version, r.change]),
    [
      [3, 'append'],
      [2, 'update'],
      [1, 'create'],
    ],
    'newest first, with the kind of change',
  );
  t.equal(list.items[2]!.body_bytes, Buffer.byteLength('line one\nline two\n'));
  t.notOk('body' in list.items[0]!, 'lists carry no bodies');
  const first = await notes.revision(p, n.id, 1);
  t.same([first.title, first.body, first.tags, first.change], ['Doc', 'line one\nline two\n', ['a'], 'create']);
  await rejectsAs(t, notes.revision(p, n.id, 9), NotFound, 'no such version');

  const paged = await notes.revisions(p, n.id, { limit: 2 });
  t.equal(paged.items.length, 2);
  t.ok(paged.next_cursor);
  const rest = await notes.revisions(p, n.id, { limit: 2, cursor: paged.next_cursor! });
  t.same(
    rest.items.map((r) => r.version),
    [1],
  );
  t.equal(rest.next_cursor, null);

  const d = await notes.diff(p, n.id, 1);
  t.equal(d.from_version, 1);
  t.equal(d.to_version, 3);
  t.match(d.diff, /--- v1/);
  t.match(d.diff, /\+\+\+ v3/);
  t.match(d.diff, /-line two\n/);
  t.match(d.diff, /\+line 2\n/);
  t.match(d.diff, /\+line four\n/);
  t.match(d.diff, /-Tags: a\n\+Tags: b\n/, 'tag changes show too');
  t.match((await notes.diff(p, n.id, 3)).diff, /^(?![\s\S]*\n[+-](?![+-]))/, 'no changed lines against itself');

  await rejectsAs(t, notes.restoreRevision(p, n.id, 1, 2), Conflict, 'restore with a stale version');
  const restored = await notes.restoreRevision(p, n.id, 1, 3);
  t.equal(restored.version, 4, 'a restore is a new version');
  t.same([restored.title, restored.body, restored.tags], ['Doc', 'line one\nline two\n', ['a']]);
  t.equal((await notes.revision(p, n.id, 4)).change, 'restore_revision');
  t.equal((await notes.revision(p, n.id, 3)).body, 'line one\nline 2\nline three\nline four', 'history is kept');
  t.same(await notes.tags(p), [{ tag: 'a', count: 1 }], 'tag counts follow the restore');
  await rejectsAs(t, notes.restoreRevision(p, n.id, 99), NotFound);
});

t.test('list: most recent first, keyset pages, limits, tag filter', async (t) => {
  const p = await fx.newPrincipal();
  const made: Note[] = [];
  for (let i = 0; i < 25; i++) made.push(await notes.create(p, buildNote({ title: `n${i}`, tags: i % 3 === 0 ? ['third'] : [] })));
  const touched = await notes.append(p, made[0]!.id, { text: 'bump' });

  const first = await notes.list(p);
  t.equal(first.limit, LIST_LIMIT_DEFAULT);
  t.equal(first.items.length, 20);
  t.equal(first.items[0]!.id, touched.id, 'the note changed last comes first');
  t.notOk('body' in first.items[0]!, 'no bodies in lists');
  t.equal(first.items[0]!.excerpt, touched.body.replace(/\s+/g, ' ').trim());
  t.equal(first.items[0]!.body_bytes, Buffer.byteLength(touched.body));
  const second = await notes.list(p, { cursor: first.next_cursor! });
  t.equal(second.items.length, 5);
  t.equal(second.next_cursor, null);
  const ids = [...first.items, ...second.items].map((i) => i.id);
  t.equal(new Set(ids).size, 25, 'no note twice, none missing');
  const times = [...first.items, ...second.items].map((i) => i.updated_at);
  t.same(times, [...times].sort().reverse(), 'ordered by updated_at desc');

  const clamped = await notes.list(p, { limit: 500 });
  t.equal(clamped.limit, LIST_LIMIT_MAX);
  t.equal(clamped.limit_clamped_from, 500);
  t.equal(clamped.items.length, 25);
  t.notOk('limit_clamped_from' in first);

  const tagged = await notes.list(p, { tags: ['THIRD'], limit: 3 });
  t.equal(tagged.items.length, 3);
  t.ok(tagged.items.every((i) => i.tags.includes('third')));
  const tagged2 = await notes.list(p, { tags: ['third'], limit: 3, cursor: tagged.next_cursor! });
  t.equal(tagged2.items.length + tagged.items.length + (tagged2.next_cursor ? 1 : 0) >= 6, true);
  t.same((await notes.list(p, { tags: ['third', 'nope'] })).items, [], 'all of the tags');
});

t.test('summary and tags: counts of live notes, kept in step with every write', async (t) => {
  const p = await fx.newPrincipal();
  t.same(await notes.summary(p.user.id), { count: 0, tags: {} }, 'a user without notes');
  t.same(await notes.summary('not-a-uuid'), { count: 0, tags: {} });
  const a = await notes.create(p, buildNote({ tags: ['work', 'urgent'] }));
  await notes.create(p, buildNote({ tags: ['work'] }));
  await notes.create(p, buildNote());
  t.same(await notes.summary(p.user.id), { count: 3, tags: { work: 2, urgent: 1 } });
  t.same(await notes.tags(p), [
    { tag: 'work', count: 2 },
    { tag: 'urgent', count: 1 },
  ]);
  await notes.update(p, a.id, { expected_version: 1, tags: ['home'] });
  t.same(await notes.summary(p.user.id), { count: 3, tags: { work: 1, home: 1 } }, 'tag change moves counts; zero counts disappear');
  const recount = await fx.db.orm.em
    .fork()
    .execute<{ tag: string; n: number }[]>(
      `select t as tag, count(*)::int as n from notes, unnest(tags) t where owner_id = ? and deleted_at is null group by t`,
      [p.user.id],
    );
  t.same(Object.fromEntries(recount.map((r) => [r.tag, r.n])), (await notes.summary(p.user.id)).tags, 'the counters equal a recount');
});

t.test('isolation: user B gets NotFound for every method on A’s note and never sees A’s notes', async (t) => {
  const a = await fx.newPrincipal('alice');
  const b = await fx.newPrincipal('bob');
  const n = await notes.create(a, buildNote({ title: 'Alice secret zebra', body: '# Plan\n- [ ] secret task\n', tags: ['private'] }));
  const trashed = await notes.create(a, buildNote({ title: 'Alice trashed zebra' }));
  await notes.trash(a, trashed.id);
  await notes.create(b, buildNote({ title: 'Bob note' }));

  const id = n.id;
  const calls: Array<[string, () => Promise<unknown>]> = [
    ['get', () => notes.get(b, id)],
    ['update', () => notes.update(b, id, { expected_version: 1, title: 'pwned' })],
    ['append', () => notes.append(b, id, { text: 'pwned' })],
    ['prepend', () => notes.prepend(b, id, { text: 'pwned' })],
    ['append under heading', () => notes.append(b, id, { text: 'pwned', heading: 'Plan' })],
    ['replaceSection', () => notes.replaceSection(b, id, { expected_version: 1, heading: 'Plan', text: 'pwned' })],
    ['trash', () => notes.trash(b, id)],
    ['untrash', () => notes.untrash(b, trashed.id)],
    ['purge', () => notes.purge(b, trashed.id)],
    ['revisions', () => notes.revisions(b, id)],
    // A well-formed cursor for that note's revisions (anyone can write one): the owner scope still holds.
    [
      'revisions page 2',
      () => notes.revisions(b, id, { cursor: Buffer.from(JSON.stringify([`revisions:${id}`, 2])).toString('base64url') }),
    ],
    ['revision', () => notes.revision(b, id, 1)],
    ['diff', () => notes.diff(b, id, 1)],
    ['restoreRevision', () => notes.restoreRevision(b, id, 1)],
  ];
  for (const [name, call] of calls) await rejectsAs(t, call(), NotFound, `B: ${name}`);

  t.same(await notes.get(a, id), n, "A's note is untouched");
  t.ok((await notes.get(a, trashed.id)).deleted_at, "A's trashed note is still in A's trash");
  t.same(
    (await notes.list(b)).items.map((i) => i.title),
    ['Bob note'],
    'list',
  );
  t.same((await notes.list(b, { trashed: true })).items, [], 'trash list');
  t.same((await notes.search(b, { q: 'zebra' })).items, [], 'search');
  t.same((await notes.search(b, { q: 'zebrra' })).items, [], 'fuzzy search does not use A’s words');
  t.same(await notes.tags(b), [], 'tags');
  t.same(await notes.summary(b.user.id), { count: 1, tags: {} }, 'summary');
});
