// The notetaker plugin over real HTTP (POST /curl/call/notetaker/...), against a real database:
// every function, argument errors, versions and conflicts, long notes in parts, byte ceilings,
// scopes, other users' notes, and the guides.
import t from 'tap';
import { startTestServer, req, call, createUser, type Reply } from '../helpers/server.ts';

const s = await startTestServer();
t.teardown(() => s.close());
const ada = await createUser(s, 'ada@example.com');
const bob = await createUser(s, 'bob@example.com');
const CEILING = 65536;

const nt = (token: string, fn: string, body: Record<string, unknown> = {}) => call(s, token, 'notetaker', fn, body);

async function ok(r: Promise<Reply> | Reply): Promise<any> {
  const reply = await r;
  if (reply.status !== 200) throw new Error(`expected 200, got ${reply.status}: ${reply.text}`);
  return reply.headers.get('content-type')?.startsWith('application/json') ? reply.json() : reply.text;
}

async function createNote(token: string, body: Record<string, unknown>): Promise<{ id: string; version: number }> {
  return ok(nt(token, 'create', body));
}

/** The JSON a 409 carries after its `current:` line. */
function currentOf(r: Reply): any {
  const at = r.text.indexOf('\ncurrent:\n');
  if (at < 0) throw new Error(`no current state in: ${r.text}`);
  return JSON.parse(r.text.slice(at + '\ncurrent:\n'.length));
}

t.test('help shows every function with its scope; the guides are served', async (t) => {
  const help = await req(s, 'GET', '/curl/help/notetaker', { token: ada.token });
  t.equal(help.status, 200);
  for (const fn of [
    'list',
    'get',
    'search',
    'create',
    'update',
    'append',
    'prepend',
    'replace_section',
    'delete',
    'restore',
    'revisions',
    'restore_revision',
    'tags',
    'generate_report',
  ])
    t.match(help.text, new RegExp(`notetaker\\.${fn}\\(`), fn);
  const get = await req(s, 'GET', '/curl/help/notetaker/get?examples=true', { token: ada.token });
  t.match(get.text, /REQUIRES\n {2}scope notes:read/);
  t.match(get.text, /EXAMPLES\n/);
  const upd = await req(s, 'GET', '/curl/help/notetaker/update', { token: ada.token });
  t.match(upd.text, /REQUIRES\n {2}scope notes:write/);
  t.match(upd.text, /expected_version: integer, required/);

  const list = await req(s, 'GET', '/curl/skill/notetaker', { token: ada.token });
  t.match(list.text, /how_it_works: /);
  t.match(list.text, /search_syntax: /);
  t.match(list.text, /editing_safely: /);
  const how = await req(s, 'GET', '/curl/skill/notetaker/how_it_works', { token: ada.token });
  t.equal(how.status, 200);
  t.match(how.text, /^---\nname: how_it_works/);
  t.match(how.text, /acting for \*\*one user\*\*/);
  for (const source of ['manual', 'agent', 'transcript', 'import'])
    t.match(how.text, new RegExp('`' + source + '`'), `names source ${source}`);
  t.match((await req(s, 'GET', '/curl/skill/notetaker/search_syntax', { token: ada.token })).text, /"exact phrase"|exact phrase/);
  t.match((await req(s, 'GET', '/curl/skill/notetaker/editing_safely', { token: ada.token })).text, /expected_version/);
});

