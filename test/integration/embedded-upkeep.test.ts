// The embedded engine's upkeep (core/db/embedded-upkeep.ts): PGlite has no autovacuum and no
// checkpointer, so without it every small edit of a large note left megabytes behind for good.
// After appends to a large note and an upkeep pass, the data directory is bounded by the live
// data, and /health shows the pass. PGlite only: a PostgreSQL server has its own autovacuum and
// checkpointer, and Folio runs no upkeep there (skipped when DATABASE_URL is set).
import t from 'tap';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { startTestServer, req, createUser, eventually } from '../helpers/server.ts';

const serverUrl = process.env['DATABASE_URL'];

async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true }))
    if (e.isFile()) total += (await stat(path.join(e.parentPath, e.name))).size;
  return total;
}

/** Text that compresses about as little as prose: random words, so TOAST cannot shrink it away. */
function randomText(chars: number): string {
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const words: string[] = [];
  let n = 0;
  while (n < chars) {
    let w = '';
    for (let i = 2 + Math.floor(rnd() * 8); i > 0; i--) w += String.fromCharCode(97 + Math.floor(rnd() * 26));
    words.push(w);
    n += w.length + 1;
  }
  return words.join(' ');
}

interface Pass {
  at: string;
  vacuumed: Array<{ table: string; dead_rows: number }>;
  wal_bytes: { before: number; after: number };
}

t.test(
  'embedded PGlite: after appends to a large note, an upkeep pass keeps the data directory bounded and /health shows it',
  { skip: serverUrl ? 'PGlite only: a PostgreSQL server vacuums and checkpoints by itself' : false },
  async (t) => {
    // A pass every ~1 s (and after every 8 MB of WAL); capacity checked often, as /health shows the pass next to it.
    const s = await startTestServer({ overrides: { embedded: { upkeepMinutes: 0.02, upkeepWalMb: 8, checkMinutes: 0.01 } } });
    t.teardown(() => s.close());
    const dir = path.join(s.folio.config.dataDir, 'pglite');
    const user = await createUser(s, 'appender@example.com');
    const body = randomText(256 * 1024);
    const created = await req(s, 'POST', '/api/v1/notetaker/notes', { token: user.token, body: { title: 'long', body } });
    t.equal(created.status, 201);
    const id = created.json<{ id: string }>().id;
    const health = async () => (await req(s, 'GET', '/health')).json<{ embedded_upkeep?: Pass }>();
    /** Waits for a pass that began after `since`; returns it. */
    const passAfter = async (since: number) =>
      (await eventually(health, (h) => !!h.embedded_upkeep && Date.parse(h.embedded_upkeep.at) > since + 1500, 30_000)).embedded_upkeep;
    const searchFinds = async (word: string) =>
      (await req(s, 'GET', `/api/v1/search?q=${word}`, { token: user.token }))
        .json<{ hits: Array<{ id: string }> }>()
        .hits.some((i) => i.id === id);
    t.ok((await eventually(() => searchFinds('long'), Boolean, 20_000)) === true, 'the note is indexed');
    t.ok(await passAfter(Date.now()), 'a pass ran after the note was written');
    const before = await dirBytes(dir);

    const appends = 20;
    for (let i = 0; i < appends; i++) {
      const r = await req(s, 'PATCH', `/api/v1/notetaker/notes/${id}`, {
        token: user.token,
        body: { append: { text: i === appends - 1 ? ' zebrafinch' : 'x' } },
      });
      t.equal(r.status, 200, `append ${i + 1}`);
    }
    t.ok(
      (await eventually(() => searchFinds('zebrafinch'), Boolean, 20_000)) === true,
      'the appended word is found: its chunk was indexed',
    );
    t.ok((await searchFinds('long')) === true, 'and the title still is');
    const pass = await passAfter(Date.now());
    t.ok(pass, 'a pass after the appends, in /health');
    const after = await dirBytes(dir);
    const wal = await dirBytes(path.join(dir, 'pg_wal'));

    // Without the upkeep each append left the note's old body, its chunks' old rows and its WAL behind:
    // ~20 x 256 KB of dead note bodies alone and ~40 MB of WAL for these 20 appends. With it, the old
    // rows are reused and the WAL is removed after each checkpoint.
    const live = Buffer.byteLength(body);
    t.ok(
      after - before < 8 * live + 16 * 1024 * 1024,
      `the data directory grew by ${after - before} bytes: less than 8x the note and one WAL segment`,
    );
    t.ok(wal <= 32 * 1024 * 1024, `pg_wal holds ${wal} bytes: at most two 16 MB segments after a checkpoint`);
    t.ok(pass!.wal_bytes.after <= 32 * 1024 * 1024, 'the pass says so too');
  },
);
