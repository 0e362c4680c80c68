// IdentityService against a real database: PGlite, or the PostgreSQL server in DATABASE_URL.
import t, { type Test } from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { BadArguments, Conflict, Forbidden, NotFound } from '../../core/contract/errors.ts';
import { IdentityService } from '../../core/domain/identity/service.ts';
import { generateToken, parseToken } from '../../core/domain/identity/tokens.ts';
import type { Principal } from '../../core/domain/identity/types.ts';
import { openTestDatabase } from '../helpers/db.ts';

/** t.rejects() with an error class compares more than the class; this checks exactly the class. */
async function rejectsAs(
  t: Test,
  work: Promise<unknown>,
  cls: abstract new (...args: never[]) => Error,
  message = `rejects with ${cls.name}`,
): Promise<void> {
  const outcome = await work.then(
    () => 'resolved',
    (err: unknown) => err,
  );
  t.ok(outcome instanceof cls, message, { found: outcome });
}

const db = await openTestDatabase();
t.teardown(() => db.cleanup());
const ids = new IdentityService(db);

let n = 0;
const newUser = (roles: string[] = []) => ids.createUser({ email: `User${++n}@Example.com`, name: `User ${n}`, roles });

/** Reads a token row straight from the table (no service involved). */
async function tokenRow(id: string) {
  const rows = await db.orm.em
    .fork()
    .execute<{ last_used_at: string | null; revoked_at: string | null; parent_id: string | null; kind: string }[]>(
      'select kind, parent_id, last_used_at::text, revoked_at::text from api_tokens where id = ?',
      [id],
    );
  return rows[0];
}

t.test('users: create, read, count, duplicates, validation', async (t) => {
  const before = await ids.countUsers();
  const u = await ids.createUser({ email: '  Alice@Example.COM ', name: 'Alice', roles: ['admin', 'admin'] });
  t.match(u.id, /^[0-9a-f-]{36}$/);
  t.equal(u.email, 'alice@example.com', 'stored lowercased and trimmed');
  t.same(u.roles, ['admin'], 'roles deduplicated');
  t.equal(u.disabled, false);
  t.ok(u.createdAt instanceof Date);
  t.equal(await ids.countUsers(), before + 1);

  const got = await ids.getUser(u.id);
  t.equal(got?.email, 'alice@example.com');
  t.equal(got?.name, 'Alice');
  t.same(got?.roles, ['admin']);

  const bare = await ids.createUser({ email: 'bare@example.com' });
  t.equal(bare.name, null);
  t.same((await ids.getUser(bare.id))?.roles, [], 'roles default to empty');

  await rejectsAs(t, ids.createUser({ email: 'ALICE@example.com' }), Conflict, 'duplicate email, other case');
  t.equal(await ids.countUsers(), before + 2);

  for (const email of ['no-at-sign', 'two@@example.com', 'a@b@c', 'has space@example.com', '@example.com', 'alice@', '']) {
    await rejectsAs(t, ids.createUser({ email }), BadArguments, `rejects ${JSON.stringify(email)}`);
  }

  t.equal(await ids.getUser('not-a-uuid'), null, 'malformed id -> null, not a DB error');
  t.equal(await ids.getUser("'; drop table users; --"), null);
  t.equal(await ids.getUser('00000000-0000-4000-8000-000000000000'), null, 'unknown id -> null');
});

