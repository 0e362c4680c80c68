// ChildRunner: work in a child process whose memory and time limits hold whatever the work does
// (memory outside the heap, a heap that keeps growing, a loop that never yields), and whose death
// costs the parent nothing: the next message gets a new child.
import t from 'tap';
import { ChildFailed, ChildLimitExceeded, ChildRunner } from '../../core/domain/child-runner.ts';

const TASKS = new URL('../fixtures/child-runner/tasks.ts', import.meta.url);
type Reply = { echoed: unknown; pid: number };

function runner(limits: { memoryMb: number; timeoutMs: number }) {
  const r = new ChildRunner<object, Reply>({ module: TASKS, label: 'task', limits });
  t.teardown(() => r.close());
  return r;
}

t.test('answers messages one at a time from one long-lived child, bytes included', async (t) => {
  const r = runner({ memoryMb: 256, timeoutMs: 20_000 });
  const [a, b] = await Promise.all([
    r.run({ do: 'echo', value: new Uint8Array([1, 2, 3]) }),
    r.run({ do: 'echo', value: { text: 'two' } }),
  ]);
  t.same(a.echoed, new Uint8Array([1, 2, 3]));
  t.same(b.echoed, { text: 'two' });
  t.equal(a.pid, b.pid, 'the same child served both');
  t.not(a.pid, process.pid);
  await t.rejects(r.run({ do: 'throw' }), new ChildFailed('the task failed on purpose'));
  t.equal((await r.run({ do: 'echo', value: 3 })).pid, a.pid, 'a module that throws does not cost its child');
});

t.test('memory outside the heap past the limit: the child is killed, the parent carries on', async (t) => {
  const r = runner({ memoryMb: 160, timeoutMs: 60_000 });
  const first = await r.run({ do: 'echo', value: 1 });
  const err = await r.run({ do: 'buffers' }).catch((e: unknown) => e);
  t.ok(err instanceof ChildLimitExceeded, 'rejected for a limit');
  t.match(err, { limit: 'memory', message: 'task used more than 160 MB' });
  const next = await r.run({ do: 'echo', value: 2 });
  t.same(next.echoed, 2, 'the next message is answered');
  t.not(next.pid, first.pid, 'by a new child');
});

t.test('a heap that keeps growing is stopped as over the memory limit', async (t) => {
  const r = runner({ memoryMb: 96, timeoutMs: 60_000 });
  await t.rejects(r.run({ do: 'heap' }), { name: 'ChildLimitExceeded', limit: 'memory', message: 'task used more than 96 MB' });
  t.same((await r.run({ do: 'echo', value: 'after' })).echoed, 'after');
});

t.test('work that never yields is killed at the time limit', async (t) => {
  const r = runner({ memoryMb: 256, timeoutMs: 1500 });
  await t.rejects(r.run({ do: 'loop' }), { name: 'ChildLimitExceeded', limit: 'time', message: 'task took longer than 1.5 s' });
  t.same((await r.run({ do: 'echo', value: 'after' })).echoed, 'after');
});

t.test('a child that exits, or a caller that gives up, fails only that message', async (t) => {
  const r = runner({ memoryMb: 256, timeoutMs: 20_000 });
  await t.rejects(r.run({ do: 'exit' }), new ChildFailed('the task process stopped (exit code 3)'));
  const ac = new AbortController();
  const looping = r.run({ do: 'loop' }, { signal: ac.signal });
  setTimeout(() => ac.abort(new Error('cancelled by the caller')), 300);
  await t.rejects(looping, new Error('cancelled by the caller'));
  t.same((await r.run({ do: 'echo', value: 'after' })).echoed, 'after');
});
