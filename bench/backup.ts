// How long a request waits while `npm run backup` runs against a serving Folio.
//
//   npx node bench/backup.ts [--notes=1000] [--big=0]   embedded PGlite
//   (--big=N: also N notes of 1 MB each; the stall grows with the bytes, not the note count)
//   DATABASE_URL=postgres://... npx node bench/backup.ts   also on a fresh PostgreSQL database
//
// Seeds 1,000 notes (or --notes; 1 KB bodies) and 5 files of 1 MB through the REST API, then measures a client
// that writes notes one after another: first alone (the baseline), then while a backup runs in a
// child process as an operator would start it. On PGlite the backup's snapshot is a transaction on
// the server's socket, which serves no other connection until it ends: the requests in flight wait
// for it. Reported: the baseline's and the during-backup latencies (p50, max), the backup's own
// database snapshot and total times, and the ratios to the baseline measured in the same run.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { ADMIN_TOKEN, freshDatabase, removeDir, ROOT, startBenchFolio, tempDir } from './lib.ts';

interface Latencies {
  n: number;
  p50: number;
  p99: number;
  max: number;
}

function stats(ms: number[]): Latencies {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
  return { n: s.length, p50: round(at(0.5)), p99: round(at(0.99)), max: round(s.at(-1) ?? 0) };
}
const round = (x: number) => Math.round(x * 10) / 10;

async function api(url: string, token: string, method: string, p: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${url}/api/v1${p}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
  return res.json();
}

export async function runBackupBench(opts: { databaseUrl?: string | undefined; notes?: number; big?: number } = {}) {
  const dataDir = await tempDir('backup');
  const db = opts.databaseUrl ? await freshDatabase(opts.databaseUrl) : undefined;
  const folio = await startBenchFolio({ plugins: [], dataDir, databaseUrl: db?.url, watch: false });
  try {
    const url = folio.url;
    const token = ADMIN_TOKEN;
    const body = 'x'.repeat(1000);
    for (let i = 0; i < (opts.notes ?? 1000); i++) await api(url, token, 'POST', '/notetaker/notes', { title: `seed ${i}`, body });
    for (let i = 0; i < (opts.big ?? 0); i++) {
      await api(url, token, 'POST', '/notetaker/notes', { title: `big ${i}`, body: randomBytes(750_000).toString('base64') });
    }
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${url}/api/v1/filedb/files?name=f${i}.bin`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
        body: randomBytes(1024 * 1024),
      });
      if (res.status !== 201) throw new Error(`upload: ${res.status}`);
    }
    let failed = 0;
    const write = async () => {
      const t0 = performance.now();
      await api(url, token, 'POST', '/notetaker/notes', { title: 'during', body }).catch(() => failed++);
      return performance.now() - t0;
    };
    const baseline: number[] = [];
    for (let i = 0; i < 300; i++) baseline.push(await write());

    const out = path.join(dataDir, 'bench-backup.zip');
    const env = {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? '',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      ...(db ? { DATABASE_URL: db.url } : {}),
    };
    const child = spawn(process.execPath, ['core/backup.ts', '--out', out], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    const done = new Promise<number | null>((resolve) => child.on('close', resolve));
    let running = true;
    void done.then(() => (running = false));
    const during: number[] = [];
    failed = 0;
    while (running) during.push(await write());
    if ((await done) !== 0) throw new Error(`backup failed: ${stdout}`);
    const m = /database snapshot (\d+) ms, total (\d+) ms/.exec(stdout);
    const b = stats(baseline);
    const d = stats(during);
    return {
      engine: folio.engine,
      baseline: b,
      during: d,
      failedDuring: failed,
      snapshotMs: Number(m?.[1]),
      backupMs: Number(m?.[2]),
      maxVsBaselineP50: round(d.max / b.p50),
      p50VsBaselineP50: round(d.p50 / b.p50),
    };
  } finally {
    await folio.close();
    await db?.drop();
    await removeDir(dataDir);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name: string, dflt: number) =>
    Number(process.argv.map((a) => new RegExp(`^--${name}=(\\d+)$`).exec(a)?.[1]).find((v) => v !== undefined) ?? dflt);
  const notes = arg('notes', 1000);
  const big = arg('big', 0);
  const results = [await runBackupBench({ notes, big })];
  if (process.env['DATABASE_URL']) results.push(await runBackupBench({ databaseUrl: process.env['DATABASE_URL'], notes, big }));
  for (const r of results) {
    console.log(
      `${r.engine}: baseline write p50 ${r.baseline.p50} ms (max ${r.baseline.max}); during the backup (${r.during.n} writes) p50 ${r.during.p50} ms, ` +
        `max ${r.during.max} ms = ${r.maxVsBaselineP50}x baseline p50, ${r.failedDuring} failed; backup: snapshot ${r.snapshotMs} ms, total ${r.backupMs} ms`,
    );
  }
  console.log(JSON.stringify(results));
}
