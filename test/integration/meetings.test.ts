// The meetings plugin over real HTTP, against a real database: the namespace appears only for users
// who own a note tagged meeting (and an operator can force it either way), action items are listed
// and checked off as versioned edits, and the digest says what the meetings decided.
import t from 'tap';
import { startTestServer, req, call, createUser, type Reply } from '../helpers/server.ts';

const s = await startTestServer();
t.teardown(() => s.close());

async function ok(r: Promise<Reply> | Reply): Promise<any> {
  const reply = await r;
  if (reply.status !== 200) throw new Error(`expected 200, got ${reply.status}: ${reply.text}`);
  return reply.headers.get('content-type')?.startsWith('application/json') ? reply.json() : reply.text;
}
const mt = (token: string, fn: string, body: Record<string, unknown> = {}) => call(s, token, 'meetings', fn, body);
const create = (token: string, body: Record<string, unknown>) => ok(call(s, token, 'notetaker', 'create', body));
const today = new Date().toISOString().slice(0, 10);

const STANDUP = [
  `Date: ${today}`,
  '',
  '## Decisions',
  '- Ship v2 on Monday',
  '- Freeze the API',
  '',
  '## Roadmap',
  'We went through Q1.',
  '',
  '## Action items',
  '- [ ] Ada: update the docs',
  '- [x] Grace: book the room',
  '* [ ] Linus: review the patch',
  '```',
  '- [ ] not an item: inside code',
  '```',
  '1. [ ] Barbara: send the minutes',
  '',
].join('\n');

async function visible(token: string): Promise<boolean> {
  const help = await req(s, 'GET', '/curl/help', { token });
  return /^\s+meetings\s/m.test(help.text);
}

t.test('hidden from a user without a meeting note; appears on the next request after one is created', async (t) => {
  const una = await createUser(s, 'una@example.com');
  await create(una.token, { title: 'Not a meeting', tags: ['home'] });
  t.notOk(await visible(una.token), 'absent from /curl/help');
  const help = await req(s, 'GET', '/curl/help/meetings', { token: una.token });
  t.equal(help.status, 404);
  const missing = await req(s, 'GET', '/curl/help/nosuchnamespace', { token: una.token });
  t.equal(
    help.text.replace("'meetings'", "'X'"),
    missing.text.replace("'nosuchnamespace'", "'X'"),
    'the same answer as a namespace that does not exist',
  );
  t.equal((await mt(una.token, 'action_items')).status, 404);
  t.equal((await req(s, 'GET', '/curl/skill/meetings/how_it_works', { token: una.token })).status, 404);
  t.notMatch((await req(s, 'GET', '/curl/whoami', { token: una.token })).text, /meetings/);

  const note = await create(una.token, { title: 'Kickoff', body: '- [ ] say hello', tags: ['meeting'] });
  t.ok(await visible(una.token), 'listed right after');
  t.equal((await req(s, 'GET', '/curl/help/meetings', { token: una.token })).status, 200);
  const skill = await req(s, 'GET', '/curl/skill/meetings/how_it_works', { token: una.token });
  t.equal(skill.status, 200);
  t.match(skill.text, /^---\nname: how_it_works/);
  t.equal((await mt(una.token, 'action_items')).status, 200);

  // Trashing the only meeting note hides it again; restoring brings it back.
  await ok(call(s, una.token, 'notetaker', 'delete', { id: note.id }));
  t.notOk(await visible(una.token), 'hidden once no live note is tagged meeting');
  t.equal((await mt(una.token, 'digest')).status, 404);
  await ok(call(s, una.token, 'notetaker', 'restore', { id: note.id }));
  t.ok(await visible(una.token));
});

t.test('an operator can force it on or off whatever the rule says', async (t) => {
  const vic = await createUser(s, 'vic@example.com');
  const set = (access: string) =>
    ok(call(s, s.adminToken, 'admin', 'set_namespace_access', { user_id: vic.id, namespace: 'meetings', access }));
  t.notOk(await visible(vic.token));
  await set('enabled');
  t.ok(await visible(vic.token), 'enabled without any meeting note');
  const empty = await ok(mt(vic.token, 'action_items'));
  t.same(empty.meetings, []);
  t.equal(empty.next_cursor, null);
  await set('default');
  t.notOk(await visible(vic.token));
  await create(vic.token, { title: 'Sync', tags: ['meeting'] });
  t.ok(await visible(vic.token));
  await set('disabled');
  t.notOk(await visible(vic.token), 'disabled despite a meeting note');
  t.equal((await mt(vic.token, 'action_items')).status, 404);
  await set('default');
  t.ok(await visible(vic.token));
});

