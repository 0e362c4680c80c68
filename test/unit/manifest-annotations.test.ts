import t from 'tap';
import { buildPlugin, ManifestError } from '../../core/kernel/manifest.ts';
import { effectText } from '../../core/kernel/describe.ts';

const plugin = (fn: Record<string, unknown>) => ({
  namespace: 'acme',
  description: 'Test.',
  functions: { echo: { description: 'Echo.', handler: () => 'x', ...fn } },
});

t.test('a function may declare a title and annotations; they are kept as declared', async (t) => {
  const p = buildPlugin(plugin({ title: ' Echo text ', annotations: { readOnlyHint: true, openWorldHint: false } }), '1');
  const fn = p.functions.get('echo')!;
  t.equal(fn.title, 'Echo text');
  t.same(fn.annotations, { readOnlyHint: true, openWorldHint: false });
  const bare = buildPlugin(plugin({}), '1').functions.get('echo')!;
  t.equal(bare.title, undefined, 'both are optional: existing plugins load unchanged');
  t.same(bare.annotations, {});
});

t.test('a bad title or annotation is refused with a message naming it', async (t) => {
  const refused = (fn: Record<string, unknown>, re: RegExp) =>
    t.throws(() => buildPlugin(plugin(fn), '1'), { constructor: ManifestError, message: re });
  refused({ title: '' }, /functions\.echo\.title must be a non-empty string/);
  refused({ annotations: { readOnly: true } }, /functions\.echo\.annotations: unknown field 'readOnly'/);
  refused({ annotations: { destructiveHint: 'yes' } }, /functions\.echo\.annotations\.destructiveHint must be true or false/);
  refused({ annotations: [] }, /functions\.echo\.annotations must be/);
});

t.test('curl help words the effect', async (t) => {
  t.equal(effectText({ readOnlyHint: true }), 'read-only');
  t.match(effectText({ readOnlyHint: false, destructiveHint: true, idempotentHint: true }), /^destructive .*, idempotent/);
  t.match(effectText({ readOnlyHint: false, destructiveHint: false }), /adds only/);
  t.equal(effectText({}), '');
});
