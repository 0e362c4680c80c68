// The audit log over HTTP: each kind of event is recorded with its actor, target, client address,
// user agent and request id; a record rolls back with the change it records; a user sees only
// their own security events; only admins read the log; bad filters are 400; a long range or a huge
// page answers with a bound; JSON Lines export; retention deletes old records.
import t, { type Test } from 'tap';
import { startTestServer, req, createUser, eventually } from '../helpers/server.ts';
import { authorize, registerClient } from '../helpers/oauth.ts';
import type { AuditService } from '../../core/domain/audit/service.ts';

const s = await startTestServer({ overrides: { audit: { retentionDays: 30, toolCalls: true } }, checkAnswers: true });
t.teardown(() => s.close());
const admin = s.adminToken;
const UA = 'audit-test/1.0';
const sql = (q: string, params: unknown[] = []) => s.folio.db.orm.em.fork().execute<Array<Record<string, unknown>>>(q, params);

interface Rec {
  id: string;
  at: string;
  actor: { id: string | null; email: string | null };
  subject: string | null;
  action: string;
  outcome: string;
  target: { type: string; id: string } | null;
  address: string | null;
  user_agent: string | null;
  request_id: string | null;
  detail: Record<string, unknown>;
}

/** A request from this test's "browser": its user agent and a request id to find it by. */
const as = (token: string | null, id: string, extra: { body?: unknown } = {}) => ({
  token,
  headers: { 'user-agent': UA, 'x-request-id': id },
  ...extra,
});

async function audit(query: string, token = admin): Promise<Rec[]> {
  const r = await req(s, 'GET', `/api/v1/admin/audit?${query}`, { token });
  if (r.status !== 200) throw new Error(`audit: ${r.status} ${r.text}`);
  return r.json().items as Rec[];
}

/** The one record the request with this id made (for the action). */
async function byRequest(action: string, requestId: string): Promise<Rec> {
  const found = (await audit(`action=${action}&limit=500`)).filter((r) => r.request_id === requestId);
  if (found.length !== 1) throw new Error(`${found.length} ${action} records for request ${requestId}`);
  return found[0]!;
}

function fromHere(t: Test, r: Rec, what: string) {
  t.match(r.address, /127\.0\.0\.1|::1/, `${what}: the client's address`);
  t.equal(r.user_agent, UA, `${what}: the user agent`);
  t.ok(Date.now() - Date.parse(r.at) < 60_000, `${what}: the time`);
}

const adminId = (await req(s, 'GET', '/api/v1/users/me', { token: admin })).json().id as string;
const alice = await createUser(s, 'alice@example.com');
const bob = await createUser(s, 'bob@example.com');

t.test('tokens: created, rotated, revoked, each with who, what, where from and which request', async (t) => {
  const made = await req(
    s,
    'POST',
    '/api/v1/tokens',
    as(alice.token, 'tok-create', { body: { name: 'laptop', scopes: ['notes:read'], expires_in_days: 7 } }),
  );
  t.equal(made.status, 201);
  const created = await byRequest('token.created', 'tok-create');
  t.same([created.actor.id, created.actor.email, created.subject], [alice.id, 'alice@example.com', alice.id]);
  t.same(created.target, { type: 'token', id: made.json().id });
  t.notMatch(JSON.stringify(created), made.json().token, 'never the secret');
  fromHere(t, created, 'token.created');

  const rotated = await req(s, 'POST', `/api/v1/tokens/${made.json().id}/rotate`, as(alice.token, 'tok-rotate', { body: {} }));
  t.equal(rotated.status, 200, rotated.text);
  const r = await byRequest('token.rotated', 'tok-rotate');
  t.same(r.target, { type: 'token', id: made.json().id });
  t.equal(r.detail.new_token_id, rotated.json().id);

  t.equal((await req(s, 'DELETE', `/api/v1/tokens/${rotated.json().id}`, as(alice.token, 'tok-revoke'))).status, 200);
  t.same((await byRequest('token.revoked', 'tok-revoke')).target, { type: 'token', id: rotated.json().id });
  // Revoking again changes nothing, and records nothing.
  await req(s, 'DELETE', `/api/v1/tokens/${rotated.json().id}`, as(alice.token, 'tok-revoke-2'));
  t.equal(
    (await audit('action=token.revoked')).filter((x) => x.request_id === 'tok-revoke-2').length,
    0,
    'an idempotent repeat is no event',
  );
});

