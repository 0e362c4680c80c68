import t from 'tap';
import { ceilingFor, encode, assertWithin, jsonDepth } from '../../core/kernel/limits.ts';
import { BadArguments, TooLarge } from '../../core/contract/errors.ts';
import { bytes } from '../../core/sdk/index.ts';

const limits = { responseBytes: 1000, responseHardCapBytes: 5000, jsonDepth: 8 };

t.test('the ceiling: server default, a function may change it up to the hard cap, a caller only lowers it', async (t) => {
  t.equal(ceilingFor(limits, undefined, undefined), 1000);
  t.equal(ceilingFor(limits, 3000, undefined), 3000);
  t.equal(ceilingFor(limits, 99999, undefined), 5000);
  t.equal(ceilingFor(limits, 200, undefined), 200);
  t.equal(ceilingFor(limits, undefined, 10), 10);
  t.equal(ceilingFor(limits, undefined, 4000), 1000);
  for (const bad of [0, -1, 2.5, '10', null]) t.throws(() => ceilingFor(limits, undefined, bad), BadArguments);
});

t.test('results encode by kind', async (t) => {
  t.equal(encode('hi').contentType, 'text/plain; charset=utf-8');
  t.equal(encode({ a: 1 }).body.toString(), '{"a":1}');
  t.equal(encode(undefined).body.toString(), 'null');
  const b = encode(bytes(new Uint8Array([1, 2]), 'image/png', 'x.png'));
  t.equal(b.kind, 'bytes');
  t.equal(b.filename, 'x.png');
  t.same([...b.body], [1, 2]);
});

t.test('too large is a TooLarge with the size and the ceiling', async (t) => {
  const e = encode('x'.repeat(11));
  t.doesNotThrow(() => assertWithin(e, 11, 'f', 'help'));
  try {
    assertWithin(e, 10, 'f', 'help');
    t.fail('should throw');
  } catch (err) {
    t.ok(err instanceof TooLarge);
    t.equal((err as TooLarge).size, 11);
    t.equal((err as TooLarge).limit, 10);
  }
});

t.test('json depth is measured without recursion', async (t) => {
  t.equal(jsonDepth(1, 8), 0);
  t.equal(jsonDepth({ a: [1] }, 8), 2);
  let deep: unknown = [];
  for (let i = 0; i < 100_000; i++) deep = [deep];
  t.ok(jsonDepth(deep, 8) > 8, 'stops early, no stack overflow');
});