t.test('authenticate: api token ok, bootstrap raw token, malformed', async (t) => {
  const u = await newUser(['admin']);
  const expiresAt = new Date(Date.now() + 3_600_000);
  const created = await ids.createApiToken(u.id, { name: 'laptop', scopes: ['notes:read', 'notes:write'], expiresAt });
  t.same(parseToken(created.token), { kind: 'api' });
  t.equal(created.expiresAt?.getTime(), expiresAt.getTime());

  const p = await ids.authenticate(created.token);
  t.ok(p, 'authenticates');
  t.same(p, {
    user: { id: u.id, email: u.email, name: u.name, roles: ['admin'] },
    scopes: ['notes:read', 'notes:write'],
    tokenKind: 'api',
    tokenId: created.id,
    tokenExpiresAt: expiresAt,
  });

  const noExpiry = await ids.createApiToken(u.id, { scopes: [] });
  t.equal(noExpiry.expiresAt, null);
  t.equal((await ids.authenticate(noExpiry.token))?.tokenExpiresAt, null);

  const raw = 'bootstrap-admin-token-0123456789-abcdefgh';
  const boot = await ids.createApiToken(u.id, { name: 'bootstrap', scopes: ['*'], raw });
  t.equal(boot.token, raw, 'raw token stored as given');
  t.equal((await ids.authenticate(raw))?.tokenId, boot.id);
  await rejectsAs(t, ids.createApiToken(u.id, { scopes: ['*'], raw }), Conflict, 'same raw token twice');
  await rejectsAs(t, ids.createApiToken(u.id, { scopes: ['*'], raw: 'too-short' }), BadArguments);
  await rejectsAs(
    t,
    ids.createApiToken(u.id, { scopes: ['*'], raw: 'folio_mnt_' + 'x'.repeat(40) }),
    BadArguments,
    'reserved prefix that could never authenticate',
  );
  const ownFormat = generateToken('api');
  t.equal((await ids.createApiToken(u.id, { scopes: [], raw: ownFormat })).token, ownFormat, 'a valid folio_api_ raw');
  t.ok(await ids.authenticate(ownFormat));
  const prefixed = 'folio_admin_bootstrap_0123456789abcdef';
  await ids.createApiToken(u.id, { scopes: ['*'], raw: prefixed });
  t.ok(await ids.authenticate(prefixed), 'folio_-something-else bootstrap tokens still work');
  await rejectsAs(t, ids.createApiToken('00000000-0000-4000-8000-000000000000', { scopes: [] }), NotFound, 'unknown user');
  await rejectsAs(t, ids.createApiToken('nope', { scopes: [] }), NotFound, 'malformed user id');
  await rejectsAs(t, ids.createApiToken(u.id, { scopes: [''] }), BadArguments, 'empty scope');

  // a flipped character fails the checksum; a well-formed but unknown token is simply not found
  const flipped = created.token.slice(0, 20) + (created.token[20] === 'a' ? 'b' : 'a') + created.token.slice(21);
  t.equal(await ids.authenticate(flipped), null, 'checksum failure');
  t.equal(await ids.authenticate(generateToken('api')), null, 'unknown token');
  t.equal(await ids.authenticate(generateToken('oauth')), null, 'oauth tokens are not stored here');
  t.equal(await ids.authenticate(''), null);
  t.equal(await ids.authenticate('short'), null);
  t.equal(await ids.authenticate('x'.repeat(10_000)), null);
});

t.test('authenticate: revoked, expired, disabled user', async (t) => {
  const u = await newUser();
  const a = await ids.createApiToken(u.id, { scopes: ['s'] });
  const b = await ids.createApiToken(u.id, { scopes: ['s'] });
  t.ok(await ids.authenticate(a.token));

  await ids.revokeToken(u.id, a.id);
  t.equal(await ids.authenticate(a.token), null, 'revoked');
  t.ok(await ids.authenticate(b.token), 'sibling unaffected');
  await ids.revokeToken(u.id, a.id); // idempotent
  await rejectsAs(t, ids.revokeToken(u.id, '00000000-0000-4000-8000-000000000000'), NotFound);
  await rejectsAs(t, ids.revokeToken(u.id, 'garbage'), NotFound);
  const other = await newUser();
  await rejectsAs(t, ids.revokeToken(other.id, b.id), NotFound, "cannot revoke someone else's token");
  t.ok(await ids.authenticate(b.token));

  const past = await ids.createApiToken(u.id, { scopes: ['s'], expiresAt: new Date(Date.now() - 1000) });
  t.equal(await ids.authenticate(past.token), null, 'expired');

  await ids.setDisabled(u.id, true);
  t.equal(await ids.authenticate(b.token), null, 'disabled user stops at once');
  t.equal((await ids.getUser(u.id))?.disabled, true);
  await ids.setDisabled(u.id, false);
  t.ok(await ids.authenticate(b.token), 're-enabled');
  await rejectsAs(t, ids.setDisabled('00000000-0000-4000-8000-000000000000', true), NotFound);
  await rejectsAs(t, ids.setDisabled('nope', true), NotFound);
});