t.test('users: created, deactivated, reactivated, deleted by an admin; namespace switches', async (t) => {
  const made = await req(s, 'POST', '/api/v1/users', as(admin, 'user-create', { body: { email: 'carol@example.com' } }));
  t.equal(made.status, 201);
  const carol = made.json().id as string;
  const c = await byRequest('user.created', 'user-create');
  t.same([c.actor.id, c.subject, c.target], [adminId, carol, { type: 'user', id: carol }]);
  fromHere(t, c, 'user.created');
  await req(s, 'PATCH', `/api/v1/users/${carol}`, as(admin, 'user-off', { body: { active: false } }));
  t.equal((await byRequest('user.deactivated', 'user-off')).subject, carol);
  await req(s, 'PATCH', `/api/v1/users/${carol}`, as(admin, 'user-on', { body: { active: true } }));
  t.equal((await byRequest('user.reactivated', 'user-on')).subject, carol);

  const sw = await req(
    s,
    'POST',
    '/curl/call/admin/set_namespace_access',
    as(admin, 'ns-off', { body: { user_id: carol, namespace: 'notetaker', access: 'disabled' } }),
  );
  t.equal(sw.status, 200, sw.text);
  const n = await byRequest('namespace.switched', 'ns-off');
  t.same([n.actor.id, n.subject, n.target, n.detail.access], [adminId, carol, { type: 'namespace', id: 'notetaker' }, 'disabled']);
  fromHere(t, n, 'namespace.switched');

  const del = await req(s, 'DELETE', `/api/v1/users/${carol}?confirm=carol@example.com`, as(admin, 'user-del'));
  t.equal(del.status, 204, del.text);
  t.equal((await byRequest('user.deleted', 'user-del')).detail.email, 'carol@example.com', 'the record outlives the user');
});

t.test('sign-in: success and failure, the failure on the account its email names', async (t) => {
  const pw = 'correct horse battery staple';
  const dave = (await req(s, 'POST', '/api/v1/users', { token: admin, body: { email: 'dave@example.com', password: pw } })).json()
    .id as string;
  const clientId = await registerClient(s.url);
  t.ok((await authorize(s.url, clientId, { email: 'dave@example.com', password: pw })).tokens?.access_token);
  t.equal((await authorize(s.url, clientId, { email: 'dave@example.com', password: 'wrong password entirely' })).refused?.status, 401);
  const ok = (await audit(`action=signin.succeeded&actor=${dave}`))[0]!;
  t.same([ok.outcome, ok.subject, ok.detail.by], ['success', dave, 'password']);
  t.match(ok.address, /127\.0\.0\.1|::1/);
  t.ok(ok.request_id && ok.user_agent, 'the request id and user agent of the sign-in');
  const failed = (await audit('action=signin.failed')).find((r) => r.subject === dave)!;
  t.same([failed.outcome, failed.actor.id, failed.detail.email], ['failure', null, 'dave@example.com']);
  t.notMatch(JSON.stringify(failed), /wrong password/, 'never the password tried');
  // An unknown email: recorded, concerning no account, and what was typed is not kept (it may be
  // a password typed in the wrong field), only its length.
  await authorize(s.url, clientId, { email: 'Hunter2-in-the-wrong-field', password: 'whatever it is here' });
  const unknown = (await audit('action=signin.failed')).filter((r) => r.subject === null);
  t.equal(unknown.length, 1, 'one failure concerning no account');
  t.same(unknown[0]!.detail, { email_length: 'hunter2-in-the-wrong-field'.length, reason: 'wrong email or password' });
  t.notMatch(JSON.stringify(unknown[0]), /hunter2/i, 'never what was typed as an unknown email');
  // Dave sees both among his own events.
  const token = (await authorize(s.url, clientId, { email: 'dave@example.com', password: pw }, { scope: 'notes:read' })).tokens!
    .access_token;
  const mine = (await req(s, 'GET', '/api/v1/users/me/events', { token })).json().items as Rec[];
  t.ok(mine.some((r) => r.action === 'signin.failed') && mine.some((r) => r.action === 'signin.succeeded'));
});

