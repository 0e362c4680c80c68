// The one Markdown and tag reading (core/domain/notes/markdown.ts) that the notes service, the REST
// surface and the plugins (through folio/sdk) share. Before it there were three copies, which
// disagreed on whitespace; these cases pin the CommonMark/GFM reading each disagreement now gets.
import t from 'tap';
import * as md from '../../core/domain/notes/markdown.ts';
import * as sdk from '../../core/sdk/index.ts';
import { tags } from '../../core/domain/notes/validate.ts';
import { BadArguments } from '../../core/contract/errors.ts';

const {
  actionItems,
  charLength,
  checkItem,
  findSection,
  headingKey,
  headings,
  isTag,
  linesOutsideFences,
  normalizeTag,
  openActionItems,
  openItems,
  parseActionItem,
  TAG_INPUT_PATTERN,
  TAG_PATTERN,
  TAG_RULE,
} = md;

const item = (line: string) => parseActionItem(line);

t.test('the SDK hands plugins these very functions', async (t) => {
  for (const name of [
    'charLength',
    'linesOutsideFences',
    'headings',
    'parseHeading',
    'headingKey',
    'findSection',
    'actionItems',
    'openItems',
    'parseActionItem',
    'checkItem',
    'normalizeTag',
    'isTag',
    'TAG_PATTERN',
    'TAG_INPUT_PATTERN',
    'TAG_RULE',
  ] as const) {
    t.equal(sdk[name], md[name], name);
  }
  const fn = { description: 'x', handler: () => 1 };
  t.equal(sdk.defineFunction(fn), fn, 'defineFunction returns its argument');
  const plugin = { namespace: 'x', description: 'x', functions: { fn } };
  t.equal(sdk.definePlugin(plugin), plugin, 'definePlugin returns its argument');
});

t.test('lines: 1-based numbers, character offsets, fences left out', async (t) => {
  const body = 'a😀\n```js\n# code\n```\nb\n~~~~\n~~~\n~~~~\nc';
  t.same(linesOutsideFences(body), [
    { line: 1, text: 'a😀', offset: 0 },
    { line: 5, text: 'b', offset: 20 },
    { line: 9, text: 'c', offset: 36 },
  ]);
  t.equal(charLength('a😀b'), 3, 'code points, not UTF-16 units');
  t.equal(charLength('\ud800x'), 2, 'a lone surrogate is one character');
  t.same(linesOutsideFences(['a', '```', 'b']), [{ line: 1, text: 'a', offset: 0 }], 'lines work as well as a body');
  t.same(
    linesOutsideFences('```\ncode\n``` `x`\nstill code\n```\t\nout').map((l) => l.text),
    ['out'],
    'a fence closes only when followed by nothing but spaces or tabs',
  );
  t.same(
    linesOutsideFences('```\ncode\n```\u00a0\nstill code').map((l) => l.text),
    [],
    'a no-break space after a closing fence is text: the fence stays open',
  );
});

t.test('CRLF: the \\r belongs to the line ending, for every reader', async (t) => {
  const lf = '# Title\n\n- [ ] one\n* [x] two\n## Notes ##\nbody\n# Next\n';
  const crlf = lf.replaceAll('\n', '\r\n');
  t.same(
    headings(crlf).map(({ line, level, text }) => ({ line, level, text })),
    headings(lf).map(({ line, level, text }) => ({ line, level, text })),
  );
  t.same(actionItems(crlf), actionItems(lf));
  t.same(linesOutsideFences(crlf)[0], { line: 1, text: '# Title', offset: 0 });
  t.equal(headings(crlf)[1]!.offset, 33, 'offsets count the \\r of the lines before');
  // The meetings copy ran its item pattern over the raw line, \r included: nothing matched, and
  // mark_done wrote the body back unchanged.
  t.equal(checkItem(crlf, 3), '# Title\r\n\r\n- [x] one\r\n* [x] two\r\n## Notes ##\r\nbody\r\n# Next\r\n');
  t.equal(checkItem('- [ ] last\r', 1), '- [x] last\r');
});

