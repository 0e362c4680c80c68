// The blob store suite (test/helpers/blob-store-suite.ts) against each implementation: the S3 store
// on a real S3-compatible server (s3rver), started here.
import t from 'tap';
import { S3BlobStore } from '../../core/domain/files/s3-store.ts';
import { blobStoreSuite, startS3rver } from '../helpers/blob-store-suite.ts';

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
