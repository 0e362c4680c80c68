// A note search hit whose match is deep in a long note still gets its snippet from where the match
// is (it used to fall back to the note's first words once the match was past the part read with
// the hits), on a real database.
import t from 'tap';
import { snippetDeep, SNIPPET_WINDOW } from '../../core/domain/notes/snippet.ts';
import { buildNote, openNotesFixture } from '../helpers/notes.ts';

const fx = await openNotesFixture(t);

t.test('the snippet of a match 900 KB into a note is around the match', async (t) => {
  const p = await fx.newPrincipal();
  const filler = 'lorem ipsum dolor sit amet '.repeat(34_000); // ~918 KB
  await fx.notes.create(p, buildNote({ title: 'Long', body: `${filler}and finally the pangolin appears at the end.` }));
  const [hit] = (await fx.notes.search(p, { q: 'pangolin' })).items;
  t.ok(hit, 'found');
  t.match(hit!.snippet, /«pangolin»/, 'the snippet holds the match');
  t.match(hit!.snippet, /^…/, 'and says it starts inside the note');
  t.notMatch(hit!.snippet, /^lorem/);
});

t.test('snippetDeep reads window by window, and a match across a window edge is whole', async (t) => {
  const terms = [{ text: 'pangolin', cjk: false }];
  const edge = 'x '.repeat(SNIPPET_WINDOW / 2 - 3) + 'pangolin' + ' y'.repeat(SNIPPET_WINDOW);
  t.match(snippetDeep(edge, terms), /«pangolin»/);
  t.equal(snippetDeep('nothing here '.repeat(5000), terms), null);
  t.match(snippetDeep('the pangolin', terms), /^the «pangolin»$/, 'a short text as snippetAround has it');
});
