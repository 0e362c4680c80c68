// Several clients edit one note at once through the REST API: appends all land, replacing edits with
// a stale version are refused (412) instead of silently overwriting, and each version is written once.
import t from 'tap';
import { startTestServer, createUser } from '../helpers/server.ts';
import { api } from './rest-support.ts';

const s = await startTestServer();
t.teardown(() => s.close());
const alice = await createUser(s, 'alice@example.com');
const A = { token: alice.token };

t.test('racing replacing edits on one version: exactly one wins, the rest get 412 with the winner', async (t) => {
  const note = (await api(s, 'POST', '/notetaker/notes', { ...A, body: { title: 'race', body: 'start' } })).json();
  const answers = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      api(s, 'PATCH', `/notetaker/notes/${note.id}`, { ...A, headers: { 'if-match': '"1"' }, body: { body: `writer ${i}` } }),
    ),
  );
  const won = answers.filter((r) => r.status === 200);
  const lost = answers.filter((r) => r.status === 412);
  t.equal(won.length, 1, 'one write lands');
  t.equal(lost.length, 7, 'the others are refused');
  const winner = won[0]!.json();
  t.equal(winner.version, 2);
  for (const r of lost) {
    t.equal(r.json().code, 'precondition_failed');
    t.same(r.json().current, winner, 'each loser is shown the winning note');
  }
  const now = (await api(s, 'GET', `/notetaker/notes/${note.id}`, A)).json();
  t.equal(now.body, winner.body);
  const revs = (await api(s, 'GET', `/notetaker/notes/${note.id}/revisions`, A)).json();
  t.equal(revs.items.length, 2, 'one revision per write that landed');
});

t.test('appenders and read-modify-write editors at once: nothing lost, nothing overwritten', async (t) => {
  const note = (await api(s, 'POST', '/notetaker/notes', { ...A, body: { title: 'shared log', body: '# Log\n' } })).json();
  const APPENDERS = 4;
  const EDITORS = 3;
  const ROUNDS = 6;
  const versions: number[] = [];
  let refused = 0;

  const appender = async (a: number) => {
    for (let i = 0; i < ROUNDS; i++) {
      const r = await api(s, 'PATCH', `/notetaker/notes/${note.id}`, { ...A, body: { append: { text: `append-${a}-${i}` } } });
      if (r.status !== 200) throw new Error(`append: ${r.status} ${r.text}`);
      versions.push(r.json().version);
    }
  };
  // An editor reads, adds its own line to what it read, and writes with If-Match; on 412 it merges
  // into the current note it was handed and tries again.
  const editor = async (e: number) => {
    for (let i = 0; i < ROUNDS; i++) {
      let cur = (await api(s, 'GET', `/notetaker/notes/${note.id}`, A)).json();
      for (;;) {
        const r = await api(s, 'PATCH', `/notetaker/notes/${note.id}`, {
          ...A,
          headers: { 'if-match': `"${cur.version}"` },
          body: { body: `${cur.body.trimEnd()}\nedit-${e}-${i}\n`, title: `edited by ${e}` },
        });
        if (r.status === 200) {
          versions.push(r.json().version);
          break;
        }
        if (r.status !== 412) throw new Error(`edit: ${r.status} ${r.text}`);
        refused++;
        cur = r.json().current;
      }
    }
  };
  await Promise.all([...Array.from({ length: APPENDERS }, (_, a) => appender(a)), ...Array.from({ length: EDITORS }, (_, e) => editor(e))]);

  const final = (await api(s, 'GET', `/notetaker/notes/${note.id}`, A)).json();
  const writes = (APPENDERS + EDITORS) * ROUNDS;
  t.equal(final.version, 1 + writes, 'every write made exactly one version');
  t.same(
    [...versions].sort((a, b) => a - b),
    Array.from({ length: writes }, (_, i) => i + 2),
    'no two writes were given the same version',
  );
  for (let a = 0; a < APPENDERS; a++)
    for (let i = 0; i < ROUNDS; i++) t.ok(final.body.includes(`append-${a}-${i}`), `append-${a}-${i} is in the note`);
  for (let e = 0; e < EDITORS; e++)
    for (let i = 0; i < ROUNDS; i++) t.ok(final.body.includes(`edit-${e}-${i}`), `edit-${e}-${i} is in the note`);
  t.comment(`${refused} stale edits were refused and retried`);
  const revs = (await api(s, 'GET', `/notetaker/notes/${note.id}/revisions?limit=100`, A)).json();
  t.equal(revs.items.length, 1 + writes, 'a revision for every version');
});
