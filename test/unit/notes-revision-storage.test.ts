// How revisions are stored and counted, against a real database (PGlite, or the PostgreSQL server in
// DATABASE_URL): small edits store small deltas, every revision reads back exactly, chains stay
// bounded, and the per-user storage quota counts what is stored and refuses writes over it.
import t from 'tap';
import type { EntityManager } from '@mikro-orm/postgresql';
import { QuotaExceeded } from '../../core/contract/errors.ts';
import { SNAPSHOT_EVERY } from '../../core/domain/notes/revision-store.ts';
import { NotesServiceImpl } from '../../core/domain/notes/service.ts';
import type { Principal } from '../../core/domain/identity/types.ts';
import { openNotesFixture } from '../helpers/notes.ts';

const fx = await openNotesFixture(t);
const { notes } = fx;
const em = () => fx.db.orm.em.fork() as EntityManager;

async function stored(noteId: string): Promise<Array<{ version: number; snapshot: boolean; stored_bytes: number }>> {
  return em().execute(`select version, body is not null as snapshot, stored_bytes from note_revisions where note_id = ? order by version`, [
    noteId,
  ]);
}

async function storedByUser(p: Principal): Promise<number> {
  const [r] = await em().execute<Array<{ n: number }>>(
    `select coalesce(sum(stored_bytes), 0)::float8 as n from note_revisions where owner_id = ?`,
    [p.user.id],
  );
  return r!.n;
}

t.test('a one-character append to a 1 MiB note stores a few dozen bytes, and every version reads back', async (t) => {
  const p = await fx.newPrincipal();
  const big = 'word '.repeat(200 * 1024).slice(0, 1024 * 1024 - 10);
  const n = await notes.create(p, { title: 'Big', body: big });
  const afterCreate = (await notes.storageUse(p)).by_kind['notes']!;
  t.equal(afterCreate, Buffer.byteLength('Big') + Buffer.byteLength(big), 'the creation is one full snapshot');
  const bodies = [big];
  for (let i = 0; i < 3; i++) bodies.push((await notes.append(p, n.id, { text: String(i) })).body);
  const use = await notes.storageUse(p);
  const perAppend = (use.by_kind['notes']! - afterCreate) / 3;
  t.ok(perAppend < 100, `an append costs ${perAppend} bytes against the quota`);
  t.equal(use.used, await storedByUser(p), 'usage is what the revisions store');
  for (const [i, body] of bodies.entries()) t.equal((await notes.revision(p, n.id, i + 1)).body, body, `version ${i + 1}`);
  t.same(
    (await stored(n.id)).map((r) => r.snapshot),
    [true, false, false, false],
  );
});

t.test(`a chain of deltas is at most ${SNAPSHOT_EVERY} long: then a new snapshot`, async (t) => {
  const p = await fx.newPrincipal();
  const n = await notes.create(p, { title: 'Log', body: 'log\n'.repeat(5000) });
  const bodies = [n.body];
  for (let i = 0; i < SNAPSHOT_EVERY + 5; i++) bodies.push((await notes.append(p, n.id, { text: `entry ${i}` })).body);
  const rows = await stored(n.id);
  t.same(
    rows.filter((r) => r.snapshot).map((r) => r.version),
    [1, SNAPSHOT_EVERY + 1],
    'snapshots at creation and after a full chain',
  );
  for (const v of [1, 2, SNAPSHOT_EVERY, SNAPSHOT_EVERY + 1, SNAPSHOT_EVERY + 2, bodies.length])
    t.equal((await notes.revision(p, n.id, v)).body, bodies[v - 1], `version ${v} reads back exactly`);
});

t.test('every kind of change reads back exactly, restore included; a rewrite is a snapshot', async (t) => {
  const p = await fx.newPrincipal();
  const base = '# Plan\n\nintro 東京 🗼\n\n## Todo\n\n- [ ] one\n\n## Done\n\n- two\n' + 'filler line\n'.repeat(400);
  let n = await notes.create(p, { title: 'Plan', body: base, tags: ['work'] });
  const seen = new Map<number, { title: string; body: string; tags: string[] }>([[1, { title: n.title, body: n.body, tags: n.tags }]]);
  const keep = (x: typeof n) => (seen.set(x.version, { title: x.title, body: x.body, tags: x.tags }), x);
  n = keep(await notes.append(p, n.id, { text: '- [ ] three 😀', heading: 'Todo' }));
  n = keep(await notes.prepend(p, n.id, { text: 'Status: 🟢' }));
  n = keep(await notes.replaceSection(p, n.id, { heading: 'Done', text: '- two\n- one', expected_version: n.version }));
  n = keep(await notes.update(p, n.id, { expected_version: n.version, title: 'Plan B', tags: ['work', 'b'] }));
  n = keep(await notes.trash(p, n.id));
  n = keep(await notes.untrash(p, n.id));
  n = keep(await notes.update(p, n.id, { expected_version: n.version, body: 'all new ' + 'x'.repeat(3000) }));
  n = keep(await notes.restoreRevision(p, n.id, 2));
  t.equal(n.body, seen.get(2)!.body, 'restore brings back version 2 exactly');
  for (const [v, want] of seen) {
    const r = await notes.revision(p, n.id, v);
    t.same({ title: r.title, body: r.body, tags: r.tags }, want, `version ${v}`);
  }
  const rows = await stored(n.id);
  t.equal(rows.find((r) => r.version === 8)?.snapshot, true, 'a rewrite of the whole body stores a snapshot');
  t.equal(rows.find((r) => r.version === 6)?.snapshot, false, 'a trash stores a delta');
  const diff = await notes.diff(p, n.id, 8);
  t.match(diff.diff, /-all new/, 'diff reads old versions too');
});

