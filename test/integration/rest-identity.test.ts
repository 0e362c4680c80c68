// The tokens and users REST groups over HTTP: personal tokens (create, list, self, rotate, revoke,
// expiry, scopes within the caller's), user provisioning (create, list with filters and cursor,
// update, deactivate, delete with confirmation), and the bad input each must refuse clearly.
import t from 'tap';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';
import { startTestServer, req, call, createUser } from '../helpers/server.ts';
import { authorize, registerClient } from '../helpers/oauth.ts';

const s = await startTestServer({ overrides: { identity: { tokenMaxLifetimeDays: 30 } } });
t.teardown(() => s.close());
const admin = s.adminToken;

const newToken = (token: string, body: Record<string, unknown>) => req(s, 'POST', '/api/v1/tokens', { token, body });
const status = async (token: string) => (await req(s, 'GET', '/api/v1/tokens/self', { token })).status;

t.test('create a personal token: the secret once, then it works and is listed without it', async (t) => {
  const alice = await createUser(s, 'alice@example.com');
  const r = await newToken(alice.token, { name: 'laptop', description: 'sync', scopes: ['notes:write', 'tokens'], expires_in_days: 7 });
  t.equal(r.status, 201, r.text);
  const made = r.json();
  t.match(made.token, /^folio_api_[0-9A-Za-z]{38}$/);
  t.same(made.scopes.sort(), ['notes:read', 'notes:write', 'tokens'], 'stored as granted: notes:write brings notes:read');
  const days = (Date.parse(made.expires_at) - Date.now()) / 86_400_000;
  t.ok(days > 6.99 && days <= 7, `expires in 7 days (${days})`);
  t.equal(made.active, true);

  const self = await req(s, 'GET', '/api/v1/tokens/self', { token: made.token });
  t.equal(self.status, 200);
  t.equal(self.json().id, made.id);
  t.equal(self.json().name, 'laptop');
  t.ok(self.json().last_used_at, 'last use is recorded');
  t.notOk('token' in self.json(), 'the secret is not shown again');

  const list = await req(s, 'GET', '/api/v1/tokens', { token: made.token });
  t.equal(list.status, 200);
  const ids = list.json().items.map((i: { id: string }) => i.id);
  t.ok(ids.includes(made.id), 'listed');
  t.notOk(list.text.includes(made.token), 'no secret in the list');
  const one = await req(s, 'GET', `/api/v1/tokens/${made.id}`, { token: made.token });
  t.equal(one.json().description, 'sync');

  // The new token can write notes (what notes:write is for) over REST and curl.
  t.equal((await req(s, 'POST', '/api/v1/notetaker/notes', { token: made.token, body: { title: 'via token' } })).status, 201);
  t.equal((await call(s, made.token, 'tokens', 'self')).json().id, made.id, 'the tokens namespace answers the same over curl');
});

