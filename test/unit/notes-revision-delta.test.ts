// The stored delta format of note revisions: every chain of edits reads back exactly, deltas stay
// about the size of the edit, and a delta that does not fit its body is refused, not misapplied.
import t from 'tap';
import { applyDeltas, diffBodies, encodeDelta } from '../../core/domain/notes/revision-delta.ts';

const delta = (a: string, b: string) => encodeDelta(diffBodies(a, b));

/** A tiny seeded PRNG: the same edits on every run. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

t.test('the common edits and their deltas', async (t) => {
  const mb = 'a'.repeat(1024 * 1024);
  t.equal(delta(mb, mb + 'x'), `[${mb.length},"x"]`, 'a one-character append is a dozen bytes');
  t.equal(delta(mb, 'x' + mb), '["x"]', 'and a prepend');
  t.equal(delta('same', 'same'), '[]', 'no change');
  t.equal(delta('', 'new'), '["new"]');
  t.equal(delta('gone', ''), '[-4]');
  t.equal(delta('keep DROP keep', 'keep keep'), '[5,-5]');
  t.equal(delta('line one\nline two\n', 'line one\nline 2\n'), '[14,-3,"2"]', 'a change in the middle keeps both ends');
  for (const [a, b] of [
    [mb, mb + 'x'],
    [mb, 'x' + mb],
    ['keep DROP keep', 'keep keep'],
    ['', ''],
    ['abc', ''],
    ['', 'abc'],
  ] as const)
    t.equal(applyDeltas(a, [delta(a, b)]), b);
});

t.test('surrogate pairs are never split: emoji and CJK survive every edit', async (t) => {
  const cases: Array<[string, string]> = [
    ['😀', '😃'], // same high surrogate, different low one
    ['a😀b', 'a😃b'],
    ['東京🗼', '東京🗻'],
    ['x😀', 'x'],
    ['😀😀', '😀'],
  ];
  for (const [a, b] of cases) {
    const ops = diffBodies(a, b);
    for (const op of ops)
      if (typeof op === 'string') t.notMatch(op, /^[\udc00-\udfff]|[\ud800-\udbff]$/u, `${a} -> ${b}: whole characters`);
    t.equal(applyDeltas(a, [encodeDelta(ops)]), b, `${a} -> ${b}`);
  }
});

t.test('a long chain of random edits reads back exactly at every step', async (t) => {
  const rand = rng(42);
  const alphabet = ['a', 'b', ' ', '\n', 'é', '東', '😀', '# ', '- [ ] '];
  const piece = (n: number) => Array.from({ length: n }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
  let body = piece(2000);
  const snapshot = body;
  const deltas: string[] = [];
  for (let i = 0; i < 300; i++) {
    const chars = Array.from(body);
    const at = Math.floor(rand() * (chars.length + 1));
    const cut = Math.floor(rand() * 20);
    const kind = rand();
    const next =
      kind < 0.4
        ? body + piece(1 + Math.floor(rand() * 10))
        : kind < 0.5
          ? piece(3) + body
          : [...chars.slice(0, at), piece(Math.floor(rand() * 15)), ...chars.slice(at + cut)].join('');
    deltas.push(delta(body, next));
    body = next;
    if (i % 37 === 0 || i === 299) t.equal(applyDeltas(snapshot, deltas), body, `after ${i + 1} edits`);
  }
  const deltaBytes = deltas.reduce((n, d) => n + Buffer.byteLength(d), 0);
  t.ok(deltaBytes < 300 * 200, `300 small edits store ${deltaBytes} bytes, not 300 copies`);
});

t.test('a delta that does not fit its body is an error, never a wrong body', async (t) => {
  t.throws(() => applyDeltas('short', ['[10,"x"]']), /past the end/);
  t.throws(() => applyDeltas('short', ['[-6]']), /past the end/);
  t.throws(() => applyDeltas('short', ['{"not":"ops"}']), /malformed/);
  t.throws(() => applyDeltas('short', ['[0]']), /malformed/);
  t.throws(() => applyDeltas('short', ['[1.5]']), /malformed/);
});
