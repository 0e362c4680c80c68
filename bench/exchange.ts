// Export and import at scale: 10,000 notes with 500 attachments (1,000 and 50 with --quick), in a
// Folio in this process (embedded PGlite; PostgreSQL when DATABASE_URL is set).
//
//   npx node bench/exchange.ts [--quick]      or   npm run bench -- --only=exchange [--quick]
//
// 1. seed: a zip made here (Markdown notes with front matter and links, attachments named in
//    front matter) is imported into user A: the import of a foreign archive.
// 2. export A, import that export into user B, export B: the round trip. The two exports are
//    compared entry by entry: identical but for ids (the figure is the count of entries that differ).
// 3. import the export into B again: everything skipped (the idempotent path).
// 4. with --revisions, only: one 0.9 MB note with 150 revisions exported with its revisions.
// Each phase: wall time and the process's peak RSS (sampled every 50 ms) over its RSS before.
// Baselines, in the same run: writing the same entries with yazl alone and reading them with
// yauzl alone, so the figures are also ratios to what zip I/O costs on this machine.
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { createUserToken, startBenchFolio } from './lib.ts';
import { mb, progress, removeDir, round, sized, tempDir } from './util.ts';

export interface PhaseFigure {
  seconds: number;
  rssPeakGrowthMB: number;
  /** seconds / the baseline's seconds (zip write for exports, zip read for imports). */
  vsBaseline: number;
}

export interface ExchangeBenchResult {
  engine: string;
  notes: number;
  attachments: number;
  archiveMB: number;
  baseline: { zipWriteSeconds: number; zipReadSeconds: number };
  seedImport: PhaseFigure;
  export: PhaseFigure;
  import: PhaseFigure;
  reimport: PhaseFigure;
  /** Entries of B's export that differ from A's once ids are masked (0: identical but for ids). */
  roundTripDiffs: number;
  reimportCreated: number;
}

function note(i: number, n: number): { path: string; text: string } {
  const words = Array.from({ length: 120 }, (_, k) => `word${(i * 7 + k) % 997}`).join(' ');
  const other = (i * 31 + 1) % n;
  return {
    path: `notes/Note ${i}.md`,
    text: `---\ntitle: Note ${i}\ntags: [bench, t${i % 20}]\ncreated: 2025-01-01T00:00:${String(i % 60).padStart(2, '0')}.000Z\nupdated: 2025-06-01T00:00:00.000Z\n---\n# Note ${i}\n\n${words}\n\nSee [note ${other}](Note%20${other}.md).\n`,
  };
}

async function seedZip(file: string, notes: number, attachments: number): Promise<void> {
  const z = new yazl.ZipFile();
  const done = pipeline(z.outputStream as unknown as Readable, createWriteStream(file));
  for (let i = 0; i < notes; i++) {
    const n = note(i, notes);
    const att = i < attachments ? `attachments:\n  - Note ${i}/data-${i}.bin\n` : '';
    z.addBuffer(Buffer.from(n.text.replace('---\n# ', `${att}---\n# `)), n.path);
    if (i < attachments) z.addBuffer(randomBytes(8 * 1024), `notes/Note ${i}/data-${i}.bin`, { compress: false });
  }
  z.end();
  await done;
}

async function readAll(file: string): Promise<Map<string, Buffer>> {
  const z = await yauzl.openPromise(file, { lazyEntries: true });
  const out = new Map<string, Buffer>();
  await new Promise<void>((resolve, reject) => {
    z.on('entry', (e: yauzl.Entry) => {
      z.openReadStreamPromise(e)
        .then(async (s) => {
          const chunks: Buffer[] = [];
          for await (const c of s) chunks.push(c as Buffer);
          out.set(e.fileName, Buffer.concat(chunks));
          z.readEntry();
        })
        .catch(reject);
    });
    z.on('end', resolve).on('error', reject);
    z.readEntry();
  });
  z.close();
  return out;
}

/** Runs `fn`, sampling this process's RSS: wall seconds and peak growth. */
async function measure<T>(fn: () => Promise<T>): Promise<{ value: T; seconds: number; rssPeakGrowthMB: number }> {
  global.gc?.();
  const before = process.memoryUsage.rss();
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 50);
  const t0 = performance.now();
  try {
    const value = await fn();
    return { value, seconds: round((performance.now() - t0) / 1000, 2), rssPeakGrowthMB: mb(peak - before) };
  } finally {
    clearInterval(timer);
  }
}