t.test('bad input: clear problems with stable codes', async (t) => {
  const bob = await createUser(s, 'bob@example.com');
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['no expiry', { name: 'x', scopes: ['notes:read'] }, /\/expires_in_days/],
    ['beyond the maximum', { name: 'x', scopes: ['notes:read'], expires_in_days: 31 }, /\/expires_in_days/],
    ['expiry in the past', { name: 'x', scopes: ['notes:read'], expires_at: '2020-01-01T00:00:00Z' }, /\/expires_at/],
    [
      'both expiries',
      { name: 'x', scopes: ['notes:read'], expires_in_days: 1, expires_at: new Date(Date.now() + 86_400_000).toISOString() },
      /\/expires_at/,
    ],
    ['unknown scope', { name: 'x', scopes: ['notes:delete'], expires_in_days: 1 }, /\/scopes\/0/],
    ['a role the user lacks', { name: 'x', scopes: ['users'], expires_in_days: 1 }, /\/scopes\/0/],
    ['no scopes', { name: 'x', scopes: [], expires_in_days: 1 }, /\/scopes/],
    ['blank name', { name: '   ', scopes: ['notes:read'], expires_in_days: 1 }, /\/name/],
  ];
  for (const [what, body, path] of cases) {
    const r = await newToken(bob.token, body);
    t.equal(r.status, 400, what);
    t.equal(r.json().code, 'validation_failed', what);
    t.match(JSON.stringify(r.json().errors), path, `${what}: names the field`);
  }
  const role = await newToken(bob.token, { name: 'x', scopes: ['users'], expires_in_days: 1 });
  t.match(r(role).detail, /needs role admin/);

  // A token with tokens + notes:read cannot give notes:write, and never '*'.
  const narrow = (await newToken(bob.token, { name: 'narrow', scopes: ['tokens', 'notes:read'], expires_in_days: 1 })).json().token;
  for (const wider of ['notes:write', '*']) {
    const w = await newToken(narrow, { name: 'wider', scopes: [wider], expires_in_days: 1 });
    t.equal(w.status, 400, `${wider} is beyond the calling token`);
    t.match(r(w).detail, /beyond the token you are using/);
  }
  t.equal((await newToken(narrow, { name: 'same', scopes: ['notes:read'], expires_in_days: 1 })).status, 201, 'within it: fine');

  // A read-only token: can see itself, cannot manage tokens.
  const reader = (await newToken(bob.token, { name: 'reader', scopes: ['notes:read'], expires_in_days: 1 })).json().token;
  t.equal(await status(reader), 200);
  const denied = await req(s, 'GET', '/api/v1/tokens', { token: reader });
  t.equal(denied.status, 403);
  t.same(denied.json().missing_scopes, ['tokens']);

  // A minted token cannot make long-lived tokens.
  const minted = (await call(s, bob.token, 'admin', 'mint_curl_token')).json().token;
  const m = await newToken(minted, { name: 'from minted', scopes: ['notes:read'], expires_in_days: 1 });
  t.equal(m.status, 403);
  t.equal(m.json().code, 'forbidden');
  t.equal((await req(s, 'GET', '/api/v1/tokens/self', { token: minted })).json().kind, 'minted');
});

function r(reply: { json(): any }): { detail: string } {
  return reply.json();
}

t.test("another user's token is a 404, the same as one that does not exist", async (t) => {
  const carol = await createUser(s, 'carol@example.com');
  const dave = await createUser(s, 'dave@example.com');
  const carols = (await newToken(carol.token, { name: 'mine', scopes: ['notes:read'], expires_in_days: 1 })).json();
  const missing = '3f0c1b7e-9a51-4c59-8f0e-2d1f5a6b7c8d';
  for (const [method, suffix] of [
    ['GET', ''],
    ['DELETE', ''],
    ['POST', '/rotate'],
  ] as const) {
    const theirs = await req(s, method, `/api/v1/tokens/${carols.id}${suffix}`, { token: dave.token });
    const none = await req(s, method, `/api/v1/tokens/${missing}${suffix}`, { token: dave.token });
    t.equal(theirs.status, 404, `${method} another user's token`);
    t.same(theirs.json().detail, none.json().detail, 'same answer as a missing one');
  }
  t.equal(await status(carols.token), 200, "carol's token still works");
  t.equal((await req(s, 'GET', '/api/v1/tokens/not-a-uuid', { token: dave.token })).status, 404);
});

