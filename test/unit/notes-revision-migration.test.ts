// The migration to delta revisions over a database written the old way (every revision a full
// copy of its body): every revision reads back exactly as it was stored, histories shrink, and each
// user's storage use is what their revisions store afterwards. Real database: PGlite, or the
// PostgreSQL server in DATABASE_URL.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import type { EntityManager } from '@mikro-orm/postgresql';
import { NotesServiceImpl } from '../../core/domain/notes/service.ts';
import { SNAPSHOT_EVERY } from '../../core/domain/notes/revision-store.ts';
import { IdentityService } from '../../core/domain/identity/service.ts';
import { openTestDatabase } from '../helpers/db.ts';
import { newPrincipal } from '../helpers/notes.ts';

const db = await openTestDatabase({ fresh: true, migrate: false });
t.teardown(() => db.cleanup());
const em = () => db.orm.em.fork() as EntityManager;

// The schema as it was before the deltas.
await db.orm.migrator.up({ to: 'Migration20261123000000_storage_usage' });
const identity = new IdentityService(db);
const alice = await newPrincipal(identity, 'alice');
const bob = await newPrincipal(identity, 'bob');

interface Version {
  title: string;
  body: string;
  tags: string[];
}

/** A note and its full-copy revisions, as the previous schema stored them. */
async function oldNote(owner: string, versions: Version[], trashed = false): Promise<string> {
  const id = randomUUID();
  const last = versions[versions.length - 1]!;
  await em().execute(
    `insert into notes (id, owner_id, title, body, tags, source, version, body_bytes, deleted_at)
     values (?, ?, ?, ?, ?::text[], 'manual', ?, ?, ${trashed ? 'now()' : 'null'})`,
    [id, owner, last.title, last.body, `{${last.tags.join(',')}}`, versions.length, Buffer.byteLength(last.body)],
  );
  for (const [i, v] of versions.entries()) {
    await em().execute(
      `insert into note_revisions (note_id, version, owner_id, title, body, tags, change, body_bytes)
       values (?, ?, ?, ?, ?, ?::text[], ?, ?)`,
      [id, i + 1, owner, v.title, v.body, `{${v.tags.join(',')}}`, i === 0 ? 'create' : 'update', Buffer.byteLength(v.body)],
    );
  }
  return id;
}

// Alice: a long log appended to (crosses a snapshot boundary), a note of assorted edits in several
// scripts, a single-version note, and a trashed one. Bob: one small note.
const log: Version[] = [{ title: 'Log', body: 'start\n'.repeat(3000), tags: ['log'] }];
for (let i = 1; i < SNAPSHOT_EVERY + 20; i++) log.push({ ...log[i - 1]!, body: `${log[i - 1]!.body}entry ${i} ✓\n` });
const edits: Version[] = [
  { title: 'Plan', body: '# 計画\n\n- [ ] 東京 🗼\n' + 'filler\n'.repeat(500), tags: [] },
  { title: 'Plan', body: '# 計画\n\n- [x] 東京 🗼\n' + 'filler\n'.repeat(500), tags: [] },
  { title: 'Plan 😀', body: '# 計画\n\n- [x] 東京 🗻\n' + 'filler\n'.repeat(500) + 'end', tags: ['a', 'b'] },
  { title: 'Plan 😀', body: 'rewritten entirely', tags: ['a'] },
  { title: 'Plan 😀', body: '', tags: ['a'] },
  { title: 'Plan', body: 'é'.repeat(2000), tags: [] },
];
const ids = {
  log: await oldNote(alice.user.id, log),
  edits: await oldNote(alice.user.id, edits),
  single: await oldNote(alice.user.id, [{ title: 'One', body: 'only version', tags: [] }]),
  trashed: await oldNote(alice.user.id, [edits[0]!, edits[1]!], true),
  bob: await oldNote(bob.user.id, [
    { title: 'Bob', body: 'hi', tags: [] },
    { title: 'Bob', body: 'hi there', tags: [] },
  ]),
};
const fullCopyBytes = async () =>
  (await em().execute<Array<{ n: number }>>(`select sum(octet_length(body))::float8 as n from note_revisions`))[0]!.n;
const before = await fullCopyBytes();

const applied = await db.orm.migrator.up();
t.same(
  applied.map((m) => m.name),
  ['Migration20261124000000_note_revision_deltas'],
);

const notes = new NotesServiceImpl(db);

t.test('every revision reads back exactly as it was', async (t) => {
  const cases: Array<[string, typeof alice, Version[]]> = [
    ['log', alice, log],
    ['edits', alice, edits],
    ['single', alice, [{ title: 'One', body: 'only version', tags: [] }]],
    ['trashed', alice, [edits[0]!, edits[1]!]],
    [
      'bob',
      bob,
      [
        { title: 'Bob', body: 'hi', tags: [] },
        { title: 'Bob', body: 'hi there', tags: [] },
      ],
    ],
  ];
  for (const [name, who, versions] of cases) {
    const id = ids[name as keyof typeof ids];
    let same = 0;
    for (const [i, want] of versions.entries()) {
      const r = await notes.revision(who, id, i + 1);
      if (r.body === want.body && r.title === want.title && JSON.stringify(r.tags) === JSON.stringify(want.tags)) same++;
      else t.fail(`${name} version ${i + 1} differs`);
    }
    t.equal(same, versions.length, `${name}: all ${versions.length} versions`);
    const listed = await notes.revisions(who, id, { limit: 100 });
    t.same(
      listed.items.map((r) => r.body_bytes),
      versions
        .slice(-100)
        .reverse()
        .map((v) => Buffer.byteLength(v.body)),
      `${name}: sizes listed as before`,
    );
  }
});

t.test('the histories shrink and each user is charged what is stored', async (t) => {
  const after = await em().execute<Array<{ n: number }>>(
    `select sum(coalesce(octet_length(body), 0) + coalesce(octet_length(delta), 0))::float8 as n from note_revisions`,
  );
  t.ok(after[0]!.n < before / 10, `revisions store ${after[0]!.n} bytes, were ${before}`);
  const snapshots = await em().execute<Array<{ version: number }>>(
    `select version from note_revisions where note_id = ? and body is not null order by version`,
    [ids.log],
  );
  t.same(
    snapshots.map((r) => r.version),
    [1, SNAPSHOT_EVERY + 1],
    'the appended log is two snapshots and deltas',
  );
  for (const who of [alice, bob]) {
    const [sum] = await em().execute<Array<{ n: number }>>(`select sum(stored_bytes)::float8 as n from note_revisions where owner_id = ?`, [
      who.user.id,
    ]);
    t.same(await notes.storageUse(who), { used: sum!.n, quota: null, by_kind: { notes: sum!.n } }, `${who.user.name}'s use`);
  }
});

t.test('converted notes take new writes, restores and purges', async (t) => {
  const n = await notes.append(alice, ids.log, { text: 'after the migration' });
  t.equal((await notes.revision(alice, ids.log, n.version)).body, n.body);
  const restored = await notes.restoreRevision(alice, ids.edits, 3);
  t.equal(restored.body, edits[2]!.body);
  await notes.purge(alice, ids.trashed);
  const [sum] = await em().execute<Array<{ n: number }>>(`select sum(stored_bytes)::float8 as n from note_revisions where owner_id = ?`, [
    alice.user.id,
  ]);
  t.equal((await notes.storageUse(alice)).used, sum!.n);
});
