// Bounded revision diffs (core/domain/notes/revision-diff.ts): an exact diff while the versions
// differ on few lines, one replaced block past the bounds, and either way a patch that turns the old
// text into the new one.
import t from 'tap';
import { applyPatch } from 'diff';
import { coarseDiff, unifiedDiff } from '../../core/domain/notes/revision-diff.ts';
import { DiffThread } from '../../core/domain/notes/diff-thread.ts';

const numbered = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}\n`).join('');

t.test('a small change gets the exact diff', async (t) => {
  const out = unifiedDiff('a\nb\nc\n', 'a\nB\nc\n', 'v1', 'v2');
  t.equal(out.coarse, false);
  t.equal(
    out.diff,
    '===================================================================\n--- v1\n+++ v2\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n',
  );
});

t.test('every line rewritten, past the edit bound: a coarse diff that says so and still applies', async (t) => {
  const from = `Title: T\n\n${numbered(3000, 'a')}tail one\ntail two\n`;
  const to = `Title: T\n\n${numbered(3000, 'b')}tail one\ntail two\n`;
  const out = unifiedDiff(from, to, 'v1', 'v2', { maxEditLines: 500 });
  t.equal(out.coarse, true);
  t.equal(applyPatch(from, out.diff), to, 'the coarse patch turns the old text into the new');
  t.match(out.diff, /^@@ -1,3004 \+1,3004 @@$/m, 'one hunk from the first to the last differing line, with context');
  t.equal(out.diff.match(/^@@/gm)?.length, 1);
});

t.test('the time bound gives up too', async (t) => {
  const out = unifiedDiff(numbered(20_000, 'a'), numbered(20_000, 'b'), 'v1', 'v2', { maxEditLines: 1e9, timeoutMs: 1 });
  t.equal(out.coarse, true);
});

t.test('coarse diffs of edge shapes apply: empty sides, no final newline, a change at either end', async (t) => {
  const cases: Array<[string, string]> = [
    ['', 'x\ny\n'],
    ['x\ny\n', ''],
    ['a\nb', 'a\nc'],
    ['a\nb\n', 'a\nb\nc'],
    ['x\n' + numbered(10, 'k'), 'y\n' + numbered(10, 'k')],
    [numbered(10, 'k') + 'x\n', numbered(10, 'k') + 'y\n'],
  ];
  for (const [from, to] of cases) t.equal(applyPatch(from, coarseDiff(from, to, 'v1', 'v2')), to, JSON.stringify([from, to]));
});

t.test('the diff thread answers off the event loop, in turn, and lets the process go when idle', async (t) => {
  const thread = new DiffThread({ idleMs: 50 });
  const ticks: number[] = [];
  const timer = setInterval(() => ticks.push(Date.now()), 5);
  const [big, small] = await Promise.all([
    thread.diff(numbered(10_000, 'a'), numbered(10_000, 'b'), 'v1', 'v2'),
    thread.diff('a\n', 'b\n', 'v1', 'v2'),
  ]);
  clearInterval(timer);
  t.equal(big.coarse, true);
  t.equal(small.coarse, false);
  t.ok(ticks.length > 1, 'the event loop ran timers while the diffs were computed');
});

t.test('over its waiting line the diff thread refuses at once with a 429; the others are answered', async (t) => {
  const thread = new DiffThread({ maxWaiting: 1 });
  const running = thread.diff(numbered(10_000, 'a'), numbered(10_000, 'b'), 'v1', 'v2');
  const waiting = thread.diff('a\n', 'b\n', 'v1', 'v2');
  t.throws(() => thread.diff('a\n', 'c\n', 'v1', 'v2'), { code: 'too_many_requests' });
  t.equal((await running).coarse, true);
  t.equal((await waiting).coarse, false);
});

t.test('a diff past its deadline fails with the reason, not a hang', async (t) => {
  const thread = new DiffThread({ deadlineMs: 1 });
  const slow = thread.diff(numbered(10_000, 'a'), numbered(10_000, 'b'), 'v1', 'v2');
  await t.rejects(slow, /took longer than 1 ms/);
});
