// (e) files: transfers through the REST API against copying the same file on the same disk.
//   - a 1 GiB upload (POST /api/v1/filedb/files, raw body) and download (GET .../content, written
//     to a file) vs `cp` of the same file, same run, same disk: target each >= 50% of cp's speed;
//   - the server's RSS growth during each transfer (sampled every 100 ms): target < 100 MB;
//   - 50 concurrent downloads of a 10 MB file: all complete with every byte, p95 latency, RSS.
// The server runs alone in a child process; the client (Node's http, streams) runs here.
import { execFile } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import { stat, writeFile, open } from 'node:fs/promises';
import http from 'node:http';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { BENCH_DIR } from './lib.ts';
import { mb, percentile, progress, removeDir, round, spawnChild, tempDir } from './util.ts';

const run = promisify(execFile);
const MiB = 1024 * 1024;

export interface TransferFigure {
  seconds: number;
  mbPerSec: number;
  /** Transfer speed / cp speed. */
  ratio: number;
  rssBeforeMB: number;
  rssPeakMB: number;
  rssGrowthMB: number;
  /** CPU time the server and this client spent during the transfer, as a share of its wall time (1 = one core busy). */
  serverCpu: number;
  clientCpu: number;
  pass: boolean;
}

export interface FilesResult {
  sizeMB: number;
  cp: { seconds: number[]; mbPerSec: number };
  upload: TransferFigure;
  download: TransferFigure;
  concurrent: {
    downloads: number;
    sizeMB: number;
    completed: number;
    p50Ms: number;
    p95Ms: number;
    maxMs: number;
    rssPeakMB: number;
    rssBeforeMB: number;
  };
  targetRatio: number;
  targetRssGrowthMB: number;
  /** The machine's 1-minute load average at the end (other work on the same cores skews every ratio). */
  loadAverage: number;
}

interface Ready {
  url: string;
  token: string;
}

async function makeFile(file: string, bytes: number): Promise<void> {
  const block = randomBytes(MiB);
  const fh = await open(file, 'w');
  try {
    for (let done = 0; done < bytes; done += MiB) await fh.write(block, 0, Math.min(MiB, bytes - done));
  } finally {
    await fh.close();
  }
}

async function timed<T>(fn: () => Promise<T>): Promise<{ seconds: number; value: T }> {
  const t0 = process.hrtime.bigint();
  const value = await fn();
  return { seconds: Number(process.hrtime.bigint() - t0) / 1e9, value };
}

function request(url: string, opts: http.RequestOptions, body?: (req: http.ClientRequest) => Promise<void>): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, opts, resolve);
    req.on('error', reject);
    if (body) body(req).catch(reject);
    else req.end();
  });
}

