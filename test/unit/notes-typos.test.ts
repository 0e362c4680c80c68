// The words one typo away, which typo tolerance looks up in a user's word table before it falls
// back to the trigram search.
import t from 'tap';
import { MAX_EDIT_WORD, oneEditAway } from '../../core/domain/notes/typos.ts';

t.test('each kind of typo people make is one edit back to the word', async (t) => {
  const cases: Array<[typo: string, word: string, kind: string]> = [
    ['meetnig', 'meeting', 'two letters swapped'],
    ['custmer', 'customer', 'a letter dropped'],
    ['hippopotamuss', 'hippopotamus', 'a letter doubled'],
    ['rhinoceras', 'rhinoceros', 'a letter changed'],
    ['kuberntes', 'kubernetes', 'a letter dropped inside'],
    ['zurich', 'zürich', 'an unfolded letter of the word itself'],
  ];
  for (const [typo, word, kind] of cases) {
    const edits = oneEditAway(typo);
    if (word === 'zürich') t.notOk(edits.includes(word), 'letters outside a-z come only from the word');
    else t.ok(edits.includes(word), `${typo} -> ${word}: ${kind}`);
  }
});

t.test('what it never gives', async (t) => {
  const edits = oneEditAway('budgte');
  t.notOk(edits.includes('budgte'), 'the word itself');
  t.equal(new Set(edits).size, edits.length, 'no word twice');
  t.ok(
    edits.every((w) => w.length >= 5 && w.length <= 7),
    'only words one letter longer or shorter at most',
  );
  t.notOk(oneEditAway('ox').length, 'nothing for words too short to be typo-tolerant');
  t.same(oneEditAway('a'.repeat(MAX_EDIT_WORD + 1)), [], 'nothing for very long words (the trigram search takes them)');
  t.ok(oneEditAway('город').includes('горд'), 'other scripts: drops and swaps');
  t.ok(oneEditAway('город').includes('гордо'));
  // A 10-letter word: 10 drops + 9 swaps + changes and additions over 26+ letters, about 560.
  const n = oneEditAway('incidental').length;
  t.ok(n > 400 && n < 700, `a bounded number of neighbours (${n})`);
});