t.test('create, get, list, search, tags', async (t) => {
  const created = await createNote(ada.token, {
    title: 'Café planning',
    body: '# Plan\nBook the café for the offsite.\n',
    tags: ['Offsite', 'planning'],
  });
  t.equal(created.version, 1);
  t.equal(Object.keys(created)[0], 'id', 'ids come first');
  t.same((created as any).tags, ['offsite', 'planning']);
  t.equal((created as any).source, 'agent', 'notes written by an agent say so');

  const note = await ok(nt(ada.token, 'get', { id: created.id }));
  t.equal(Object.keys(note)[0], 'id');
  t.equal(note.title, 'Café planning');
  t.equal(note.body, '# Plan\nBook the café for the offsite.\n');
  t.equal(note.total_chars, note.body.length);
  t.equal(note.next_offset, null, 'a short note comes whole');
  t.notOk('more' in note);

  const list = await ok(nt(ada.token, 'list'));
  const row = list.notes.find((n: any) => n.id === created.id);
  t.same(Object.keys(row).slice(0, 5), ['id', 'title', 'tags', 'updated_at', 'version']);
  t.notOk('body' in row, 'lists carry no bodies');
  t.equal(list.next_cursor, null);
  t.equal(list.total, list.notes.length);
  const tagged = await ok(nt(ada.token, 'list', { tags: ['OffSite'], excerpts: true }));
  t.equal(tagged.notes.length, 1);
  t.equal(tagged.total, 1);
  t.match(tagged.notes[0].excerpt, /Book the caf/);

  const hits = await ok(nt(ada.token, 'search', { q: 'cafe offsite' }));
  t.equal(hits.hits[0].id, created.id, 'accents are ignored');
  t.match(hits.hits[0].snippet, /«/);
  t.equal(hits.next_cursor, null);
  const none = await ok(nt(ada.token, 'search', { q: 'cafe -offsite' }));
  t.equal(none.hits.length, 0, '-word excludes');

  const tags = await ok(nt(ada.token, 'tags'));
  t.same(
    tags.tags.find((x: any) => x.tag === 'offsite'),
    { tag: 'offsite', count: 1 },
  );
  const pre = await ok(nt(ada.token, 'tags', { prefix: 'plan' }));
  t.same(
    pre.tags.map((x: any) => x.tag),
    ['planning'],
  );
});

t.test('arguments the functions will not take: 400 naming the argument', async (t) => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['create', {}, /- title: is required/],
    ['create', { title: 'x', tags: ['no spaces'] }, /tags/],
    ['create', { title: 'x', colour: 'red' }, /- colour: is not an argument of this function/],
    ['get', { id: 'not-a-uuid' }, /- id: must match format "uuid"/],
    ['get', { id: '0b7f3c52-5f5e-4a8e-9a43-2f4f6b1f0c11', offset: -1 }, /- offset: /],
    ['get', { id: '0b7f3c52-5f5e-4a8e-9a43-2f4f6b1f0c11', length: 0 }, /- length: /],
    ['list', { limit: 101 }, /- limit: must be <= 100/],
    ['list', { cursor: 'garbage' }, /- cursor: /],
    ['search', { q: '' }, /- q: /],
    ['search', { q: 'x', from: 'yesterday' }, /- from: /],
    ['update', { id: '0b7f3c52-5f5e-4a8e-9a43-2f4f6b1f0c11' }, /- expected_version: is required/],
    ['append', { id: '0b7f3c52-5f5e-4a8e-9a43-2f4f6b1f0c11', text: '' }, /- text: /],
    ['revisions', { id: '0b7f3c52-5f5e-4a8e-9a43-2f4f6b1f0c11', diff: true }, /- version: /],
    ['generate_report', { format: 'docx' }, /- format: /],
  ];
  for (const [fn, body, problem] of cases) {
    const r = await nt(ada.token, fn, body);
    t.equal(r.status, 400, `${fn} ${JSON.stringify(body)}`);
    t.match(r.text, problem, `${fn} names the argument`);
    if (!('cursor' in body) && !('diff' in body))
      t.match(r.text, new RegExp(`help: GET /curl/help/notetaker/${fn}`), 'with how to call it');
  }
  const { id, version } = await createNote(ada.token, { title: 'Args', body: '# Only\ntext\n' });
  const nothing = await nt(ada.token, 'update', { id, expected_version: version });
  t.equal(nothing.status, 400);
  t.match(nothing.text, /- title: give at least one of title, body, tags/);
  const past = await nt(ada.token, 'get', { id, offset: 999 });
  t.equal(past.status, 400);
  t.match(past.text, /- offset: must be at most 12/);
  const noSection = await nt(ada.token, 'get', { id, section: 'Missing' });
  t.equal(noSection.status, 400);
  t.match(noSection.text, /- section: no such heading; its headings are: Only/);
});

