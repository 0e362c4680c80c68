// The behaviour every blob store must have (core/domain/files/blob-store.ts), as one suite that
// test/unit/blob-store.test.ts runs against each implementation; and a real S3-compatible server
// (s3rver, in this process, on a free port, its files in a temp dir) for the S3 store.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Readable } from 'node:stream';
import type { Test } from 'tap';
import { NotFound } from '../../core/contract/errors.ts';
import type { BlobStore } from '../../core/domain/files/blob-store.ts';

export interface StoreUnderTest {
  store: BlobStore;
  cleanup(): Promise<void>;
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function bytesOf(r: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of r) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

async function listed(store: BlobStore): Promise<string[]> {
  const out: string[] = [];
  for await (const h of store.list()) out.push(h);
  return out;
}

/** A source that sends `chunks`, then fails. */
function failingSource(chunks: Buffer[], err: Error): Readable {
  let i = 0;
  return new Readable({
    read() {
      if (i < chunks.length) this.push(chunks[i++]);
      else this.destroy(err);
    },
  });
}

/** `total` bytes of a deterministic pattern, made 64 KiB at a time as they are read. */
function generated(total: number, onChunk?: () => void): Readable {
  const block = Buffer.alloc(64 * 1024);
  for (let i = 0; i < block.length; i++) block[i] = (i * 31 + 7) & 0xff;
  let sent = 0;
  return new Readable({
    read() {
      onChunk?.();
      if (sent >= total) return void this.push(null);
      const n = Math.min(block.length, total - sent);
      // A fresh buffer each time (as a socket would give), varied so parts differ.
      const chunk = Buffer.from(block.subarray(0, n));
      chunk.writeUInt32BE(sent >>> 0, 0);
      sent += n;
      this.push(chunk);
    },
  });
}

/** Runs every check against the store `make` returns (a fresh, empty one per call). */
export function blobStoreSuite(t: Test, make: () => Promise<StoreUnderTest>): void {
  let s: StoreUnderTest;
  t.before(async () => {
    s = await make();
  });
  t.teardown(() => s?.cleanup());

  t.test('a committed blob reads back whole, by its sha256, and is listed', async (t) => {
    const bytes = Buffer.from('hello, blob store\n');
    const staged = await s.store.stage(Readable.from([bytes]));
    t.equal(staged.sha256, sha(bytes));
    t.equal(staged.size, bytes.length);
    await staged.commit();
    t.same(await bytesOf(await s.store.read(staged.sha256)), bytes);
    t.same(await s.store.stat(staged.sha256), { size: bytes.length });
    t.ok((await listed(s.store)).includes(staged.sha256));
  });

  t.test('identical content is stored once', async (t) => {
    const bytes = Buffer.from('the same bytes, twice');
    const a = await s.store.stage(Readable.from([bytes]));
    const b = await s.store.stage(Readable.from([bytes.subarray(0, 5), bytes.subarray(5)]));
    t.equal(a.sha256, b.sha256);
    await a.commit();
    await b.commit();
    await a.discard(); // after commit: nothing happens
    t.equal((await listed(s.store)).filter((h) => h === a.sha256).length, 1);
    t.same(await bytesOf(await s.store.read(a.sha256)), bytes);
    t.equal(await s.store.sweepStaging(0), 0, 'no temporary object is left behind');
  });

  t.test('a staged write is invisible until committed; a discarded one leaves nothing', async (t) => {
    const bytes = Buffer.from('not yet');
    const staged = await s.store.stage(Readable.from([bytes]));
    t.equal(await s.store.stat(staged.sha256), null);
    t.notOk((await listed(s.store)).includes(staged.sha256));
    await t.rejects(s.store.read(staged.sha256), NotFound);
    await staged.discard();
    await staged.commit(); // after discard: nothing happens
    t.equal(await s.store.stat(staged.sha256), null);
    t.equal(await s.store.sweepStaging(0), 0);
  });

  t.test('a source error, an abort or too many bytes reject and leave nothing', async (t) => {
    const before = await listed(s.store);
    await t.rejects(s.store.stage(failingSource([Buffer.alloc(1000, 1)], new Error('client went away'))), /client went away/);

    const ac = new AbortController();
    const slow = generated(20 * 1024 * 1024, () => ac.abort());
    await t.rejects(s.store.stage(slow, { signal: ac.signal }), { name: 'AbortError' });

    const big = Buffer.alloc(2000, 2);
    await t.rejects(s.store.stage(Readable.from([big]), { maxBytes: 1999 }), { name: 'BlobLimitExceeded', limit: 1999 });
    const fits = await s.store.stage(Readable.from([big]), { maxBytes: 2000 });
    await fits.discard();

    t.same(await listed(s.store), before, 'no blob appeared');
    t.equal(await s.store.sweepStaging(0), 0, 'no temporary object was left');
  });

  t.test('ranges', async (t) => {
    const bytes = Buffer.from('0123456789abcdef');
    const staged = await s.store.stage(Readable.from([bytes]));
    await staged.commit();
    t.equal((await bytesOf(await s.store.read(staged.sha256, { start: 2, end: 5 }))).toString(), '2345');
    t.equal((await bytesOf(await s.store.read(staged.sha256, { start: 15, end: 15 }))).toString(), 'f');
    t.equal((await bytesOf(await s.store.read(staged.sha256, { start: 0, end: 15 }))).toString(), bytes.toString());
  });

  t.test('stat, remove and list', async (t) => {
    const bytes = Buffer.from('to be removed');
    const staged = await s.store.stage(Readable.from([bytes]));
    await staged.commit();
    await s.store.remove(staged.sha256);
    t.equal(await s.store.stat(staged.sha256), null);
    await t.rejects(s.store.read(staged.sha256), NotFound);
    t.notOk((await listed(s.store)).includes(staged.sha256));
    await s.store.remove(staged.sha256); // absent: not an error
    t.equal(await s.store.stat('not-a-hash'), null);
    t.equal(await s.store.stat('0'.repeat(64)), null);
    await t.rejects(s.store.read('../../etc/passwd'), NotFound);
    // An empty blob is a blob.
    const empty = await s.store.stage(Readable.from([]));
    t.equal(empty.sha256, sha(Buffer.alloc(0)));
    await empty.commit();
    t.same(await s.store.stat(empty.sha256), { size: 0 });
  });

  t.test('sweepStaging removes abandoned writes older than the grace period only', async (t) => {
    const abandoned = await s.store.stage(Readable.from([Buffer.from('abandoned')]));
    t.equal(await s.store.sweepStaging(60 * 60_000), 0, 'a recent write is left alone');
    // Object stores date objects to the second: be sure it is in the past.
    await new Promise((r) => setTimeout(r, 1100));
    t.equal(await s.store.sweepStaging(0), 1);
    t.equal(await s.store.sweepStaging(0), 0);
    t.equal(await s.store.stat(abandoned.sha256), null);
  });

  t.test('a 50 MB write and read stream through without being held in memory', async (t) => {
    const total = 50 * 1024 * 1024;
    // What is live, not garbage not yet collected: a full collection before each sample (every MiB).
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const live = () => {
      gc();
      const m = process.memoryUsage();
      return m.heapUsed + m.arrayBuffers;
    };
    const base = live();
    let peak = 0;
    let chunks = 0;
    const sample = () => {
      if (++chunks % 16 === 0) peak = Math.max(peak, live() - base);
    };
    const expected = createHash('sha256');
    const source = generated(total, sample);
    source.on('data', (c: Buffer) => expected.update(c));
    const staged = await s.store.stage(source);
    t.equal(staged.size, total);
    t.equal(staged.sha256, expected.digest('hex'));
    await staged.commit();
    const back = createHash('sha256');
    let n = 0;
    for await (const c of await s.store.read(staged.sha256)) {
      back.update(c as Buffer);
      n += (c as Buffer).length;
      sample();
    }
    t.equal(n, total);
    t.equal(back.digest('hex'), staged.sha256);
    // Loose: parts in flight (the S3 store keeps ~2 of 5 MiB) and, for S3, the in-process server's
    // own buffers (15-31 MB seen); holding the blob would take over 50 MB.
    t.ok(peak < 40 * 1024 * 1024, `memory grew by ${(peak / 1048576).toFixed(1)} MB at most`);
  });
}

interface S3rverLike {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverClass = new (opts: Record<string, unknown>) => S3rverLike;

/** An S3-compatible server with one empty bucket, on 127.0.0.1 and a free port. */
export async function startS3rver(bucket: string): Promise<{ endpoint: string; close(): Promise<void> }> {
  const S3rver = createRequire(import.meta.url)('s3rver') as S3rverClass;
  const directory = await mkdtemp(path.join(tmpdir(), 'folio-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const addr = await server.run();
  return {
    endpoint: `http://127.0.0.1:${addr.port}`,
    close: async () => {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