export async function runExchangeBench(opts: { quick: boolean }): Promise<ExchangeBenchResult> {
  const notes = sized(opts.quick, 10_000, 1000, 100);
  const attachments = sized(opts.quick, 500, 50, 5);
  const dir = await tempDir('exchange');
  const databaseUrl = process.env['DATABASE_URL'];
  const folio = await startBenchFolio({
    plugins: [],
    watch: false,
    databaseUrl: databaseUrl ? (await import('./lib.ts').then((l) => l.freshDatabase(databaseUrl))).url : undefined,
    overrides: { jobs: { pollSeconds: 0.5 } },
  });
  try {
    const seed = path.join(dir, 'seed.zip');
    progress(`exchange: writing a seed zip of ${notes} notes and ${attachments} attachments`);
    await seedZip(seed, notes, attachments);
    // Baselines: the same entries written by yazl alone and read by yauzl alone.
    const entries = await readAll(seed);
    const zipRead = await measure(() => readAll(seed));
    const zipWrite = await measure(async () => {
      const z = new yazl.ZipFile();
      const done = pipeline(z.outputStream as unknown as Readable, createWriteStream(path.join(dir, 'baseline.zip')));
      for (const [name, bytes] of entries) z.addBuffer(bytes, name);
      z.end();
      await done;
    });
    const a = await createUserToken(folio.url);
    const b = await createUserToken(folio.url);
    const job = async (token: string, url: string) => {
      for (;;) {
        const r = await fetch(`${folio.url}${url}`, { headers: { authorization: `Bearer ${token}` } });
        const j = (await r.json()) as { status: string; error: string | null; counts: Record<string, number>; id: string };
        if (j.status === 'succeeded') return j;
        if (j.status === 'failed') throw new Error(`${url}: ${j.error}`);
        await new Promise((res) => setTimeout(res, 200));
      }
    };
    const importZip = async (token: string, file: string) => {
      const res = await fetch(`${folio.url}/api/v1/imports`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/zip' },
        body: await readFile(file),
      });
      if (res.status !== 202) throw new Error(`import: ${res.status} ${await res.text()}`);
      return job(token, `/api/v1/imports/${((await res.json()) as { id: string }).id}`);
    };
    const exportZip = async (token: string, file: string) => {
      const res = await fetch(`${folio.url}/api/v1/exports`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: '{}',
      });
      const j = await job(token, `/api/v1/exports/${((await res.json()) as { id: string }).id}`);
      const zip = await fetch(`${folio.url}/api/v1/exports/${j.id}/archive`, { headers: { authorization: `Bearer ${token}` } });
      await writeFile(file, Buffer.from(await zip.arrayBuffer()));
    };
    progress('exchange: seed import');
    const seedImport = await measure(() => importZip(a.token, seed));
    if (seedImport.value.counts['failed']) throw new Error(`seed import: ${seedImport.value.counts['failed']} failed`);
    const ea = path.join(dir, 'a.zip');
    const eb = path.join(dir, 'b.zip');
    progress('exchange: export A');
    const exp = await measure(() => exportZip(a.token, ea));
    progress('exchange: import into B');
    const imp = await measure(() => importZip(b.token, ea));
    await exportZip(b.token, eb);
    progress('exchange: import into B again');
    const again = await measure(() => importZip(b.token, ea));
    const [za, zb] = [await readAll(ea), await readAll(eb)];
    const mask = (s: string) => s.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'ID');
    let diffs = Math.abs(za.size - zb.size);
    for (const [name, bytes] of za) {
      if (name === 'manifest.json') continue;
      const other = zb.get(name);
      if (!other || mask(other.toString('latin1')) !== mask(bytes.toString('latin1'))) diffs++;
    }
    const fig = (m: { seconds: number; rssPeakGrowthMB: number }, base: number): PhaseFigure => ({
      seconds: m.seconds,
      rssPeakGrowthMB: m.rssPeakGrowthMB,
      vsBaseline: round(m.seconds / Math.max(base, 0.001), 1),
    });
    return {
      engine: folio.engine,
      notes,
      attachments,
      archiveMB: mb((await stat(ea)).size),
      baseline: { zipWriteSeconds: zipWrite.seconds, zipReadSeconds: zipRead.seconds },
      seedImport: fig(seedImport, zipRead.seconds),
      export: fig(exp, zipWrite.seconds),
      import: fig(imp, zipRead.seconds),
      reimport: fig(again, zipRead.seconds),
      roundTripDiffs: diffs,
      reimportCreated: again.value.counts['imported'] ?? -1,
    };
  } finally {
    await folio.close();
    await removeDir(dir);
  }
}

