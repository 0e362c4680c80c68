// A PDF report people can read: notes in every script the report promises (Chinese, Japanese,
// Korean, Arabic, Hebrew, Cyrillic, Greek, Latin with accents) are read back from the PDF with
// pdftotext (poppler-utils) and must be there, in order, with real glyphs (no '?' and no middle-dot
// stand-ins), their Markdown rendered (no raw markers), right-to-left text in reading order, and
// the summary drawn. A picture of page 1 (pdftoppm) is kept in test/artifacts/ for a person to look at.
import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { fontSet } from '../../core/domain/notes/report-fonts.ts';
import { buildNote, openNotesFixture, readAll } from '../helpers/notes.ts';

const run = promisify(execFile);
const hasPoppler = await run('pdftotext', ['-v']).then(
  () => true,
  () => false,
);
if (!hasPoppler) {
  t.plan(0, 'pdftotext is not installed (Debian: apt-get install poppler-utils); .ci/run installs it');
  process.exit(0);
}
if (fontSet().missing.length || fontSet().standardLatin) {
  t.fail(`fonts are missing: ${fontSet().missing.join(', ')} (install fonts-noto-core and fonts-noto-cjk; .ci/run does)`);
}

const fx = await openNotesFixture(t);
const p = await fx.newPrincipal('scripts');
const ARTIFACTS = path.join(import.meta.dirname, '..', 'artifacts');

const NOTES: Array<{ title: string; body: string; expect: string[] }> = [
  {
    title: 'Tokyo meeting 東京',
    body: '# Decisions\n\n- [ ] ship beta 1\n- [x] fix login\n\n## Notes\n\nWe talked about the **roadmap** in the 東京 office. 会議は午後三時に終わりました。',
    expect: ['Decisions', 'ship beta 1', 'fix login', 'Notes', 'roadmap', '東京', '会議は午後三時に終わりました'],
  },
  { title: '北京 summary', body: '我们讨论了产品路线图和发布计划。', expect: ['我们讨论了产品路线图和发布计划'] },
  { title: '서울 notes', body: '우리는 *제품 로드맵* 을 논의했습니다.', expect: ['우리는', '제품 로드맵', '논의했습니다'] },
  {
    title: 'Москва',
    body: '> Мы обсудили план выпуска.\n\nКод: `deploy --now`, см. [документы](https://example.com/docs) и ~~старый план~~.',
    expect: ['Мы обсудили план выпуска', 'deploy --now', 'документы', 'старый план'],
  },
  { title: 'Αθήνα', body: '1. Συζητήσαμε το σχέδιο\n2. Ελληνικά γράμματα', expect: ['Συζητήσαμε το σχέδιο', 'Ελληνικά γράμματα'] },
  {
    title: 'Café in Zürich',
    body: '| Città | Straße |\n| --- | --- |\n| Señor Ångström | œuvre façade naïve |',
    expect: ['Città', 'Straße', 'Señor Ångström', 'œuvre façade naïve'],
  },
  { title: 'Hebrew', body: 'שלום עולם יפה', expect: ['שלום עולם יפה'] },
  { title: 'Arabic', body: 'مرحبا بالعالم الجميل', expect: [] },
];

const at = Date.parse('2026-03-02T09:00:00Z');
for (const [i, n] of NOTES.entries()) {
  const made = await fx.notes.create(p, buildNote({ title: n.title, body: n.body, tags: ['world', i % 2 ? 'odd' : 'even'] }));
  await fx.db.orm.em
    .fork()
    .execute(`update notes set updated_at = ?::timestamptz where id = ?`, [new Date(at + i * 3_600_000).toISOString(), made.id]);
}

const r = await fx.notes.report(p, { group_by: 'day', format: 'pdf', title: 'Every script' });
const pdf = await readAll(r.stream);
await mkdir(ARTIFACTS, { recursive: true });
const file = path.join(ARTIFACTS, 'report-every-script.pdf');
await writeFile(file, pdf);
const { stdout: text } = await run('pdftotext', ['-enc', 'UTF-8', file, '-'], { maxBuffer: 16 * 1024 * 1024 });
await run('pdftoppm', ['-png', '-r', '60', '-f', '1', '-l', '1', '-singlefile', file, path.join(ARTIFACTS, 'report-every-script-page1')]);

t.test('every script is there, in order, with real glyphs', async (t) => {
  let from = 0;
  for (const n of NOTES) {
    const title = text.indexOf(n.title.split(' ')[0]!, from);
    t.ok(title >= from, `the note ${n.title} follows the one before`);
    for (const s of n.expect) t.ok(text.includes(s), `${n.title}: "${s}" is in the PDF`);
    from = Math.max(from, title);
  }
  t.notMatch(text, /\?/, 'no ? substitutions');
  t.notMatch(text.replace(/ · /g, ' '), /·/, 'no middle-dot stand-ins: every script has its font');
});

t.test('Markdown is rendered, not printed', async (t) => {
  t.notMatch(text, /\*\*|- \[ \]|- \[x\]|^#+ /m, 'no raw Markdown markers');
  t.match(text, /☐\s*ship beta 1/, 'an open task is an empty box');
  t.match(text, /☑\s*fix login/, 'a done task is a ticked box');
  t.ok(pdf.includes('https://example.com/docs'), 'a link is a link');
});

t.test('right-to-left text reads right to left', async (t) => {
  // pdftotext gives a line's text in logical order when its words were laid out right to left.
  t.match(text, /שלום עולם יפה/);
  const arabic = /[\u0600-\u06ff][\u0600-\u06ff\ufe70-\ufeff\s]+/.exec(text)?.[0] ?? '';
  t.ok(arabic.length > 10, `the Arabic line is there (${arabic})`);
});

t.test('the summary, page numbers and the outline', async (t) => {
  t.match(text, /Notes per day/);
  t.match(text, /Most used tags/);
  t.match(text, /#world/);
  t.match(text, /3 open · 1 done|1 open · 1 done/);
  t.match(text, /page 1/);
  t.ok(pdf.includes('/Outlines'), 'the groups are in the PDF outline');
  t.ok(pdf.length < 1_500_000, `subsetted fonts keep it small (${pdf.length} bytes)`);
});
