// Text extraction from real documents: a two-page PDF made here with pdfkit, a small DOCX fixture
// (test/fixtures/files/notes.docx), and text types as they are.
import t from 'tap';
import { pdf } from '../helpers/pdf.ts';
import { docxBomb, DOCX_TYPE } from '../helpers/docx-bomb.ts';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { canExtract, extractText, UnreadableDocument } from '../../core/domain/files/extract.ts';

const FIXTURES = path.join(import.meta.dirname, '../fixtures/files');

t.test('PDF: the text of each page', async (t) => {
  const bytes = await pdf(['First page: the budget.', 'Second page, about coffee.']);
  const out = await extractText(bytes, 'application/pdf');
  t.equal(out?.pages?.length, 2);
  t.match(out?.pages?.[0], /First page: the budget\./);
  t.match(out?.pages?.[1], /Second page, about coffee\./);
  t.match(out?.text, /budget\.[\s\S]*coffee/);
  t.equal(out?.truncated, false);
  t.same(bytes.subarray(0, 5).toString(), '%PDF-', 'the bytes given are left as they were');

  const capped = await extractText(bytes, 'application/pdf', { maxChars: 10 });
  t.equal(capped?.text.length, 10);
  t.equal(capped?.truncated, true);
});

t.test('DOCX: the raw text', async (t) => {
  const bytes = await readFile(path.join(FIXTURES, 'notes.docx'));
  const out = await extractText(bytes, 'application/vnd.openxmlformats-officedocument.wordprocessingml.document');
  t.equal(out?.text, 'Quarterly notes\n\nCafé budget: 42 €');
  t.equal(out?.pages, undefined);
  t.equal(out?.truncated, false);
});

t.test('text, Markdown, CSV and JSON as they are, decoded as UTF-8 and capped', async (t) => {
  for (const [type, text] of [
    ['text/plain; charset=utf-8', 'plain ünïcode ✓'],
    ['text/markdown', '# Title\n\n- item'],
    ['text/csv', 'a,b\n1,2\n'],
    ['application/json', '{"k":"välue"}'],
    ['application/ld+json', '{"@id":"x"}'],
  ] as const) {
    t.same(await extractText(Buffer.from(text), type), { text, truncated: false }, type);
  }
  const long = await extractText(Buffer.from('x'.repeat(100)), 'text/plain', { maxChars: 40 });
  t.same(long, { text: 'x'.repeat(40), truncated: true });
  // Invalid UTF-8 is replaced, not refused.
  t.equal((await extractText(Buffer.from([0x61, 0xff, 0x62]), 'text/plain'))?.text, 'a\ufffdb');
});

t.test('other types have nothing to extract', async (t) => {
  for (const type of ['image/png', 'application/octet-stream', 'application/zip', 'audio/mpeg']) {
    t.equal(await extractText(Buffer.from('whatever'), type), null, type);
    t.equal(canExtract(type), false);
  }
  t.equal(canExtract('Application/PDF'), true);
  t.equal(canExtract('text/csv'), true);
});

t.test('a file that is not what its type says is unreadable, not a crash', async (t) => {
  await t.rejects(extractText(Buffer.from('not a pdf at all'), 'application/pdf'), UnreadableDocument);
  await t.rejects(
    extractText(Buffer.from('not a zip'), 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'),
    UnreadableDocument,
  );
});

t.test('a DOCX zip bomb is refused before it is inflated, or as soon as it inflates past the cap', async (t) => {
  const bomb = docxBomb({ xmlMb: 100 });
  t.ok(bomb.length < 512 * 1024, `a small file (${bomb.length} bytes)`);
  const before = process.memoryUsage().rss;
  await t.rejects(extractText(bomb, DOCX_TYPE), new UnreadableDocument('a DOCX too large to read: it declares more than 64 MB of content'));
  await t.rejects(
    extractText(bomb, DOCX_TYPE, { maxDecompressedBytes: 1 << 30 }),
    { name: 'UnreadableDocument', message: /^a DOCX too large to read: word\/document.xml is compressed \d+ to 1 \(a zip bomb\?\)$/ },
    'under the size cap, the ratio still gives it away',
  );
  await t.rejects(
    extractText(docxBomb({ xmlMb: 100, lie: true }), DOCX_TYPE),
    new UnreadableDocument('a DOCX too large to read: it expands to more than 64 MB'),
    'declared sizes that lie: inflating stops at the cap',
  );
  t.ok(process.memoryUsage().rss - before < 150 * 1024 * 1024, 'the 100 MB were never held');
});

t.test('a PDF is read to maxPages at most', async (t) => {
  const bytes = await pdf(['one', 'two', 'three']);
  const out = await extractText(bytes, 'application/pdf', { maxPages: 2 });
  t.equal(out?.pages?.length, 2);
  t.match(out?.pages?.[1], /two/);
  t.equal(out?.truncated, true);
});
