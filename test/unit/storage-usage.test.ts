// The shared storage quota against a real database: PGlite, or the PostgreSQL server in DATABASE_URL.
import t from 'tap';
import type { EntityManager } from '@mikro-orm/postgresql';
import { QuotaExceeded } from '../../core/contract/errors.ts';
import { IdentityService } from '../../core/domain/identity/service.ts';
import { chargeStorage, storageUsage } from '../../core/domain/storage/usage.ts';
import { openTestDatabase } from '../helpers/db.ts';

const db = await openTestDatabase();
t.teardown(() => db.cleanup());
const ids = new IdentityService(db);
const em = () => db.orm.em.fork() as EntityManager;
const quota = (n: number | null) => ({ quotaBytesPerUser: n });

t.test('charges add up per kind and a credit never goes below zero', async (t) => {
  const u = await ids.createUser({ email: 'sum@example.com', name: null, roles: [] });
  await em().transactional((tx) => chargeStorage(tx, u.id, 'notes', 300, quota(null)));
  await em().transactional((tx) => chargeStorage(tx, u.id, 'files', 700, quota(null)));
  await em().transactional((tx) => chargeStorage(tx, u.id, 'notes', -1000, quota(null)));
  const usage = await storageUsage(em(), u.id, quota(5000));
  t.same(usage, { byKind: { files: 700, notes: 0 }, total: 700, quota: 5000 });
});

t.test('a write over the quota is refused, says how much, and changes nothing', async (t) => {
  const u = await ids.createUser({ email: 'over@example.com', name: null, roles: [] });
  await em().transactional((tx) => chargeStorage(tx, u.id, 'files', 900, quota(1000)));
  const err = await em()
    .transactional((tx) => chargeStorage(tx, u.id, 'notes', 101, quota(1000)))
    .catch((e: unknown) => e);
  t.ok(err instanceof QuotaExceeded, 'QuotaExceeded');
  t.same((err as QuotaExceeded).quota, { used: 900, quota: 1000, needed: 101 });
  t.equal((err as QuotaExceeded).status, 507);
  t.equal((await storageUsage(em(), u.id, quota(1000))).total, 900, 'nothing was charged');
  // Exactly up to the quota is fine, and freeing space is always allowed.
  await em().transactional((tx) => chargeStorage(tx, u.id, 'notes', 100, quota(1000)));
  await em().transactional((tx) => chargeStorage(tx, u.id, 'files', -400, quota(0)));
  t.equal((await storageUsage(em(), u.id, quota(1000))).total, 600);
});

t.test('a refused charge rolls back the write it was part of', async (t) => {
  const u = await ids.createUser({ email: 'rollback@example.com', name: null, roles: [] });
  await em()
    .transactional(async (tx) => {
      await tx.execute(`update users set name = 'changed' where id = ?`, [u.id]);
      await chargeStorage(tx, u.id, 'notes', 11, quota(10));
    })
    .catch(() => undefined);
  const [row] = await em().execute<{ name: string | null }[]>(`select name from users where id = ?`, [u.id]);
  t.equal(row?.name, null, 'the write in the same transaction did not happen');
});

t.test('concurrent writes cannot both squeeze under the quota', async (t) => {
  const u = await ids.createUser({ email: 'race@example.com', name: null, roles: [] });
  const outcomes = await Promise.allSettled(
    Array.from({ length: 6 }, (_, i) => em().transactional((tx) => chargeStorage(tx, u.id, i % 2 ? 'notes' : 'files', 400, quota(1000)))),
  );
  const ok = outcomes.filter((o) => o.status === 'fulfilled').length;
  t.equal(ok, 2, 'two 400-byte writes fit in 1000 bytes, the others are refused');
  t.ok(
    outcomes.every((o) => o.status === 'fulfilled' || o.reason instanceof QuotaExceeded),
    'every refusal is a QuotaExceeded',
  );
  t.equal((await storageUsage(em(), u.id, quota(1000))).total, 800);
});
