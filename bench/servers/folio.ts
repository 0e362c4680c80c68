// A Folio server in its own process, for bench/call.ts. Started by the parent with an IPC channel:
// it sends {url, token, engine} once it serves bench.noop to a plain user, then answers commands:
//   {cmd:'profile-start'} / {cmd:'profile-stop', file}  CPU profiles of a window, main thread and workers
//   {cmd:'cpu'}           this process's CPU time so far (process.cpuUsage: every thread)
//   {cmd:'rss'}           this process's resident memory (process.memoryUsage().rss)
//   {cmd:'breakdown', n}   sequential in-process timings of the per-call database work
//   {cmd:'stop'}           closes Folio (and its database) and exits
// argv: [databaseUrl, dataDir]  (databaseUrl '' -> embedded PGlite; dataDir: an empty folder the
// parent made and removes after this process is gone, even if it had to kill it)
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { pino } from 'pino';
import { BENCH_PLUGINS, callFn, createUserToken, send, startBenchFolio, stopOnParentRequest } from '../lib.ts';

const databaseUrl = process.argv[2] || undefined;
const dataDir = process.argv[3] || undefined;
let profiler: Awaited<ReturnType<typeof startProfiler>> | undefined;

/**
 * CPU profiles of this process's main thread and of every worker thread (the embedded PGlite may
 * run in one), over exactly the window between start and stop. Workers are reached through the
 * inspector's NodeWorker domain.
 */
async function startProfiler() {
  const session = new Session();
  session.connect();
  const workers: Array<{ sessionId: string; title: string }> = [];
  const pending = new Map<number, (msg: { result?: unknown; error?: unknown }) => void>();
  let seq = 0;
  session.on('NodeWorker.attachedToWorker', (m) => {
    const p = m.params as { sessionId: string; workerInfo: { title: string } };
    workers.push({ sessionId: p.sessionId, title: p.workerInfo.title });
  });
  session.on('NodeWorker.receivedMessageFromWorker', (m) => {
    const msg = JSON.parse((m.params as { message: string }).message) as { id?: number; result?: unknown; error?: unknown };
    if (msg.id !== undefined) pending.get(msg.id)?.(msg);
  });
  const inWorker = (sessionId: string, method: string, params: object = {}) =>
    new Promise<{ result?: unknown; error?: unknown }>((resolve, reject) => {
      const id = ++seq;
      const timer = setTimeout(() => reject(new Error(`worker did not answer ${method}`)), 30_000);
      pending.set(id, (msg) => {
        clearTimeout(timer);
        pending.delete(id);
        resolve(msg);
      });
      void session.post('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id, method, params }) });
    });
  await session.post('NodeWorker.enable', { waitForDebuggerOnStart: false });
  await new Promise((r) => setTimeout(r, 100)); // attachedToWorker events for running workers
  for (const w of workers) {
    await inWorker(w.sessionId, 'Profiler.enable');
    await inWorker(w.sessionId, 'Profiler.setSamplingInterval', { interval: 250 });
    await inWorker(w.sessionId, 'Profiler.start');
  }
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 250 });
  await session.post('Profiler.start');
  return {
    threads: () => ['main', ...workers.map((w) => w.title)],
    async stop(base: string): Promise<Array<{ thread: string; file: string }>> {
      const files: Array<{ thread: string; file: string }> = [];
      const { profile } = await session.post('Profiler.stop');
      await writeFile(`${base}.cpuprofile`, JSON.stringify(profile));
      files.push({ thread: 'main', file: `${base}.cpuprofile` });
      for (const [i, w] of workers.entries()) {
        const reply = (await inWorker(w.sessionId, 'Profiler.stop')) as { result?: { profile: unknown } };
        if (!reply.result) continue;
        const file = `${base}-worker${i + 1}.cpuprofile`;
        await writeFile(file, JSON.stringify(reply.result.profile));
        files.push({ thread: w.title, file });
      }
      await session.post('NodeWorker.disable');
      session.disconnect();
      return files;
    },
  };
}

async function timeIt(n: number, fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < Math.min(200, n); i++) await fn(); // warm
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await fn();
  return ((performance.now() - t0) / n) * 1000; // µs per call
}

try {
  // The call path itself: the bench plugin runs in-process, as Folio's own plugins do, unless
  // BENCH_ISOLATION says otherwise (the isolation bench measures the worker boundary's cost).
  const mode = process.env['BENCH_ISOLATION'] ?? 'in-process';
  // bench/plugin-host.ts adds plugin folders (BENCH_PLUGIN_DIRS, path.delimiter-separated) and
  // configuration (BENCH_CONFIG, JSON deep-merged last, e.g. isolation.plugins, idleStopSeconds).
  const extraDirs = (process.env['BENCH_PLUGIN_DIRS'] ?? '').split(path.delimiter).filter(Boolean);
  const extra = JSON.parse(process.env['BENCH_CONFIG'] ?? '{}') as { isolation?: Record<string, unknown> };
  const b = await startBenchFolio({
    plugins: [BENCH_PLUGINS, ...extraDirs],
    databaseUrl,
    dataDir,
    overrides: { ...extra, isolation: { mode, ...extra.isolation } },
  });
  stopOnParentRequest(async () => {
    await b.close();
  });
  const { token, userId } = await createUserToken(b.url);
  const check = await callFn(b.url, token, 'bench', 'noop');
  if (check.status !== 200 || check.text !== '{"ok":true}')
    throw new Error(`bench.noop answered ${check.status} ${check.text.slice(0, 200)}`);

  process.on('message', (m: { cmd?: string; file?: string; n?: number }) => {
    void (async () => {
      try {
        if (m.cmd === 'cpu') {
          send({ ok: true, cpu: process.cpuUsage() });
        } else if (m.cmd === 'rss') {
          send({ ok: true, rss: process.memoryUsage().rss });
        } else if (m.cmd === 'profile-start') {
          profiler = await startProfiler();
          send({ ok: true, threads: profiler.threads() });
        } else if (m.cmd === 'profile-stop' && profiler && m.file) {
          const files = await profiler.stop(m.file);
          profiler = undefined;
          send({ ok: true, files });
        } else if (m.cmd === 'breakdown') {
          const n = m.n ?? 2000;
          const { identity, dispatcher } = b.folio;
          const principal = await identity.authenticate(token);
          if (!principal) throw new Error('token did not authenticate');
          const log = pino({ level: 'silent' });
          const signal = new AbortController().signal;
          const out = {
            n,
            authenticateUs: await timeIt(n, () => identity.authenticate(token)),
            namespaceAccessUs: await timeIt(n, () => identity.namespaceAccess(userId)),
            dispatchUs: await timeIt(n, () => dispatcher.call({ principal, namespace: 'bench', fn: 'noop', body: {}, signal, log })),
            selectOneUs: await timeIt(n, () => b.folio.db.orm.em.fork().execute('select 1')),
          };
          send({ ok: true, breakdown: out });
        }
      } catch (err) {
        send({ ok: false, error: (err as Error).stack ?? String(err) });
      }
    })();
  });
  send({ url: b.url, token, userId, engine: b.engine, pid: process.pid });
} catch (err) {
  send({ error: (err as Error).stack ?? String(err) });
  process.exit(1);
}
