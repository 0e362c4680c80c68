// The files domain's job functions, on a real S3-compatible server (s3rver) for the blob store.
import t from 'tap';
import { Readable } from 'node:stream';
import { S3BlobStore } from '../../core/domain/files/s3-store.ts';
import { extractTextJob, gcBlobs, type IsolatedExtract } from '../../core/domain/files/jobs.ts';
import { ChildRunner } from '../../core/domain/child-runner.ts';
import type { ExtractReply, ExtractRequest } from '../../core/domain/files/extract-entry.ts';
import { startS3rver } from '../helpers/blob-store-suite.ts';

const s3 = await startS3rver('folio-jobs');
t.teardown(() => s3.close());
const store = S3BlobStore.fromSettings({
  endpoint: s3.endpoint,
  region: 'us-east-1',
  bucket: 'folio-jobs',
  prefix: '',
  accessKeyId: 'S3RVER',
  secretAccessKey: 'S3RVER',
  forcePathStyle: true,
  checksums: 'WHEN_REQUIRED',
});

async function put(text: string): Promise<string> {
  const staged = await store.stage(Readable.from([Buffer.from(text)]));
  await staged.commit();
  return staged.sha256;
}

t.test('gc-blobs removes what nothing references and abandoned writes past their grace', async (t) => {
  const kept = await put('referenced');
  const orphan = await put('orphaned');
  await store.stage(Readable.from([Buffer.from('abandoned upload')])); // never committed
  await new Promise((r) => setTimeout(r, 1100)); // object dates have one-second resolution

  const young = await gcBlobs({ store, collect: async (h) => h !== kept && (await store.remove(h), true), stagingGraceMs: 3600_000 });
  t.same(young, { checked: 2, removed: 1, staging: 0 }, 'a recent staging object is spared');
  t.same(await store.stat(kept), { size: 10 });
  t.equal(await store.stat(orphan), null);

  const old = await gcBlobs({ store, collect: async (h) => h !== kept && (await store.remove(h), true), stagingGraceMs: 0 });
  t.same(old, { checked: 1, removed: 0, staging: 1 });

  const ac = new AbortController();
  ac.abort();
  await t.rejects(gcBlobs({ store, collect: async () => true, stagingGraceMs: 0, signal: ac.signal }), { name: 'AbortError' });
  t.same(await store.stat(kept), { size: 10 }, 'a cancelled run removes nothing');
});

const runner = new ChildRunner<ExtractRequest, ExtractReply>({
  module: new URL('../../core/domain/files/extract-entry.ts', import.meta.url),
  label: 'extraction',
  limits: { memoryMb: 512, timeoutMs: 30_000 },
});
t.teardown(() => runner.close());
const isolated: IsolatedExtract = (req, signal) => runner.run(req, signal ? { signal } : {});

t.test('extract-text: text of a stored file, or why there is none', async (t) => {
  const md = await put('# Plan\n\nShip it.');
  const out = await extractTextJob({ read: () => store.read(md), contentType: 'text/markdown', maxBytes: 1 << 20, isolated });
  t.same(out, { status: 'extracted', text: '# Plan\n\nShip it.', truncated: false });

  const cut = await extractTextJob({ read: () => store.read(md), contentType: 'text/markdown', maxBytes: 6, isolated });
  t.same(cut, { status: 'extracted', text: '# Plan', truncated: true }, 'a text file over maxBytes: its beginning');

  const fakePdf = await put('%PDF-1.7 but not really');
  t.match(await extractTextJob({ read: () => store.read(fakePdf), contentType: 'application/pdf', maxBytes: 1 << 20, isolated }), {
    status: 'skipped',
    reason: /not a readable PDF/,
  });
  t.same(await extractTextJob({ read: () => store.read(fakePdf), contentType: 'application/pdf', maxBytes: 4, isolated }), {
    status: 'skipped',
    reason: 'larger than 4 bytes',
  });
  let opened = false;
  t.same(
    await extractTextJob({
      read: () => ((opened = true), store.read(md)),
      contentType: 'image/png',
      maxBytes: 1 << 20,
      isolated,
    }),
    { status: 'skipped', reason: 'no text to extract from image/png' },
  );
  t.notOk(opened, 'a type without text is not even read');
});
