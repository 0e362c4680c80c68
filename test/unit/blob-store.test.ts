// The blob store suite (test/helpers/blob-store-suite.ts) against each implementation: the disk
// store in a temporary directory, and the S3 store on a real S3-compatible server (s3rver), started here,
// reached as the files domain reaches it: through lazyBlobStore, which loads it on first use.
import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { S3ServiceException } from '@aws-sdk/client-s3';
import { guardBlobStore, isStoreOutage, lazyBlobStore, STORE_RETRY_SECONDS } from '../../core/domain/files/blob-store.ts';
import { DiskBlobStore } from '../../core/domain/files/disk-store.ts';
import { blobStoreSuite, startS3rver } from '../helpers/blob-store-suite.ts';

t.test('disk', (t) => {
  blobStoreSuite(t, async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'folio-blobs-'));
    return { store: new DiskBlobStore(path.join(dir, 'blobs')), cleanup: () => rm(dir, { recursive: true, force: true }) };
  });
  t.end();
});

t.test('s3', (t) => {
  blobStoreSuite(t, async () => {
    const s3 = await startS3rver('folio-test');
    const settings = {
      endpoint: s3.endpoint,
      region: 'us-east-1',
      bucket: 'folio-test',
      prefix: 'blobs-test/',
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
      checksums: 'WHEN_REQUIRED' as const,
    };
    const store = lazyBlobStore('s3', async () => (await import('../../core/domain/files/s3-store.ts')).S3BlobStore.fromSettings(settings));
    return { store, cleanup: () => s3.close() };
  });
  t.end();
});

t.test('a lazy store loads its implementation on first use, once, and tries again after a failed load', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'folio-blobs-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  let loads = 0;
  let fail = true;
  const store = lazyBlobStore('disk', async () => {
    loads++;
    if (fail) throw new Error('the module would not load');
    return new DiskBlobStore(path.join(dir, 'blobs'));
  });
  t.equal(store.kind, 'disk');
  t.equal(loads, 0, 'nothing is loaded until the store is used');
  await t.rejects(store.stat('0'.repeat(64)), { message: 'the module would not load' });
  fail = false;
  t.equal(await store.stat('0'.repeat(64)), null, 'the next call loads it again, and is answered');
  const names: string[] = [];
  for await (const h of store.list()) names.push(h);
  t.same(names, []);
  t.equal(loads, 2, 'once loaded, it is kept');
});

t.test('an S3 answer is an outage for 500, 502, 503 and 504 only', async (t) => {
  const answer = (status: number) =>
    new S3ServiceException({ name: `Status${status}`, $fault: status >= 500 ? 'server' : 'client', $metadata: { httpStatusCode: status } });
  for (const status of [500, 502, 503, 504]) t.equal(isStoreOutage(answer(status)), true, `${status} is an outage`);
  for (const status of [501, 505, 507, 400, 403, 404]) t.equal(isStoreOutage(answer(status)), false, `${status} is not an outage`);
  t.equal(isStoreOutage(new Error('wrapped', { cause: answer(503) })), true, 'what a failure wraps counts');
});

t.test("/health's probe of a store that never answers says unreachable, and does not pile up checks", async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'folio-blobs-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  // A disk store on a mount that hangs: its check never settles.
  let checks = 0;
  class HungDisk extends DiskBlobStore {
    override check(): Promise<void> {
      checks++;
      return new Promise(() => {});
    }
  }
  const store = guardBlobStore(new HungDisk(path.join(dir, 'blobs')));
  const first = await store.health();
  t.match(first, { kind: 'disk', status: 'unreachable', error: /^TimeoutError/ });
  await new Promise((resolve) => setTimeout(resolve, STORE_RETRY_SECONDS * 1000 + 100));
  const second = await store.health();
  t.match(second, { status: 'unreachable', error: /^TimeoutError/ }, 'asked again after the cache, still unreachable');
  t.equal(checks, 1, 'the unanswered check is waited on again, not started anew');
});
