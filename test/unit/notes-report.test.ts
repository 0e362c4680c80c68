// Notes reports against a real database (PGlite, or the PostgreSQL server in DATABASE_URL): the
// three formats, the three groupings, action items, selection, save_as_note, and streaming.
import t from 'tap';
import { BadArguments } from '../../core/contract/errors.ts';
import { NotesServiceImpl } from '../../core/domain/notes/service.ts';
import { buildNote, openNotesFixture, readAll } from '../helpers/notes.ts';

const fx = await openNotesFixture(t);
const { notes } = fx;
const setUpdated = (id: string, at: string) =>
  fx.db.orm.em.fork().execute(`update notes set updated_at = ?::timestamptz where id = ?`, [at, id]);

const p = await fx.newPrincipal('reporter');
const seed = async (title: string, at: string, body: string, tags: string[] = []) => {
  const n = await notes.create(p, buildNote({ title, body, tags }));
  await setUpdated(n.id, at);
  return n;
};
await seed('Kickoff', '2025-12-29T09:00:00Z', 'Project kickoff.\n- [ ] book room\n- [x] send invite\n', ['project']);
await seed('Standup', '2026-01-01T10:00:00Z', 'Daily standup.\n* [ ] fix login bug\n```\n- [ ] not an item (code)\n```\n', [
  'project',
  'daily',
]);
await seed('Retro', '2026-01-01T16:30:00Z', 'What went well: <b>everything</b>.\n1. [ ] write retro notes\n', ['project']);
await seed('Groceries', '2026-01-05T08:00:00Z', 'Milk and eggs. No tasks here.');
await seed('Trip', '2026-01-07T12:00:00Z', 'Train tickets.\n- [ ] pack bag\n', ['travel']);

const text = async (opts: Parameters<typeof notes.report>[1], who = p) => {
  const r = await notes.report(who, opts);
  return { ...r, body: (await readAll(r.stream)).toString('utf8') };
};

