// matchBound: the upper bound of a query's matches from per-word note counts, which decides how
// note search reads its candidates (GIN index or newest-first walk). A bound that is too low would
// send a common query down the slow path; one that is null leaves the choice to the planner.
import t from 'tap';
import { countedWords, matchBound, parseQuery, withAlternatives } from '../../core/domain/notes/query.ts';

const counts: Record<string, number> = { meeting: 6000, budget: 900, review: 300, quarterly: 120, time: 80000 };
const bound = (q: string) => matchBound(parseQuery(q), (w) => counts[w] ?? 0);

t.test('words, phrases, AND and OR', async (t) => {
  t.equal(bound('meeting'), 6000, 'one word: its count');
  t.equal(bound('meeting budget'), 900, 'AND: the rarest clause');
  t.equal(bound('"quarterly budget review"'), 120, 'a phrase: its rarest word');
  t.equal(bound('meeting OR budget'), 6900, 'OR: the sum');
  t.equal(bound('time OR meeting budget'), 900, 'AND of an OR and a word');
  t.equal(bound('unheardof'), 0, 'a word no note holds bounds at 0');
});

t.test('terms the counts do not cover leave the clause unbounded', async (t) => {
  t.equal(bound('会议'), null, 'CJK bigrams are not counted');
  t.equal(bound('is'), null, 'words under 3 letters are not counted');
  t.equal(bound('-meeting'), null, 'an exclusion bounds nothing');
  t.equal(bound('会议 budget'), 900, 'the other clause still bounds the AND');
  t.equal(bound('meeting OR 会议'), null, 'an OR with an uncounted term is unbounded');
});

t.test('typo alternatives are bounded by the sum of their counts, and are the words looked up', async (t) => {
  const q = withAlternatives(parseQuery('meetnig budget'), new Map([['meetnig', ['meeting', 'meetings']]]));
  t.same(countedWords(q).sort(), ['budget', 'meeting', 'meetings']);
  t.equal(
    matchBound(q, (w) => counts[w] ?? 0),
    900,
  );
  const alone = withAlternatives(parseQuery('meetnig'), new Map([['meetnig', ['meeting', 'meetings']]]));
  t.equal(
    matchBound(alone, (w) => (w === 'meetings' ? 50 : (counts[w] ?? 0))),
    6050,
  );
});
