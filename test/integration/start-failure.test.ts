// `npm start` that cannot start says why in one line on stderr, with what to do, besides its fatal
// log line: the database in DATABASE_URL missing or unreachable, the port taken. Folio runs as its
// own process (core/main.ts), as `npm start` runs it.
import t from 'tap';
import net from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runScript } from '../helpers/process.ts';

const dir = await mkdtemp(path.join(tmpdir(), 'folio-start-failure-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));

const start = (env: Record<string, string>) => runScript('core/main.ts', [], { DATA_DIR: path.join(dir, 'data'), ...env });

t.test(
  'a database that does not exist: one line naming it, and how to make it',
  { skip: !process.env['DATABASE_URL'] && 'needs DATABASE_URL' },
  async (t) => {
    const url = new URL(process.env['DATABASE_URL']!);
    url.pathname = '/folio_no_such_database_for_start';
    const r = await start({ DATABASE_URL: url.toString(), PORT: '0' });
    t.equal(r.code, 1);
    t.match(
      r.stderr,
      /^folio: cannot start: the database "folio_no_such_database_for_start" does not exist on .+:\d+\. Create it \(createdb folio_no_such_database_for_start/m,
    );
    t.match(r.stdout, /"msg":"folio failed to start"/, 'the fatal log line is still written');
  },
);

t.test('no PostgreSQL at DATABASE_URL: says so, and that the embedded database needs none', async (t) => {
  // A port nothing listens on: take one, and let it go.
  const free = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
  const r = await start({ DATABASE_URL: `postgres://postgres@127.0.0.1:${free}/folio`, PORT: '0' });
  t.equal(r.code, 1);
  t.match(r.stderr, new RegExp(`^folio: cannot start: no PostgreSQL answers at 127\\.0\\.0\\.1:${free} \\(ECONNREFUSED\\)`, 'm'));
});

t.test('the port is taken: says which, and how to choose another', async (t) => {
  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(() => new Promise<void>((resolve) => taken.close(() => resolve())));
  const port = (taken.address() as net.AddressInfo).port;
  const r = await start({ PORT: String(port), HOST: '127.0.0.1' });
  t.equal(r.code, 1);
  t.match(r.stderr, new RegExp(`^folio: cannot start: port ${port} is in use by another program`, 'm'));
});
