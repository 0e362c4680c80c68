// The disk blob store: content addressing, staged writes that become visible only on commit,
// identical content stored once, limits and aborted sources leaving nothing, ranges, the sweep.
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import t from 'tap';
import { BlobLimitExceeded } from '../../core/domain/files/blob-store.ts';
import { DiskBlobStore } from '../../core/domain/files/disk-store.ts';

const root = await mkdtemp(path.join(tmpdir(), 'folio-blobs-'));
t.teardown(() => rm(root, { recursive: true, force: true }));
const store = new DiskBlobStore(root);
const sha = (b: string) => createHash('sha256').update(b).digest('hex');
const text = async (r: Readable) => {
  let out = '';
  for await (const c of r) out += (c as Buffer).toString();
  return out;
};
const all = async () => {
  const out: string[] = [];
  for await (const h of store.list()) out.push(h);
  return out;
};
const staging = () => readdir(path.join(root, '.staging')).catch(() => []);

t.test('a staged blob is invisible until commit, then readable under its hash', async (t) => {
  const staged = await store.stage(Readable.from([Buffer.from('hello '), Buffer.from('world')]));
  t.equal(staged.sha256, sha('hello world'));
  t.equal(staged.size, 11);
  t.equal(await store.stat(staged.sha256), null, 'not visible before commit');
  await staged.commit();
  t.same(await store.stat(staged.sha256), { size: 11 });
  t.equal(await text(await store.read(staged.sha256)), 'hello world');
  t.equal(await text(await store.read(staged.sha256, { start: 6, end: 10 })), 'world');
  t.same(await staging(), []);
  t.ok((await all()).includes(staged.sha256));
});

t.test('identical content is stored once; discard leaves nothing', async (t) => {
  const a = await store.stage(Readable.from([Buffer.from('same')]));
  await a.commit();
  const b = await store.stage(Readable.from([Buffer.from('same')]));
  await b.commit();
  t.equal((await all()).filter((h) => h === sha('same')).length, 1);
  const c = await store.stage(Readable.from([Buffer.from('dropped')]));
  await c.discard();
  t.equal(await store.stat(sha('dropped')), null);
  t.same(await staging(), []);
});

t.test('over maxBytes, or a source that fails: rejected, nothing left', async (t) => {
  await t.rejects(store.stage(Readable.from([Buffer.alloc(10), Buffer.alloc(10)]), { maxBytes: 15 }), BlobLimitExceeded);
  const failing = new Readable({
    read() {
      this.push(Buffer.alloc(100));
      this.destroy(new Error('connection reset'));
    },
  });
  await t.rejects(store.stage(failing), /connection reset/);
  t.same(await staging(), []);
});

t.test('unknown hashes: NotFound on read, null on stat; sweep removes old staging files only', async (t) => {
  await t.rejects(store.read(sha('never')), { code: 'not_found' });
  await t.rejects(store.read('../../etc/passwd'), { code: 'not_found' });
  t.equal(await store.stat('nope'), null);
  const old = path.join(root, '.staging', 'old');
  const fresh = path.join(root, '.staging', 'fresh');
  await writeFile(old, 'x');
  await writeFile(fresh, 'y');
  const past = new Date(Date.now() - 3_600_000);
  await utimes(old, past, past);
  t.equal(await store.sweepStaging(60_000), 1);
  t.same(await staging(), ['fresh']);
  await store.remove(sha('same'));
  t.equal(await store.stat(sha('same')), null);
});
