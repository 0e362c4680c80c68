// GET /health: 200 when the database answers, 503 within 2 s when it hangs, 200 again when it
// returns, without a restart. The database is made to hang for real: behind a TCP proxy that
// stops forwarding (a PostgreSQL server), or by a long statement holding the one connection of
// the embedded engine.
import t from 'tap';
import net from 'node:net';
import { pino } from 'pino';
import { startTestServer, req, createUser } from '../helpers/server.ts';

/** Answers within 2 s or fails: a health check that hangs is the bug this guards against. */
async function health(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
  return { status: res.status, body: await res.json() };
}

async function recovers(url: string): Promise<number> {
  let status = 0;
  for (let i = 0; i < 100 && status !== 200; i++) {
    status = (await health(url)).status;
    if (status !== 200) await new Promise((r) => setTimeout(r, 50));
  }
  return status;
}

/** A TCP proxy whose forwarding can be frozen, to make a real server look hung. */
function freezableProxy(target: URL) {
  let frozen = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.add(upstream);
    const pipe = (from: net.Socket, to: net.Socket) =>
      from.on('data', (chunk) => {
        if (!frozen) to.write(chunk);
      });
    pipe(client, upstream);
    pipe(upstream, client);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  return {
    listen: () =>
      new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port))),
    freeze: (v: boolean) => {
      frozen = v;
    },
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const serverUrl = process.env['DATABASE_URL'];

if (serverUrl) {
  t.test('PostgreSQL server: 503 while it hangs, 200 when it returns', async (t) => {
    const proxy = freezableProxy(new URL(serverUrl));
    const port = await proxy.listen();
    const viaProxy = new URL(serverUrl);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(port);
    // No background job workers here: their polls (search's every 0.5 s) would also be cut off by
    // the frozen proxy, whose lost bytes leave those pooled connections waiting for good, and fill
    // the pool. This test is about /health and requests; the stuck-connection case is the next one.
    const s = await startTestServer({ databaseUrl: viaProxy.toString(), overrides: { jobs: { inProcess: false } } });
    t.teardown(async () => {
      proxy.freeze(false);
      await s.close();
      await proxy.close();
    });
    const ok = await health(s.url);
    t.equal(ok.status, 200);
    t.same(ok.body.database, { status: 'ok', engine: 'postgres', latency_ms: ok.body.database.latency_ms });
    t.notOk('embedded_capacity' in ok.body, 'a PostgreSQL server is never flagged');
    proxy.freeze(true);
    const down = await health(s.url);
    t.equal(down.status, 503);
    t.equal(down.body.status, 'unavailable');
    t.equal(down.body.database.status, 'unreachable');
    t.equal(down.body.version, '1.2.4');
    proxy.freeze(false);
    t.equal(await recovers(s.url), 200, 'back to 200 without a restart');
    t.equal((await req(s, 'GET', '/curl/whoami', { token: s.adminToken })).status, 200, 'and requests work again');
  });

  t.test('PostgreSQL server: a query lost while it hung does not hold up the close', async (t) => {
    const proxy = freezableProxy(new URL(serverUrl));
    const port = await proxy.listen();
    const viaProxy = new URL(serverUrl);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(port);
    const s = await startTestServer({ databaseUrl: viaProxy.toString() });
    t.teardown(() => proxy.close());
    const user = await createUser(s, 'lost-query@example.com');
    // A token never seen is looked up in the database: with the proxy frozen, that query's bytes
    // are dropped, so its pooled connection waits for an answer that never comes.
    proxy.freeze(true);
    await fetch(`${s.url}/curl/whoami`, { headers: { authorization: `Bearer ${user.token}` }, signal: AbortSignal.timeout(500) }).catch(
      () => 'aborted',
    );
    proxy.freeze(false);
    let timer: NodeJS.Timeout | undefined;
    const stuck = new Promise((r) => (timer = setTimeout(() => r('still closing'), 30_000)));
    const closed = await Promise.race([s.close().then(() => 'closed'), stuck]);
    clearTimeout(timer);
    t.equal(closed, 'closed', 'the server closes although one connection is stuck');
  });
} else {
  t.test('embedded PGlite: 503 while its connection hangs, 200 when it returns', async (t) => {
    const s = await startTestServer();
    t.teardown(() => s.close());
    t.equal((await health(s.url)).status, 200);
    t.equal((await health(s.url)).body.database.engine, 'pglite');
    // The embedded engine serves one connection; a statement that runs for 3 s holds it.
    let done = false;
    const busy = s.folio.db.orm.em
      .getConnection()
      .execute('select pg_sleep(3)')
      .finally(() => (done = true));
    // Asked while the statement holds the connection (on a loaded machine it may start late: a
    // check answered before it started is not the one this test is about).
    let down = await health(s.url);
    while (down.status === 200 && !done) down = await health(s.url);
    t.equal(down.status, 503, 'asked while the statement runs');
    t.equal(down.body.database.status, 'unreachable');
    await busy;
    t.equal(await recovers(s.url), 200, 'back to 200 without a restart');
  });
}

