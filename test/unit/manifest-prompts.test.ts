import t from 'tap';
import { buildPlugin, ManifestError } from '../../core/kernel/manifest.ts';

const plugin = (prompts: unknown) => ({ namespace: 'acme', description: 'Test.', functions: {}, prompts });

t.test('prompts are kept as declared; a plugin without any has none', async (t) => {
  const p = buildPlugin(
    plugin({ plan: { title: 'Plan', description: 'Plan a day.', arguments: [{ name: 'day', required: true }], render: () => 'x' } }),
    '1',
  );
  t.same(p.prompts.get('plan')?.arguments, [{ name: 'day', required: true }]);
  t.equal(buildPlugin({ namespace: 'acme', description: 'Test.', functions: {} }, '1').prompts.size, 0);
});

t.test('a bad prompt is refused with a message naming it', async (t) => {
  const refused = (prompts: unknown, re: RegExp) =>
    t.throws(() => buildPlugin(plugin(prompts), '1'), { constructor: ManifestError, message: re });
  refused({ plan: { description: 'x' } }, /prompts\.plan\.render must be a function/);
  refused({ plan: { render: () => 'x' } }, /prompts\.plan\.description must be a non-empty string/);
  refused({ 'Bad-Name': { description: 'x', render: () => 'x' } }, /prompts\.Bad-Name: prompt names must match/);
  refused({ plan: { description: 'x', render: () => 'x', arguments: [{ name: 'a' }, { name: 'a' }] } }, /'a' twice/);
  refused({ plan: { description: 'x', render: () => 'x', messages: [] } }, /unknown field 'messages'/);
});