t.test('rotate: a new secret with the same name and scopes; the old one stops at once', async (t) => {
  const erin = await createUser(s, 'erin@example.com');
  const old = (await newToken(erin.token, { name: 'ci', scopes: ['notes:read'], expires_in_days: 10 })).json();
  const rot = await req(s, 'POST', `/api/v1/tokens/${old.id}/rotate`, { token: erin.token });
  t.equal(rot.status, 200, rot.text);
  const fresh = rot.json();
  t.not(fresh.id, old.id);
  t.not(fresh.token, old.token);
  t.equal(fresh.name, 'ci');
  t.same(fresh.scopes, ['notes:read']);
  const days = (Date.parse(fresh.expires_at) - Date.now()) / 86_400_000;
  t.ok(days > 9.9 && days <= 10, `the old lifetime again (${days} days)`);
  t.equal(await status(old.token), 401, 'old secret refused');
  t.equal(await status(fresh.token), 200, 'new secret works');
  const again = await req(s, 'POST', `/api/v1/tokens/${old.id}/rotate`, { token: erin.token });
  t.equal(again.status, 409, 'a revoked token cannot be rotated');
  t.equal(again.json().code, 'conflict');
  const given = await req(s, 'POST', `/api/v1/tokens/${fresh.id}/rotate`, { token: erin.token, body: { expires_in_days: 2 } });
  t.ok(Date.parse(given.json().expires_at) - Date.now() < 2 * 86_400_000 + 1000, 'or the expiry given');
});

t.test('no token operation gives more than the calling token holds, whatever its kind', async (t) => {
  const gus = await createUser(s, 'gus@example.com', ['admin']);
  const gusWide = (await req(s, 'GET', '/api/v1/tokens/self', { token: gus.token })).json();
  const bootstrap = (await req(s, 'GET', '/api/v1/tokens/self', { token: admin })).json();
  const narrow = (await newToken(gus.token, { name: 'tokens only', scopes: ['tokens', 'users'], expires_in_days: 1 })).json().token;
  const minted = (await call(s, gus.token, 'admin', 'mint_curl_token', { scopes: ['tokens'] })).json().token;
  const adminNarrow = (await newToken(admin, { name: 'admin tokens only', scopes: ['tokens'], expires_in_days: 1 })).json().token;
  // An OAuth client granted only `tokens` (signing in with gus's own token as the password).
  const clientId = await registerClient(s.url, 'Token Manager');
  const flow = await authorize(s.url, clientId, { email: 'gus@example.com', password: gus.token }, { scope: 'tokens' });
  const oauth = flow.tokens?.access_token ?? '';
  t.ok(oauth, 'an OAuth access token with the scope tokens');

  const callers: Array<[string, string, string]> = [
    ['an API token with tokens', narrow, gusWide.id],
    ['a minted token with tokens', minted, gusWide.id],
    ['an OAuth access token with tokens', oauth, gusWide.id],
    ["a narrow token of the bootstrap admin's account", adminNarrow, bootstrap.id],
  ];
  for (const [who, token, wideId] of callers) {
    const rot = await req(s, 'POST', `/api/v1/tokens/${wideId}/rotate`, { token });
    t.equal(rot.status, 403, `${who} cannot rotate a * token (${rot.text})`);
    t.notOk(rot.text.includes('folio_api_'), `${who}: no secret in the answer`);
    const viaCurl = await call(s, token, 'tokens', 'rotate', { id: wideId });
    t.equal(viaCurl.status, 403, `${who}: nor over curl`);
    const made = await newToken(token, { name: 'wider', scopes: ['*'], expires_in_days: 1 });
    t.ok([400, 403].includes(made.status), `${who} cannot create a * token (${made.status})`);
    const pw = await req(s, 'PUT', '/api/v1/users/me/password', { token, body: { password: 'a long password of gus' } });
    t.equal(pw.status, 403, `${who} cannot set the password (which signs in to everything)`);
  }
  const rot = await req(s, 'POST', `/api/v1/tokens/${gusWide.id}/rotate`, { token: narrow });
  t.equal(rot.json().code, 'missing_scope');
  t.match(r(rot).detail, /needs scope \*/, 'the refusal says what is missing');
  t.equal(await status(gus.token), 200, "gus's * token was not rotated away");
  t.equal(await status(admin), 200, 'nor the bootstrap token');
  const invite = await req(s, 'POST', `/api/v1/users/${gus.id}/invitations`, { token: narrow });
  t.equal(invite.status, 403, 'an invitation for your own account is a password too');

  // Within the caller it works as before, for every kind that may issue.
  const small = (await newToken(gus.token, { name: 'reader', scopes: ['notes:read'], expires_in_days: 1 })).json();
  t.equal((await req(s, 'POST', `/api/v1/tokens/${small.id}/rotate`, { token: narrow })).status, 403, 'notes:read is beyond tokens+users');
  const reader = (await newToken(gus.token, { name: 'reader2', scopes: ['notes:read', 'tokens'], expires_in_days: 1 })).json();
  t.equal((await req(s, 'POST', `/api/v1/tokens/${small.id}/rotate`, { token: reader.token })).status, 200, 'within: rotated');
  t.equal((await req(s, 'POST', `/api/v1/tokens/${gusWide.id}/rotate`, { token: gus.token })).status, 200, 'a * token rotates itself');
  const mint = await call(s, narrow, 'admin', 'mint_curl_token', { scopes: ['*'] });
  t.equal(mint.status, 400, 'a minted token has at most the scopes of the token minting it');
});

