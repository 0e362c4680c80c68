// Global search from outside, on a real server and database: notes, files and transcripts in one
// ranked list, kept current by the job queue (edits, trash, restore, uploads, extracted text), long
// documents searchable to their end, where each match is, permissions decided by the policy, paging,
// and bad input answered with a clear 400. Every REST answer is checked against the OpenAPI document.
import pg from 'pg';
import t from 'tap';
import { pdf } from '../helpers/pdf.ts';
import { call, createUser, req, startTestServer } from '../helpers/server.ts';
import { api } from './rest-support.ts';
import { runFolio } from '../helpers/cli.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { rankedStatement, type SearchService } from '../../core/domain/search/service.ts';
import { parseQuery } from '../../core/domain/notes/query.ts';

const s = await startTestServer({ overrides: { jobs: { pollSeconds: 1 } } });
t.teardown(() => s.close());
const alice = await createUser(s, 'alice@example.com');
const bob = await createUser(s, 'bob@example.com');

interface Hit {
  kind: string;
  id: string;
  title: string;
  snippet: string;
  where: { page?: number; start_seconds?: number; heading?: string } | null;
  link: string;
  match: string;
  rank: number;
  tags: string[];
  content_type: string | null;
}
interface Page {
  hits: Hit[];
  next_cursor: string | null;
  kinds: string[];
}

async function search(token: string, query: Record<string, string | string[]>): Promise<{ status: number; page: Page; text: string }> {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) for (const one of Array.isArray(v) ? v : [v]) qs.append(k, one);
  const r = await api(s, 'GET', `/search?${qs.toString()}`, { token });
  return { status: r.status, page: r.status === 200 ? r.json<Page>() : { hits: [], next_cursor: null, kinds: [] }, text: r.text };
}

