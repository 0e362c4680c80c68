// The first admin, against a real database: a BOOTSTRAP_ADMIN_TOKEN that could never be stored fails
// the start with nothing written, so the next start (with a good token) still makes the admin; and
// a data directory left with an admin but no token (a start cut off half-way) is finished.
import t from 'tap';
import { BadArguments } from '../../core/contract/errors.ts';
import { bootstrapAdmin, BOOTSTRAP_ADMIN_EMAIL } from '../../core/domain/identity/bootstrap.ts';
import { IdentityService } from '../../core/domain/identity/service.ts';
import { generateToken } from '../../core/domain/identity/tokens.ts';
import { openTestDatabase, testLogger } from '../helpers/db.ts';

const db = await openTestDatabase();
t.teardown(() => db.cleanup());
const ids = new IdentityService(db);
const log = testLogger();

t.test('a token that cannot be stored writes nothing; the next start with a good one makes the admin', async (t) => {
  const bad = `folio_api_${'x'.repeat(40)}`; // our prefix, but no valid checksum
  await t.rejects(bootstrapAdmin(ids, bad, log), BadArguments);
  t.equal(await ids.countUsers(), 0, 'no user was made');
  const good = generateToken('api');
  t.equal(await bootstrapAdmin(ids, good, log), undefined, 'a configured token is not printed');
  const who = await ids.authenticate(good);
  t.equal(who?.user.email, BOOTSTRAP_ADMIN_EMAIL);
  t.same(who?.user.roles, ['admin']);
  t.equal(await bootstrapAdmin(ids, good, log), undefined, 'a second start does nothing');
  t.equal(await ids.countApiTokens(who!.user.id), 1);
});

t.test('an admin left without a token is given one; once any token exists, nothing is done', async (t) => {
  const fresh = await openTestDatabase();
  t.teardown(() => fresh.cleanup());
  const other = new IdentityService(fresh);
  await other.createUser({ email: BOOTSTRAP_ADMIN_EMAIL, name: 'Admin', roles: ['admin'] });
  const printed = await bootstrapAdmin(other, null, log);
  t.type(printed, 'string', 'a generated token is returned to be printed');
  t.equal((await other.authenticate(printed!))?.user.email, BOOTSTRAP_ADMIN_EMAIL);
  t.equal(await bootstrapAdmin(other, null, log), undefined);
  const u = await other.createUser({ email: 'someone@example.com' });
  t.equal(await bootstrapAdmin(other, null, log), undefined, 'not with other users either');
  t.equal(await other.countApiTokens(u.id), 0);
});
