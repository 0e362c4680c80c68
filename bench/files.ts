// (e) files: transfers through the REST API against copying the same file on the same disk.
//   - a 1 GiB upload (POST /api/v1/filedb/files, raw body) and download (GET .../content, written
//     to a file) vs `cp` of the same file, same run, same disk: target each >= 50% of cp's speed;
//   - the server's RSS growth during each transfer (sampled every 100 ms): target < 100 MB;
//   - 50 concurrent downloads of a 10 MB file: all complete with every byte, p95 latency, RSS.
//   - `cp` followed by an fsync of the copy (`sync -d FILE`): what a copy costs when it must be on
//     the disk, as an upload to Folio must before it is answered (a reference, not the target);
//   - the same transfers through a bare node:http server that only hashes, fsyncs and renames
//     (bench/servers/bare-files.ts), for what Folio adds on top of Node itself.
// Each server runs alone in a child process. The transfer client is curl (what a person or a script
// uses, and fast enough not to be what is measured; Node's own http client spends a core of its own
// at these speeds), or Node's http client when curl is missing. Each step starts after a `sync`, and
// the figures are medians of 5 rounds (3 with --quick), after one discarded warm-up transfer each;
// Folio and the bare server take turns, the first alternating from round to round, and Folio's
// share of the bare server is the median of each round's pair.
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
import { mb, percentile, progress, removeDir, round, sized, spawnChild, tempDir } from './util.ts';

const run = promisify(execFile);
const MiB = 1024 * 1024;

export interface TransferFigure {
  seconds: number;
  mbPerSec: number;
  /** Transfer speed / cp speed (the target). */
  ratio: number;
  /** Transfer speed / the speed of cp followed by an fsync of the copy. */
  vsDurableCp: number;
  /** The same transfer through a bare node:http server that hashes, fsyncs and renames (bench/servers/bare-files.ts). */
  bareMbPerSec: number;
  /**
   * Folio / bare Node: what Folio adds on top of Node for one transfer (1 = nothing). The median of
   * each round's pair (the two transfers back to back, their order alternating from round to round).
   */
  vsBare: number;
  /** Each round's Folio / bare Node: their spread says how far one run's figure can be trusted. */
  vsBareRounds: number[];
  rssBeforeMB: number;
  rssPeakMB: number;
  rssGrowthMB: number;
  /** CPU time the server and this client spent during the transfer, as a share of its wall time (1 = one core busy). */
  serverCpu: number;
  /** The Node client's CPU share; null when curl was the client. */
  clientCpu: number | null;
  client: 'curl' | 'node';
  pass: boolean;
}

