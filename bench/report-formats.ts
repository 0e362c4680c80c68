// Report rendering per format: time to first byte, total time and size of a report over 100, 1,000
// and 3,000 notes, in Markdown, HTML and PDF, with the same run's baseline: reading the same notes'
// bodies with one plain query (what any report must at least do).
//
//   npx node bench/report-formats.ts            100, 1,000 and 3,000 notes (~1-2 min)
//   npx node bench/report-formats.ts --quick    100 and 300 notes
//   npm run bench -- --only=report-formats
//
// The notes service runs in this process on embedded PGlite (reports render on its worker threads,
// as in the server). The notes are Markdown as people write them: headings, task lists (open and
// done), emphasis, a code block every few notes, a table every few, and text in Latin with accents,
// Cyrillic, Greek, Chinese, Japanese, Korean, Arabic and Hebrew. Target (the issue's): a 3,000-note
// report starts arriving in under a second, in every format.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { openDatabase } from '../core/db/database.ts';
import { DATABASE_SCHEMA } from '../core/domains.ts';
import { IdentityService } from '../core/domain/identity/service.ts';
import { NotesServiceImpl } from '../core/domain/notes/service.ts';
import type { Principal } from '../core/domain/identity/types.ts';
import type { ReportFormat } from '../core/domain/notes/types.ts';
import { progress, round, sized } from './util.ts';

const LINES = [
  'We talked about the **roadmap** and the _launch_ plan for the café in Zürich.',
  'Мы обсудили план выпуска и сроки.',
  'Συζητήσαμε το σχέδιο κυκλοφορίας.',
  '会议在东京办公室举行，我们讨论了发布计划。',
  '会議は午後三時に終わりました。',
  '우리는 제품 로드맵을 논의했습니다.',
  'ناقشنا خطة الإطلاق والجدول الزمني.',
  'דיברנו על תוכנית ההשקה.',
];

function body(i: number): string {
  const parts = [`# Meeting ${i}`, '', LINES[i % LINES.length]!, LINES[(i + 3) % LINES.length]!, '', '## Action items', ''];
  parts.push(`- [ ] follow up on item ${i}`, `- [x] send the notes`, `- [ ] book a room for ${i % 7}`, '');
  if (i % 5 === 0) parts.push('```', `deploy --env=prod --build=${i}`, '```', '');
  if (i % 7 === 0) parts.push('| Who | What |', '| --- | --- |', '| Ann | slides |', '| Bo | budget |', '');
  parts.push(`> A quote to remember, number ${i}.`, '', `${'More words in a paragraph. '.repeat(8)}`);
  return parts.join('\n');
}

export interface FormatFigure {
  notes: number;
  format: ReportFormat;
  ttfbMs: number;
  totalMs: number;
  bytes: number;
}

export interface ReportFormatsResult {
  figures: FormatFigure[];
  /** The same notes' bodies read with one plain query, per size. */
  baselineMs: Record<number, number>;
  targetTtfbMs: number;
}

export async function runReportFormats(opts: { quick: boolean }): Promise<ReportFormatsResult> {
  const sizes = sized(opts.quick, [100, 1000, 3000], [100, 300], [20]);
  const dir = await mkdtemp(path.join(tmpdir(), 'folio-bench-reports-'));
  const log = pino({ level: 'silent' });
  const db = await openDatabase({ schema: DATABASE_SCHEMA, dataDir: dir, log, migrate: true });
  const notes = new NotesServiceImpl(db, { publicUrl: () => 'http://folio.example' });
  const identity = new IdentityService(db);
  const figures: FormatFigure[] = [];
  const baselineMs: Record<number, number> = {};
  try {
    for (const n of sizes) {
      const user = await identity.createUser({ email: `reports-${n}@example.com`, name: `r${n}` });
      const p: Principal = {
        user: { id: user.id, email: user.email, name: user.name ?? null, roles: user.roles },
        scopes: ['*'],
        tokenKind: 'api',
        tokenId: user.id,
        tokenExpiresAt: null,
      };
      progress(`report-formats: seeding ${n} notes`);
      for (let i = 0; i < n; i++) await notes.create(p, { title: `Meeting ${i}`, body: body(i), tags: [`team${i % 6}`, 'meeting'] });
      const t0 = performance.now();
      await db.orm.em.fork().execute(`select id, title, tags, body from notes where owner_id = ? order by updated_at, id`, [user.id]);
      baselineMs[n] = round(performance.now() - t0);
      for (const format of ['markdown', 'html', 'pdf'] as const) {
        const start = performance.now();
        const r = await notes.report(p, { group_by: 'day', format });
        let first = 0;
        let bytes = 0;
        for await (const chunk of r.stream) {
          if (!first) first = performance.now();
          bytes += chunk.byteLength;
        }
        const end = performance.now();
        figures.push({ notes: n, format, ttfbMs: round(first - start), totalMs: round(end - start), bytes });
        progress(
          `report-formats: ${n} notes ${format}: first byte ${round(first - start)} ms, total ${round(end - start)} ms, ${bytes} bytes`,
        );
      }
    }
  } finally {
    await db.close();
    await rm(dir, { recursive: true, force: true });
  }
  return { figures, baselineMs, targetTtfbMs: 1000 };
}

export function formatReportFormats(r: ReportFormatsResult): string {
  const rows = r.figures.map(
    (f) =>
      `  ${String(f.notes).padStart(5)} notes  ${f.format.padEnd(8)}  first byte ${String(f.ttfbMs).padStart(7)} ms  total ${String(f.totalMs).padStart(8)} ms (${round(f.totalMs / Math.max(1, r.baselineMs[f.notes] ?? 1))}x the plain read)  ${(f.bytes / 1024).toFixed(0).padStart(6)} KiB  ${f.ttfbMs < r.targetTtfbMs ? 'PASS' : 'FAIL'}`,
  );
  const base = Object.entries(r.baselineMs)
    .map(([n, ms]) => `${n} notes ${ms} ms`)
    .join(', ');
  return [`report formats (group by day; plain read of the same bodies: ${base}; target: first byte < ${r.targetTtfbMs} ms)`, ...rows].join(
    '\n',
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await runReportFormats({ quick: process.argv.includes('--quick') });
  console.log(formatReportFormats(r));
  process.exit(0);
}