t.test('authenticate: last_used_at written at most once a minute', async (t) => {
  const u = await newUser();
  const tok = await ids.createApiToken(u.id, { scopes: [] });
  t.equal((await tokenRow(tok.id))?.last_used_at, null);
  await ids.authenticate(tok.token);
  const first = (await tokenRow(tok.id))?.last_used_at;
  t.ok(first, 'set on first use');
  await sleep(20);
  await ids.authenticate(tok.token);
  t.equal((await tokenRow(tok.id))?.last_used_at, first, 'not rewritten within the minute');

  await db.orm.em.fork().execute(`update api_tokens set last_used_at = now() - interval '2 minutes' where id = ?`, [tok.id]);
  const old = (await tokenRow(tok.id))?.last_used_at;
  // A process that has not seen the token yet (this one caches what it saw a moment ago).
  await new IdentityService(db).authenticate(tok.token);
  const fresh = (await tokenRow(tok.id))?.last_used_at;
  t.not(fresh, old, 'rewritten once older than a minute');
});

t.test('minted tokens', async (t) => {
  const u = await newUser(['editor']);
  const parentExpiry = new Date(Date.now() + 1500);
  const parentTok = await ids.createApiToken(u.id, { scopes: ['notes:read'], expiresAt: parentExpiry });
  const parent = (await ids.authenticate(parentTok.token)) as Principal;
  t.ok(parent);

  // a ttl longer than the parent's remaining life is capped at the parent's expiry
  const capped = await ids.mintToken(parent, 3600);
  t.same(parseToken(capped.token), { kind: 'minted' });
  t.equal(capped.expiresAt.getTime(), parentExpiry.getTime(), 'capped by parent expiry');
  const cp = await ids.authenticate(capped.token);
  t.equal(cp?.tokenKind, 'minted');
  t.same(cp?.scopes, ['notes:read'], 'inherits scopes');
  t.equal(cp?.user.id, u.id);
  t.equal(cp?.tokenExpiresAt?.getTime(), parentExpiry.getTime());
  const row = await tokenRow(capped.id);
  t.equal(row?.kind, 'minted');
  t.equal(row?.parent_id, parentTok.id, 'parent recorded');

  await rejectsAs(t, ids.mintToken(cp as Principal, 60), Forbidden, 'a minted token cannot mint');
  await rejectsAs(t, ids.mintToken(parent, 0), BadArguments);
  await rejectsAs(t, ids.mintToken(parent, -5), BadArguments);
  await rejectsAs(t, ids.mintToken(parent, Number.NaN), BadArguments);

  // a short ttl is honoured
  const longParentTok = await ids.createApiToken(u.id, { scopes: ['a', 'b'] });
  const longParent = (await ids.authenticate(longParentTok.token)) as Principal;
  const before = Date.now();
  const short = await ids.mintToken(longParent, 60);
  t.ok(Math.abs(short.expiresAt.getTime() - (before + 60_000)) < 5_000, 'expires after ttl');
  t.same((await ids.authenticate(short.token))?.scopes, ['a', 'b']);
  // the caller may narrow the scopes (the kernel checks they lie within the parent's)
  const narrowed = await ids.mintToken(longParent, 60, ['a']);
  t.same((await ids.authenticate(narrowed.token))?.scopes, ['a'], 'narrowed scopes');
  await rejectsAs(t, ids.mintToken(longParent, 60, ['']), BadArguments, 'empty scope');

  // once the parent's expiry passes, parent and child are both dead
  await sleep(Math.max(0, parentExpiry.getTime() - Date.now()) + 150);
  t.equal(await ids.authenticate(parentTok.token), null, 'parent expired');
  t.equal(await ids.authenticate(capped.token), null, 'minted expired with its parent');
  await rejectsAs(t, ids.mintToken(parent, 60), Forbidden, 'expired parent cannot mint');

  // revoking the parent kills the child even though the child itself is not expired
  const child = await ids.mintToken(longParent, 600);
  t.ok(await ids.authenticate(child.token));
  await ids.revokeToken(u.id, longParentTok.id);
  t.equal(await ids.authenticate(child.token), null, 'minted dies with revoked parent');
  t.equal(await ids.authenticate(short.token), null);
  await rejectsAs(t, ids.mintToken(longParent, 60), Forbidden, 'revoked parent cannot mint');

  // revoking only the child leaves the parent alone
  const p3tok = await ids.createApiToken(u.id, { scopes: [] });
  const p3 = (await ids.authenticate(p3tok.token)) as Principal;
  const c3 = await ids.mintToken(p3, 60);
  await ids.revokeToken(u.id, c3.id);
  t.equal(await ids.authenticate(c3.token), null);
  t.ok(await ids.authenticate(p3tok.token));

  // disabling the user kills minted tokens too
  const c4 = await ids.mintToken(p3, 60);
  await ids.setDisabled(u.id, true);
  t.equal(await ids.authenticate(c4.token), null);
  await ids.setDisabled(u.id, false);
  t.ok(await ids.authenticate(c4.token));
});

