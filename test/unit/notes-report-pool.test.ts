// Reports are rendered on worker threads, never on the event loop: the bytes are exactly those the
// renderers make in this thread, nothing is rendered here, and each user may have only so many
// reports under way (TooManyReports, 429) while other users carry on.
import t from 'tap';
import { TooManyReports } from '../../core/contract/errors.ts';
import { ReportRenderPool, type RenderEvent } from '../../core/domain/notes/report-pool.ts';
import { HtmlRenderer, MarkdownRenderer, type Renderer } from '../../core/domain/notes/report-render.ts';
import { rendererFor } from '../../core/domain/notes/report-renderers.ts';
import { PdfRenderer } from '../../core/domain/notes/report-pdf.ts';
import { NotesServiceImpl } from '../../core/domain/notes/service.ts';
import { buildNote, openNotesFixture, readAll } from '../helpers/notes.ts';

const creationDate = '2026-11-20T10:00:00.000Z';
const events: RenderEvent[][] = [
  [
    {
      kind: 'start',
      meta: {
        title: 'Weekly <b>',
        selection: 'Notes (all), grouped by tag',
        generatedAt: creationDate,
        total: 40,
        openItems: 20,
        summary: { unit: 'day', periods: [{ label: '2026-11-10', count: 40 }], tags: [{ tag: 'x', count: 40 }], open: 20, done: 3 },
      },
    },
  ],
  ...[0, 1].map((g) => [
    { kind: 'group' as const, head: { label: `#tag${g}`, count: 20 } },
    ...Array.from({ length: 20 }, (_, i) => ({
      kind: 'note' as const,
      note: {
        id: `00000000-0000-4000-8000-0000000000${g}${i % 10}`,
        title: `Note ${g}.${i} — café ő 会议`,
        tags: [`tag${g}`, 'x'],
        updated_at: `2026-11-${String(10 + i).padStart(2, '0')}T08:30:00.000Z`,
        body: `# Body ${i}\n\nWith *markdown* <i>and html</i> ${'word '.repeat(30)}\n\n${i % 2 ? `- [ ] do thing ${i}\n- [ ] and another\n` : '- [x] done\n'}`,
        truncated: false,
      },
    })),
  ]),
  [{ kind: 'end' }],
];

/** The same events through a renderer in this thread, step by step as the pool gets them. */
async function here(r: Renderer): Promise<Buffer> {
  const out: Uint8Array[] = [];
  for (const step of events) {
    for (const e of step) {
      if (e.kind === 'start') r.start(e.meta);
      else if (e.kind === 'group') r.group(e.head);
      else if (e.kind === 'note') r.note(e.note);
      else r.end();
    }
    out.push(...(await r.take()));
  }
  return Buffer.concat(out);
}

t.test('the pool renders byte for byte what the renderers make here, in every format, with the Markdown copy', async (t) => {
  const pool = new ReportRenderPool({ threads: 2 });
  t.teardown(() => pool.close());
  for (const format of ['markdown', 'html', 'pdf'] as const) {
    const session = pool.open(format, { markdownCopy: true, creationDate });
    const bytes: Uint8Array[] = [];
    let md = '';
    for (const step of events) {
      const out = await session.step(step);
      if (out.bytes) bytes.push(out.bytes);
      md += out.markdown;
    }
    session.close();
    const expected = await here(rendererFor(format, { creationDate: new Date(creationDate) }));
    t.ok(Buffer.concat(bytes).equals(expected), `${format}: identical bytes (${expected.length})`);
    t.equal(md, (await here(new MarkdownRenderer())).toString('utf8'), `${format}: identical Markdown copy`);
  }
});

const fx = await openNotesFixture(t);

t.test('a report renders nothing on this thread', async (t) => {
  const p = await fx.newPrincipal('offloop');
  for (let i = 0; i < 30; i++) await fx.notes.create(p, buildNote({ title: `N${i}`, body: `text ${i}\n- [ ] task ${i}`, tags: ['a'] }));
  // Every renderer method, counted in this thread: the worker has its own copy of the module.
  let calls = 0;
  const restore: Array<() => void> = [];
  for (const proto of [MarkdownRenderer.prototype, HtmlRenderer.prototype, PdfRenderer.prototype] as unknown as Array<
    Record<string, (...a: unknown[]) => unknown>
  >)
    for (const name of ['start', 'group', 'note', 'end', 'take']) {
      const orig = proto[name]!;
      proto[name] = function (this: unknown, ...a: unknown[]) {
        calls++;
        return orig.apply(this, a);
      };
      restore.push(() => (proto[name] = orig));
    }
  t.teardown(() => restore.forEach((r) => r()));
  for (const format of ['pdf', 'html', 'markdown'] as const) {
    const r = await fx.notes.report(p, { group_by: 'tag', format, save_as_note: true });
    const body = await readAll(r.stream);
    t.ok(body.length > 1000, `${format}: a whole report (${body.length} bytes)`);
    const saved = await fx.notes.get(p, await r.saved_note_id!);
    t.match(saved.body, /### N29/, `${format}: saved as a note too`);
  }
  t.equal(calls, 0, 'no renderer ran on the event loop thread');
});

t.test('each user may have so many reports under way; one more is TooManyReports, others carry on', async (t) => {
  const notes = new NotesServiceImpl(fx.db, { reportsPerUser: 2, reportBatchSize: 1 });
  const ada = await fx.newPrincipal('ada');
  const bob = await fx.newPrincipal('bob');
  for (const who of [ada, bob]) for (let i = 0; i < 3; i++) await notes.create(who, buildNote({ title: `${who.user.name} ${i}` }));
  const start = async (who: typeof ada) => {
    const r = await notes.report(who, { group_by: 'day', format: 'markdown' });
    const it = r.stream[Symbol.asyncIterator]();
    const first = await it.next();
    return { it, first };
  };
  const a1 = await start(ada);
  const a2 = await start(ada);
  t.notOk(a1.first.done);
  t.notOk(a2.first.done, 'two reports under way');
  const refused = await start(ada).then(
    () => undefined,
    (err: unknown) => err,
  );
  t.ok(refused instanceof TooManyReports, 'the third is refused');
  t.equal((refused as TooManyReports).status, 429);
  t.same((refused as TooManyReports).headers, { 'Retry-After': '5' });
  t.match((refused as Error).message, /already have 2 reports being generated/);

  const b = await notes.report(bob, { group_by: 'day', format: 'markdown' });
  t.match((await readAll(b.stream)).toString(), /3 notes/, "another user's report is whole meantime");

  // An abandoned report gives its slot back, and so does a finished one.
  await a1.it.return?.(undefined);
  const a3 = await start(ada);
  t.notOk(a3.first.done, 'a new report once one was abandoned');
  for (let n = await a2.it.next(); !n.done; n = await a2.it.next());
  const a4 = await start(ada);
  t.notOk(a4.first.done, 'and once one has finished');
  await a3.it.return?.(undefined);
  await a4.it.return?.(undefined);
  // A report asked for but never read holds nothing.
  await notes.report(ada, { group_by: 'day', format: 'markdown' });
  await notes.report(ada, { group_by: 'day', format: 'markdown' });
  const a5 = await start(ada);
  t.notOk(a5.first.done, 'reports never read take no slot');
  await a5.it.return?.(undefined);
});