t.test('with notetaker switched off for a user, meetings cannot read or edit their notes either', async (t) => {
  const eve = await createUser(s, 'eve-meetings@example.com');
  const note = await create(eve.token, { title: 'Eve sync', body: '- [ ] eve task', tags: ['meeting'] });
  const setNotes = (access: string) =>
    ok(call(s, s.adminToken, 'admin', 'set_namespace_access', { user_id: eve.id, namespace: 'notetaker', access }));
  await setNotes('disabled');
  t.equal((await req(s, 'GET', '/api/v1/notetaker/notes', { token: eve.token })).status, 404, 'REST: notes hidden');
  const digest = await mt(eve.token, 'digest', { since: '2000-01-01' });
  t.equal(digest.status, 404, digest.text);
  t.notMatch(digest.text, /eve task/);
  const mark = await mt(eve.token, 'mark_done', { note_id: note.id, line: 1, expected_version: note.version });
  t.equal(mark.status, 404, mark.text);
  await setNotes('default');
  const after = await ok(call(s, eve.token, 'notetaker', 'get', { id: note.id }));
  t.equal(after.version, note.version, 'the note was not edited');
  t.ok((await ok(mt(eve.token, 'action_items'))).meetings.length > 0, 'switched back on: meetings reads them again');
});

t.test('action_items lists the open items with their lines; mark_done checks one off as a versioned edit', async (t) => {
  const ada = await createUser(s, 'ada@example.com');
  const standup = await create(ada.token, { title: 'Standup', body: STANDUP, tags: ['meeting', 'team'] });
  await create(ada.token, { title: 'Not a meeting', body: '- [ ] not listed', tags: ['todo'] });

  const all = await ok(mt(ada.token, 'action_items'));
  t.equal(all.meetings.length, 1);
  const m = all.meetings[0];
  t.equal(m.note_id, standup.id);
  t.equal(m.title, 'Standup');
  t.equal(m.date, today);
  t.equal(m.version, 1);
  t.same(m.items, [
    { line: 11, text: 'Ada: update the docs' },
    { line: 13, text: 'Linus: review the patch' },
    { line: 17, text: 'Barbara: send the minutes' },
  ]);
  t.equal(all.open_items, 3);
  t.equal(all.next_cursor, null);

  const done = await ok(mt(ada.token, 'mark_done', { note_id: standup.id, line: 13, expected_version: 1 }));
  t.same(done, { note_id: standup.id, line: 13, text: 'Linus: review the patch', done: true, version: 2, open_items_left: 2 });
  const note = await ok(call(s, ada.token, 'notetaker', 'get', { id: standup.id }));
  t.equal(note.version, 2);
  t.match(note.body, /^\* \[x\] Linus: review the patch$/m, 'the item shows [x]');
  t.equal(note.body.replace('* [x] Linus', '* [ ] Linus'), STANDUP, 'nothing else changed');

  const stale = await mt(ada.token, 'mark_done', { note_id: standup.id, line: 11, expected_version: 1 });
  t.equal(stale.status, 409);
  t.match(stale.text, /is now at version 2, not version 1/);
  const current = JSON.parse(stale.text.slice(stale.text.indexOf('\ncurrent:\n') + 10));
  t.equal(current.version, 2);
  t.same(
    current.open_items.map((i: any) => i.line),
    [11, 17],
  );
  t.match(
    (await ok(call(s, ada.token, 'notetaker', 'get', { id: standup.id }))).body,
    /- \[ \] Ada: update the docs/,
    'nothing was written',
  );

  const already = await mt(ada.token, 'mark_done', { note_id: standup.id, line: 13, expected_version: 2 });
  t.equal(already.status, 400);
  t.match(already.text, /- line: that item is already done/);
  const notItem = await mt(ada.token, 'mark_done', { note_id: standup.id, line: 8, expected_version: 2 });
  t.equal(notItem.status, 400);
  t.match(notItem.text, /- line: line 8 is not an open action item; it reads "We went through Q1\."/);
  const inCode = await mt(ada.token, 'mark_done', { note_id: standup.id, line: 15, expected_version: 2 });
  t.equal(inCode.status, 400, 'an item inside a code block is not an item');
  const past = await mt(ada.token, 'mark_done', { note_id: standup.id, line: 99, expected_version: 2 });
  t.match(past.text, /- line: the note has 18 lines/);
  const badArgs = await mt(ada.token, 'mark_done', { note_id: standup.id, line: 0 });
  t.equal(badArgs.status, 400);
  t.match(badArgs.text, /- expected_version: is required/);
  t.match(badArgs.text, /- line: must be >= 1/);

  const other = await create(ada.token, { title: 'Todo', body: '- [ ] x', tags: ['todo'] });
  const notMeeting = await mt(ada.token, 'mark_done', { note_id: other.id, line: 1, expected_version: 1 });
  t.equal(notMeeting.status, 400);
  t.match(notMeeting.text, /- note_id: is not tagged meeting/);

  const bob = await createUser(s, 'bob@example.com');
  await create(bob.token, { title: 'Bob meeting', tags: ['meeting'] });
  const foreign = await mt(bob.token, 'mark_done', { note_id: standup.id, line: 11, expected_version: 2 });
  t.equal(foreign.status, 404, "another user's note is not found");
  const foreignList = await mt(bob.token, 'action_items', { note_id: standup.id });
  t.equal(foreignList.status, 404);

  const reader = (await ok(call(s, ada.token, 'admin', 'mint_curl_token', { scopes: ['notes:read'] }))).token;
  t.equal((await mt(reader, 'action_items')).status, 200);
  const denied = await mt(reader, 'mark_done', { note_id: standup.id, line: 11, expected_version: 2 });
  t.equal(denied.status, 403);
  t.match(denied.text, /meetings\.mark_done needs scope notes:write/);
});

