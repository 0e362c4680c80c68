// A hostile document cannot take the server down: a DOCX zip bomb (100 MB of XML in a few hundred
// KB) uploaded through the real server is extracted in a child process that is killed at its memory
// limit, while /health and the file's own routes keep answering; the job is tried once more, then
// the version is recorded as failed with the reason, and never tried again; the file downloads
// intact. A bomb that declares what it is is refused before anything is inflated.
import { createHash } from 'node:crypto';
import t from 'tap';
import { docxBomb, DOCX_TYPE } from '../helpers/docx-bomb.ts';
import { startTestServer, createUser } from '../helpers/server.ts';

// No cap on the zip's expansion, so the lying bomb reaches the parser and the process limits must hold.
const s = await startTestServer({
  overrides: {
    files: { extraction: { memoryMb: 160, maxDecompressedBytes: 1 << 30 } },
    jobs: { pollSeconds: 1, retryDelaySeconds: 1 },
  },
});
t.teardown(() => s.close());
const alice = await createUser(s, 'alice@example.com');
const auth = { authorization: `Bearer ${alice.token}` };
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function upload(name: string, body: Buffer): Promise<string> {
  const res = await fetch(`${s.url}/api/v1/filedb/files?name=${name}`, {
    method: 'POST',
    headers: { ...auth, 'content-type': DOCX_TYPE },
    body,
  });
  if (res.status !== 201) throw new Error(`upload: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

async function state(id: string): Promise<string> {
  const [row] = await s.folio.db.orm.em
    .fork()
    .execute<{ state: string }[]>(`select extraction_state as state from file_versions where file_id = ? and version = 1`, [id]);
  return row!.state;
}

/** The extraction jobs of a file, as the queue keeps them. */
async function jobs(id: string): Promise<{ state: string; retry_count: number }[]> {
  return s.folio.db.orm.em
    .fork()
    .execute(`select state, retry_count from pgboss.job where name = 'files-extract-text' and data->>'file_id' = ?`, [id]);
}

/** Until the extraction is done, asks /health and the file's metadata again and again; their statuses. */
async function answersWhileExtracting(id: string): Promise<number[]> {
  const statuses: number[] = [];
  const deadline = Date.now() + 90_000;
  while ((await state(id)) === 'pending') {
    if (Date.now() > deadline) throw new Error('the extraction never ended');
    const [health, meta] = await Promise.all([fetch(`${s.url}/health`), fetch(`${s.url}/api/v1/filedb/files/${id}`, { headers: auth })]);
    statuses.push(health.status, meta.status);
    await health.arrayBuffer();
    await meta.arrayBuffer();
    await new Promise((r) => setTimeout(r, 100));
  }
  return statuses;
}

t.test('a bomb that lies about its size: killed at the memory limit, retried once, then failed', async (t) => {
  const bomb = docxBomb({ xmlMb: 100, lie: true });
  const id = await upload('bomb.docx', bomb);
  const statuses = await answersWhileExtracting(id);
  t.ok(statuses.length > 0, 'the server was asked while it extracted');
  t.ok(
    statuses.every((st) => st === 200),
    'and answered every time',
  );

  const text = await fetch(`${s.url}/api/v1/filedb/files/${id}/text`, { headers: auth });
  t.equal(text.status, 200);
  t.match(await text.json(), {
    state: 'failed',
    note: 'extraction used more than 160 MB; the file is stored, only its text is missing',
    text: '',
  });
  t.same(await jobs(id), [{ state: 'completed', retry_count: 1 }], 'two attempts, then done for good');

  const download = await fetch(`${s.url}/api/v1/filedb/files/${id}/content`, { headers: auth });
  t.equal(download.status, 200);
  t.equal(sha(Buffer.from(await download.arrayBuffer())), sha(bomb), 'the file downloads intact');

  await new Promise((r) => setTimeout(r, 2500));
  t.same(await jobs(id), [{ state: 'completed', retry_count: 1 }], 'and no further attempt comes');
  t.equal(await state(id), 'failed');
});

t.test('a bomb that declares its size is refused before it is inflated, in one attempt', async (t) => {
  const id = await upload('honest-bomb.docx', docxBomb({ xmlMb: 100 }));
  await answersWhileExtracting(id);
  const text = await fetch(`${s.url}/api/v1/filedb/files/${id}/text`, { headers: auth });
  t.match(await text.json(), {
    state: 'skipped',
    note: /^a DOCX too large to read: word\/document\.xml is compressed \d+ to 1 \(a zip bomb\?\)$/,
  });
  t.same(await jobs(id), [{ state: 'completed', retry_count: 0 }]);
});
