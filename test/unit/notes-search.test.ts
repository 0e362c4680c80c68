// Notes search against a real database (PGlite, or the PostgreSQL server in DATABASE_URL): ranking,
// web-search syntax, filters, pages, CJK, accent folding, typo tolerance, and the word table.
import t from 'tap';
import { BadArguments } from '../../core/contract/errors.ts';
import { isFuzzyWord } from '../../core/domain/notes/text.ts';
import { buildNote, openNotesFixture } from '../helpers/notes.ts';

const fx = await openNotesFixture(t);
const { notes } = fx;
const sql = (q: string, params: unknown[] = []) => fx.db.orm.em.fork().execute<Record<string, unknown>[]>(q, params);

const titles = async (p: Awaited<ReturnType<typeof fx.newPrincipal>>, q: string, extra: Record<string, unknown> = {}) =>
  (await notes.search(p, { q, ...extra })).items.map((h) => h.title);

t.test('ranking, phrases, exclusion, OR, snippets', async (t) => {
  const p = await fx.newPrincipal();
  await notes.create(p, buildNote({ title: 'Gardening', body: 'Tomatoes need sun. The quick brown fox ate them.' }));
  await notes.create(p, buildNote({ title: 'Tomatoes', body: 'All about tomatoes: tomatoes, tomatoes everywhere.' }));
  await notes.create(p, buildNote({ title: 'Foxes', body: 'A brown and quick fox. Foxes are not tomatoes.' }));
  await notes.create(p, buildNote({ title: 'Cooking', body: 'Pasta with garlic.' }));

  const hits = (await notes.search(p, { q: 'tomatoes' })).items;
  t.equal(hits.length, 3);
  t.equal(hits[0]!.title, 'Tomatoes', 'title match and many occurrences rank first');
  t.ok(hits[0]!.rank > hits[1]!.rank, 'ranks descend');
  t.ok(hits.every((h) => h.match === 'fulltext'));
  t.match(hits[0]!.snippet, /«tomatoes»/i, 'matched words are marked');
  t.notMatch(hits[0]!.snippet, /[<>]/, 'plain text');

  t.same(await titles(p, '"quick brown fox"'), ['Gardening'], 'a quoted phrase needs the words adjacent and in order');
  t.same((await titles(p, 'quick brown fox')).sort(), ['Foxes', 'Gardening'], 'unquoted words: all of them, anywhere');
  t.same(await titles(p, 'tomatoes -fox'), ['Tomatoes'], '-word excludes');
  t.same((await titles(p, 'tomatoes -"quick brown"')).sort(), ['Foxes', 'Tomatoes'], '-"phrase" excludes the phrase only');
  t.same((await titles(p, 'garlic OR foxes')).sort(), ['Cooking', 'Foxes'], 'OR');
  t.same((await titles(p, 'garlic or foxes')).sort(), ['Cooking', 'Foxes'], 'or, any case');
  t.same(await titles(p, 'pasta garlic'), ['Cooking']);
  t.same(await titles(p, 'pasta tomatoes'), [], 'AND by default');
  t.same((await titles(p, 'FOX')).sort(), ['Foxes', 'Gardening'], 'case-insensitive');
  const snip = (await notes.search(p, { q: '"quick brown"' })).items[0]!.snippet;
  t.match(snip, /«quick» «brown»|«quick brown»/, 'phrase words are marked');
});

t.test('filters: tags (all of them) and date range on updated_at', async (t) => {
  const p = await fx.newPrincipal();
  const a = await notes.create(p, buildNote({ title: 'alpha report', tags: ['work', 'q1'] }));
  const b = await notes.create(p, buildNote({ title: 'beta report', tags: ['work'] }));
  const c = await notes.create(p, buildNote({ title: 'gamma report', tags: ['home'] }));
  await sql(`update notes set updated_at = '2026-01-10T12:00:00Z' where id = ?`, [a.id]);
  await sql(`update notes set updated_at = '2026-02-10T12:00:00Z' where id = ?`, [b.id]);
  await sql(`update notes set updated_at = '2026-03-10T23:59:59.999Z' where id = ?`, [c.id]);

  t.same((await titles(p, 'report', { tags: ['work'] })).sort(), ['alpha report', 'beta report']);
  t.same(await titles(p, 'report', { tags: ['work', 'Q1'] }), ['alpha report'], 'every tag must be there');
  t.same(await titles(p, 'report', { from: '2026-02-01' }).then((x) => x.sort()), ['beta report', 'gamma report']);
  t.same(
    await titles(p, 'report', { to: '2026-02-10' }).then((x) => x.sort()),
    ['alpha report', 'beta report'],
    'a date as upper bound includes that day',
  );
  t.same(await titles(p, 'report', { from: '2026-03-10', to: '2026-03-10' }), ['gamma report'], 'one whole day, to its last millisecond');
  t.same(
    await titles(p, 'report', { from: '2026-02-10T12:00:00Z', to: '2026-02-10T12:00:00Z' }),
    ['beta report'],
    'date-times are inclusive',
  );
  t.same(await titles(p, 'report', { from: '2026-01-01', to: '2026-01-31', tags: ['home'] }), []);
  for (const bad of [{ from: 'yesterday' }, { to: '2026-13-45' }, { from: '2026-03-01', to: '2026-02-01' }, { tags: ['no spaces'] }]) {
    await t.rejects(notes.search(p, { q: 'report', ...bad }), BadArguments, JSON.stringify(bad));
  }
});