t.test('revoke and expiry stop a token at once, minted children too', async (t) => {
  const fay = await createUser(s, 'fay@example.com');
  const tok = (await newToken(fay.token, { name: 'temp', scopes: ['notes:read'], expires_in_days: 1 })).json();
  const child = (await call(s, tok.token, 'admin', 'mint_curl_token')).json().token;
  t.equal(await status(tok.token), 200);
  t.equal(await status(child), 200);
  const del = await req(s, 'DELETE', `/api/v1/tokens/${tok.id}`, { token: fay.token });
  t.equal(del.status, 200);
  t.equal(del.json().active, false);
  t.ok(del.json().revoked_at);
  t.equal(await status(tok.token), 401, 'revoked: refused on the next call');
  t.equal(await status(child), 401, 'its minted child too');
  t.equal((await req(s, 'DELETE', `/api/v1/tokens/${tok.id}`, { token: fay.token })).status, 200, 'revoking again is not an error');

  const short = (
    await newToken(fay.token, { name: 'short', scopes: ['notes:read'], expires_at: new Date(Date.now() + 1500).toISOString() })
  ).json();
  t.equal(await status(short.token), 200);
  await sleep(1600);
  t.equal(await status(short.token), 401, 'expired: refused although it was cached');
  const listed = await req(s, 'GET', '/api/v1/tokens?active=false', { token: fay.token });
  t.same(
    listed
      .json()
      .items.map((i: { name: string }) => i.name)
      .sort(),
    ['short', 'temp'],
  );
});

t.test('the scope catalogue is one list, and a token never grants more than its user has', async (t) => {
  const cat = await req(s, 'GET', '/api/v1/tokens/scopes', { token: admin });
  const items = cat.json().items as Array<{ scope: string; roles: string[]; implies: string[] }>;
  const by = new Map(items.map((i) => [i.scope, i]));
  t.same(by.get('notes:write')?.implies, ['notes:read']);
  t.same(by.get('users')?.roles, ['admin']);
  t.same(by.get('admin')?.roles, ['admin']);
  t.same((await call(s, admin, 'tokens', 'scopes')).json(), items, 'curl answers the same catalogue');

  // An admin's '*' token reaches users; once the role is gone, the same token does not.
  const gina = await createUser(s, 'gina@example.com', ['admin']);
  t.equal((await req(s, 'GET', '/api/v1/users', { token: gina.token })).status, 200);
  t.equal((await call(s, gina.token, 'users', 'list')).status, 200);
  const demote = await req(s, 'PATCH', `/api/v1/users/${gina.id}`, { token: admin, body: { roles: [] } });
  t.equal(demote.status, 200);
  const after = await req(s, 'GET', '/api/v1/users', { token: gina.token });
  t.equal(after.status, 403, 'the role is gone, so is the scope');
  t.equal(after.json().code, 'forbidden');
  t.match(after.json().detail, /role admin/);
  t.equal((await call(s, gina.token, 'users', 'list')).status, 403, 'over curl too');
});

