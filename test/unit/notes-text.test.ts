// The pure parts of the notes domain: folding and tokenizing, query parsing, Markdown sections and
// action items, snippets, cursors. No database.
import t from 'tap';
import { BadArguments } from '../../core/contract/errors.ts';
import {
  appendUnderHeading,
  headings,
  openActionItems,
  prependUnderHeading,
  replaceUnderHeading,
} from '../../core/domain/notes/markdown.ts';
import { parseQuery, toTsquery } from '../../core/domain/notes/query.ts';
import { excerpt, snippetAround } from '../../core/domain/notes/snippet.ts';
import { buildVector, fold, runLexemes, runs } from '../../core/domain/notes/text.ts';
import { decodeCursor, encodeCursor, tags } from '../../core/domain/notes/validate.ts';

t.test('fold: case, diacritics, compatibility forms; CJK untouched', async (t) => {
  t.equal(fold('Café CRÈME Brûlée'), 'cafe creme brulee');
  t.equal(fold('Straße Ærø Łódź'), 'strasse aero lodz');
  t.equal(fold('ﬁle ＡＢＣ ①'), 'file abc 1');
  t.equal(fold('東京タワー 한국어 が'), '東京タワー 한국어 が', 'Hangul and kana voicing survive (no NFD leftovers)');
  t.equal(fold('ΕΛΛΗΝΙΚΆ'), 'ελληνικα');
});

t.test('runs and lexemes: words, and CJK as bigrams plus a final unigram', async (t) => {
  t.same(
    runs(fold('Hello, wörld! e-mail 42')).map((r) => r.text),
    ['hello', 'world', 'e', 'mail', '42'],
  );
  t.same(
    runs('北京abc中文').map((r) => [r.text, r.cjk]),
    [
      ['北京', true],
      ['abc', false],
      ['中文', true],
    ],
    'scripts split',
  );
  t.same(runLexemes({ text: '全文搜索', cjk: true }), ['全文', '文搜', '搜索', '索']);
  t.same(runLexemes({ text: '猫', cjk: true }), ['猫']);
  const v = buildVector([
    { text: 'Title words', weight: 'A' },
    { text: 'body words here', weight: 'D' },
  ]);
  t.match(v.literal, /'title':3A/);
  t.match(v.literal, /'words':4A,8/, 'positions count across fields, weights kept, a gap between fields');
  t.same([...v.words].sort(), ['body', 'here', 'title', 'words']);
  const quoteish = buildVector([{ text: "it's", weight: 'D' }]);
  t.notMatch(quoteish.literal, /'it''s'/, 'apostrophes split words, never reach a literal unescaped');
});

t.test('queries: web-search syntax to tsquery', async (t) => {
  t.equal(toTsquery(parseQuery('cat dog')), "'cat' & 'dog'");
  t.equal(toTsquery(parseQuery('"big cat" -dog')), "( 'big' <-> 'cat' ) & !( 'dog' )");
  t.equal(toTsquery(parseQuery('cat OR dog fish')), "( 'cat' | 'dog' ) & 'fish'");
  t.equal(toTsquery(parseQuery('OR cat or')), "'cat'", 'dangling ORs are ignored');
  t.equal(toTsquery(parseQuery('Café')), "'cafe'");
  t.equal(toTsquery(parseQuery('全文搜索')), "( '全文' <-> '文搜' <-> '搜索' )", 'CJK: a phrase of bigrams');
  t.equal(toTsquery(parseQuery('猫')), "'猫':*", 'one CJK character: any bigram it starts');
  t.equal(toTsquery(parseQuery('"北京 tower"')), "( '北京' <-> '京' <-> 'tower' )", 'a CJK run inside a phrase keeps its final unigram');
  t.equal(toTsquery(parseQuery("e-mail o'neil")), "( 'e' <-> 'mail' ) & ( 'o' <-> 'neil' )", 'split words become phrases');
  t.equal(toTsquery(parseQuery('"unterminated phrase')), "( 'unterminated' <-> 'phrase' )");
  t.same(parseQuery('!!! ---'), [], 'no words at all');
});

t.test('markdown: headings outside fences, sections', async (t) => {
  const body = '# A\n\n```\n# not\n```\n## B #\n####### seven\n#hashtag\n   ### C\n~~~~\n## no\n~~~\n## still fenced\n~~~~\n## D\n';
  t.same(
    headings(body.split('\n')).map((h) => [h.level, h.text]),
    [
      [1, 'A'],
      [2, 'B'],
      [3, 'C'],
      [2, 'D'],
    ],
    'fences (``` and ~~~, closed by a fence at least as long) hide headings; #hashtag and 7 #s are not headings',
  );
  t.equal(appendUnderHeading('# X\na\n\n# Y\nb', 'x', 'new'), '# X\na\nnew\n\n# Y\nb');
  t.equal(prependUnderHeading('# X\n\na\n# Y', 'X', 'new'), '# X\n\nnew\na\n# Y');
  t.equal(prependUnderHeading('# X\n# Y', 'X', 'new'), '# X\nnew\n# Y', 'an empty section');
  t.equal(replaceUnderHeading('# X\nold\n## Sub\nold2\n# Y\nkeep', 'X', 'new'), '# X\nnew\n\n# Y\nkeep');
  t.equal(replaceUnderHeading('# X\nold\n', 'X', ''), '# X\n', 'emptied');
  t.throws(() => appendUnderHeading('# X\n', 'Missing', 't'), BadArguments);
});

t.test('open action items', async (t) => {
  t.same(openActionItems('- [ ] a\n- [x] done\n  * [ ] nested\n1) [ ] numbered\n- [ ]\n```\n- [ ] code\n```\n+ [ ] plus'), [
    'a',
    'nested',
    'numbered',
    'plus',
  ]);
});

t.test('snippets: window around the first match, whole words, original text marked', async (t) => {
  const long = `${'lorem ipsum '.repeat(30)}the Café opened ${'dolor sit '.repeat(30)}`;
  const s = snippetAround(long, [{ text: 'cafe', cjk: false }])!;
  t.match(s, /^….*«Café» opened.*…$/);
  t.ok(s.length < 300);
  t.equal(snippetAround('category cat', [{ text: 'cat', cjk: false }]), 'category «cat»', 'whole words only');
  t.equal(snippetAround('我们讨论了全文搜索的实现', [{ text: '全文搜索', cjk: true }]), '我们讨论了«全文搜索»的实现');
  t.equal(snippetAround('nothing here', [{ text: 'zzz', cjk: false }]), null);
  t.equal(excerpt('# Title\n\nSome   text'), '# Title Some text');
  t.equal(excerpt('x'.repeat(300)).length, 201);
});

t.test('cursors and tags', async (t) => {
  const c = encodeCursor([1700000000000, '00000000-0000-4000-8000-000000000000']);
  t.match(c, /^[A-Za-z0-9_-]+$/, 'base64url');
  t.same(decodeCursor(c, 'tu'), [1700000000000, '00000000-0000-4000-8000-000000000000']);
  t.throws(() => decodeCursor(c, 't'), BadArguments);
  t.throws(() => decodeCursor('%%%', 'tu'), BadArguments);
  t.throws(() => decodeCursor(encodeCursor(['x', 'y']), 'tu'), BadArguments);
  t.same(tags(['Ünïcode', 'a/b.c_d-e', '日本']), ['ünïcode', 'a/b.c_d-e', '日本']);
  t.throws(() => tags(['_x']), BadArguments);
});
