// Countdowns: many timers of one length on one Node timer. A countdown fires once, not before its
// length; a stopped one never fires; one that throws does not stop the rest.
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { Countdowns } from '../../core/surfaces/mcp/countdowns.ts';

t.test('fires once, not before its length', async (t) => {
  const countdowns = new Countdowns(60, (err) => t.fail(String(err)), 10);
  const started = performance.now();
  const fired: number[] = [];
  const once = new Promise<void>((resolve) => countdowns.start(() => resolve(void fired.push(performance.now() - started))));
  await sleep(30);
  t.same(fired, [], 'not yet');
  // Its timer keeps nothing alive (what waits on a countdown does): this interval keeps the test's.
  const alive = setInterval(() => {}, 1000);
  await once;
  clearInterval(alive);
  t.ok(fired[0]! >= 60, `not before 60 ms (${fired[0]!.toFixed(1)} ms)`);
  await sleep(50);
  t.equal(fired.length, 1, 'once');
  t.equal(countdowns.running, 0);
});

t.test('a stopped countdown never fires; the others of its slice do', async (t) => {
  const countdowns = new Countdowns(30, (err) => t.fail(String(err)));
  const fired: string[] = [];
  const a = countdowns.start(() => fired.push('a'));
  countdowns.start(() => fired.push('b'));
  const c = countdowns.start(() => fired.push('c'));
  countdowns.stop(a);
  countdowns.stop(a); // twice: nothing
  t.equal(countdowns.running, 2);
  await sleep(10);
  countdowns.start(() => fired.push('d')); // a later slice
  countdowns.stop(c);
  await sleep(80);
  t.same(fired, ['b', 'd'], 'in the order they fall due');
  countdowns.stop(c); // after it would have fired: nothing
  t.equal(countdowns.running, 0);
});

t.test('one that throws is reported; the rest still fire', async (t) => {
  const errors: unknown[] = [];
  const countdowns = new Countdowns(20, (err) => errors.push(err));
  const fired: string[] = [];
  countdowns.start(() => {
    throw new Error('boom');
  });
  countdowns.start(() => fired.push('after'));
  await sleep(60);
  t.same(fired, ['after']);
  t.equal(errors.length, 1);
  t.match(String(errors[0]), /boom/);
});

t.test('thousands started and stopped leave nothing running and fire nothing', async (t) => {
  const countdowns = new Countdowns(20, (err) => t.fail(String(err)), 2);
  let fired = 0;
  for (let i = 0; i < 5000; i++) countdowns.stop(countdowns.start(() => fired++));
  t.equal(countdowns.running, 0);
  await sleep(50);
  t.equal(fired, 0);
});
