// The files domain's background jobs on a real database and a real job queue: a purge queues a
// garbage collection that removes the blobs nothing references any more and keeps the ones another
// file still uses; every upload queues the extraction of its text, which is stored with its version.
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import t, { type Test } from 'tap';
import { pdf } from '../helpers/pdf.ts';
import { startTestServer, createUser } from '../helpers/server.ts';
import { api } from './rest-support.ts';

const s = await startTestServer({ overrides: { jobs: { pollSeconds: 1 } } });
t.teardown(() => s.close());
const alice = await createUser(s, 'alice@example.com');
const blobs = path.join(s.folio.config.dataDir, 'blobs');
const sha = (b: string) => createHash('sha256').update(b).digest('hex');
const onDisk = async (hash: string) => (await stat(path.join(blobs, hash.slice(0, 2), hash.slice(2, 4), hash)).catch(() => null)) !== null;

async function upload(name: string, body: string | Buffer): Promise<{ id: string; sha256: string }> {
  const res = await fetch(`${s.url}/api/v1/filedb/files?name=${encodeURIComponent(name)}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice.token}` },
    body,
  });
  if (res.status !== 201) throw new Error(`upload: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: string; sha256: string };
}

async function purge(t: Test, id: string): Promise<void> {
  t.equal((await api(s, 'DELETE', `/filedb/files/${id}`, { token: alice.token })).status, 200);
  t.equal((await api(s, 'DELETE', `/filedb/trash/${id}`, { token: alice.token })).status, 204);
}

/** Garbage-collection jobs not yet finished (queued, retrying or running). */
async function gcPending(): Promise<number> {
  const [r] = await s.folio.db.orm.em
    .fork()
    .execute<{ n: number }[]>(
      `select count(*)::int as n from pgboss.job where name = 'files-gc-blobs' and state in ('created', 'retry', 'active')`,
    );
  return r!.n;
}

/** Polls until `done` holds (the job's outcome), failing after a generous bound. */
async function until(what: string, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`still waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

t.test('a purge queues a collection: a freed blob goes, one another file shares stays', async (t) => {
  const shared = await upload('shared-a.txt', 'the same bytes in two files');
  const twin = await upload('shared-b.txt', 'the same bytes in two files');
  const alone = await upload('alone.txt', 'bytes only this file has');
  t.equal(shared.sha256, twin.sha256);
  t.equal(alone.sha256, sha('bytes only this file has'));
  t.ok(await onDisk(alone.sha256), 'the blob is stored');
  await until('the start-up collection to finish', async () => (await gcPending()) === 0);

  await purge(t, shared.id);
  await purge(t, alone.id);
  t.ok((await gcPending()) >= 1, 'the purge queued a collection');
  await until('the collection to finish', async () => (await gcPending()) === 0 && !(await onDisk(alone.sha256)));
  t.notOk(await onDisk(alone.sha256), "the purged file's blob is gone");
  t.ok(await onDisk(shared.sha256), 'the blob another file still uses stays');
  const res = await fetch(`${s.url}/api/v1/filedb/files/${twin.id}/content`, { headers: { authorization: `Bearer ${alice.token}` } });
  t.equal(await res.text(), 'the same bytes in two files');
});

interface Extraction {
  extraction_state: string;
  extraction_note: string | null;
  extracted_text: string | null;
  extracted_pages: string[] | null;
}

/** The stored text of a version, once its extraction job has run. */
async function extraction(fileId: string, version: number): Promise<Extraction> {
  let found: Extraction | undefined;
  await until(`the text of ${fileId} v${version}`, async () => {
    [found] = await s.folio.db.orm.em
      .fork()
      .execute<Extraction[]>(
        `select extraction_state, extraction_note, extracted_text, extracted_pages from file_versions where file_id = ? and version = ?`,
        [fileId, version],
      );
    return found !== undefined && found.extraction_state !== 'pending';
  });
  return found!;
}

t.test('uploads get their text extracted and stored: text as is, a PDF page by page, a new version too', async (t) => {
  const notes = await upload('notes.md', '# Plan\n\nShip the garbage collector.');
  t.same(await extraction(notes.id, 1), {
    extraction_state: 'extracted',
    extraction_note: null,
    extracted_text: '# Plan\n\nShip the garbage collector.',
    extracted_pages: null,
  });

  const res = await fetch(`${s.url}/api/v1/filedb/files?name=report.pdf`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/pdf' },
    body: await pdf(['Quarterly figures', 'Second page words']),
  });
  t.equal(res.status, 201);
  const report = (await res.json()) as { id: string };
  const text = await extraction(report.id, 1);
  t.equal(text.extraction_state, 'extracted');
  t.match(text.extracted_pages, [/Quarterly figures/, /Second page words/]);
  t.match(text.extracted_text, /Quarterly figures[\s\S]*Second page words/);

  const put = await fetch(`${s.url}/api/v1/filedb/files/${notes.id}/content`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${alice.token}`, 'if-match': '"1"' },
    body: 'version two',
  });
  t.equal(put.status, 200);
  t.equal((await extraction(notes.id, 2)).extracted_text, 'version two');

  const png = await upload('pixel.png', Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex'));
  const skipped = await extraction(png.id, 1);
  t.equal(skipped.extraction_state, 'skipped');
  t.equal(skipped.extracted_text, null);
});