export function formatExchange(r: ExchangeBenchResult): string {
  const line = (name: string, f: PhaseFigure, base: string) =>
    `  ${name.padEnd(12)} ${String(f.seconds).padStart(7)} s  (${f.vsBaseline}x ${base})  RSS peak +${f.rssPeakGrowthMB} MB`;
  return [
    `exchange (${r.engine}): ${r.notes} notes, ${r.attachments} attachments, export ${r.archiveMB} MB`,
    `  baseline     zip write ${r.baseline.zipWriteSeconds} s, zip read ${r.baseline.zipReadSeconds} s (yazl/yauzl alone, same entries)`,
    line('seed import', r.seedImport, 'zip read'),
    line('export', r.export, 'zip write'),
    line('import', r.import, 'zip read'),
    line('re-import', r.reimport, 'zip read'),
    `  round trip: ${r.roundTripDiffs} entries differ but for ids; re-import created ${r.reimportCreated}`,
  ].join('\n');
}

export function exchangeSummaryRows(r: ExchangeBenchResult): string[][] {
  return [
    [
      'exchange',
      `export ${r.notes} notes s`,
      String(r.export.seconds),
      `RSS +${r.export.rssPeakGrowthMB} MB, ${r.export.vsBaseline}x zip write`,
      '',
    ],
    [
      'exchange',
      `import ${r.notes} notes s`,
      String(r.import.seconds),
      `RSS +${r.import.rssPeakGrowthMB} MB, ${r.import.vsBaseline}x zip read`,
      '',
    ],
    [
      'exchange',
      'round trip diffs / re-import new',
      `${r.roundTripDiffs}/${r.reimportCreated}`,
      `re-import ${r.reimport.seconds} s`,
      r.roundTripDiffs === 0 && r.reimportCreated === 0 ? 'PASS (0/0)' : 'FAIL',
    ],
  ];
}

/**
 * `--revisions`: one note of 0.9 MB with 150 revisions, exported with --revisions: the export's
 * RSS peak growth against the size of one revision (each is read, zipped and let go in turn).
 */
export async function runRevisionsExportBench(): Promise<{
  engine: string;
  revisions: number;
  noteMB: number;
  seconds: number;
  rssPeakGrowthMB: number;
}> {
  const databaseUrl = process.env['DATABASE_URL'];
  const folio = await startBenchFolio({
    plugins: [],
    watch: false,
    databaseUrl: databaseUrl ? (await import('./lib.ts').then((l) => l.freshDatabase(databaseUrl))).url : undefined,
    overrides: { jobs: { pollSeconds: 0.5 } },
  });
  try {
    const u = await createUserToken(folio.url);
    const call = async (method: string, url: string, body: unknown, headers: Record<string, string> = {}) => {
      const r = await fetch(`${folio.url}${url}`, {
        method,
        headers: { authorization: `Bearer ${u.token}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      if (r.status >= 300) throw new Error(`${method} ${url}: ${r.status} ${await r.text()}`);
      return (await r.json()) as { id: string; status: string; error: string | null };
    };
    const size = 900_000;
    const text = (i: number) => `revision ${i}\n` + 'x'.repeat(size);
    const { id } = await call('POST', '/api/v1/notetaker/notes', { title: 'Big', body: text(1) });
    const revisions = 150;
    for (let v = 1; v < revisions; v++) {
      if (v % 25 === 0) progress(`exchange: revision ${v} of ${revisions}`);
      await call('PATCH', `/api/v1/notetaker/notes/${id}`, { expected_version: v, body: text(v + 1) }, { 'if-match': `"${v}"` });
    }
    const m = await measure(async () => {
      const j = await call('POST', '/api/v1/exports', { revisions: true, files: false });
      for (;;) {
        const r = await fetch(`${folio.url}/api/v1/exports/${j.id}`, { headers: { authorization: `Bearer ${u.token}` } });
        const s = (await r.json()) as { status: string; error: string | null };
        if (s.status === 'succeeded') return;
        if (s.status === 'failed') throw new Error(`export: ${s.error}`);
        await new Promise((res) => setTimeout(res, 200));
      }
    });
    return { engine: folio.engine, revisions, noteMB: mb(size), seconds: m.seconds, rssPeakGrowthMB: m.rssPeakGrowthMB };
  } finally {
    await folio.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv.includes('--revisions')) {
    const r = await runRevisionsExportBench();
    console.log(
      `exchange (${r.engine}): export of one ${r.noteMB} MB note with ${r.revisions} revisions: ${r.seconds} s, RSS peak +${r.rssPeakGrowthMB} MB`,
    );
    console.log(JSON.stringify(r));
  } else {
    const r = await runExchangeBench({ quick: process.argv.includes('--quick') });
    console.log(formatExchange(r));
    console.log(JSON.stringify(r));
  }
}