t.test('the quota: over it nothing is stored; purge frees what the note stored', async (t) => {
  const quota = { quotaBytesPerUser: 10_000 };
  const limited = new NotesServiceImpl(fx.db, { storage: quota, trashRetentionDays: 0 });
  const p = await fx.newPrincipal();
  const a = await limited.create(p, { title: 'A', body: 'a'.repeat(6000) });
  const used = (await limited.storageUse(p)).used;
  t.same(await limited.storageUse(p), { used, quota: 10_000, by_kind: { notes: used } });

  const refused = await limited.create(p, { title: 'B', body: 'b'.repeat(6000) }).catch((e: unknown) => e);
  t.ok(refused instanceof QuotaExceeded, 'a create over the quota is refused');
  t.same((refused as QuotaExceeded).quota, { used, quota: 10_000, needed: 6001 });
  t.equal((await limited.list(p)).items.length, 1, 'and stores no note');

  const appended = await limited.append(p, a.id, { text: 'small' });
  t.equal(appended.version, 2, 'a small edit still fits: it costs its delta');
  const rewrite = await limited.update(p, a.id, { expected_version: 2, body: 'z'.repeat(5000) }).catch((e: unknown) => e);
  t.ok(rewrite instanceof QuotaExceeded, 'a rewrite that needs a new snapshot over the quota is refused');
  const after = await limited.get(p, a.id);
  t.equal(after.version, 2, 'the note is unchanged');
  t.equal(after.body, appended.body);
  t.equal((await limited.revisions(p, a.id)).items.length, 2, 'no revision was kept');
  t.equal((await limited.storageUse(p)).used, await storedByUser(p), 'usage still matches what is stored');

  await limited.trash(p, a.id);
  await limited.purge(p, a.id);
  t.same(await limited.storageUse(p), { used: 0, quota: 10_000, by_kind: { notes: 0 } }, 'purge frees it all');
  t.ok(await limited.create(p, { title: 'B', body: 'b'.repeat(6000) }), 'and the space can be used again');

  const c = await limited.create(p, { title: 'C', body: 'c'.repeat(100) });
  await limited.trash(p, c.id);
  await limited.purgeExpiredTrash(new Date(Date.now() + 1000));
  t.equal((await limited.storageUse(p)).used, await storedByUser(p), 'the trash sweep frees what it purges');
});

t.test('concurrent writers under a quota: every write lands whole or not at all, and usage stays exact', async (t) => {
  const limited = new NotesServiceImpl(fx.db, { storage: { quotaBytesPerUser: 40_000 } });
  const p = await fx.newPrincipal();
  const n = await limited.create(p, { title: 'Shared', body: 'line\n'.repeat(2000) });
  const outcomes = await Promise.allSettled([
    ...Array.from({ length: 12 }, (_, i) => limited.append(p, n.id, { text: `append ${i}` })),
    ...Array.from({ length: 8 }, (_, i) => limited.create(p, { title: `N${i}`, body: String(i).repeat(6000) })),
  ]);
  const refused = outcomes.filter((o) => o.status === 'rejected');
  t.ok(
    refused.every((o) => o.reason instanceof QuotaExceeded),
    'every refusal is quota_exceeded',
  );
  t.ok(refused.length >= 3, `some creates did not fit (${refused.length} refused)`);
  t.equal(outcomes.slice(0, 12).filter((o) => o.status === 'fulfilled').length, 12, 'every small append fit');
  const use = await limited.storageUse(p);
  t.ok(use.used <= 40_000, 'the quota held');
  t.equal(use.used, await storedByUser(p), 'usage is exactly what is stored');
  const cur = await limited.get(p, n.id);
  t.equal(cur.version, 13);
  t.equal((await limited.revision(p, n.id, 13)).body, cur.body);
});
