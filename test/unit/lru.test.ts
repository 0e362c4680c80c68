// LruMap: bounded, and the entry evicted is always the least recently used one, however often the
// newest is read.
import t from 'tap';
import { LruMap } from '../../core/domain/lru.ts';

t.test('evicts the least recently used entry', async (t) => {
  const m = new LruMap<string, number>(2);
  m.set('a', 1);
  m.set('b', 2);
  t.equal(m.get('a'), 1, 'a is now the newest');
  m.set('c', 3);
  t.equal(m.get('b'), undefined, 'b was the oldest: gone');
  t.equal(m.get('a'), 1);
  t.equal(m.get('a'), 1, 'reading the newest again changes nothing');
  t.equal(m.get('c'), 3, 'c is now the newest');
  m.set('d', 4);
  t.equal(m.get('a'), undefined, 'a was the oldest after c was read');
  t.same([m.get('c'), m.get('d'), m.size], [3, 4, 2]);
});

t.test('a deleted or cleared newest entry is not remembered as newest', async (t) => {
  const m = new LruMap<string, number>(2);
  m.set('a', 1);
  m.set('b', 2);
  m.delete('b');
  m.set('b', 2);
  m.get('a');
  m.set('c', 3);
  t.equal(m.get('b'), undefined, 'b (re-set before a was read) went first');
  m.deleteWhere((v) => v === 3);
  t.equal(m.get('c'), undefined);
  m.set('c', 3);
  m.get('a');
  m.set('d', 4);
  t.equal(m.get('c'), undefined, 'c went: a was read after it');
  t.equal(m.get('a'), 1);
  m.clear();
  t.equal(m.size, 0);
  m.set('x', 1);
  m.set('y', 2);
  m.get('x');
  m.set('z', 3);
  t.same([m.get('x'), m.get('y'), m.get('z')], [1, undefined, 3]);
});