/** The report's group headings (## ...), without its summary. */
const groupsOf = (md: string) => [...md.matchAll(/^## (.+)$/gm)].map((m) => m[1]).filter((g) => g !== 'Summary');

t.test('markdown by day: groups in time order with counts, each note in its own Markdown, the summary', async (t) => {
  const r = await text({ group_by: 'day', format: 'markdown', title: 'Daily digest' });
  t.equal(r.contentType, 'text/markdown; charset=utf-8');
  t.match(r.filename, /\.md$/);
  const md = r.body;
  t.match(md, /^# Daily digest\n/);
  t.match(md, /5 notes, 4 open action items/);
  t.same(
    groupsOf(md),
    ['2025-12-29 (1 note)', '2026-01-01 (2 notes)', '2026-01-05 (1 note)', '2026-01-07 (1 note)'],
    'one group per UTC day, oldest first, with counts',
  );
  t.ok(md.indexOf('### Standup') < md.indexOf('### Retro'), 'notes in time order within a day');
  // Each note's Markdown as written: its task lists, numbered items and code blocks.
  for (const line of [
    'Project kickoff.',
    '- [ ] book room',
    '- [x] send invite',
    '* [ ] fix login bug',
    '1. [ ] write retro notes',
    '- [ ] pack bag',
  ])
    t.ok(md.split('\n').includes(line), `the note's line ${line}`);
  t.match(md, /```\n- \[ \] not an item \(code\)\n```/, 'a code block stays one');
  t.match(md, /#project/);
  // The summary: notes per day (empty days included), the most used tags, open and done items
  // (done items and items inside code blocks are not open items; * bullets and numbered items are).
  t.match(md, /## Summary\n\n\| day \| notes \|/);
  t.match(md, /\| 2025-12-30 \| 0 \|/, 'an empty day is a bar of 0');
  t.match(md, /\| 2026-01-01 \| 2 \|/);
  t.match(md, /Most used tags: #project \(3\), #daily \(1\), #travel \(1\)\./);
  t.match(md, /Action items: 4 open, 1 done\./);
});

t.test('markdown by ISO week and by tag', async (t) => {
  const week = (await text({ group_by: 'week', format: 'markdown' })).body;
  t.same(groupsOf(week), ['2026-W01 (3 notes)', '2026-W02 (2 notes)'], 'ISO weeks: 2025-12-29 belongs to 2026-W01');

  const tag = (await text({ group_by: 'tag', format: 'markdown' })).body;
  t.same(
    groupsOf(tag),
    ['\\#daily (1 note)', '\\#project (3 notes)', '\\#travel (1 note)', '(untagged) (1 note)'],
    'a group per tag (a note in each of its tags), untagged last',
  );
  const projectPart = tag.slice(tag.indexOf('## \\#project'), tag.indexOf('## \\#travel ('));
  t.same(
    [...projectPart.matchAll(/^### (.+)$/gm)].map((m) => m[1]),
    ['Kickoff', 'Standup', 'Retro'],
  );
});

t.test('selection: query, tags, date range; only the caller’s notes', async (t) => {
  const other = await fx.newPrincipal('other');
  await notes.create(other, buildNote({ title: 'Other standup', body: 'standup of someone else\n- [ ] leak', tags: ['project'] }));
  const q = (await text({ q: 'standup', group_by: 'day', format: 'markdown' })).body;
  t.match(q, /### Standup/);
  t.notMatch(q, /Other standup|leak/, 'never another user’s notes');
  t.match(q, /1 note, 1 open action item/);
  const tagged = (await text({ tags: ['travel'], group_by: 'tag', format: 'markdown' })).body;
  t.same(
    [...tagged.matchAll(/^### (.+)$/gm)].map((m) => m[1]),
    ['Trip'],
  );
  const ranged = (await text({ from: '2026-01-01', to: '2026-01-05', group_by: 'day', format: 'markdown' })).body;
  t.same(
    [...ranged.matchAll(/^### (.+)$/gm)].map((m) => m[1]),
    ['Standup', 'Retro', 'Groceries'],
  );
  const none = (await text({ q: 'nonexistentword', group_by: 'day', format: 'markdown' })).body;
  t.match(none, /0 notes/);
  const theirs = (await text({ group_by: 'tag', format: 'markdown' }, other)).body;
  t.match(theirs, /1 note, 1 open action item/);
  t.notMatch(theirs, /Kickoff/);
  await t.rejects(notes.report(p, { group_by: 'month', format: 'markdown' } as never), BadArguments);
  await t.rejects(notes.report(p, { group_by: 'day', format: 'docx' } as never), BadArguments);
  await t.rejects(notes.report(p, { group_by: 'day', format: 'html', from: 'soon' }), BadArguments);
});

t.test('html: a whole document, everything escaped', async (t) => {
  const r = await text({ group_by: 'day', format: 'html', title: 'Digest <script>alert(1)</script>' });
  t.equal(r.contentType, 'text/html; charset=utf-8');
  t.match(r.body, /^<!doctype html>/);
  t.match(r.body, /<\/html>\n$/);
  t.notMatch(r.body, /<script>/, 'the title is escaped');
  t.notMatch(r.body, /<b>everything/, 'note text is escaped');
  t.match(r.body, /&lt;b&gt;everything/, 'shown as text');
  t.match(r.body, /<h2>2026-01-01 <span class="meta">\(2 notes\)<\/span><\/h2>/);
  t.equal((r.body.match(/<section[ >]/g) ?? []).length, (r.body.match(/<\/section>/g) ?? []).length, 'sections are closed');
  // The notes' Markdown rendered: task items as check boxes with their state, lists, code.
  t.match(r.body, /<li class="task"><input type="checkbox" disabled> fix login bug<\/li>/);
  t.match(r.body, /<li class="task"><input type="checkbox" disabled checked> send invite<\/li>/);
  t.match(r.body, /<ol>\n<li class="task"><input type="checkbox" disabled> write retro notes<\/li>/);
  t.match(r.body, /<pre><code>- \[ \] not an item \(code\)\n<\/code><\/pre>/);
  t.notMatch(r.body, /\[ \] fix login/, 'no raw task markers outside code');
  // The summary as SVG, and a table of contents linking to each group.
  t.match(r.body, /<svg role="img" aria-label="Notes per day"/);
  t.match(r.body, /aria-label="4 open, 1 done"/);
  t.match(r.body, /<nav><h2>Contents<\/h2><ol><li><a href="#(g-[^"]+)">2025-12-29<\/a>/);
  const anchor = /<a href="#(g-[^"]+)">2026-01-01<\/a>/.exec(r.body)?.[1];
  t.ok(anchor && r.body.includes(`<section id="${anchor}">`), 'a contents link lands on its group');
});

t.test('pdf: a valid PDF document', async (t) => {
  const r = await notes.report(p, { group_by: 'tag', format: 'pdf', q: 'standup OR retro' });
  t.equal(r.contentType, 'application/pdf');
  t.match(r.filename, /\.pdf$/);
  const pdf = await readAll(r.stream);
  t.equal(pdf.subarray(0, 5).toString(), '%PDF-');
  t.match(pdf.subarray(-8).toString(), /%%EOF/);
  t.ok(pdf.length > 1000);
});

t.test('save_as_note: the Markdown is saved as an agent note tagged report', async (t) => {
  const r = await text({ group_by: 'week', format: 'markdown', title: 'Weekly', save_as_note: true });
  const id = await r.saved_note_id!;
  const saved = await notes.get(p, id);
  t.equal(saved.title, 'Weekly');
  t.equal(saved.source, 'agent');
  t.same(saved.tags, ['report']);
  t.equal(saved.body, r.body, 'the saved body is the report');

  const pdf = await notes.report(p, { group_by: 'day', format: 'pdf', title: 'PDF copy', save_as_note: true, tags: ['travel'] });
  await readAll(pdf.stream);
  const pdfNote = await notes.get(p, await pdf.saved_note_id!);
  t.match(pdfNote.body, /^# PDF copy\n/, 'a PDF report is saved as its Markdown');
  t.match(pdfNote.body, /### Trip/);

  const abandoned = await notes.report(p, { group_by: 'day', format: 'markdown', save_as_note: true });
  const it = abandoned.stream[Symbol.asyncIterator]();
  await it.next();
  await it.return?.();
  await t.rejects(abandoned.saved_note_id!, /not read to the end/, 'an abandoned stream saves nothing');
  const plain = await notes.report(p, { group_by: 'day', format: 'markdown' });
  t.notOk('saved_note_id' in plain);
  await readAll(plain.stream);
});

t.test('save_as_note: a report larger than a note can hold is refused, never saved cut short', async (t) => {
  // A report shows up to 20,000 characters of each note: 60 such notes make a report of more than 1 MiB.
  const big = await fx.newPrincipal('big-reporter');
  const items = Array.from({ length: 40 }, (_, i) => `- [ ] item ${i} ${'x'.repeat(480)}`).join('\n');
  for (let i = 0; i < 60; i++) await notes.create(big, buildNote({ title: `Big ${i}`, body: items, tags: ['big'] }));
  const before = await notes.list(big, { tags: ['report'] });
  const r = await notes.report(big, { group_by: 'day', format: 'markdown', save_as_note: true });
  await t.rejects(readAll(r.stream), BadArguments, 'the report stream stops with the reason');
  await t.rejects(r.saved_note_id!, /more than a note can hold/, 'and says why nothing was saved');
  t.same((await notes.list(big, { tags: ['report'] })).items, before.items, 'no report note was saved');
  // Without save_as_note the same report is whole.
  const whole = await notes.report(big, { group_by: 'day', format: 'markdown' });
  t.ok((await readAll(whole.stream)).length > 1024 * 1024, 'the report itself is over 1 MiB');
});

t.test('streaming: batches are fetched as the stream is read, not up front', async (t) => {
  const small = new NotesServiceImpl(fx.db, { reportBatchSize: 2 });
  const u = await fx.newPrincipal('streamer');
  const day = '2026-04-01';
  for (let i = 0; i < 7; i++) {
    const n = await small.create(u, buildNote({ title: `S${i}`, body: `item ${i}\n- [ ] todo ${i}` }));
    await setUpdated(n.id, `${day}T0${i}:00:00Z`);
  }
  const r = await small.report(u, { group_by: 'day', format: 'markdown' });
  const it = r.stream[Symbol.asyncIterator]();
  const chunks: string[] = [];
  const pull = async () => {
    const x = await it.next();
    if (!x.done) chunks.push(Buffer.from(x.value).toString('utf8'));
    return x.done;
  };
  await pull();
  t.match(chunks[0], /^# /, 'the first chunk (the heading) comes before any note is read');
  await pull();
  t.same(
    [...chunks[1]!.matchAll(/^### (.+)$/gm)].map((m) => m[1]),
    ['S0', 'S1'],
    'one chunk per batch of 2',
  );

  // Change the data behind the stream: a stream that had read everything up front would not see it.
  const late = await small.create(u, buildNote({ title: 'Late arrival' }));
  await setUpdated(late.id, `${day}T09:00:00Z`);
  const s6 = (await small.list(u, { limit: 100 })).items.find((n) => n.title === 'S6')!;
  await small.trash(u, s6.id);

  while (!(await pull()));
  const all = chunks.join('');
  t.same(
    [...all.matchAll(/^### (.+)$/gm)].map((m) => m[1]),
    ['S0', 'S1', 'S2', 'S3', 'S4', 'S5', 'Late arrival'],
    'later batches read the table as it is when they are fetched',
  );
  t.ok(chunks.length >= 5, `the report came in ${chunks.length} chunks`);
});