/** Searches until `check` holds (the index job has run), failing after a generous bound. */
async function until(token: string, query: Record<string, string | string[]>, check: (p: Page) => boolean): Promise<Page> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { status, page, text } = await search(token, query);
    if (status !== 200) throw new Error(`search answered ${status}: ${text}`);
    if (check(page)) return page;
    if (Date.now() > deadline) throw new Error(`search never satisfied the check for ${JSON.stringify(query)}: ${JSON.stringify(page)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function note(token: string, body: { title: string; body?: string; tags?: string[] }): Promise<{ id: string; version: number }> {
  const r = await api(s, 'POST', '/notetaker/notes', { token, body });
  if (r.status !== 201) throw new Error(`create note: ${r.status} ${r.text}`);
  return r.json();
}

async function upload(token: string, name: string, body: string | Buffer): Promise<{ id: string }> {
  const res = await fetch(`${s.url}/api/v1/filedb/files?name=${encodeURIComponent(name)}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body,
  });
  if (res.status !== 201) throw new Error(`upload: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: string };
}

const ids = (p: Page) => p.hits.map((h) => h.id);

t.test('a note is found once written, follows its edits, leaves with the trash and comes back with a restore', async (t) => {
  const n = await note(alice.token, {
    title: 'Quarterly planning',
    body: 'Intro line.\n\n## Budget\n\nThe zeppelin allocation for next year.\n',
    tags: ['planning'],
  });
  const found = await until(alice.token, { q: 'zeppelin' }, (p) => ids(p).includes(n.id));
  const hit = found.hits.find((h) => h.id === n.id)!;
  t.equal(hit.kind, 'note');
  t.equal(hit.title, 'Quarterly planning');
  t.match(hit.snippet, /«zeppelin»/, 'the snippet marks the match');
  t.same(hit.where, { heading: 'Budget' }, 'the section the match is in');
  t.equal(hit.link, `${s.url}/api/v1/notetaker/notes/${n.id}`);
  t.same(hit.tags, ['planning']);
  t.ok(found.kinds.includes('note') && found.kinds.includes('file') && found.kinds.includes('transcript'));

  const edited = await api(s, 'PATCH', `/notetaker/notes/${n.id}`, {
    token: alice.token,
    body: { body: 'Now about a dirigible instead.' },
    headers: { 'if-match': `"${n.version}"` },
  });
  t.equal(edited.status, 200, edited.text);
  await until(alice.token, { q: 'dirigible' }, (p) => ids(p).includes(n.id));
  t.notOk(ids((await search(alice.token, { q: 'zeppelin' })).page).includes(n.id), 'the old text is no longer found');

  t.equal((await api(s, 'DELETE', `/notetaker/notes/${n.id}`, { token: alice.token })).status, 200);
  await until(alice.token, { q: 'dirigible' }, (p) => !ids(p).includes(n.id));
  const restored = await api(s, 'POST', `/notetaker/notes/${n.id}/restore`, { token: alice.token });
  t.equal(restored.status, 200, restored.text);
  await until(alice.token, { q: 'dirigible' }, (p) => ids(p).includes(n.id));
});

t.test('a phrase matches its words in order only, alone, with OR, and excluded', async (t) => {
  // A phrase is checked on the chunks that hold all its words, newest first (rankedStatement):
  // chunks with the words apart must not match, and exclusions and alternatives still apply.
  const together = await note(alice.token, { title: 'Dock notes', body: 'We lit the walnut harbor lantern at dusk.' });
  const apart = await note(alice.token, { title: 'Dock inventory', body: 'A lantern stood near the walnut harbor office.' });
  const again = await note(alice.token, { title: 'Dock notes, later', body: 'The walnut harbor lantern was lit again.' });
  const other = await note(alice.token, { title: 'Orchard', body: 'Quince jelly, twelve jars.' });
  await until(alice.token, { q: 'quince' }, (p) => ids(p).includes(other.id));
  await until(alice.token, { q: 'walnut' }, (p) => [together.id, apart.id, again.id].every((id) => ids(p).includes(id)));
  const sorted = (p: Page) => ids(p).sort();
  t.same(sorted((await search(alice.token, { q: '"walnut harbor lantern"' })).page), [together.id, again.id].sort(), 'in order only');
  t.same(
    sorted((await search(alice.token, { q: '"walnut harbor lantern" OR quince' })).page),
    [together.id, again.id, other.id].sort(),
    'a phrase OR a word',
  );
  t.same(sorted((await search(alice.token, { q: 'lantern -"walnut harbor lantern"' })).page), [apart.id], 'a phrase excluded');
  t.same(
    sorted((await search(alice.token, { q: '"walnut harbor"' })).page),
    [together.id, apart.id, again.id].sort(),
    'a shorter phrase all three hold',
  );
  t.same(sorted((await search(alice.token, { q: '"lantern walnut"' })).page), [], 'the words the other way round: nothing');

  // Which form runs depends on the planner; both must give the same hits in the same order.
  const em = s.folio.db.orm.em.fork();
  const f = { kinds: ['note', 'file', 'transcript'], tags: undefined, range: {}, type: undefined };
  for (const q of [
    '"walnut harbor lantern"',
    '"walnut harbor lantern" OR quince',
    'lantern -"walnut harbor lantern"',
    '"lantern walnut"',
  ]) {
    const [wide, narrow] = await Promise.all(
      [false, true].map(async (n) =>
        (await em.execute<Array<{ id: string }>>(...rankedStatement(alice.id, parseQuery(q), f, undefined, 50, n))).map((r) => r.id),
      ),
    );
    t.same(narrow, wide, `${q}: the narrowed form finds what the plain one does`);
  }
});

t.test('a long note is searchable to its end: a phrase past 16,383 words, with its snippet', async (t) => {
  const words = Array.from({ length: 30_000 }, (_, i) => `w${i % 997}`).join(' ');
  const n = await note(alice.token, { title: 'Very long', body: `${words}\n\nthe closing remark about marmalade sandwiches` });
  const page = await until(alice.token, { q: '"marmalade sandwiches"' }, (p) => ids(p).includes(n.id));
  t.match(page.hits.find((h) => h.id === n.id)!.snippet, /«marmalade» «sandwiches»|«marmalade sandwiches»/);
});

t.test('files by name and text, a PDF page by page; the file-type filter', async (t) => {
  const txt = await upload(alice.token, 'grocery-list.txt', 'apples, quinces and elderflower cordial');
  const doc = await upload(
    alice.token,
    'handbook.pdf',
    await pdf(['Welcome aboard.', 'Page two covers the hovercraft policy.', 'The end.']),
  );
  // A word no other resource is close to: a search for 'quinces' that ran while the file was being
  // indexed found nothing, fell back to close words ('quince') and also found the phrase test's
  // "Quince jelly" note, which then ranked first (seen once in CI, on PostgreSQL).
  const byText = await until(alice.token, { q: 'elderflower' }, (p) => ids(p).includes(txt.id));
  t.equal(byText.hits[0]!.kind, 'file');
  t.equal(byText.hits[0]!.link, `${s.url}/api/v1/filedb/files/${txt.id}`);
  const byName = await until(alice.token, { q: 'grocery' }, (p) => ids(p).includes(txt.id));
  t.equal(byName.hits.find((h) => h.id === txt.id)!.where, null, 'a match in the name has no place in the text');
  const page = await until(alice.token, { q: 'hovercraft' }, (p) => ids(p).includes(doc.id));
  const hit = page.hits.find((h) => h.id === doc.id)!;
  t.same(hit.where, { page: 2 }, 'the page the match is on');
  t.equal(hit.content_type, 'application/pdf');
  t.same(ids((await search(alice.token, { q: 'hovercraft', type: 'text/*' })).page), [], 'type=text/* leaves the PDF out');
  t.same(ids((await search(alice.token, { q: 'hovercraft', type: 'application/pdf' })).page), [doc.id]);
  t.same(ids((await search(alice.token, { q: 'hovercraft', kind: 'note' })).page), [], 'kind=note leaves files out');
});

t.test('a transcript is found with the time of the segment that holds the match', async (t) => {
  const audio = await upload(alice.token, 'standup.wav', Buffer.from('not really audio'));
  const id = '4b1a7f0e-5c2d-4e3f-8a9b-0c1d2e3f4a5b';
  const result = {
    text: 'good morning everyone. the kumquat shipment is late.',
    language: 'en',
    duration: 20,
    segments: [
      { start: 0, end: 4.5, text: 'good morning everyone.' },
      { start: 12.25, end: 16, text: 'the kumquat shipment is late.' },
    ],
  };
  await s.folio.db.orm.em.fork().execute(
    `insert into transcriptions (id, owner_id, file_id, file_version, status, progress, engine, tags, result, finished_at)
     values (?, ?, ?, 1, 'succeeded', 100, 'local', '{meeting}', ?::jsonb, now())`,
    [id, alice.id, audio.id, JSON.stringify(result)],
  );
  // A job finishing tells search in its transaction; here the row was written by hand, so search is told directly.
  const search_ = s.folio.service<SearchService>('search');
  await search_.index([{ kind: 'transcript', owner: alice.id, id }]);
  const page = await search(alice.token, { q: 'kumquat' });
  const hit = page.page.hits.find((h) => h.id === id)!;
  t.equal(hit.kind, 'transcript');
  t.same(hit.where, { start_seconds: 12.25 });
  t.equal(hit.title, 'Transcript: standup.wav');
  t.equal(hit.link, `${s.url}/api/v1/transcribe/jobs/${id}`);
  t.same(ids((await search(bob.token, { q: 'kumquat' })).page), [], "bob does not find alice's transcript");
});

t.test('permissions: the policy decides which kinds a caller sees', async (t) => {
  const n = await note(alice.token, { title: 'Secret recipe', body: 'capybara stew' });
  const f = await upload(alice.token, 'capybara.txt', 'capybara facts');
  await until(alice.token, { q: 'capybara' }, (p) => ids(p).includes(n.id) && ids(p).includes(f.id));
  t.same((await search(bob.token, { q: 'capybara' })).page.hits, [], 'another user finds nothing of hers');

  // A token that may read notes only.
  const minted = await call(s, alice.token, 'admin', 'mint_curl_token', { scopes: ['search', 'notes:read'] });
  t.equal(minted.status, 200, minted.text);
  const notesOnly = (await search(minted.json<{ token: string }>().token, { q: 'capybara' })).page;
  t.same(ids(notesOnly), [n.id]);
  t.same(notesOnly.kinds, ['note']);
  // A token without the search scope is refused.
  const noSearch = await call(s, alice.token, 'admin', 'mint_curl_token', { scopes: ['notes:read'] });
  const refused = await api(s, 'GET', '/search?q=capybara', { token: noSearch.json<{ token: string }>().token });
  t.equal(refused.status, 403);
  t.equal(refused.json<{ code: string }>().code, 'missing_scope');

  // The operator switches files off for alice: her files leave every answer.
  const off = await call(s, s.adminToken, 'admin', 'set_namespace_access', { user_id: alice.id, namespace: 'files', access: 'disabled' });
  t.equal(off.status, 200, off.text);
  const without = (await search(alice.token, { q: 'capybara' })).page;
  t.same(ids(without), [n.id]);
  t.notOk(without.kinds.includes('file'));
  const kinds = await api(s, 'GET', '/search/kinds', { token: alice.token });
  t.same(
    kinds.json<{ kinds: Array<{ kind: string; readable: boolean }> }>().kinds.map((k) => [k.kind, k.readable]),
    [
      ['note', true],
      ['file', false],
      ['transcript', true],
    ],
  );
  await call(s, s.adminToken, 'admin', 'set_namespace_access', { user_id: alice.id, namespace: 'files', access: 'default' });
  t.ok(ids((await search(alice.token, { q: 'capybara' })).page).includes(f.id), 'back when switched on again');

  // The search group itself switched off: 404, as an unknown route.
  await call(s, s.adminToken, 'admin', 'set_namespace_access', { user_id: bob.id, namespace: 'search', access: 'disabled' });
  t.equal((await req(s, 'GET', '/api/v1/search?q=capybara', { token: bob.token })).status, 404);
  await call(s, s.adminToken, 'admin', 'set_namespace_access', { user_id: bob.id, namespace: 'search', access: 'default' });
});

t.test('pages: every hit once, in rank order; typos; any language', async (t) => {
  const made: string[] = [];
  for (let i = 0; i < 5; i++) made.push((await note(bob.token, { title: `Walrus ${i}`, body: `walrus ${'walrus '.repeat(i)}` })).id);
  await until(bob.token, { q: 'walrus' }, (p) => p.hits.length === 5);
  const seen: string[] = [];
  const ranks: number[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: Page = (await search(bob.token, { q: 'walrus', limit: '2', ...(cursor ? { cursor } : {}) })).page;
    seen.push(...ids(page));
    ranks.push(...page.hits.map((h) => h.rank));
    cursor = page.next_cursor;
    pages++;
  } while (cursor && pages < 10);
  t.equal(pages, 3);
  t.same([...seen].sort(), [...made].sort(), 'every note once');
  t.same(
    ranks,
    [...ranks].sort((a, b) => b - a),
    'best first, across pages',
  );

  const typo = (await search(bob.token, { q: 'walrsu' })).page;
  t.ok(typo.hits.length > 0 && typo.hits.every((h) => h.match === 'fuzzy'), 'a misspelling finds the word, said to be fuzzy');

  const ja = await note(bob.token, { title: '議事録', body: '来週の会議について話しました' });
  await until(bob.token, { q: '会議' }, (p) => ids(p).includes(ja.id));
  const cafe = await note(bob.token, { title: 'Café notes', body: 'Crème brûlée at the café' });
  await until(bob.token, { q: 'creme brulee' }, (p) => ids(p).includes(cafe.id));
});

t.test('bad input: a clear 400 or an empty answer, never a 500', async (t) => {
  const bad = async (query: Record<string, string>, what: RegExp) => {
    const r = await search(alice.token, query);
    t.equal(r.status, 400, `${JSON.stringify(query).slice(0, 80)}: ${r.text.slice(0, 200)}`);
    t.match(r.text, what);
  };
  await bad({ q: '' }, /q/);
  await bad({ q: 'x'.repeat(10_000) }, /q/);
  await bad({ q: Array.from({ length: 100 }, (_, i) => `w${i}`).join(' OR ') }, /at most 32/);
  await bad({ q: '?!.,;' }, /no words/);
  await bad({ q: 'walrus', kind: 'spaceship' }, /has 'spaceship', which is not a kind of result; the kinds are/);
  const where = await api(s, 'GET', '/search?q=walrus&kind=spaceship', { token: alice.token });
  t.match(where.json().errors[0], { in: 'query', path: '/kind' }, 'the query parameter is named, not a body field');
  await bad({ q: 'walrus', type: 'pdf' }, /content type/);
  await bad({ q: 'walrus', from: 'yesterday' }, /from/);
  await bad({ q: 'walrus', cursor: 'not-a-cursor' }, /cursor/);
  const other = await search(alice.token, { q: 'capybara OR hovercraft OR quinces', limit: '1' });
  t.ok(other.page.next_cursor, 'a first page with more');
  await bad({ q: 'walrus', cursor: other.page.next_cursor! }, /another query/);
  const bobs = await search(bob.token, { q: 'walrus', limit: '1' });
  const stolen = await search(alice.token, { q: 'walrus', limit: '1', cursor: bobs.page.next_cursor! });
  t.equal(stolen.status, 400, "another user's cursor is refused");

  for (const q of ['"unbalanced quote', 'the a of', '-walrus', 'walrus -walrus', '"" OR ""x']) {
    const r = await search(alice.token, { q });
    t.ok(r.status === 200 || r.status === 400, `${q}: ${r.status}`);
    t.not(r.status, 500);
  }
});

t.test('curl and MCP surfaces: search.query shaped for agents, with the call that continues', async (t) => {
  const r = await call(s, bob.token, 'search', 'query', { q: 'walrus', limit: 2 });
  t.equal(r.status, 200, r.text);
  const body = r.json<{ hits: Array<{ kind: string; id: string }>; next: string | null; kinds: string[] }>();
  t.equal(body.hits.length, 2);
  t.same(Object.keys(body.hits[0]!).slice(0, 2), ['kind', 'id'], 'ids first');
  t.match(body.next, /^search\.query \{.*"cursor":/, 'next is the call to make');
  const args = JSON.parse(body.next!.slice('search.query '.length)) as Record<string, unknown>;
  const second = await call(s, bob.token, 'search', 'query', args);
  const ids2 = second.json<{ hits: Array<{ id: string }> }>().hits.map((h) => h.id);
  t.equal(ids2.length, 2);
  t.notOk(
    ids2.some((id) => body.hits.some((h) => h.id === id)),
    'the next page has other hits',
  );

  // A small byte ceiling: fewer hits, and the continuation starts right after them.
  const small = await call(s, bob.token, 'search', 'query', { q: 'walrus', limit: 5, max_bytes_llm: 1200 });
  t.equal(small.status, 200, small.text);
  const smallBody = small.json<{ hits: Array<{ id: string }>; next: string | null }>();
  t.ok(smallBody.hits.length < 5 && smallBody.next, 'the ceiling cut the page, and next continues it');

  const kinds = await call(s, bob.token, 'search', 'kinds');
  t.equal(kinds.status, 200);
  t.same(
    kinds.json<{ kinds: Array<{ kind: string }> }>().kinds.map((k) => k.kind),
    ['note', 'file', 'transcript'],
  );
});

t.test('a note appended to many times in a row has one index job waiting, and its last words are found', async (t) => {
  const n = await note(alice.token, { title: 'Live log', body: 'started' });
  const em = s.folio.db.orm.em.fork();
  const waiting = async () => {
    const [r] = await em.execute<Array<{ n: number }>>(
      `select count(*)::int as n from pgboss.job where name = 'search-index' and state in ('created', 'retry') and data::text like ?`,
      [`%${n.id}%`],
    );
    return r!.n;
  };
  let most = 0;
  for (let i = 0; i < 40; i++) {
    const r = await api(s, 'PATCH', `/notetaker/notes/${n.id}`, { token: alice.token, body: { append: { text: `entry${i} logged` } } });
    t.equal(r.status, 200, r.text);
    most = Math.max(most, await waiting());
  }
  t.equal(most, 1, 'never more than one index job waiting for the note, however many writes');
  await until(alice.token, { q: 'entry39' }, (p) => ids(p).includes(n.id));
  // A job that was waiting while an earlier one already read the last write finds it indexed and is done.
  const busy = async () => {
    const [r] = await em.execute<Array<{ n: number }>>(
      `select count(*)::int as n from pgboss.job where name = 'search-index' and state in ('created', 'retry', 'active') and data::text like ?`,
      [`%${n.id}%`],
    );
    return r!.n;
  };
  const deadline = Date.now() + 30_000;
  while ((await busy()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  t.equal(await busy(), 0, 'the queue drains once the writes stop');

  // A job for a resource indexed at its version already writes nothing (its rows keep their xmin).
  const versions = async () =>
    (await em.execute<Array<{ x: string }>>(`select xmin::text as x from search_chunks where resource_id = ? order by chunk`, [n.id])).map(
      (r) => r.x,
    );
  const before = await versions();
  await s.folio.service<SearchService>('search').index([{ kind: 'note', owner: alice.id, id: n.id }]);
  t.same(await versions(), before, 'a redundant job rewrote nothing');
  const health = await req(s, 'GET', '/health');
  t.equal(health.json<{ search_index: { pending: number } }>().search_index.pending, 0, '/health tells how many wait');
});

t.test('a file replaced and deleted many times in a row has one index job waiting; the end state is found', async (t) => {
  const f = await upload(alice.token, 'tally.txt', 'tally0 counted');
  const em = s.folio.db.orm.em.fork();
  const waiting = async () => {
    const [r] = await em.execute<Array<{ n: number }>>(
      `select count(*)::int as n from pgboss.job where name = 'search-index' and state in ('created', 'retry') and data::text like ?`,
      [`%${f.id}%`],
    );
    return r!.n;
  };
  let most = await waiting();
  for (let i = 1; i <= 12; i++) {
    const meta = await api(s, 'GET', `/filedb/files/${f.id}`, { token: alice.token });
    const res = await fetch(`${s.url}/api/v1/filedb/files/${f.id}/content`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${alice.token}`, 'if-match': meta.headers.get('etag') ?? '', 'content-type': 'text/plain' },
      body: `tally${i} counted`,
    });
    t.equal(res.status, 200, await res.text());
    most = Math.max(most, await waiting());
  }
  t.equal(most, 1, 'never more than one index job waiting for the file');
  await until(alice.token, { q: 'tally12' }, (p) => ids(p).includes(f.id));
  const gone = await api(s, 'DELETE', `/filedb/files/${f.id}`, { token: alice.token });
  t.ok(gone.status < 300, gone.text);
  t.ok((await waiting()) <= 1, 'the delete waits in the same job at most');
  await until(alice.token, { q: 'tally12' }, (p) => !ids(p).includes(f.id));
});