export async function runFiles(opts: { quick: boolean; profile?: boolean }): Promise<FilesResult> {
  const size = opts.quick ? 256 * MiB : 1024 * MiB;
  const work = await tempDir('files-work');
  const dataDir = await tempDir('files-data');
  const profDir = path.join(BENCH_DIR, 'results', 'files-profile');
  const child = spawnChild<Ready>(path.join(BENCH_DIR, 'servers/files.ts'), [dataDir], {
    timeoutMs: 120_000,
    ...(opts.profile ? { execArgv: ['--cpu-prof', `--cpu-prof-dir=${profDir}`] } : {}),
  });
  let sampling = false;
  let serverCpuMs = 0;
  const rss = async (): Promise<number> => {
    child.child.send({ cmd: 'rss' });
    const m = (await child.next(10_000)) as { rss: number; cpuMs: number };
    serverCpuMs = m.cpuMs;
    return m.rss;
  };
  /** Runs `fn` while sampling the server's RSS every 100 ms. */
  const watched = async <T>(fn: () => Promise<T>) => {
    const before = await rss();
    const serverCpuBefore = serverCpuMs;
    const clientCpuBefore = process.cpuUsage();
    let peak = before;
    sampling = true;
    let stopSampling = () => {};
    const loop = (async () => {
      while (sampling) {
        peak = Math.max(peak, await rss());
        await new Promise<void>((r) => {
          const timer = setTimeout(r, 100);
          stopSampling = () => {
            clearTimeout(timer);
            r();
          };
        });
      }
    })();
    const cpu = { server: 0, client: 0 };
    try {
      const out = await timed(fn);
      const client = process.cpuUsage(clientCpuBefore);
      cpu.client = (client.user + client.system) / 1000 / 1000 / out.seconds;
      await rss();
      cpu.server = (serverCpuMs - serverCpuBefore) / 1000 / out.seconds;
      return { ...out, before, peak: () => peak, cpu };
    } finally {
      sampling = false;
      stopSampling();
      await loop;
      peak = Math.max(peak, await rss());
    }
  };
  try {
    const { url, token } = await child.ready;
    const src = path.join(work, 'source.bin');
    progress(`files: writing a ${size / MiB} MiB source file`);
    await makeFile(src, size);
    const cpOnce = async (n: number) => (await timed(() => run('cp', [src, path.join(work, `copy-${n}.bin`)]))).seconds;
    progress('files: cp baseline');
    const cp1 = await cpOnce(1);

    progress('files: upload through the REST API');
    const up = await watched(async () => {
      const res = await request(
        `${url}/api/v1/filedb/files?name=source.bin`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream', 'content-length': size },
        },
        (req) => pipeline(createReadStream(src, { highWaterMark: MiB }), req),
      );
      let text = '';
      for await (const c of res) text += String(c);
      if (res.statusCode !== 201) throw new Error(`upload answered ${res.statusCode}: ${text.slice(0, 300)}`);
      return JSON.parse(text) as { id: string; size: number };
    });
    if (up.value.size !== size) throw new Error(`uploaded ${up.value.size} bytes, not ${size}`);

    progress('files: download through the REST API');
    const out = path.join(work, 'downloaded.bin');
    const down = await watched(async () => {
      const res = await request(`${url}/api/v1/filedb/files/${up.value.id}/content`, { headers: { authorization: `Bearer ${token}` } });
      if (res.statusCode !== 200) throw new Error(`download answered ${res.statusCode}`);
      await pipeline(res, createWriteStream(out, { highWaterMark: MiB }));
    });
    if ((await stat(out)).size !== size) throw new Error('the download is not the whole file');
    progress('files: cp baseline again');
    const cp2 = await cpOnce(2);
    await removeDir(path.join(work, 'copy-1.bin'));

    const cpSeconds = (cp1 + cp2) / 2;
    const cpSpeed = size / MiB / cpSeconds;
    const figure = (w: {
      seconds: number;
      before: number;
      peak: () => number;
      cpu: { server: number; client: number };
    }): TransferFigure => {
      const speed = size / MiB / w.seconds;
      const growth = (w.peak() - w.before) / MiB;
      return {
        seconds: round(w.seconds, 2),
        mbPerSec: round(speed),
        ratio: round(speed / cpSpeed, 3),
        rssBeforeMB: mb(w.before),
        rssPeakMB: mb(w.peak()),
        rssGrowthMB: round(growth),
        serverCpu: round(w.cpu.server, 2),
        clientCpu: round(w.cpu.client, 2),
        pass: speed / cpSpeed >= 0.5 && growth < 100,
      };
    };

    progress('files: 50 concurrent downloads of a 10 MB file');
    const ten = Buffer.alloc(10 * MiB, 7);
    await writeFile(path.join(work, 'ten.bin'), ten);
    const res = await request(
      `${url}/api/v1/filedb/files?name=ten.bin`,
      { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-length': ten.length } },
      (req) => new Promise<void>((resolve) => req.end(ten, resolve)),
    );
    let text = '';
    for await (const c of res) text += String(c);
    const tenId = (JSON.parse(text) as { id: string }).id;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 50 });
    const conc = await watched(() =>
      Promise.all(
        Array.from({ length: 50 }, async () => {
          const t0 = performance.now();
          const r = await request(`${url}/api/v1/filedb/files/${tenId}/content`, { agent, headers: { authorization: `Bearer ${token}` } });
          let n = 0;
          for await (const c of r) n += (c as Buffer).length;
          return { ok: r.statusCode === 200 && n === ten.length, ms: performance.now() - t0 };
        }),
      ),
    );
    agent.destroy();
    const times = conc.value.map((r) => r.ms);
    return {
      sizeMB: size / MiB,
      cp: { seconds: [round(cp1, 2), round(cp2, 2)], mbPerSec: round(cpSpeed) },
      upload: figure(up),
      download: figure(down),
      concurrent: {
        downloads: 50,
        sizeMB: 10,
        completed: conc.value.filter((r) => r.ok).length,
        p50Ms: round(percentile(times, 50)),
        p95Ms: round(percentile(times, 95)),
        maxMs: round(Math.max(...times)),
        rssBeforeMB: mb(conc.before),
        rssPeakMB: mb(conc.peak()),
      },
      targetRatio: 0.5,
      targetRssGrowthMB: 100,
      loadAverage: round(loadavg()[0] ?? 0, 2),
    };
  } finally {
    await child.stop();
    await removeDir(work);
    await removeDir(dataDir);
  }
}

export function formatFiles(r: FilesResult): string {
  const line = (name: string, f: TransferFigure) =>
    `  ${name.padEnd(9)} ${f.seconds} s, ${f.mbPerSec} MB/s = ${(f.ratio * 100).toFixed(1)}% of cp; server RSS ${f.rssBeforeMB} -> peak ${f.rssPeakMB} MB (+${f.rssGrowthMB} MB); CPU server ${f.serverCpu}, client ${f.clientCpu}  ${f.pass ? 'PASS' : 'FAIL'}`;
  return [
    `files: ${r.sizeMB} MiB through the REST API vs cp on the same disk (cp runs: ${r.cp.seconds.join(' s, ')} s, mean ${r.cp.mbPerSec} MB/s)`,
    line('upload', r.upload),
    line('download', r.download),
    `  ${r.concurrent.downloads} concurrent downloads of ${r.concurrent.sizeMB} MB: ${r.concurrent.completed} complete, p50 ${r.concurrent.p50Ms} ms, p95 ${r.concurrent.p95Ms} ms, max ${r.concurrent.maxMs} ms; server RSS ${r.concurrent.rssBeforeMB} -> peak ${r.concurrent.rssPeakMB} MB`,
    `  targets: each transfer >= ${r.targetRatio * 100}% of cp, RSS growth < ${r.targetRssGrowthMB} MB (load average ${r.loadAverage} on ${cpus().length} CPUs)`,
  ].join('\n');
}
