// The embedded engine has no autovacuum: Folio analyzes it when the notes table's statistics are
// missing or have drifted, and leaves a PostgreSQL server to its own autovacuum.
import t from 'tap';
import { refreshPlannerStats } from '../../core/db/maintenance.ts';
import { openNotesFixture, newPrincipal, buildNote } from '../helpers/notes.ts';

const fx = await openNotesFixture(t);
const estimate = async () =>
  Number(
    (await fx.db.orm.em.fork().execute<Array<{ n: number }>>(`select reltuples::float8 as n from pg_class where relname = 'notes'`))[0]!.n,
  );

if (fx.db.engine === 'postgres') {
  t.test('a PostgreSQL server is left to autovacuum', async (t) => {
    t.equal(await refreshPlannerStats(fx.db), false);
  });
} else {
  t.test('PGlite: analyzed when never analyzed, again only after the table drifted', async (t) => {
    t.equal(await refreshPlannerStats(fx.db), true, 'fresh tables have no statistics');
    t.ok((await estimate()) >= 0, 'now they do');
    t.equal(await refreshPlannerStats(fx.db), false, 'nothing changed: no second analyze');
    const p = await newPrincipal(fx.identity);
    for (let i = 0; i < 80; i++) await fx.notes.create(p, buildNote());
    t.equal(await refreshPlannerStats(fx.db), true, '80 new notes (over 50 + 10%) trigger it');
    t.equal(await estimate(), 80);
    t.equal(await refreshPlannerStats(fx.db), false);
  });
}