t.test('namespace access', async (t) => {
  const u = await newUser();
  t.same([...(await ids.namespaceAccess(u.id))], []);
  await ids.setNamespaceAccess(u.id, 'notes', 'disabled');
  await ids.setNamespaceAccess(u.id, 'files', 'enabled');
  t.same(
    [...(await ids.namespaceAccess(u.id))],
    [
      ['files', 'enabled'],
      ['notes', 'disabled'],
    ],
  );
  await ids.setNamespaceAccess(u.id, 'notes', 'enabled'); // overwrite
  t.equal((await ids.namespaceAccess(u.id)).get('notes'), 'enabled');
  await ids.setNamespaceAccess(u.id, 'notes', 'default'); // forget
  t.same([...(await ids.namespaceAccess(u.id))], [['files', 'enabled']]);
  await ids.setNamespaceAccess(u.id, 'never-set', 'default'); // no-op for a known user

  const other = await newUser();
  t.equal((await ids.namespaceAccess(other.id)).size, 0, 'per user');

  const ghost = '00000000-0000-4000-8000-000000000000';
  await rejectsAs(t, ids.setNamespaceAccess(ghost, 'notes', 'enabled'), NotFound);
  await rejectsAs(t, ids.setNamespaceAccess(ghost, 'notes', 'default'), NotFound);
  await rejectsAs(t, ids.setNamespaceAccess('garbage', 'notes', 'enabled'), NotFound);
  await rejectsAs(t, ids.setNamespaceAccess(u.id, 'notes', 'maybe' as 'enabled'), BadArguments);
  await rejectsAs(t, ids.setNamespaceAccess(u.id, '', 'enabled'), BadArguments);
  t.equal((await ids.namespaceAccess('garbage')).size, 0);
});

t.test('deleting a user cascades to tokens and namespace access', async (t) => {
  const u = await newUser();
  const tok = await ids.createApiToken(u.id, { scopes: [] });
  const parent = (await ids.authenticate(tok.token)) as Principal;
  const child = await ids.mintToken(parent, 60);
  await ids.setNamespaceAccess(u.id, 'notes', 'disabled');
  await db.orm.em.fork().execute('delete from users where id = ?', [u.id]);
  t.equal(await tokenRow(tok.id), undefined);
  t.equal(await tokenRow(child.id), undefined);
  t.equal((await ids.namespaceAccess(u.id)).size, 0);
});

t.test('the service also takes a bare { orm }', async (t) => {
  const bare = new IdentityService({ orm: db.orm });
  t.type(await bare.countUsers(), 'number');
});

t.test('concurrent calls queue cleanly (PGlite serves a single connection)', async (t) => {
  const u = await newUser();
  const tok = await ids.createApiToken(u.id, { scopes: ['x'] });
  const results = await Promise.all([
    ...Array.from({ length: 40 }, () => ids.authenticate(tok.token)),
    ...Array.from({ length: 10 }, (_, i) => ids.createUser({ email: `burst${i}@example.com` })),
    ...Array.from({ length: 10 }, (_, i) => ids.setNamespaceAccess(u.id, `ns${i}`, 'enabled')),
    db.ping(5000),
  ]);
  t.equal(results.slice(0, 40).filter((p) => (p as Principal | null)?.tokenId === tok.id).length, 40);
  t.equal((await ids.namespaceAccess(u.id)).size, 10);

  const started = performance.now();
  for (let i = 0; i < 200; i++) await ids.authenticate(tok.token);
  const perCall = (performance.now() - started) / 200;
  t.comment(`authenticate: ${perCall.toFixed(2)} ms per call (${db.engine})`);
  t.ok(perCall < 50, 'authenticate is quick');
});
