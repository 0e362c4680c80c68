// The durable file writer under the disk blob store: what it finishes is on the disk byte for byte,
// whether the bytes came as one write, many, or batches with write-backs behind them; it never
// writes over an existing file; a failing source leaves the file closed (the store removes it).
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import t from 'tap';
import { durableFile } from '../../core/domain/files/durable-file.ts';

const dir = await mkdtemp(path.join(tmpdir(), 'folio-durable-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

t.test('many chunks with write-backs behind them arrive whole and in order', async (t) => {
  // 300 chunks of 7 KiB with a write-back every 64 KiB: dozens of fdatasyncs overlap the writes.
  const chunks = Array.from({ length: 300 }, () => randomBytes(7 * 1024));
  const file = path.join(dir, 'many');
  await pipeline(Readable.from(chunks), durableFile(file, { highWaterMark: 16 * 1024, syncEvery: 64 * 1024 }));
  const back = await readFile(file);
  t.equal(back.length, 300 * 7 * 1024);
  t.equal(sha(back), sha(Buffer.concat(chunks)));
});

t.test('an empty source makes an empty file', async (t) => {
  const file = path.join(dir, 'empty');
  await pipeline(Readable.from([]), durableFile(file));
  t.equal((await stat(file)).size, 0);
});

t.test('an existing file is never written over', async (t) => {
  const file = path.join(dir, 'taken');
  await writeFile(file, 'keep me');
  await t.rejects(pipeline(Readable.from([Buffer.from('other')]), durableFile(file)), { code: 'EEXIST' });
  t.equal(await readFile(file, 'utf8'), 'keep me');
});

t.test('a source that fails midway rejects the pipeline and leaves a file the caller can remove', async (t) => {
  const file = path.join(dir, 'broken');
  let sent = 0;
  const source = new Readable({
    read() {
      if (sent++ < 5) this.push(randomBytes(32 * 1024));
      else this.destroy(new Error('connection reset'));
    },
  });
  await t.rejects(pipeline(source, durableFile(file, { syncEvery: 16 * 1024 })), /connection reset/);
  // The handle is closed: the file can be removed and a new one made in its place.
  await rm(file);
  await pipeline(Readable.from([Buffer.from('again')]), durableFile(file));
  t.equal(await readFile(file, 'utf8'), 'again');
});
