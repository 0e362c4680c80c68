// Transcription: the offline engine's real-time factor on a 60 s clip, and the queue's overhead.
//
//   npx node bench/transcribe.ts             60 s clip; 40 jobs per engine (~2 min)
//   npx node bench/transcribe.ts --quick     20 s clip; 10 jobs
//   DATABASE_URL=postgres://... npx node bench/transcribe.ts   the queue on PostgreSQL too
//
// 1. Real-time factor: speech made with flite (-voice slt, the test's voice), 60 s of it, through
//    the local engine (ffmpeg to 16 kHz mono, then pocketsphinx) in this process: engine seconds /
//    audio seconds (the audio's own length is the baseline: under 1 is faster than real time).
// 2. Queue overhead: a Folio server (embedded PGlite; and PostgreSQL when DATABASE_URL is set)
//    with the openai engine pointed at a stub that answers at once, so a job is all queue and
//    bookkeeping: N jobs created over REST at once, then the time until all have succeeded and
//    written their notes -> jobs per second and seconds per job (jobs.pollSeconds is the floor of
//    a lone job's latency: workers poll).
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { LocalEngine } from '../core/domain/transcribe/engines.ts';
import { ADMIN_TOKEN, callFn, freshDatabase, startBenchFolio } from './lib.ts';
import { progress, round, sized } from './util.ts';

const run = promisify(execFile);
const TEXT =
  'The meeting starts at nine. We will ship the beta next week. Please send the budget to the team. ' +
  'Our customers asked for a faster search and better reports. The design review is on Thursday afternoon. ';

export interface TranscribeBenchResult {
  rtf: { audioSeconds: number; engineSeconds: number; rtf: number } | { skipped: string };
  queue: Array<{ engine: string; jobs: number; seconds: number; jobsPerSecond: number; secondsPerJob: number }>;
}

async function makeClip(dir: string, seconds: number): Promise<string> {
  const one = path.join(dir, 'one.wav');
  await run('flite', ['-voice', 'slt', '-t', TEXT, '-o', one]);
  const clip = path.join(dir, 'clip.wav');
  await run('ffmpeg', ['-v', 'error', '-stream_loop', '-1', '-i', one, '-t', String(seconds), '-y', clip]);
  return clip;
}

async function queueOverhead(label: string, databaseUrl: string | undefined, jobs: number, audio: Buffer) {
  const stub = http.createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ text: 'ok', duration: 1, segments: [{ start: 0, end: 1, text: 'ok' }], words: [] })),
    );
  });
  await new Promise<void>((r) => stub.listen(0, '127.0.0.1', r));
  const stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
  const folio = await startBenchFolio({
    plugins: [],
    watch: false,
    databaseUrl,
    overrides: { transcribe: { engine: 'openai', openai: { url: stubUrl, key: null, model: 'stub' } }, jobs: { pollSeconds: 0.5 } },
  });
  try {
    const user = JSON.parse(
      (await callFn(folio.url, ADMIN_TOKEN, 'admin', 'create_user', { email: `bench-${label}@example.com` })).text,
    ) as {
      token: string;
    };
    const auth = { authorization: `Bearer ${user.token}` };
    const up = await fetch(`${folio.url}/api/v1/filedb/files?name=clip.wav`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'audio/wav' },
      body: audio,
    });
    const fileId = ((await up.json()) as { id: string }).id;
    const t0 = performance.now();
    const ids = await Promise.all(
      Array.from({ length: jobs }, async () => {
        const r = await fetch(`${folio.url}/api/v1/transcribe/jobs`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ file_id: fileId }),
        });
        if (r.status !== 202) throw new Error(`create answered ${r.status}: ${await r.text()}`);
        return ((await r.json()) as { id: string }).id;
      }),
    );
    for (;;) {
      const r = await fetch(`${folio.url}/api/v1/transcribe/jobs?status=succeeded&limit=100`, { headers: auth });
      const done = ((await r.json()) as { items: unknown[] }).items.length;
      if (done >= ids.length) break;
      const failed = await fetch(`${folio.url}/api/v1/transcribe/jobs?status=failed&limit=1`, { headers: auth });
      if (((await failed.json()) as { items: Array<{ error: string }> }).items.length) throw new Error('a job failed');
      await new Promise((res) => setTimeout(res, 100));
    }
    const seconds = (performance.now() - t0) / 1000;
    return {
      engine: label,
      jobs,
      seconds: round(seconds, 2),
      jobsPerSecond: round(jobs / seconds, 2),
      secondsPerJob: round(seconds / jobs, 3),
    };
  } finally {
    await folio.close();
    await new Promise<void>((r) => stub.close(() => r()));
  }
}

export async function runTranscribeBench(opts: { quick: boolean }): Promise<TranscribeBenchResult> {
  const dir = await mkdtemp(path.join(tmpdir(), 'folio-bench-audio-'));
  try {
    const seconds = sized(opts.quick, 60, 20, 5);
    progress(`transcribe: making a ${seconds} s clip with flite`);
    const clip = await makeClip(dir, seconds);
    const engine = new LocalEngine({ ffmpeg: 'ffmpeg', ffprobe: 'ffprobe', pocketsphinx: 'pocketsphinx_continuous', model: null });
    const available = await engine.available();
    let rtf: TranscribeBenchResult['rtf'];
    if (!available.ok) rtf = { skipped: available.reason ?? 'unavailable' };
    else {
      progress('transcribe: the local engine on it');
      const t0 = performance.now();
      const r = await engine.transcribe({
        file: clip,
        name: 'clip.wav',
        contentType: 'audio/wav',
        signal: new AbortController().signal,
        progress: () => {},
      });
      const engineSeconds = (performance.now() - t0) / 1000;
      rtf = { audioSeconds: round(r.duration, 1), engineSeconds: round(engineSeconds, 2), rtf: round(engineSeconds / r.duration, 3) };
    }
    const audio = await readFile(clip);
    const jobs = sized(opts.quick, 40, 10, 3);
    const queue = [];
    progress(`transcribe: ${jobs} jobs through the queue on PGlite`);
    queue.push(await queueOverhead('pglite', undefined, jobs, audio));
    const serverUrl = process.env['DATABASE_URL'];
    if (serverUrl) {
      const db = await freshDatabase(serverUrl);
      try {
        progress(`transcribe: ${jobs} jobs through the queue on PostgreSQL`);
        queue.push(await queueOverhead('postgresql', db.url, jobs, audio));
      } finally {
        await db.drop();
      }
    }
    return { rtf, queue };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function formatTranscribeBench(r: TranscribeBenchResult): string {
  const lines = [
    'rtf' in r.rtf
      ? `transcribe: local engine on a ${r.rtf.audioSeconds} s clip: ${r.rtf.engineSeconds} s, real-time factor ${r.rtf.rtf} (audio length is the baseline; < 1 is faster than real time)`
      : `transcribe: local engine skipped: ${r.rtf.skipped}`,
  ];
  for (const q of r.queue)
    lines.push(
      `  queue on ${q.engine}: ${q.jobs} jobs (instant engine, notes written) in ${q.seconds} s = ${q.jobsPerSecond} jobs/s, ${q.secondsPerJob} s per job`,
    );
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(formatTranscribeBench(await runTranscribeBench({ quick: process.argv.includes('--quick') })));
  process.exit(0);
}