t.test('a byte order mark does not hide the first line', async (t) => {
  t.same(
    headings('\ufeff# Title\nx').map((h) => h.text),
    ['Title'],
    'the domain copy read an item after a BOM but not a heading',
  );
  t.same(actionItems('\ufeff- [ ] a'), [{ line: 1, text: 'a', done: false }]);
  t.equal(checkItem('\ufeff- [ ] a', 1), '\ufeff- [x] a', 'the mark stays');
});

t.test('headings: up to 3 spaces, a tab after the #s, text trimmed of spaces and tabs only', async (t) => {
  const h = (line: string) => headings(line).map((x) => [x.level, x.text]);
  t.same(h('#\tTabbed\t#'), [[1, 'Tabbed']]);
  t.same(h('   ### three spaces'), [[3, 'three spaces']]);
  t.same(h('    # four spaces'), [], 'four spaces: indented code');
  t.same(h('\t# tab'), [], 'a tab indents four columns: indented code');
  t.same(h('# a #b'), [[1, 'a #b']], 'a closing run needs a space before it');
  t.same(h('# \u00a0kept\u00a0'), [[1, '\u00a0kept\u00a0']], 'a no-break space is text, not trimmed');
  t.same(h('#'), [[1, '']]);
});

t.test('sections: by key, as lines and as characters', async (t) => {
  const body = '# Log 😀\nintro\n## Decisions ##\n- ship\n### Detail\nx\n## Next\ny';
  const s = findSection(body, '  ## decisions ')!;
  t.equal(s.heading.text, 'Decisions');
  t.same([s.firstLine, s.endLine], [4, 7], 'lines under the heading up to the next heading of the same or a higher level');
  t.equal(
    body
      .split('\n')
      .slice(s.firstLine - 1, s.endLine - 1)
      .join('\n'),
    '- ship\n### Detail\nx',
  );
  t.same([s.start, s.end], [14, 50]);
  t.equal(Array.from(body).slice(s.start, s.end).join(''), '## Decisions ##\n- ship\n### Detail\nx\n');
  const last = findSection(body, 'next')!;
  t.same([last.firstLine, last.endLine, last.end], [8, 9, charLength(body)], 'the last section runs to the end');
  t.equal(findSection(body, 'missing'), undefined);
  t.equal(headingKey(' ## Decisions\t'), 'decisions');
  t.equal(findSection('# #1 priority\nx', '#1 priority')?.heading.text, '#1 priority', 'a heading whose text starts with # is found');
  t.throws(() => md.appendUnderHeading('# X\n', 'missing', 't'), BadArguments, 'the service still answers 400 for a missing heading');
  t.equal(md.appendUnderHeading('# X\r\na\r\n\t\r\n# Y', 'x', 'new'), '# X\r\na\r\nnew\n\t\r\n# Y', 'a line of tabs is blank');
  t.equal(
    md.appendUnderHeading('# X\na\n\u00a0\n# Y', 'x', 'new'),
    '# X\na\n\u00a0\nnew\n# Y',
    'a line holding a no-break space is not blank',
  );
});