t.test(
  'a write that commits while its waiting job starts is indexed: the job waits for it',
  { skip: s.folio.config.databaseUrl ? false : 'the embedded engine has one connection: no job runs while a write is open' },
  async (t) => {
    const search_ = s.folio.service<SearchService>('search');
    const n = await note(alice.token, { title: 'Race base', body: 'alpha' });
    await until(alice.token, { q: 'Race base' }, (p) => ids(p).includes(n.id));
    const change = { kind: 'note', owner: alice.id, id: n.id };
    const q = async <T>(sql: string, p: unknown[] = []) => s.folio.db.orm.em.fork().execute<T[]>(sql, p);
    // An earlier write of the note is waiting for its job (the job is taken but has not started).
    await q(`insert into search_pending (owner_id, kind, resource_id) values (?, 'note', ?)`, [alice.id, n.id]);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let inWrite!: () => void;
    const wrote = new Promise<void>((r) => (inWrite = r));
    const writer = s.folio.db.orm.em.fork().transactional(async (em) => {
      await em.execute(`update notes set title = 'zebrafishrace', version = version + 1, updated_at = now() where id = ?`, [n.id]);
      t.same(await search_.pending(em, [change]), [], 'already waiting: no second job');
      inWrite();
      await gate; // not committed yet
    });
    await wrote;
    const job = search_.index([change]); // the waiting job starts now
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const [w] = await q<{ n: number }>(`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock'`);
      if (w!.n > 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    release();
    await writer;
    await job;
    const [held] = await q<{ title: string }>(`select title from search_chunks where resource_id = ? and chunk = 0`, [n.id]);
    t.equal(held?.title, 'zebrafishrace', 'the index holds the write that committed while the job started');
  },
);

t.test('a rebuild reads every source again: what the index lost comes back, what is gone leaves', async (t) => {
  const search_ = s.folio.service<SearchService>('search');
  const keep = await note(alice.token, { title: 'Rebuild me', body: 'ocelot sightings' });
  const typo = await note(alice.token, { title: 'Cluster notes', body: 'kubernetes upgrade plan' });
  await until(alice.token, { q: 'ocelot' }, (p) => ids(p).includes(keep.id));
  await until(alice.token, { q: 'kuberntes' }, (p) => ids(p).includes(typo.id));
  const em = s.folio.db.orm.em.fork();
  // The index loses a resource, and holds one that is gone (as after restoring an older backup).
  await em.execute(`delete from search_chunks where resource_id = ?`, [keep.id]);
  const ghost = '7f3e2d1c-0b9a-4876-9543-210fedcba987';
  await em.execute(
    `insert into search_chunks (owner_id, kind, resource_id, chunk, title, updated_at, text, vector)
     values (?, 'note', ?, 0, 'ghost', now(), 'ocelot ghost', '''ocelot'':1 ''ghost'':2')`,
    [alice.id, ghost],
  );
  t.same(ids((await search(alice.token, { q: 'ocelot' })).page), [ghost]);
  const progress: number[] = [];
  const r = await search_.rebuild({ progress: (done) => progress.push(done) });
  t.ok(r.indexed > 0 && r.removed >= 1, JSON.stringify(r));
  t.ok(progress.length > 0 && progress.every((d, i) => i === 0 || d >= progress[i - 1]!), 'progress only goes forward');
  t.same(ids((await search(alice.token, { q: 'ocelot' })).page), [keep.id]);
  // A resource the index held unchanged is written again too, its words with it: typos still find it.
  t.same(ids((await search(alice.token, { q: 'kuberntes' })).page), [typo.id], 'typo tolerance survives a rebuild');
});

t.test('folio search: the CLI over the same route, as tab-separated lines in a pipe and as JSON', async (t) => {
  const home = await mkdtemp(path.join(tmpdir(), 'folio-cli-search-'));
  t.teardown(() => rm(home, { recursive: true, force: true }));
  const env = { FOLIO_URL: s.url, FOLIO_TOKEN: alice.token };
  const lines = await runFolio(home, ['search', 'hovercraft'], { env });
  t.equal(lines.code, 0, lines.stderr);
  const [kind, id, where] = lines.stdout.trim().split('\t');
  t.equal(kind, 'file');
  t.match(id, /^[0-9a-f-]{36}$/);
  t.equal(where, 'p.2', 'where the match is, in short');
  const json = await runFolio(home, ['search', 'kumquat', '--kind', 'transcript', '--json', 'kind,where'], { env });
  t.equal(json.code, 0, json.stderr);
  t.same(JSON.parse(json.stdout), [{ kind: 'transcript', where: { start_seconds: 12.25 } }]);
  const bad = await runFolio(home, ['search', '?!'], { env });
  t.not(bad.code, 0);
  t.match(bad.stderr, /no words to search for/);
});

t.test(
  'a search that runs past its time limit is a clear 503 search_timeout, not a 500',
  { skip: s.folio.config.databaseUrl ? false : 'the embedded engine has no statement timeout' },
  async (t) => {
    // Another session holds the index locked: the search waits on it until its statement timeout
    // (5 s) stops it, as a too-broad query on a big index would be stopped.
    const other = new pg.Client({ connectionString: s.folio.config.databaseUrl! });
    await other.connect();
    t.teardown(() => other.end());
    await other.query('begin');
    await other.query('lock table search_chunks in access exclusive mode');
    let r: Awaited<ReturnType<typeof search>>;
    try {
      r = await search(alice.token, { q: 'walnut' });
    } finally {
      await other.query('rollback');
    }
    t.equal(r.status, 503, r.text);
    const problem = JSON.parse(r.text) as { code: string; detail: string };
    t.equal(problem.code, 'search_timeout');
    t.match(problem.detail, /stopped after 5 s.*narrow it/);
    t.equal((await search(alice.token, { q: 'walnut' })).status, 200, 'the next search, unlocked, works');
  },
);
