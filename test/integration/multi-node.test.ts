// Several Folio processes on one PostgreSQL database, as behind a load balancer: what one node
// changes about a user (disabled, a revoked token, a namespace toggle) reaches the others' caches
// through LISTEN/NOTIFY. The embedded engine is one process by construction, so this needs a server.
import t from 'tap';
import path from 'node:path';
import { startTestServer, fresh, req, call, createUser, eventually, FIXTURES } from '../helpers/server.ts';

const serverUrl = process.env['DATABASE_URL'];

t.test(
  'a change made on one node reaches the other at once',
  { skip: serverUrl ? false : 'needs DATABASE_URL (a PostgreSQL server)' },
  async (t) => {
    const db = await fresh(serverUrl!);
    const plugins = [path.join(FIXTURES, 'basic')];
    const a = await startTestServer({ sharedDatabaseUrl: db.url, plugins });
    const b = await startTestServer({ sharedDatabaseUrl: db.url, plugins });
    t.teardown(async () => {
      await a.close();
      await b.close();
      await db.drop();
    });
    const user = await createUser(a, 'node@example.com');
    const whoOnB = async () => (await req(b, 'GET', '/curl/whoami', { token: user.token })).status;
    t.equal(await whoOnB(), 200, 'B knows (and caches) the token');

    await a.folio.identity.setDisabled(user.id, true);
    t.equal(await eventually(whoOnB, (s) => s === 401, 2000), 401, 'disabled on A: refused on B');
    await a.folio.identity.setDisabled(user.id, false);
    t.equal(await eventually(whoOnB, (s) => s === 200, 2000), 200);

    const acme = async () => (await call(b, user.token, 'acme', 'noop')).status;
    t.equal(await acme(), 200);
    const off = await call(a, a.adminToken, 'admin', 'set_namespace_access', { user_id: user.id, namespace: 'acme', access: 'disabled' });
    t.equal(off.status, 200);
    t.equal(await eventually(acme, (s) => s === 404, 2000), 404, 'toggled on A: hidden on B');
  },
);