export interface FilesResult {
  sizeMB: number;
  cp: { seconds: number[]; mbPerSec: number };
  /** cp then an fsync of the copy: the disk's own durable write speed for this file. */
  durableCp: { seconds: number[]; mbPerSec: number };
  upload: TransferFigure;
  download: TransferFigure;
  /** Measured rounds (cp, Folio, bare Node each once per round); the figures are their medians. */
  rounds: number;
  /**
   * What no upload server on this machine can exceed, from the same client: the bytes through the
   * loopback socket into a bare Node server that drops them, and one that also hashes them (sha256).
   * Each as MB/s and as a share of cp.
   */
  ceilings: Record<'discard' | 'hash' | 'write' | 'durable', { mbPerSec: number; ratio: number }>;
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

interface Watched<T> {
  seconds: number;
  value: T;
  before: number;
  peak: () => number;
  cpu: { server: number; client: number };
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
  const size = sized(opts.quick, 1024, 256, 16) * MiB;
  const work = await tempDir('files-work');
  const dataDir = await tempDir('files-data');
  const bareDir = await tempDir('files-bare');
  const bare = spawnChild<{ url: string }>(path.join(BENCH_DIR, 'servers/bare-files.ts'), [bareDir], { timeoutMs: 60_000 });
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
  const watched = async <T>(fn: () => Promise<T>): Promise<Watched<T>> => {
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
    const hasCurl = await run('curl', ['--version']).then(
      () => true,
      () => false,
    );
    const client: 'curl' | 'node' = hasCurl ? 'curl' : 'node';
    const bareUrl = (await bare.ready).url;
    const auth = { authorization: `Bearer ${token}` };
    /** POSTs the source file; answers the stored file's id. */
    const upload = async (target: string, headers: Record<string, string>): Promise<string> => {
      let status: number;
      let text: string;
      if (client === 'curl') {
        const hs = Object.entries({ ...headers, 'content-type': 'application/octet-stream' }).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
        const { stdout } = await run('curl', ['-sS', '-X', 'POST', ...hs, '-T', src, '-w', '\n%{http_code}', target], { maxBuffer: MiB });
        const cut = stdout.lastIndexOf('\n');
        text = stdout.slice(0, cut);
        status = Number(stdout.slice(cut + 1));
      } else {
        const res = await request(
          target,
          { method: 'POST', headers: { ...headers, 'content-type': 'application/octet-stream', 'content-length': size } },
          (req) => pipeline(createReadStream(src, { highWaterMark: MiB }), req),
        );
        text = '';
        for await (const c of res) text += String(c);
        status = res.statusCode ?? 0;
      }
      if (status !== 201) throw new Error(`upload to ${target} answered ${status}: ${text.slice(0, 300)}`);
      const file = JSON.parse(text) as { id: string; size: number };
      if (file.size !== size) throw new Error(`uploaded ${file.size} bytes, not ${size}`);
      return file.id;
    };
    /** GETs `target` into a file, checks its length, removes it. */
    const download = async (target: string, headers: Record<string, string>): Promise<void> => {
      const out = path.join(work, 'downloaded.bin');
      if (client === 'curl') {
        const hs = Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
        const { stdout } = await run('curl', ['-sS', ...hs, '-o', out, '-w', '%{http_code}', target]);
        if (stdout.trim() !== '200') throw new Error(`download of ${target} answered ${stdout.trim()}`);
      } else {
        const res = await request(target, { headers });
        if (res.statusCode !== 200) throw new Error(`download of ${target} answered ${res.statusCode}`);
        await pipeline(res, createWriteStream(out, { highWaterMark: MiB }));
      }
      if ((await stat(out)).size !== size) throw new Error('the download is not the whole file');
      await removeDir(out);
    };
    // Every measured step starts with the page cache's dirty data written out, so one step's
    // writeback does not slow the next: on a VM disk a cp right after a 1 GiB write takes 4-10x
    // longer than one after `sync`.
    const settled = async <T>(fn: () => Promise<T>): Promise<T> => {
      await run('sync');
      return fn();
    };
    const rounds = sized(opts.quick, 5, 3, 1);
    const cps: number[] = [];
    const durableCps: number[] = [];
    const ups: Watched<string>[] = [];
    const downs: Watched<void>[] = [];
    const bareUps: number[] = [];
    const bareDowns: number[] = [];
    const discards: number[] = [];
    const hashes: number[] = [];
    const writes: number[] = [];
    const durables: number[] = [];
    // One discarded transfer each way through each server first: the first upload also creates the
    // user's blob folders and the database's first rows, and JIT-compiles the path.
    progress(`files: warm-up (one upload and one download through each server, discarded)`);
    const warmId = await settled(() => upload(`${url}/api/v1/filedb/files?name=warm-up.bin`, auth));
    await settled(() => download(`${url}/api/v1/filedb/files/${warmId}/content`, auth));
    const warmBare = await settled(() => upload(`${bareUrl}/`, {}));
    await settled(() => download(`${bareUrl}/${warmBare}`, {}));
    /** `a` then `b`, or `b` then `a` on odd rounds: neither always runs right after the cp. */
    const pair = async <A, B>(r: number, a: () => Promise<A>, b: () => Promise<B>): Promise<[A, B]> => {
      if (r % 2 === 1) return [await a(), await b()];
      const second = await b();
      return [await a(), second];
    };
    for (let r = 1; r <= rounds; r++) {
      progress(`files: round ${r}/${rounds}: cp, then upload and download through Folio and through a bare Node server (${client})`);
      const copy = path.join(work, 'copy.bin');
      cps.push((await settled(() => timed(() => run('cp', [src, copy])))).seconds);
      await removeDir(copy);
      durableCps.push(
        (
          await settled(() =>
            timed(async () => {
              await run('cp', [src, copy]);
              await run('sync', ['-d', copy]);
            }),
          )
        ).seconds,
      );
      await removeDir(copy);
      const [up, bareId] = await pair(
        r,
        () => settled(() => watched(() => upload(`${url}/api/v1/filedb/files?name=source-${r}.bin`, auth))),
        () => settled(() => timed(() => upload(`${bareUrl}/`, {}))),
      );
      ups.push(up);
      bareUps.push(bareId.seconds);
      const [down, bareDown] = await pair(
        r,
        () => settled(() => watched(() => download(`${url}/api/v1/filedb/files/${up.value}/content`, auth))),
        () => settled(() => timed(() => download(`${bareUrl}/${bareId.value}`, {}))),
      );
      downs.push(down);
      bareDowns.push(bareDown.seconds);
      discards.push((await settled(() => timed(() => upload(`${bareUrl}/discard`, {})))).seconds);
      hashes.push((await settled(() => timed(() => upload(`${bareUrl}/hash`, {})))).seconds);
      writes.push((await settled(() => timed(() => upload(`${bareUrl}/write`, {})))).seconds);
      durables.push((await settled(() => timed(() => upload(`${bareUrl}/durable`, {})))).seconds);
    }
    const median = (xs: number[]) => percentile(xs, 50);
    const cpSeconds = median(cps);
    const cpSpeed = size / MiB / cpSeconds;
    const durableCpSpeed = size / MiB / median(durableCps);
    const ceiling = (seconds: number[]) => ({
      mbPerSec: round(size / MiB / median(seconds)),
      ratio: round(size / MiB / median(seconds) / cpSpeed, 3),
    });
    const figure = (ws: Watched<unknown>[], bareSeconds: number[]): TransferFigure => {
      const mid = [...ws].sort((a, b) => a.seconds - b.seconds)[Math.floor(ws.length / 2)]!;
      const speed = size / MiB / mid.seconds;
      const growth = Math.max(...ws.map((w) => w.peak() - w.before)) / MiB;
      const bareSpeed = size / MiB / median(bareSeconds);
      const pairs = ws.map((w, i) => round(bareSeconds[i]! / w.seconds, 3));
      return {
        seconds: round(mid.seconds, 2),
        mbPerSec: round(speed),
        ratio: round(speed / cpSpeed, 3),
        vsDurableCp: round(speed / durableCpSpeed, 3),
        bareMbPerSec: round(bareSpeed),
        vsBare: round(median(pairs), 3),
        vsBareRounds: pairs,
        rssBeforeMB: mb(mid.before),
        rssPeakMB: mb(mid.peak()),
        rssGrowthMB: round(growth),
        serverCpu: round(mid.cpu.server, 2),
        clientCpu: client === 'node' ? round(mid.cpu.client, 2) : null,
        client,
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
      cp: { seconds: cps.map((x) => round(x, 2)), mbPerSec: round(cpSpeed) },
      durableCp: { seconds: durableCps.map((x) => round(x, 2)), mbPerSec: round(durableCpSpeed) },
      upload: figure(ups, bareUps),
      download: figure(downs, bareDowns),
      rounds,
      ceilings: { discard: ceiling(discards), hash: ceiling(hashes), write: ceiling(writes), durable: ceiling(durables) },
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
    await bare.stop();
    await removeDir(work);
    await removeDir(dataDir);
    await removeDir(bareDir);
  }
}

export function formatFiles(r: FilesResult): string {
  const pct = (c: { mbPerSec: number; ratio: number }) => `${c.mbPerSec} MB/s = ${(c.ratio * 100).toFixed(1)}% of cp`;
  const line = (name: string, f: TransferFigure) =>
    `  ${name.padEnd(9)} ${f.seconds} s, ${f.mbPerSec} MB/s = ${(f.ratio * 100).toFixed(1)}% of cp, ${(f.vsDurableCp * 100).toFixed(0)}% of cp+fsync, ${(f.vsBare * 100).toFixed(0)}% of bare Node (${f.bareMbPerSec} MB/s; by round ${f.vsBareRounds.map((x) => `${(x * 100).toFixed(0)}%`).join(' ')}); server RSS ${f.rssBeforeMB} -> peak ${f.rssPeakMB} MB (+${f.rssGrowthMB} MB); CPU server ${f.serverCpu}${f.clientCpu === null ? '' : `, client ${f.clientCpu}`} (client: ${f.client})  ${f.pass ? 'PASS' : 'FAIL'}`;
  return [
    `files: ${r.sizeMB} MiB through the REST API vs cp on the same disk (medians of ${r.rounds} round(s), each step after a sync; cp runs: ${r.cp.seconds.join(' s, ')} s, median ${r.cp.mbPerSec} MB/s; cp + fsync of the copy: median ${r.durableCp.mbPerSec} MB/s)`,
    line('upload', r.upload),
    `  ceilings  the same client into a bare Node server that drops the bytes: ${pct(r.ceilings.discard)}; that hashes them (sha256): ${pct(r.ceilings.hash)}; that writes them to a file (no hash, no fsync): ${pct(r.ceilings.write)}; and fsyncs it (no hash): ${pct(r.ceilings.durable)}`,
    line('download', r.download),
    `  ${r.concurrent.downloads} concurrent downloads of ${r.concurrent.sizeMB} MB: ${r.concurrent.completed} complete, p50 ${r.concurrent.p50Ms} ms, p95 ${r.concurrent.p95Ms} ms, max ${r.concurrent.maxMs} ms; server RSS ${r.concurrent.rssBeforeMB} -> peak ${r.concurrent.rssPeakMB} MB`,
    `  targets: each transfer >= ${r.targetRatio * 100}% of cp, RSS growth < ${r.targetRssGrowthMB} MB (load average ${r.loadAverage} on ${cpus().length} CPUs)`,
  ].join('\n');
}
