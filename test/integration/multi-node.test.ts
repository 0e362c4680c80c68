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

t.test(
  'stateless MCP: a stream left on one node is resumed on another, and a cancel sent to another node stops the call',
  { skip: serverUrl ? false : 'needs DATABASE_URL (a PostgreSQL server)' },
  async (t) => {
    const db = await fresh(serverUrl!);
    const plugins = [path.join(FIXTURES, 'basic'), path.join(FIXTURES, 'mcp/extra')];
    const overrides = { mcp: { mode: 'stateless' as const } };
    const a = await startTestServer({ sharedDatabaseUrl: db.url, plugins, overrides });
    const b = await startTestServer({ sharedDatabaseUrl: db.url, plugins, overrides });
    t.teardown(async () => {
      await a.close();
      await b.close();
      await db.drop();
    });
    const user = await createUser(a, 'roam@example.com');
    const headers = {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      authorization: `Bearer ${user.token}`,
      'mcp-protocol-version': '2025-11-25',
    };
    const post = (node: { url: string }, message: object) =>
      fetch(`${node.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(message) });

    // On A: a call that reports progress; the client leaves after the first progress event.
    const onA = await post(a, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'mcpx__count', arguments: { steps: 5, ms: 100 }, _meta: { progressToken: 'p' } },
    });
    const reader = onA.body!.getReader();
    let seen = '';
    while (!seen.includes('notifications/progress')) seen += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    const lastId = [...seen.matchAll(/^id: (.+)$/gm)].at(-1)![1]!;

    // On B, which never ran it: the rest of the stream, answer included.
    const onB = await fetch(`${b.url}/mcp`, {
      headers: { accept: 'text/event-stream', authorization: `Bearer ${user.token}`, 'last-event-id': lastId },
    });
    t.equal(onB.status, 200, 'B serves the resumption');
    const rest = await onB.text();
    const answer = [...rest.matchAll(/^data: (.+)$/gm)]
      .map((m) => JSON.parse(m[1]!) as { id?: number; result?: any })
      .find((m) => m.id === 1);
    t.same(answer?.result?.structuredContent, { counted: 5 }, "A's answer arrives through B");

    // A slow call on A, its cancel sent to B.
    const aborted = async () => JSON.parse((await call(a, user.token, 'acme', 'aborted_count')).text).aborted as number;
    const start = await aborted();
    const slow = post(a, {
      jsonrpc: '2.0',
      id: 'long',
      method: 'tools/call',
      params: { name: 'acme__slow', arguments: { ms: 20000 } },
    }).then((r) => r.text());
    await new Promise((r) => setTimeout(r, 300));
    const cancel = await post(b, {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 'long', reason: 'no longer needed' },
    });
    t.equal(cancel.status, 202, 'B takes the notification');
    t.equal(await eventually(aborted, (n) => n === start + 1, 3000), start + 1, 'the handler on A saw its signal fire');
    const body = await slow;
    t.notMatch(body, /"id":"long"/, 'and the cancelled call is not answered');
  },
);
