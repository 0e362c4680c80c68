// findMatches with `near`: a snippet shows its first match and what follows within its length, so
// only those matches are looked for. Where matches are apart, the snippet is the same as with every
// match found; a run of touching matches (CJK) is now cut at the snippet's length instead of being
// highlighted past it as one span.
import t from 'tap';
import { findMatches, SNIPPET_REACH, snippetAround, snippetAt } from '../../core/domain/notes/snippet.ts';

const term = (text: string, cjk = false) => ({ text, cjk });

t.test('near keeps the first match and those within reach, skips the rest', async (t) => {
  const filler = 'lorem ipsum dolor '.repeat(40); // 720 characters
  const text = `intro budget and budget again ${filler} budget far away ${filler} budget`;
  const all = findMatches(text, [term('budget')]);
  t.equal(all.length, 4, 'without near: every match');
  const near = findMatches(text, [term('budget')], { near: SNIPPET_REACH });
  t.same(near, all.slice(0, 2), 'with near: the two at the start only');
  t.equal(snippetAt(text, near), snippetAt(text, all), 'the same snippet either way');
  t.match(snippetAround(text, [term('budget')]), /^intro «budget» and «budget» again/);
});

t.test('the first match is the earliest over all terms, whole words only', async (t) => {
  const text = `budgeting first, then ${'x '.repeat(300)}review, and a budget right after the review`;
  const spans = findMatches(text, [term('budget'), term('review')], { near: 30 });
  const words = spans.map((s) => text.slice(s.start, s.end));
  t.same(words, ['review', 'budget'], '"budgeting" is not the word "budget"; matches counted from the first whole word');
  t.same(findMatches('nothing here', [term('budget')], { near: 50 }), [], 'no match: nothing');
});

t.test('a run of touching matches ends at the reach, and the snippet stays within its length', async (t) => {
  const text = '哈'.repeat(600);
  const spans = findMatches(text, [term('哈哈', true)], { near: SNIPPET_REACH });
  t.equal(spans.length, 1, 'one merged span');
  t.ok(spans[0]!.end <= SNIPPET_REACH + 2, `it ends near the reach (${spans[0]!.end})`);
  t.ok(snippetAround(text, [term('哈哈', true)])!.length < 260, 'a snippet-sized answer');
});

t.test('folded text: offsets point into the original', async (t) => {
  const text = 'Die STRAẞE und die Straße';
  const spans = findMatches(text, [term('strasse')], { near: SNIPPET_REACH });
  t.same(
    spans.map((s) => text.slice(s.start, s.end)),
    ['STRAẞE', 'Straße'],
  );
  t.equal(snippetAround('会议记录在这里', [term('会议', true)]), '«会议»记录在这里', 'CJK matches anywhere');
});
