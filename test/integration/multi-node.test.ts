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

    // A personal token revoked over REST on A, and a role taken away on A, on B's next call.
    const made = await req(a, 'POST', '/api/v1/tokens', {
      token: user.token,
      body: { name: 'n', scopes: ['notes:read'], expires_in_days: 1 },
    });
    const selfOnB = async () => (await req(b, 'GET', '/api/v1/tokens/self', { token: made.json().token })).status;
    t.equal(await selfOnB(), 200, 'B caches the personal token');
    t.equal((await req(a, 'DELETE', `/api/v1/tokens/${made.json().id}`, { token: user.token })).status, 200);
    t.equal(await eventually(selfOnB, (s) => s === 401, 2000), 401, 'revoked on A: refused on B');
    const boss = await createUser(a, 'boss@example.com', ['admin']);
    const usersOnB = async () => (await req(b, 'GET', '/api/v1/users', { token: boss.token })).status;
    t.equal(await usersOnB(), 200);
    t.equal((await req(a, 'PATCH', `/api/v1/users/${boss.id}`, { token: a.adminToken, body: { roles: [] } })).status, 200);
    t.equal(await eventually(usersOnB, (s) => s === 403, 2000), 403, 'admin role taken on A: the users scope stops on B');
  },
);
