// The background job queue (pg-boss through the ORM's connection) on a real database: the embedded
// PGlite, or the PostgreSQL server in DATABASE_URL.
import t from 'tap';
import type { EntityManager } from '@mikro-orm/postgresql';
import { JobQueue, type JobInfo, type RunningJob } from '../../core/db/jobs.ts';
import { openTestDatabase, testLogger } from '../helpers/db.ts';

const db = await openTestDatabase();
t.teardown(() => db.cleanup());

const queue = new JobQueue({
  db,
  log: testLogger(),
  settings: { inProcess: true, concurrency: 2, pollSeconds: 0.5, retryLimit: 1, retryDelaySeconds: 1, deadLetterRetentionDays: 30 },
});

/** Resolves when `check` returns something truthy; fails the test after `ms`. */
async function until<T>(what: string, check: () => Promise<T | null | undefined | false>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
const state = (name: string, id: string, want: JobInfo['state']) => () => queue.get(name, id).then((j) => (j?.state === want ? j : null));

// echo: waits for the test to let it go, reporting progress on the way.
const gates = new Map<number, () => void>();
queue.define<{ n: number }>('echo', {
  handler: async ({ n }, job) => {
    await job.progress({ step: 'halfway', n });
    await new Promise<void>((resolve) => gates.set(n, resolve));
    return { twice: n * 2 };
  },
});
// flaky: fails while `failing` holds, records every attempt.
let failing = true;
const attempts: number[] = [];
queue.define<{ what: string }>('flaky', {
  handler: async ({ what }, job) => {
    attempts.push(job.attempt);
    if (failing) throw new Error(`cannot ${what}`);
    return { did: what };
  },
});
// waiter: runs until its signal aborts, then says so.
const seen: { aborted: boolean; reason: string }[] = [];
let waiterStarted: (job: RunningJob) => void = () => {};
queue.define<object>('waiter', {
  handler: async (_data, job) => {
    waiterStarted(job);
    await new Promise<void>((resolve) => job.signal.addEventListener('abort', () => resolve(), { once: true }));
    seen.push({ aborted: job.signal.aborted, reason: String((job.signal.reason as Error)?.message) });
  },
});
await queue.start({ work: true });
t.teardown(() => queue.stop());

t.test('a job runs, shows its progress while it runs, and keeps its result', async (t) => {
  const id = (await queue.send('echo', { n: 21 }))!;
  t.ok(id, 'send returns the job id');
  const running = await until('progress', () => queue.get('echo', id).then((j) => (j?.state === 'active' && j.progress ? j : null)));
  t.same(running.progress, { step: 'halfway', n: 21 });
  gates.get(21)!();
  const done = await until('completion', state('echo', id, 'completed'));
  t.same(done.output, { twice: 42 });
  t.same(done.data, { n: 21 });
  t.ok(done.completedAt instanceof Date && done.completedAt >= done.createdAt);
});

t.test("a job sent in the caller's transaction exists only if the transaction commits", async (t) => {
  const em = () => db.orm.em.fork() as EntityManager;
  let rolledBack: string | null = null;
  await em()
    .transactional(async (tx) => {
      rolledBack = await queue.send('echo', { n: 1 }, { em: tx });
      throw new Error('the write failed');
    })
    .catch(() => {});
  t.ok(rolledBack, 'pg-boss gave the job an id inside the transaction');
  t.equal(await queue.get('echo', rolledBack!), null, 'after the rollback there is no such job');

  const committed = await em().transactional((tx) => queue.send('echo', { n: 2 }, { em: tx }));
  await until('the committed job to start', () => queue.get('echo', committed!).then((j) => j?.state === 'active' && gates.has(2)));
  gates.get(2)!();
  await until('completion', state('echo', committed!, 'completed'));
  t.notOk(gates.has(1), 'the rolled-back job never ran');
});

t.test('a failing job is retried, then dead-lettered for admins, and can be sent again', async (t) => {
  const id = (await queue.send('flaky', { what: 'parse' }))!;
  const failed = await until('the job to fail for good', state('flaky', id, 'failed'), 30_000);
  t.same(attempts, [0, 1], 'the first attempt and one retry (retryLimit 1)');
  t.match(failed.output, { message: 'cannot parse' }, 'the last error is kept on the job');

  const letters = await until('the dead letter', () => queue.deadLetters().then((l) => l.find((d) => d.jobId === id)));
  t.equal(letters.name, 'flaky');
  t.same(letters.data, { what: 'parse' });
  t.equal(letters.attempts, 2);
  t.match(letters.error, { message: 'cannot parse' });

  failing = false;
  t.equal(await queue.retryDeadLetter(letters.id), true);
  await until('the retried job to run', async () => attempts.length === 3);
  await until('the dead letter to be gone', () => queue.deadLetters().then((l) => !l.some((d) => d.jobId === id)));
  t.equal(await queue.retryDeadLetter(letters.id), false, 'a dead letter is retried once');
});

t.test('cancelling: a queued job never runs, a running one sees its signal abort', async (t) => {
  const later = (await queue.send('flaky', { what: 'later' }, { delaySeconds: 3600 }))!;
  t.equal(await queue.cancel('flaky', later), true);
  t.equal((await queue.get('flaky', later))?.state, 'cancelled');
  t.equal(await queue.cancel('flaky', later), false, 'cancelling twice changes nothing');

  const started = new Promise<RunningJob>((resolve) => (waiterStarted = resolve));
  const id = (await queue.send('waiter', {}))!;
  const job = await started;
  t.equal(job.id, id);
  t.equal(await queue.cancel('waiter', id), true);
  await until('the handler to stop', async () => seen.length === 1);
  t.same(seen[0], { aborted: true, reason: `job ${id} was cancelled` });
  t.equal((await queue.get('waiter', id))?.state, 'cancelled', 'it stays cancelled, not completed');
});

t.test('refuses what it cannot do', async (t) => {
  await t.rejects(queue.send('nope', {}), /no job 'nope' is defined/);
  t.throws(() => queue.define('late', { handler: async () => null }), /after the queue started/);
  t.throws(() =>
    new JobQueue({ db, log: testLogger(), settings: queue['settings' as never] }).define('Bad Name', { handler: async () => null }),
  );
});