t.test('pages: opaque cursors, no duplicates, limits', async (t) => {
  const p = await fx.newPrincipal();
  for (let i = 0; i < 23; i++) await notes.create(p, buildNote({ title: `page note ${i}`, body: 'pagination '.repeat(1 + (i % 4)) }));
  const seen: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await notes.search(p, { q: 'pagination', limit: 5, ...(cursor ? { cursor } : {}) });
    t.ok(page.items.length <= 5);
    seen.push(...page.items.map((h) => h.id));
    const ranks = page.items.map((h) => h.rank);
    t.same(
      ranks,
      [...ranks].sort((a, b) => b - a),
      'ranks descend within a page',
    );
    cursor = page.next_cursor ?? undefined;
    pages++;
  } while (cursor && pages < 10);
  t.equal(pages, 5);
  t.equal(seen.length, 23);
  t.equal(new Set(seen).size, 23, 'every note once');
  const clamped = await notes.search(p, { q: 'pagination', limit: 1000 });
  t.equal(clamped.limit, 100);
  t.equal(clamped.limit_clamped_from, 1000);
  t.equal((await notes.search(p, { q: 'pagination' })).limit, 20);
  await t.rejects(notes.search(p, { q: 'pagination', cursor: 'not-a-cursor' }), BadArguments);
  await t.rejects(notes.search(p, { q: 'pagination', cursor: Buffer.from('["x",1,2,"y"]').toString('base64url') }), BadArguments);
  await t.rejects(notes.search(p, { q: '   ' }), BadArguments, 'empty query');
  await t.rejects(notes.search(p, { q: '-- "" !!' }), BadArguments, 'a query without words');
});

t.test('any language: Chinese, Japanese, Korean by substring; Cyrillic, Greek', async (t) => {
  const p = await fx.newPrincipal();
  await notes.create(p, buildNote({ title: '会议记录', body: '我们讨论了全文搜索的实现方案。明天继续。' }));
  await notes.create(p, buildNote({ title: '旅行', body: '東京タワーに行きました。とても高かったです。' }));
  await notes.create(p, buildNote({ title: '메모', body: '한국어 형태소 분석은 어렵습니다. 검색엔진을 만들자.' }));
  await notes.create(p, buildNote({ title: 'Mixed', body: 'Meeting in 北京 about the Postgres migration.' }));
  await notes.create(p, buildNote({ title: 'Русский', body: 'Поиск по заметкам работает. Ελληνικά κείμενα επίσης.' }));

  t.same(await titles(p, '全文搜索'), ['会议记录'], 'Chinese phrase inside a sentence');
  t.same(await titles(p, '搜索'), ['会议记录'], 'two characters');
  t.same(await titles(p, '搜'), ['会议记录'], 'a single character');
  t.same(await titles(p, '续'), ['会议记录'], 'a single character at the end of a run');
  t.same(await titles(p, '搜全'), [], 'characters present but not adjacent do not match');
  t.same(await titles(p, 'タワー'), ['旅行'], 'Katakana');
  t.same(await titles(p, '東京タワー'), ['旅行'], 'Kanji + Katakana');
  t.same(await titles(p, '高かった'), ['旅行'], 'Kanji + Hiragana');
  t.same(await titles(p, '검색엔진'), ['메모'], 'Korean');
  t.same(await titles(p, '형태소'), ['메모']);
  t.same(await titles(p, '北京 postgres'), ['Mixed'], 'CJK and Latin words together');
  t.same(await titles(p, '"in 北京 about"'), ['Mixed'], 'a phrase across scripts');
  t.same(await titles(p, '会议'), ['会议记录'], 'titles too');
  t.same(await titles(p, 'поиск'), ['Русский'], 'Cyrillic, case folded');
  t.same(await titles(p, 'ΕΛΛΗΝΙΚΑ'), ['Русский'], 'Greek, case and accents folded');
  const hit = (await notes.search(p, { q: '全文搜索' })).items[0]!;
  t.match(hit.snippet, /«全文搜索»/, 'CJK snippet marks the matched text');
});