t.test('users: provisioning by admins, /users/me for everyone', async (t) => {
  const created = await req(s, 'POST', '/api/v1/users', {
    token: admin,
    body: { email: 'Hal@Example.com', name: 'Hal', roles: ['staff'] },
  });
  t.equal(created.status, 201, created.text);
  const hal = created.json();
  t.equal(hal.email, 'hal@example.com');
  t.same(hal.roles, ['staff']);
  t.equal(hal.active, true);
  const dup = await req(s, 'POST', '/api/v1/users', { token: admin, body: { email: 'hal@example.com' } });
  t.equal(dup.status, 409);
  t.equal(dup.json().code, 'conflict');
  const bad = await req(s, 'POST', '/api/v1/users', { token: admin, body: { email: 'no-at-sign' } });
  t.equal(bad.status, 400);
  t.match(JSON.stringify(bad.json().errors), /\/email/);

  const ivy = await createUser(s, 'ivy@example.com');
  const me = await req(s, 'GET', '/api/v1/users/me', { token: ivy.token });
  t.equal(me.status, 200);
  t.equal(me.json().email, 'ivy@example.com');
  const notAdmin = await req(s, 'GET', `/api/v1/users/${hal.id}`, { token: ivy.token });
  t.equal(notAdmin.status, 403);
  t.equal(notAdmin.json().code, 'forbidden');
  t.equal((await req(s, 'GET', `/api/v1/users/3f0c1b7e-9a51-4c59-8f0e-2d1f5a6b7c8d`, { token: admin })).status, 404);

  // Filters and a cursor.
  const staff = await req(s, 'GET', '/api/v1/users?role=staff', { token: admin });
  t.same(
    staff.json().items.map((u: { email: string }) => u.email),
    ['hal@example.com'],
  );
  const byEmail = await req(s, 'GET', '/api/v1/users?email=IVY@example.com', { token: admin });
  t.same(
    byEmail.json().items.map((u: { id: string }) => u.id),
    [ivy.id],
  );
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const page: any = (await req(s, 'GET', `/api/v1/users?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { token: admin })).json();
    seen.push(...page.items.map((u: { email: string }) => u.email));
    cursor = page.next_cursor;
  } while (cursor);
  t.same(seen, [...seen].sort(), 'pages come by email');
  t.equal(new Set(seen).size, seen.length, 'no user twice');
  t.ok(seen.includes('hal@example.com') && seen.includes('ivy@example.com'), 'every user once');
  const junk = await req(s, 'GET', '/api/v1/users?cursor=zzz', { token: admin });
  t.equal(junk.status, 400);
});

t.test('deactivate stops every token at once and keeps the data; delete needs a confirmation', async (t) => {
  const jo = await createUser(s, 'jo@example.com');
  const note = (await req(s, 'POST', '/api/v1/notetaker/notes', { token: jo.token, body: { title: 'keep me' } })).json();
  const extra = (await newToken(jo.token, { name: 'second', scopes: ['notes:read'], expires_in_days: 1 })).json().token;
  const minted = (await call(s, jo.token, 'admin', 'mint_curl_token')).json().token;

  const off = await req(s, 'PATCH', `/api/v1/users/${jo.id}`, { token: admin, body: { active: false } });
  t.equal(off.json().active, false);
  for (const tok of [jo.token, extra, minted]) t.equal(await status(tok), 401, 'refused while deactivated');
  t.equal((await req(s, 'GET', '/api/v1/users?active=false', { token: admin })).json().items[0].id, jo.id);
  await req(s, 'PATCH', `/api/v1/users/${jo.id}`, { token: admin, body: { active: true } });
  const back = await req(s, 'GET', `/api/v1/notetaker/notes/${note.id}`, { token: jo.token });
  t.equal(back.status, 200, 'active again, with the data kept');

  const self = await req(s, 'PATCH', `/api/v1/users/${(await req(s, 'GET', '/api/v1/users/me', { token: admin })).json().id}`, {
    token: admin,
    body: { active: false },
  });
  t.equal(self.status, 409, 'an admin cannot deactivate themselves');

  const unconfirmed = await req(s, 'DELETE', `/api/v1/users/${jo.id}`, { token: admin });
  t.equal(unconfirmed.status, 400);
  t.match(JSON.stringify(unconfirmed.json().errors), /confirm/);
  t.equal((await req(s, 'DELETE', `/api/v1/users/${jo.id}?confirm=someone@example.com`, { token: admin })).status, 400);
  t.equal(await status(jo.token), 200, 'nothing deleted yet');
  const gone = await req(s, 'DELETE', `/api/v1/users/${jo.id}?confirm=jo@example.com`, { token: admin });
  t.equal(gone.status, 204);
  t.equal(await status(jo.token), 401);
  t.equal((await req(s, 'GET', `/api/v1/users/${jo.id}`, { token: admin })).status, 404);
  const rows = await s.folio.db.orm.em.fork().execute<{ n: number }[]>('select count(*)::int as n from notes where owner_id = ?', [jo.id]);
  t.equal(rows[0]?.n, 0, 'their notes are gone with them');
});

t.test('the OpenAPI document has the tokens and users groups, with scopes and problems', async (t) => {
  const doc = (await req(s, 'GET', '/api/v1/openapi.json')).json();
  const tags = doc.tags.map((g: { name: string }) => g.name);
  t.ok(tags.includes('tokens') && tags.includes('users'));
  t.same(doc.paths['/tokens'].post['x-required-scopes'], ['tokens']);
  t.ok(doc.paths['/users/{id}'].delete['x-problem-codes'].includes('forbidden'));
  t.ok(doc.components.schemas.NewToken);
});

t.test("README's scope table names every scope the live catalogue has, with its role", async (t) => {
  const readme = await readFile(path.join(PACKAGE_ROOT, 'README.md'), 'utf8');
  const rows = new Map(
    [...readme.matchAll(/^\| `([^`]+)`\s*\|[^|]*\|\s*(`[a-z]+`)?\s*\|$/gm)].map((m) => [m[1]!, (m[2] ?? '').replaceAll('`', '')]),
  );
  const live = (await req(s, 'GET', '/api/v1/tokens/scopes', { token: admin })).json().items as Array<{ scope: string; roles: string[] }>;
  for (const { scope, roles } of live) {
    t.ok(rows.has(scope), `${scope} is in the table`);
    t.equal(rows.get(scope), roles.join(','), `${scope}: its role`);
  }
});

t.test('tokens and users lists lower a limit over their maximum and say so, as every list does', async (t) => {
  const tokens = await req(s, 'GET', '/api/v1/tokens?limit=1000', { token: admin });
  t.equal(tokens.status, 200);
  t.match(tokens.json(), { limit: 100, limit_clamped_from: 1000 });
  t.equal(tokens.headers.get('folio-limit-clamped'), 'requested=1000; limit=100');
  const users = await req(s, 'GET', '/api/v1/users?limit=1000', { token: admin });
  t.equal(users.status, 200);
  t.match(users.json(), { limit: 200, limit_clamped_from: 1000 });
  t.equal(users.headers.get('folio-limit-clamped'), 'requested=1000; limit=200');
  const plain = await req(s, 'GET', '/api/v1/users?limit=5', { token: admin });
  t.equal(plain.json().limit_clamped_from, undefined);
  t.equal(plain.headers.get('folio-limit-clamped'), null);
});
