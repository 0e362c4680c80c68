// The Authenticator takes a token it saw lately from the identity cache without checking its format
// again, but only a well-formed one: a token of another shape (a bootstrap token no longer
// configured, typed in as a password, which reaches the identity service without that check) is
// still refused as not a Folio token, however it got into the cache.
import t from 'tap';
import { Unauthenticated } from '../../core/contract/errors.ts';
import { bootstrapAdmin, bootstrapDigest } from '../../core/domain/identity/bootstrap.ts';
import { IdentityService } from '../../core/domain/identity/service.ts';
import { generateToken } from '../../core/domain/identity/tokens.ts';
import { Authenticator, queryOf } from '../../core/kernel/auth.ts';
import { openTestDatabase, testLogger } from '../helpers/db.ts';

const db = await openTestDatabase();
t.teardown(() => db.cleanup());
const ids = new IdentityService(db);

t.test('a bootstrap token the Authenticator is not told of, in the cache, is still not a Folio token', async (t) => {
  const old = 'my-own-bootstrap-secret-0123456789abcdef';
  await bootstrapAdmin(ids, old, testLogger());
  t.ok(await ids.authenticate(old), 'the identity service knows it (and now holds it in its cache)');
  const configured = new Authenticator(ids, old);
  t.ok(await configured.authenticate(`Bearer ${old}`, queryOf('')), 'accepted while it is the configured bootstrap token');
  const after = new Authenticator(ids, null);
  await t.rejects(after.authenticate(`Bearer ${old}`, queryOf('')), Unauthenticated, 'refused once it is not');
  await t.rejects(after.authenticate(`Bearer ${old}`, queryOf('')), /not a Folio token/, 'every time');
});

t.test('a chosen bootstrap token works on once BOOTSTRAP_ADMIN_TOKEN is unset (the next start), until it is revoked', async (t) => {
  const chosen = 'my-own-bootstrap-secret-0123456789abcdef';
  // The next start, without the variable: the digest comes from the stored token.
  const restarted = new Authenticator(ids, { digest: await bootstrapDigest(ids, null) });
  const p = await restarted.authenticate(`Bearer ${chosen}`, queryOf(''));
  t.ok(p.user.roles.includes('admin'), 'the first admin, as before the restart');
  await t.rejects(restarted.authenticate(`Bearer another-secret-of-the-same-kind-0123456789abcdef`, queryOf('')), /not a Folio token/);
  await ids.tokens.revoke(p, p.tokenId);
  t.equal(await bootstrapDigest(ids, null), undefined, 'a revoked one is let through no more');
  await t.rejects(restarted.authenticate(`Bearer ${chosen}`, queryOf('')), Unauthenticated, 'and is refused');
});

t.test('a well-formed token is taken from the cache, and a revoked one is not', async (t) => {
  const u = await ids.createUser({ email: 'cache@example.com' });
  const { token, id } = await ids.createApiToken(u.id, { name: 'cli', scopes: ['notes:read'] });
  const auth = new Authenticator(ids, null);
  const p = await auth.authenticate(`Bearer ${token}`, queryOf(''));
  t.equal(p.user.id, u.id);
  t.equal(ids.cached(token)?.user.id, u.id, 'held after the first request');
  await ids.tokens.revoke(p, id);
  t.equal(ids.cached(token), undefined, 'dropped on revocation');
  await t.rejects(auth.authenticate(`Bearer ${token}`, queryOf('')), Unauthenticated);
  t.equal(ids.cached(generateToken('api')), undefined, 'a token never seen');
});