// The embedded engine serves a measured size per user within its latency targets; past it the
// operator is told, in the log and in /health, what to do. (Limits lowered here to a few notes.)
t.test(
  'embedded PGlite: a user past what it serves within its targets is said in /health and the log',
  { skip: serverUrl ? 'PGlite only' : false },
  async (t) => {
    const lines: Array<Record<string, unknown>> = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const s = await startTestServer({ log, overrides: { embedded: { notesPerUser: 3, searchChunksPerUser: 1000, checkMinutes: 0.01 } } });
    t.teardown(() => s.close());
    // The first check runs just after the start.
    let ok = await health(s.url);
    for (let i = 0; i < 100 && !ok.body.embedded_capacity; i++) {
      await new Promise((r) => setTimeout(r, 100));
      ok = await health(s.url);
    }
    t.equal(ok.status, 200);
    t.equal(ok.body.embedded_capacity?.status, 'ok', 'nobody is over yet');
    const user = await createUser(s, 'prolific@example.com');
    for (let i = 0; i < 4; i++)
      t.equal((await req(s, 'POST', '/api/v1/notetaker/notes', { token: user.token, body: { title: `note ${i}` } })).status, 201);
    let over = ok;
    for (let i = 0; i < 100 && over.body.embedded_capacity?.status !== 'over'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      over = await health(s.url);
    }
    t.equal(over.status, 200, 'still healthy: it serves, only slower than promised');
    t.match(over.body.embedded_capacity, { status: 'over', users_over: 1, limits: { notes_per_user: 3 }, advice: /DATABASE_URL/ });
    t.notOk('largest' in over.body.embedded_capacity, "the largest user's figures are not public");
    const warned = lines.find((l) => /more than it serves within its latency targets/.test(String(l['msg'])));
    t.ok(warned, 'a warning in the log');
    t.equal((warned?.['largest'] as { notes: number } | undefined)?.notes, 4, "with the largest user's figures");
  },
);

// Busy is not down: with every pooled connection taken and queries queued behind them (reports,
// searches), the health check runs on a connection of its own and is answered between statements.
t.test('a busy database is healthy: queries queued on the pool do not delay the health check', async (t) => {
  const s = await startTestServer();
  t.teardown(() => s.close());
  const user = await createUser(s, 'busy-db@example.com');
  t.equal((await health(s.url)).status, 200);
  // Far more queued statements than the pool has connections (1 on the embedded engine, 10 on a
  // server): ~3 s of work in all, twice the health check's deadline, queued in front of it.
  const n = s.folio.db.engine === 'pglite' ? 60 : 120;
  const seconds = s.folio.db.engine === 'pglite' ? 0.05 : 0.25;
  let finished = 0;
  const queued = Promise.all(
    Array.from({ length: n }, () =>
      s.folio.db.orm.em
        .fork()
        .getConnection()
        .execute(`select pg_sleep(${seconds})`)
        .then(() => finished++),
    ),
  );
  await new Promise((r) => setImmediate(r));
  const during = await health(s.url);
  t.equal(during.status, 200, 'healthy while the pool is saturated');
  t.equal(during.body.database.status, 'ok');
  t.ok(finished < n, `answered while ${n - finished} of ${n} queued statements were still waiting`);
  const whoami = await req(s, 'GET', '/curl/whoami', { token: user.token });
  t.equal(whoami.status, 200, 'and another user is answered');
  await queued;
});