t.test('action_items pages through every item once, even while items are checked off', async (t) => {
  const pat = await createUser(s, 'pat@example.com');
  const ids: string[] = [];
  for (let n = 0; n < 6; n++) {
    const body = Array.from({ length: 5 }, (_, i) => `- [ ] item ${n}.${i}`).join('\n');
    ids.push((await create(pat.token, { title: `Meeting ${n}`, body, tags: ['meeting'] })).id);
  }
  const seen: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    const page = await ok(mt(pat.token, 'action_items', { limit: 4, ...(cursor ? { cursor } : {}) }));
    t.ok(page.open_items <= 4);
    for (const m of page.meetings) for (const i of m.items) seen.push(i.text);
    // Check off the first item of each page: the note moves to the front of the list.
    const first = page.meetings[0];
    if (first) await ok(mt(pat.token, 'mark_done', { note_id: first.note_id, line: first.items[0].line, expected_version: first.version }));
    pages++;
    if (!page.next_cursor) break;
    t.match(page.more, /next_cursor/);
    cursor = page.next_cursor;
    if (pages > 20) throw new Error('no end');
  }
  t.equal(seen.length, 30, `${pages} pages`);
  t.equal(new Set(seen).size, 30, 'no item twice, none skipped');

  const one = await ok(mt(pat.token, 'action_items', { note_id: ids[0], limit: 2 }));
  t.equal(one.meetings.length, 1);
  t.equal(one.open_items, 2);
  const rest = await ok(mt(pat.token, 'action_items', { note_id: ids[0], limit: 10, cursor: one.next_cursor }));
  t.equal(one.open_items + rest.open_items, (await ok(mt(pat.token, 'action_items', { note_id: ids[0] }))).open_items);
  t.equal(rest.next_cursor, null);
  const bad = await mt(pat.token, 'action_items', { cursor: 'nope' });
  t.equal(bad.status, 400);
  t.match(bad.text, /- cursor: /);
});

t.test('digest: per meeting its date, title, decisions, headlines and open items', async (t) => {
  const dee = await createUser(s, 'dee@example.com');
  const standup = await create(dee.token, { title: 'Standup', body: STANDUP, tags: ['meeting'] });
  await create(dee.token, { title: 'Retro 2020-01-15', body: 'Decision: stop the old thing\n- [ ] archive it', tags: ['meeting'] });
  await create(dee.token, {
    title: 'Planning',
    body: 'We planned the quarter.\nAgreed: hire two people\n- [ ] post the job ads',
    tags: ['meeting'],
  });
  await create(dee.token, { title: 'Shopping', body: '- [ ] milk', tags: ['home'] });

  const text = await ok(mt(dee.token, 'digest'));
  t.match(text, new RegExp(`^# Meetings since \\d{4}-\\d{2}-\\d{2}: 2\\n`), 'the old retro is not in the last 7 days');
  t.match(text, new RegExp(`## ${today} · Standup\\nnote ${standup.id} · version 1`));
  t.match(text, /\*\*Decisions\*\*\n- Ship v2 on Monday\n- Freeze the API/);
  t.match(text, /\*\*Headlines:\*\* Roadmap/);
  t.match(text, /\*\*Open items \(3\)\*\*\n- \[ \] Ada: update the docs \(line 11\)/);
  t.notMatch(text, /Grace: book the room/, 'done items are not open');
  t.match(text, /## \d{4}-\d{2}-\d{2} · Planning[^#]*- hire two people[^#]*We planned the quarter\.[^#]*post the job ads/);
  t.notMatch(text, /Retro|Shopping|milk/);

  const old = await ok(mt(dee.token, 'digest', { since: '2020-01-01', until: '2020-12-31' }));
  t.match(old, /^# Meetings from 2020-01-01 to 2020-12-31: 1/);
  t.match(old, /## 2020-01-15 · Retro 2020-01-15/);
  t.match(old, /- stop the old thing/);

  const paged = await ok(mt(dee.token, 'digest', { since: '2020-01-01', limit: 1 }));
  t.match(paged, /: 1 in this part/);
  const again = /More meetings: meetings\.digest (\{.*\})$/m.exec(paged);
  t.ok(again, 'says how to get the rest');
  const next = await ok(mt(dee.token, 'digest', JSON.parse(again![1]!)));
  t.match(next, /## /);
  t.notMatch(next, new RegExp(paged.split('\n')[2]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), 'the next part has the next meeting');

  const bad = await mt(dee.token, 'digest', { since: '2026-02-01', until: '2026-01-01' });
  t.equal(bad.status, 400);
  t.match(bad.text, /- until: /);
  t.equal((await mt(dee.token, 'digest', { since: 'last week' })).status, 400);
});
