// A stored file's bytes as the disk store hands them out (core/domain/files/file-range.ts): read as
// a stream, and written straight to a real HTTP response with reused buffers, over a socket that
// pushes back and a client that leaves mid-download. Either way every byte arrives in order, and
// the file is closed after.
import t from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, open, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FileRange } from '../../core/domain/files/file-range.ts';
import { WRITE_TO } from '../../core/contract/rest.ts';

const MiB = 1024 * 1024;
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
/** How many of this process's open files are `file`. */
async function opened(file: string): Promise<number> {
  let n = 0;
  for (const fd of await readdir('/proc/self/fd')) if ((await readlink(`/proc/self/fd/${fd}`).catch(() => '')) === file) n++;
  return n;
}

/**
 * GETs `url` reading in fits and starts (a pause of `pauseMs()` after each chunk), so the server's
 * writes wait for the socket again and again; answers the body.
 */
function slowGet(url: string, pauseMs: () => number = () => 1): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    http.get(url, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        res.pause();
        setTimeout(() => res.resume(), pauseMs());
      });
      res.on('end', () => resolve(Buffer.concat(chunks)));
      res.on('error', reject);
    });
  });
}

t.test('file ranges', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'folio-range-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  // Not a multiple of the 1 MiB read size, so the last read is a short one.
  const bytes = randomBytes(9 * MiB + 12345);
  const file = path.join(dir, 'blob');
  await writeFile(file, bytes);
  const range = async (r?: { start: number; end: number }) => {
    const fh = await open(file, 'r');
    return new FileRange(fh, bytes.length, r);
  };

  /** A server whose one response is written by `fn`; answers what `fn` resolved or rejected with. */
  const serve = async (fn: (res: http.ServerResponse) => Promise<void>) => {
    let outcome!: Promise<unknown>;
    const server = http.createServer((_req, res) => {
      res.writeHead(200);
      outcome = fn(res).then(
        () => 'ok',
        (err: Error & { code?: string }) => err,
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t.teardown(() => new Promise<void>((r) => server.close(() => r())));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, outcome: () => outcome };
  };

  t.test('read as a stream: the whole file, then a range', async (t) => {
    const chunks: Buffer[] = [];
    for await (const c of await range()) chunks.push(c as Buffer);
    t.equal(sha(Buffer.concat(chunks)), sha(bytes));
    t.equal(await opened(file), 0, 'the file is closed at the end of the stream');
    const part: Buffer[] = [];
    for await (const c of await range({ start: 5, end: 2 * MiB + 7 })) part.push(c as Buffer);
    t.same(Buffer.concat(part), bytes.subarray(5, 2 * MiB + 8));
  });

  t.test('written to a response whose client reads slowly: every byte, in order, and the file is closed', async (t) => {
    const s = await serve(async (res) => (await range())[WRITE_TO](res));
    const got = await slowGet(s.url);
    t.equal(await s.outcome(), 'ok');
    t.equal(sha(got), sha(bytes));
    t.equal(await opened(file), 0, 'no file handle is left open');
  });

  t.test(
    'three slow downloads of different files at once: each gets its own bytes (no buffer is reused while a socket holds it)',
    async (t) => {
      const others = await Promise.all(
        [1, 2].map(async (n) => {
          const b = randomBytes(5 * MiB + n * 777);
          const f = path.join(dir, `other-${n}`);
          await writeFile(f, b);
          return { file: f, bytes: b };
        }),
      );
      const all = [{ file, bytes }, ...others];
      const got = await Promise.all(
        all.map(async (x) => {
          const s = await serve(async (res) => new FileRange(await open(x.file, 'r'), x.bytes.length)[WRITE_TO](res));
          const got = await slowGet(s.url, () => Math.random() * 3);
          t.equal(await s.outcome(), 'ok');
          return got;
        }),
      );
      all.forEach((x, i) => t.equal(sha(got[i]!), sha(x.bytes), `download ${i + 1} is its own file, byte for byte`));
      for (const x of all) t.equal(await opened(x.file), 0);
    },
  );

  t.test('a range written to a response', async (t) => {
    const s = await serve(async (res) => (await range({ start: MiB - 3, end: 3 * MiB + 3 }))[WRITE_TO](res));
    const got = await fetch(s.url).then((r) => r.arrayBuffer());
    t.same(Buffer.from(got), bytes.subarray(MiB - 3, 3 * MiB + 4));
  });

  t.test('a client that leaves mid-download: the write stops as "client gone" and the file is closed', async (t) => {
    const s = await serve(async (res) => (await range())[WRITE_TO](res));
    await new Promise<void>((resolve) => {
      const req = http.get(s.url, (res) => {
        let seen = 0;
        res.on('data', (c: Buffer) => {
          seen += c.length;
          if (seen > 2 * MiB && !res.isPaused()) {
            // Stop reading first, so the server is still sending (not done) when the client leaves.
            res.pause();
            setTimeout(() => req.destroy(), 50);
          }
        });
        res.on('close', resolve);
        res.on('error', () => {});
      });
      req.on('error', () => {});
    });
    const outcome = (await s.outcome()) as { code?: string };
    t.equal(outcome.code, 'ERR_STREAM_PREMATURE_CLOSE', 'the write ends as the client leaving, not as a failure');
    t.equal(await opened(file), 0, 'no file handle is left open');
  });

  t.test('a file shorter than its stored size fails rather than send a short body', async (t) => {
    const fh = await open(file, 'r');
    const r = new FileRange(fh, bytes.length + MiB);
    const s = await serve(async (res) => r[WRITE_TO](res));
    await fetch(s.url)
      .then((res) => res.arrayBuffer())
      .catch(() => null);
    t.match(await s.outcome(), { message: /ended early/ });
    await t.rejects(async () => {
      for await (const _ of new FileRange(await open(file, 'r'), bytes.length + MiB));
    }, /ended early/);
  });

  t.test('one reader only: a range read as a stream cannot also be written directly', async (t) => {
    const r = await range();
    const reading = (async () => {
      const chunks: Buffer[] = [];
      for await (const c of r) chunks.push(c as Buffer);
      return Buffer.concat(chunks);
    })();
    await new Promise((resolve) => setImmediate(resolve));
    const s = await serve(async (res) => r[WRITE_TO](res));
    await t.rejects(
      fetch(s.url).then((res) => res.arrayBuffer()),
      'the response is cut, not left hanging',
    );
    t.match(await s.outcome(), { message: /already being read/ });
    t.equal(sha(await reading), sha(bytes), 'the stream reader still gets the whole file');
  });
});