t.test('action items: spaces and tabs around the marker and the box, nothing else', async (t) => {
  t.same(item('- [ ] a'), { text: 'a', done: false });
  t.same(item('* [x] a'), { text: 'a', done: true });
  t.same(item('+ [X] a'), { text: 'a', done: true });
  t.same(item('1. [ ] a'), { text: 'a', done: false });
  t.same(item('12) [ ] a'), { text: 'a', done: false });
  t.equal(item('1234567890. [ ] a'), null, 'an ordered marker has 1 to 9 digits');
  // Leading space before the marker: any spaces or tabs (nested items), but only those.
  t.same(item('    - [ ] nested'), { text: 'nested', done: false });
  t.same(item('\t- [ ] tab-indented'), { text: 'tab-indented', done: false });
  t.equal(item('\u00a0- [ ] a'), null, 'a no-break space before the marker is text');
  t.equal(item('\u3000- [ ] a'), null, 'so is an ideographic space');
  // Between the marker, the box and the text.
  t.same(item('-\t[ ]\ta'), { text: 'a', done: false });
  t.same(item('-   [ ]   a  \t'), { text: 'a', done: false }, 'trailing spaces and tabs are not text');
  t.equal(item('- [ ]\u00a0a'), null, 'a no-break space does not separate the box from the text');
  t.equal(item('-\u00a0[ ] a'), null);
  t.same(item('- [ ] \u00a0a'), { text: '\u00a0a', done: false }, 'after a space, a no-break space is text');
  t.equal(item('- [ ]a'), null);
  t.equal(item('- [ ]'), null, 'an empty item is not an action');
  t.equal(item('- [ ]   '), null);
  // Inside the box: one space or tab (GFM: a whitespace character) is open.
  t.same(item('- [\t] a'), { text: 'a', done: false });
  t.equal(item('- [] a'), null);
  t.equal(item('- [  ] a'), null);
  t.equal(item('- [\u00a0] a'), null);
  t.equal(item('- [y] a'), null);
});

t.test('items, open items and checking one off', async (t) => {
  const body = '- [ ] a\n- [x] done\n  * [ ] nested\n```\n- [ ] code\n```\n1) [\t] tabbed box\n- [ ]\tkeep\tmy  spacing';
  t.same(actionItems(body), [
    { line: 1, text: 'a', done: false },
    { line: 2, text: 'done', done: true },
    { line: 3, text: 'nested', done: false },
    { line: 7, text: 'tabbed box', done: false },
    { line: 8, text: 'keep\tmy  spacing', done: false },
  ]);
  t.same(
    openItems(body).map((i) => i.line),
    [1, 3, 7, 8],
  );
  t.same(openActionItems(body), ['a', 'nested', 'tabbed box', 'keep\tmy  spacing'], 'what the service stores');
  // Only the character inside the box changes (the meetings copy rewrote "]\t" as "] ").
  t.equal(checkItem(body, 8)!.split('\n')[7], '- [x]\tkeep\tmy  spacing');
  t.equal(checkItem(body, 7)!.split('\n')[6], '1) [x] tabbed box');
  t.equal(checkItem(body, 3)!.split('\n')[2], '  * [x] nested');
  t.equal(checkItem(body, 2), null, 'already done');
  t.equal(checkItem(body, 5), null, 'inside a code block');
  t.equal(checkItem(body, 4), null, 'not an item');
  t.equal(checkItem(body, 99), null, 'no such line');
  t.equal(checkItem(body, 0), null);
});

t.test('tags: one rule, one normal form', async (t) => {
  t.equal(normalizeTag('  Project-X\t'), 'project-x');
  t.ok(isTag(' Meeting '));
  t.ok(isTag('a/b.c_d-e'));
  t.ok(isTag('日本'));
  t.notOk(isTag('_x'));
  t.notOk(isTag('a b'));
  t.notOk(isTag(''));
  t.ok(isTag('a'.repeat(64)));
  t.notOk(isTag('a'.repeat(65)));
  const stored = new RegExp(TAG_PATTERN, 'u');
  const input = new RegExp(TAG_INPUT_PATTERN, 'u');
  for (const raw of ['meeting', ' Meeting ', '\u3000tag\u00a0', 'a b', '-x', 'x'.repeat(65)]) {
    t.equal(input.test(raw), isTag(raw), `input pattern agrees with isTag: ${JSON.stringify(raw)}`);
    t.equal(stored.test(normalizeTag(raw)), isTag(raw), `pattern agrees with isTag: ${JSON.stringify(raw)}`);
  }
  t.same(tags([' Meeting', 'meeting ', 'ToDo']), ['meeting', 'todo'], 'the service normalizes, then drops duplicates');
  t.throws(() => tags(['a b']), { message: `"a b" is not a tag: ${TAG_RULE}` });
});