t.test('a throttled account: only the first refusal in its window is recorded', async (t) => {
  const erin = await createUser(s, 'erin@example.com');
  const clientId = await registerClient(s.url);
  const attempts: Array<number | undefined> = [];
  for (let i = 0; i < 8; i++)
    attempts.push((await authorize(s.url, clientId, { email: 'erin@example.com', password: `wrong guess number ${i}` })).refused?.status);
  t.same(attempts, [401, 401, 401, 401, 401, 429, 429, 429], 'five wrong passwords, then refused');
  const failed = (await audit(`action=signin.failed&target=${erin.id}`)).map((r) => r.detail.reason);
  t.same(failed.sort(), ['throttled', ...Array(5).fill('wrong email or password')].sort(), 'five failures and one refusal');
});

t.test('shares: created, accessed, revoked; an export; a tool call (sizes, never arguments)', async (t) => {
  const up = await fetch(`${s.url}/api/v1/filedb/files?name=a.txt`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice.token}` },
    body: 'hello',
  });
  t.equal(up.status, 201);
  const file = (await up.json()) as { id: string };
  const share = await req(s, 'POST', `/api/v1/filedb/files/${file.id}/shares`, as(alice.token, 'share-make', { body: {} }));
  t.equal(share.status, 201, share.text);
  const made = await byRequest('share.created', 'share-make');
  t.same([made.actor.id, made.target], [alice.id, { type: 'share', id: share.json().id }]);
  fromHere(t, made, 'share.created');
  const got = await fetch(`${s.url}/s/${share.json().token}`, { headers: { 'user-agent': UA, 'x-request-id': 'share-open' } });
  t.equal(await got.text(), 'hello');
  const opened = await byRequest('share.accessed', 'share-open');
  t.same([opened.actor.id, opened.subject, opened.user_agent], [null, alice.id, UA], "by the link holder, on the owner's record");
  t.equal((await req(s, 'DELETE', `/api/v1/filedb/shares/${share.json().id}`, as(alice.token, 'share-revoke'))).status, 204);
  t.equal((await byRequest('share.revoked', 'share-revoke')).actor.id, alice.id);

  const ex = await req(s, 'POST', '/api/v1/exports', as(alice.token, 'export', { body: { files: false } }));
  t.equal(ex.status, 202, ex.text);
  t.same((await byRequest('export.created', 'export')).target, { type: 'export', id: ex.json().id });

  const secret = 'a-secret-argument-value';
  t.equal(
    (await req(s, 'POST', '/curl/call/notetaker/append', as(alice.token, 'tool-call', { body: { title: 'x', content: secret } }))).status <
      500,
    true,
  );
  const rec = await eventually(
    async () => (await audit('action=tool.called&limit=500')).find((r) => r.request_id === 'tool-call'),
    (r) => r !== undefined,
  );
  t.ok(rec, 'the call is recorded');
  t.same(rec!.target, { type: 'function', id: 'notetaker.append' });
  t.equal(rec!.detail.surface, 'curl');
  t.equal(rec!.detail.token_kind, 'api');
  t.ok((rec!.detail.argument_bytes as number) > secret.length, 'the size of the arguments');
  t.notMatch(JSON.stringify(rec), secret, 'never the arguments');
  t.type(rec!.detail.duration_ms, 'number');
});

t.test('a record rolls back with the change it records', async (t) => {
  // The change fails at commit (a deferred check), after its record was written in the same transaction.
  await sql(`create or replace function audit_test_refuse() returns trigger language plpgsql as $$
    begin if new.namespace = 'search' then raise exception 'refused by the test'; end if; return new; end $$`);
  await sql(`create constraint trigger audit_test_refuse after insert on namespace_access deferrable initially deferred
    for each row execute function audit_test_refuse()`);
  t.teardown(() => sql(`drop trigger audit_test_refuse on namespace_access`));
  const r = await req(
    s,
    'POST',
    '/curl/call/admin/set_namespace_access',
    as(admin, 'ns-refused', { body: { user_id: bob.id, namespace: 'search', access: 'disabled' } }),
  );
  t.equal(r.status, 500, 'the change failed');
  t.same(await audit(`action=namespace.switched&target=search`), [], 'and left no record');
  t.same(await sql(`select 1 from namespace_access where namespace = 'search'`), [], 'nor the change');
});

t.test("a user's own events: never another's, never tool calls; the log is for admins", async (t) => {
  await req(s, 'POST', '/api/v1/tokens', { token: bob.token, body: { name: 'bob', scopes: ['notes:read'], expires_in_days: 1 } });
  const mine = (await req(s, 'GET', '/api/v1/users/me/events?limit=500', { token: alice.token })).json().items as Rec[];
  t.ok(mine.length > 3, 'alice has events');
  t.ok(
    mine.every((r) => r.subject === alice.id),
    'each about alice',
  );
  t.notOk(
    mine.some((r) => r.action === 'tool.called'),
    'no tool calls',
  );
  const bobs = (await req(s, 'GET', '/api/v1/users/me/events', { token: bob.token })).json().items as Rec[];
  t.ok(bobs.some((r) => r.action === 'token.created'));
  t.notOk(
    bobs.some((r) => r.subject !== bob.id),
    "none of alice's",
  );
  t.equal(
    (await req(s, 'GET', '/api/v1/users/me/events?actor=' + alice.id, { token: bob.token })).status,
    400,
    'no actor filter to reach others',
  );

  const refused = await req(s, 'GET', '/api/v1/admin/audit', { token: alice.token });
  t.equal(refused.status, 403, 'a non-admin is refused');
  t.equal((await req(s, 'GET', '/api/v1/admin/audit', { token: null })).status, 401);
});

t.test('bad filters are 400 naming the filter; a huge page or a ten-year range answers with its bound', async (t) => {
  for (const [q, path] of [
    ['actor=nobody', 'actor'],
    ['action=nonsense', 'action'],
    ['action=plugin.installed', 'action'],
    ['since=yesterday', 'since'],
    ['since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z', 'until'],
    ['cursor=abc', 'cursor'],
    ['limit=0', 'limit'],
    ['colour=red', 'colour'],
  ]) {
    const r = await req(s, 'GET', `/api/v1/admin/audit?${q}`, { token: admin });
    t.equal(r.status, 400, q!);
    t.match(r.text, path!, `${q}: names ${path}`);
  }
  const huge = await req(s, 'GET', '/api/v1/admin/audit?limit=1000000', { token: admin });
  t.equal(huge.status, 200);
  t.equal(huge.json().limit, 500, 'lowered to the maximum');
  t.equal(huge.headers.get('folio-limit-clamped'), 'requested=1000000; limit=500');
  const decade = await req(
    s,
    'GET',
    '/api/v1/admin/audit?since=2016-01-01T00:00:00Z&until=2036-01-01T00:00:00Z&target=nothing-has-this-id',
    {
      token: admin,
    },
  );
  t.equal(decade.status, 200);
  t.same(decade.json().items, []);
  t.equal(decade.json().next_cursor, null, 'nothing matches: no cursor');

  // Paging: newest first, no record twice, the cursor goes on where the page ended.
  const first = (await req(s, 'GET', '/api/v1/admin/audit?limit=3', { token: admin })).json();
  t.equal(first.items.length, 3);
  const second = (await req(s, 'GET', `/api/v1/admin/audit?limit=3&cursor=${first.next_cursor}`, { token: admin })).json();
  t.ok(BigInt(second.items[0].id) < BigInt(first.items[2].id), 'older records next');
  const family = await audit('action=token.*');
  t.ok(family.length > 0 && family.every((r) => r.action.startsWith('token.')), 'an action family');
});

t.test('JSON Lines export: one record a line, the same filters', async (t) => {
  for (const how of [{ headers: { accept: 'application/x-ndjson' } }, { query: '&format=jsonl' }]) {
    const r = await fetch(`${s.url}/api/v1/admin/audit?action=token.*${'query' in how ? how.query : ''}`, {
      headers: { authorization: `Bearer ${admin}`, ...('headers' in how ? how.headers : {}) },
    });
    t.equal(r.status, 200);
    t.match(r.headers.get('content-type'), /application\/x-ndjson/);
    const lines = (await r.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Rec);
    t.ok(lines.length >= 3 && lines.every((l) => l.action.startsWith('token.')));
  }
  const bad = await req(s, 'GET', '/api/v1/admin/audit?format=jsonl&since=never', { token: admin });
  t.equal(bad.status, 400, 'bad filters refused before streaming');
});

t.test('retention deletes records older than audit.retentionDays, and only those', async (t) => {
  await sql(
    `insert into audit_events (action, at) values ('user.created', now() - interval '31 days'), ('user.created', now() - interval '29 days')`,
  );
  const before = Number((await sql(`select count(*) as n from audit_events`))[0]!.n);
  const deleted = await s.folio.service<AuditService>('audit').purge();
  t.equal(deleted, 1, 'the one past 30 days');
  t.equal(Number((await sql(`select count(*) as n from audit_events`))[0]!.n), before - 1);
  t.same(await sql(`select 1 from audit_events where at < now() - interval '30 days'`), []);
});