t.test('update needs the current version: a stale one is 409 with the current version and text head', async (t) => {
  const { id } = await createNote(ada.token, { title: 'Versions', body: 'first' });
  const v2 = await ok(nt(ada.token, 'update', { id, expected_version: 1, body: 'second' }));
  t.equal(v2.version, 2);
  t.equal(v2.body_chars, 6);
  const stale = await nt(ada.token, 'update', { id, expected_version: 1, body: 'clobber' });
  t.equal(stale.status, 409);
  t.match(stale.text, /^409 Conflict: note .* is now at version 2, not version 1/);
  t.match(stale.text, /expected_version 2/);
  const current = currentOf(stale);
  t.equal(current.id, id);
  t.equal(current.version, 2);
  t.equal(current.body_head, 'second');
  t.equal((await ok(nt(ada.token, 'get', { id }))).body, 'second', 'nothing was written');
  const retitled = await ok(nt(ada.token, 'update', { id, expected_version: 2, title: 'Versions (renamed)', tags: ['v'] }));
  t.equal(retitled.version, 3);
  t.equal(retitled.title, 'Versions (renamed)');
  t.same(retitled.tags, ['v']);
});

t.test('append and prepend need no version and never clobber; sections', async (t) => {
  const { id } = await createNote(ada.token, { title: 'Sections', body: '# Log\n- one\n\n## Decisions\n- keep it\n\n# Notes\nplain\n' });
  // Someone else edits in between: appends still land.
  await ok(nt(ada.token, 'update', { id, expected_version: 1, title: 'Sections!' }));
  const a = await ok(nt(ada.token, 'append', { id, text: '- two', heading: 'Log' }));
  t.equal(a.version, 3);
  const p = await ok(nt(ada.token, 'prepend', { id, text: 'Summary line' }));
  t.equal(p.version, 4);
  const end = await ok(nt(ada.token, 'append', { id, text: 'the end' }));
  t.equal(end.version, 5);
  const body = (await ok(nt(ada.token, 'get', { id }))).body as string;
  t.ok(body.startsWith('Summary line\n# Log\n'), 'prepended at the top');
  t.match(body, /## Decisions\n- keep it\n- two\n/, "appended at the end of Log's section (which holds Decisions)");
  t.ok(body.trimEnd().endsWith('the end'));
  const missing = await nt(ada.token, 'append', { id, text: 'x', heading: 'Nope' });
  t.equal(missing.status, 400);
  t.match(missing.text, /heading/);

  const section = await ok(nt(ada.token, 'get', { id, section: 'decisions' }));
  t.equal(section.section, 'Decisions');
  t.equal(section.body, '## Decisions\n- keep it\n- two\n\n');
  t.ok(section.note_chars > section.total_chars);

  const replaced = await ok(nt(ada.token, 'replace_section', { id, expected_version: 5, heading: 'Decisions', text: '- ship it' }));
  t.equal(replaced.version, 6);
  t.match((await ok(nt(ada.token, 'get', { id }))).body, /## Decisions\n- ship it\n\n# Notes\nplain/);
  const stale = await nt(ada.token, 'replace_section', { id, expected_version: 5, heading: 'Decisions', text: '- nope' });
  t.equal(stale.status, 409);
  t.equal(currentOf(stale).version, 6);
});

t.test('delete moves to the trash, restore brings it back', async (t) => {
  const { id } = await createNote(ada.token, { title: 'Trash me', tags: ['bin'] });
  const stale = await nt(ada.token, 'delete', { id, expected_version: 7 });
  t.equal(stale.status, 409);
  t.equal(currentOf(stale).version, 1);
  const del = await ok(nt(ada.token, 'delete', { id }));
  t.equal(del.version, 2);
  t.ok(del.deleted_at);
  t.match(del.more, /notetaker\.restore/);
  t.notOk(
    (await ok(nt(ada.token, 'list'))).notes.some((n: any) => n.id === id),
    'gone from the list',
  );
  const trash = await ok(nt(ada.token, 'list', { trashed: true }));
  t.ok(
    trash.notes.some((n: any) => n.id === id && n.deleted_at),
    'in the trash',
  );
  t.ok((await ok(nt(ada.token, 'get', { id }))).deleted_at, 'get still reads it, and says it is trashed');
  const again = await nt(ada.token, 'delete', { id });
  t.equal(again.status, 409, 'already in the trash');
  const back = await ok(nt(ada.token, 'restore', { id }));
  t.equal(back.version, 3);
  t.equal(back.deleted_at, null);
  t.ok((await ok(nt(ada.token, 'list', { tags: ['bin'] }))).notes.some((n: any) => n.id === id));
});

t.test('revisions: list, read one, diff, restore one', async (t) => {
  const { id } = await createNote(ada.token, { title: 'History', body: 'alpha\n' });
  await ok(nt(ada.token, 'update', { id, expected_version: 1, body: 'beta\n' }));
  await ok(nt(ada.token, 'append', { id, text: 'gamma' }));
  const list = await ok(nt(ada.token, 'revisions', { id }));
  t.same(
    list.revisions.map((r: any) => [r.version, r.change]),
    [
      [3, 'append'],
      [2, 'update'],
      [1, 'create'],
    ],
  );
  t.equal(list.next_cursor, null);
  const paged = await ok(nt(ada.token, 'revisions', { id, limit: 2 }));
  t.equal(paged.revisions.length, 2);
  t.ok(paged.next_cursor);
  const rest = await ok(nt(ada.token, 'revisions', { id, limit: 2, cursor: paged.next_cursor }));
  t.same(
    rest.revisions.map((r: any) => r.version),
    [1],
  );

  const v1 = await ok(nt(ada.token, 'revisions', { id, version: 1 }));
  t.equal(v1.body, 'alpha\n');
  t.equal(v1.change, 'create');
  t.equal(v1.next_offset, null);
  const diff = await ok(nt(ada.token, 'revisions', { id, version: 1, diff: true }));
  t.equal(diff.from_version, 1);
  t.equal(diff.to_version, 3);
  t.match(diff.diff, /-alpha/);
  t.match(diff.diff, /\+gamma/);
  const missing = await nt(ada.token, 'revisions', { id, version: 9 });
  t.equal(missing.status, 404);

  const restored = await ok(nt(ada.token, 'restore_revision', { id, version: 1 }));
  t.equal(restored.version, 4);
  t.equal((await ok(nt(ada.token, 'get', { id }))).body, 'alpha\n');
  const stale = await nt(ada.token, 'restore_revision', { id, version: 2, expected_version: 3 });
  t.equal(stale.status, 409);
  t.equal(currentOf(stale).version, 4);
});

t.test('a long note is read in parts until the end, every answer under the ceiling', async (t) => {
  const section = (i: number) => `## Part ${i}\n${`Line ${i}: "quoted" text with a tab\tand a backslash \\ here.\n`.repeat(120)}`;
  const body = Array.from({ length: 40 }, (_, i) => section(i)).join('\n'); // ~300 KB, escapes included
  const { id } = await createNote(ada.token, { title: 'Long', body });
  for (const [label, text] of [
    ['latin', body],
    ['cjk', '会議の記録。'.repeat(50_000) + '終わり'],
  ] as const) {
    const note = label === 'latin' ? { id } : await createNote(ada.token, { title: 'Long CJK', body: text });
    let offset = 0;
    let parts = 0;
    let read = '';
    for (;;) {
      // The CJK note asks for the largest parts: 50 000 characters would be 150 KB; parts are cut to fit.
      const r = await nt(ada.token, 'get', { id: note.id, offset, ...(label === 'cjk' ? { length: 50_000 } : {}) });
      t.equal(r.status, 200);
      t.ok(Buffer.byteLength(r.text) < CEILING, `${label} part ${parts} is ${Buffer.byteLength(r.text)} bytes`);
      const part = r.json();
      t.equal(part.offset, offset);
      t.equal(part.total_chars, Array.from(text).length);
      read += part.body;
      parts++;
      if (part.next_offset === null) break;
      t.match(part.more, new RegExp(`"offset": ${part.next_offset}`));
      if (parts === 1 && label === 'latin') t.ok(part.outline.length > 0, 'the first part of a long note has an outline');
      offset = part.next_offset;
      if (parts > 200) throw new Error('no end');
    }
    t.ok(parts > 3, `${label}: ${parts} parts`);
    t.equal(read, text, `${label}: the parts add up to the body`);
  }
  const small = await ok(nt(ada.token, 'get', { id, offset: 100, length: 50 }));
  t.equal(small.chars, 50);
  t.equal(small.next_offset, 150);
  const sec = await ok(nt(ada.token, 'get', { id, section: 'Part 7', length: 1000 }));
  t.ok(sec.body.startsWith('## Part 7\n'));
  t.ok(sec.next_offset !== null);
  const secRest = await ok(nt(ada.token, 'get', { id, section: 'Part 7', offset: sec.next_offset, length: 50_000 }));
  t.equal(sec.body + secRest.body, section(7) + '\n');
  // A caller's own lower budget is a 413, never a cut answer.
  const capped = await nt(ada.token, 'get', { id, max_bytes_llm: 1000 });
  t.equal(capped.status, 413);
});

t.test('a large list stays under the ceiling and pages through every note exactly once', async (t) => {
  const carol = await createUser(s, 'carol@example.com');
  const title = (i: number) => `${i} ${'議事録とメモ'.repeat(80)}`.slice(0, 500);
  const tags = Array.from({ length: 30 }, (_, i) => `tag-${i}-${'x'.repeat(50)}`);
  const ids = new Set<string>();
  for (let i = 0; i < 130; i++) ids.add((await createNote(carol.token, { title: title(i), tags })).id);
  const seen: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    const r = await nt(carol.token, 'list', { limit: 100, ...(cursor ? { cursor } : {}) });
    t.equal(r.status, 200);
    t.ok(Buffer.byteLength(r.text) < CEILING, `page ${pages} is ${Buffer.byteLength(r.text)} bytes`);
    const page = r.json();
    t.equal(page.total, 130);
    seen.push(...page.notes.map((n: any) => n.id));
    pages++;
    if (!page.next_cursor) break;
    t.match(page.more, /next_cursor/);
    cursor = page.next_cursor;
  }
  t.ok(pages > 2, `a page of 100 such rows is cut to fit: ${pages} pages`);
  t.equal(seen.length, 130);
  t.same(new Set(seen), ids, 'every note once');

  const hits: string[] = [];
  cursor = undefined;
  for (let i = 0; i < 50; i++) {
    const r = await nt(carol.token, 'search', { q: '議事録', limit: 50, ...(cursor ? { cursor } : {}) });
    t.equal(r.status, 200);
    t.ok(Buffer.byteLength(r.text) < CEILING);
    const page = r.json();
    hits.push(...page.hits.map((h: any) => h.id));
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
  }
  t.equal(new Set(hits).size, 130, 'search pages through every hit');
  const tagList = await ok(nt(carol.token, 'tags', { limit: 1000 }));
  t.equal(tagList.total, 30);
});

t.test('generate_report: markdown and html as text, pdf as a file, saved as a note', async (t) => {
  const dave = await createUser(s, 'dave@example.com');
  await createNote(dave.token, { title: 'Standup', body: 'We met.\n- [ ] write the report', tags: ['meeting'] });
  await createNote(dave.token, { title: 'Groceries', body: 'milk', tags: ['home'] });
  const md = await nt(dave.token, 'generate_report', { group_by: 'tag', title: 'Dave report' });
  t.equal(md.status, 200);
  t.match(md.headers.get('content-type'), /^text\/plain/);
  t.match(md.text, /Dave report/);
  t.match(md.text, /Standup/);
  t.match(md.text, /Groceries/);
  const html = await nt(dave.token, 'generate_report', { format: 'html', tags: ['meeting'] });
  t.equal(html.status, 200);
  t.match(html.text, /<html|<h1/i);
  t.notMatch(html.text, /Groceries/, 'the tag filter applies');
  const pdf = await fetch(`${s.url}/curl/call/notetaker/generate_report`, {
    method: 'POST',
    headers: { authorization: `Bearer ${dave.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ format: 'pdf' }),
  });
  t.equal(pdf.status, 200);
  t.equal(pdf.headers.get('content-type'), 'application/pdf');
  t.match(pdf.headers.get('content-disposition'), /attachment; filename=".*\.pdf"/);
  t.equal(
    Buffer.from(await pdf.arrayBuffer())
      .subarray(0, 5)
      .toString(),
    '%PDF-',
  );

  const saved = await nt(dave.token, 'generate_report', { save_as_note: true, title: 'Kept report' });
  t.equal(saved.status, 200);
  const m = /^<!-- saved as note ([0-9a-f-]{36})/.exec(saved.text);
  t.ok(m, 'the answer names the saved note');
  const note = await ok(nt(dave.token, 'get', { id: m![1]! }));
  t.match(note.body, /Standup/);
  const reader = (await ok(call(s, dave.token, 'admin', 'mint_curl_token', { scopes: ['notes:read'] }))).token;
  const refused = await nt(reader, 'generate_report', { save_as_note: true });
  t.equal(refused.status, 403, 'saving needs notes:write');
  t.match(refused.text, /notes:write/);
});

t.test('scopes: a read-only token can list and read but not write', async (t) => {
  const { id } = await createNote(ada.token, { title: 'Scoped' });
  const minted = await ok(call(s, ada.token, 'admin', 'mint_curl_token', { scopes: ['notes:read'] }));
  t.same(minted.scopes, ['notes:read']);
  t.equal((await nt(minted.token, 'list')).status, 200);
  t.equal((await nt(minted.token, 'get', { id })).status, 200);
  t.equal((await nt(minted.token, 'search', { q: 'scoped' })).status, 200);
  for (const [fn, body] of [
    ['create', { title: 'nope' }],
    ['append', { id, text: 'nope' }],
    ['update', { id, expected_version: 1, title: 'nope' }],
    ['delete', { id }],
  ] as const) {
    const r = await nt(minted.token, fn, body);
    t.equal(r.status, 403, fn);
    t.match(r.text, new RegExp(`notetaker\\.${fn} needs scope notes:write`));
  }
  const none = await ok(call(s, ada.token, 'admin', 'mint_curl_token', { scopes: ['files:read'] }));
  const r = await nt(none.token, 'list');
  t.equal(r.status, 403);
  t.match(r.text, /needs scope notes:read/);
});

t.test("another user's note ids are not found", async (t) => {
  const { id, version } = await createNote(ada.token, { title: 'Private', body: 'secret' });
  for (const [fn, body] of [
    ['get', { id }],
    ['update', { id, expected_version: version, body: 'mine now' }],
    ['append', { id, text: 'hi' }],
    ['prepend', { id, text: 'hi' }],
    ['replace_section', { id, expected_version: version, heading: 'x', text: 'y' }],
    ['delete', { id }],
    ['restore', { id }],
    ['revisions', { id }],
    ['revisions', { id, version: 1 }],
    ['revisions', { id, version: 1, diff: true }],
    ['restore_revision', { id, version: 1 }],
  ] as const) {
    const r = await nt(bob.token, fn, body);
    t.equal(r.status, 404, `bob: ${fn}`);
  }
  t.notOk((await ok(nt(bob.token, 'list'))).notes.some((n: any) => n.id === id));
  t.equal((await ok(nt(bob.token, 'search', { q: 'secret' }))).hits.length, 0);
  const still = await ok(nt(ada.token, 'get', { id }));
  t.equal(still.version, version);
  t.equal(still.body, 'secret');
});

t.test('a caller who lowers the ceiling with max_bytes_llm gets smaller parts and pages, not a 413', async (t) => {
  const body = Array.from({ length: 400 }, (_, i) => `Line ${i}: ${'lorem ipsum dolor sit amet '.repeat(4)}`).join('\n');
  const note = await createNote(ada.token, { title: 'Long for a small budget', body });
  const part = await nt(ada.token, 'get', { id: note.id, max_bytes_llm: 6000 });
  t.equal(part.status, 200, part.text.slice(0, 200));
  t.ok(Buffer.byteLength(part.text) <= 6000, `the part fits the caller's 6000 bytes (${Buffer.byteLength(part.text)})`);
  t.ok(part.json().next_offset > 0, 'and says where the next part starts');
  for (let i = 0; i < 30; i++) await createNote(ada.token, { title: `Small budget row ${i} ${'x'.repeat(120)}` });
  const page = await nt(ada.token, 'list', { limit: 100, max_bytes_llm: 3000 });
  t.equal(page.status, 200);
  t.ok(Buffer.byteLength(page.text) <= 3000);
  t.ok(page.json().next_cursor, 'a shorter page, with a cursor for the rest');
});

t.test('generate_report with save_as_note: a report too large for a note is a clear 400, and nothing is saved', async (t) => {
  const erin = await createUser(s, 'erin@example.com');
  // A report shows up to 20,000 characters of each note: 60 such notes are over 1 MiB.
  const items = Array.from({ length: 40 }, (_, i) => `- [ ] item ${i} ${'x'.repeat(480)}`).join('\n');
  for (let i = 0; i < 60; i++) t.equal((await nt(erin.token, 'create', { title: `Big ${i}`, body: items })).status, 200);
  const r = await nt(erin.token, 'generate_report', { save_as_note: true });
  t.equal(r.status, 400);
  t.match(r.text, /more than a note can hold \(1 MiB\)/);
  t.match(r.text, /save_as_note: /, 'names the argument');
  const saved = await nt(erin.token, 'list', { tags: ['report'] });
  t.same(saved.json().notes, [], 'no report note');
});
