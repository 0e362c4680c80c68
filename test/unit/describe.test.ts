import t from 'tap';
import { signature, typeName, argInfos, withoutHidden } from '../../core/kernel/describe.ts';

t.test('signature lines read like a call', async (t) => {
  const args = {
    type: 'object',
    properties: { text: { type: 'string' }, times: { type: 'integer', default: 1 }, tags: { type: 'array', items: { type: 'string' } } },
    required: ['text'],
  };
  t.equal(signature('acme', 'echo', args, { type: 'string' }), 'acme.echo(text: string, times?: integer = 1, tags?: string[]) -> string');
  t.equal(signature('acme', 'noop', { type: 'object', properties: {} }, undefined), 'acme.noop() -> any');
});

t.test('type names cover enums, unions, nested objects and arrays of unions', async (t) => {
  t.equal(typeName({ enum: ['a', 'b'] }), '"a" | "b"');
  t.equal(typeName({ anyOf: [{ type: 'string' }, { type: 'null' }] }), 'string | null');
  t.equal(typeName({ type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } }), '(string | integer)[]');
  t.equal(
    typeName({ type: 'object', properties: { id: { type: 'string' }, n: { type: 'number' } }, required: ['id'] }),
    '{ id: string, n?: number }',
  );
  t.equal(typeName({ const: 3 }), '3');
  t.equal(typeName(undefined), 'any');
});

t.test('argument constraints are spelled out', async (t) => {
  const [a] = argInfos({
    type: 'object',
    properties: { n: { type: 'integer', minimum: 1, maximum: 5, description: 'how many' } },
    required: ['n'],
  });
  t.same(a, { name: 'n', type: 'integer', required: true, constraints: ['>= 1', '<= 5'], description: 'how many' });
});

t.test('references to functions the reader cannot see are left out', async (t) => {
  const hidden = (ns: string) => ns === 'notetaker';
  t.equal(
    withoutHidden('Each hit (read it with: notetaker.get, files.text, transcribe.transcript), title.', hidden),
    'Each hit (read it with: files.text, transcribe.transcript), title.',
    'out of a list',
  );
  t.equal(
    withoutHidden('A note id (from notetaker.list or notetaker.search).', hidden),
    'A note id.',
    'a parenthesis naming only hidden ones goes',
  );
  t.equal(
    withoutHidden('Move it to the trash. `notetaker.list` shows the trash; restore brings it back. Files stay.', hidden),
    'Move it to the trash. Files stay.',
    'any other sentence naming one goes',
  );
  t.equal(withoutHidden('Read with files.text or notetaker.get.', hidden), 'Read with files.text.', 'the last of a list');
  t.equal(withoutHidden('Nothing hidden: files.text, see e.g. this.', hidden), 'Nothing hidden: files.text, see e.g. this.', 'unchanged');
  t.equal(
    withoutHidden('Delete it (files stay; restore with notetaker.restore).', hidden),
    'Delete it (files stay).',
    'a warning in a parenthesis stays when the clause beside it goes',
  );
  t.equal(withoutHidden('Returns the id to pass to notetaker.get.', hidden), 'Returns the id to pass to.', 'never emptied');
  t.equal(
    withoutHidden('Lists notes as `notetaker.list` does (see notetaker.search).', hidden),
    'Lists notes as does.',
    'never emptied, even when every sentence names one',
  );
});
