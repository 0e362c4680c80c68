// The blob store suite (test/helpers/blob-store-suite.ts) against each implementation: the disk
// store in a temporary directory, and the S3 store on a real S3-compatible server (s3rver), started here.
import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DiskBlobStore } from '../../core/domain/files/disk-store.ts';
import { S3BlobStore } from '../../core/domain/files/s3-store.ts';
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
    const store = S3BlobStore.fromSettings({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      bucket: 'folio-test',
      prefix: 'blobs-test/',
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
      checksums: 'WHEN_REQUIRED',
    });
    return { store, cleanup: () => s3.close() };
  });
  t.end();
});