t.test('accents fold both ways', async (t) => {
  const p = await fx.newPrincipal();
  await notes.create(p, buildNote({ title: 'Café notes', body: 'Crème brûlée at the café. Straße, Ærøskøbing, naïve, Łódź.' }));
  await notes.create(p, buildNote({ title: 'Plain', body: 'We met at a cafe for a creme brulee.' }));
  t.same((await titles(p, 'cafe')).sort(), ['Café notes', 'Plain'], 'cafe finds café and cafe');
  t.same((await titles(p, 'café')).sort(), ['Café notes', 'Plain'], 'café finds cafe and café');
  t.same((await titles(p, 'CRÈME BRÛLÉE')).sort(), ['Café notes', 'Plain']);
  t.same(await titles(p, 'strasse'), ['Café notes'], 'ß = ss');
  t.same(await titles(p, 'aeroskobing'), ['Café notes'], 'æ, ø');
  t.same(await titles(p, 'lodz'), ['Café notes'], 'ł');
  t.same(await titles(p, 'naive'), ['Café notes']);
  const snip = (await notes.search(p, { q: 'cafe' })).items.find((h) => h.title === 'Café notes')!.snippet;
  t.match(snip, /«café»/, 'the snippet marks the original, accented word');
});

t.test('typo tolerance: a misspelled rare word still finds the note, marked fuzzy', async (t) => {
  const p = await fx.newPrincipal();
  await notes.create(p, buildNote({ title: 'Zoo trip', body: 'We saw a rhinoceros and a hippopotamus.' }));
  await notes.create(p, buildNote({ title: 'Other', body: 'Nothing to see here.' }));
  const exact = (await notes.search(p, { q: 'rhinoceros' })).items;
  t.equal(exact[0]?.match, 'fulltext');
  for (const typo of ['rhinoceras', 'rhinocerous', 'hipopotamus']) {
    const hits = (await notes.search(p, { q: typo })).items;
    t.same(
      hits.map((h) => h.title),
      ['Zoo trip'],
      `${typo} finds the note`,
    );
    t.equal(hits[0]?.match, 'fuzzy', `${typo} is a fuzzy match`);
    t.match(hits[0]?.snippet, /«(rhinoceros|hippopotamus)»/, 'the snippet marks the word that was found');
  }
  t.same(await titles(p, 'zoo rhinoceras'), ['Zoo trip'], 'a typo next to a correct word');
  t.same(await titles(p, 'qwxzv'), [], 'nothing close: nothing');
  t.same(await titles(p, 'rhinoceras -hippopotamus'), [], 'exclusions still apply to fuzzy queries');
});

t.test('the index follows the content: updates, trash, purge, word table', async (t) => {
  const p = await fx.newPrincipal();
  const n = await notes.create(p, buildNote({ title: 'Evolving', body: 'original aardvark text' }));
  t.same(await titles(p, 'aardvark'), ['Evolving']);
  await notes.update(p, n.id, { expected_version: 1, body: 'replaced with platypus' });
  t.same(await titles(p, 'aardvark'), [], 'old words no longer match');
  t.same(await titles(p, 'platypus'), ['Evolving']);
  await notes.append(p, n.id, { text: 'and a wombat' });
  t.same(await titles(p, 'wombat'), ['Evolving'], 'appended words match');
  await notes.update(p, n.id, { expected_version: 3, tags: ['Marsupials'] });
  t.same(await titles(p, 'marsupials'), ['Evolving'], 'tags are searchable');
  await notes.trash(p, n.id);
  t.same(await titles(p, 'wombat'), [], 'trashed notes are not found');
  await notes.untrash(p, n.id);
  t.same(await titles(p, 'wombat'), ['Evolving']);

  const other = await notes.create(p, buildNote({ title: 'Second', body: 'another wombat' }));
  const wordCounts = async () =>
    Object.fromEntries(
      (await sql(`select word, notes from note_words where owner_id = ?`, [p.user.id])).map((r) => [r['word'], r['notes']]),
    );
  const recount = async () => {
    const found = await sql(
      `select l as word, count(*)::int as notes from notes, unnest(tsvector_to_array(search_vector)) l where owner_id = ? group by l`,
      [p.user.id],
    );
    return Object.fromEntries(found.filter((r) => isFuzzyWord(r['word'] as string)).map((r) => [r['word'], r['notes']]));
  };
  t.same(await wordCounts(), await recount(), 'the word table equals a recount');
  t.equal((await wordCounts())['wombat'], 2);
  t.equal((await wordCounts())['aardvark'], undefined, 'words that left every note leave the table');
  await notes.trash(p, other.id);
  await notes.purge(p, other.id);
  t.equal((await wordCounts())['wombat'], 1);
  t.equal((await wordCounts())['another'], undefined);
  t.same(await wordCounts(), await recount(), 'still equal after a purge');
});
