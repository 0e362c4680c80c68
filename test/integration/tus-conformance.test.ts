// tus 1.0 as its protocol text asks, over real HTTP and a real database: an unsupported or missing
// Tus-Resumable is 412 with Tus-Version; a PATCH in another media type is 415; every answer, refusals
// and a 401 included, says Tus-Resumable; OPTIONS says what the server speaks; HEAD does not show
// who owns the upload; an expired upload is 404 to GET, HEAD and PATCH alike; an empty PATCH that
// does not finish the upload is refused (Content-Length: 0 or a chunked body with no byte) (a client looping on it gets refusals, not progress).
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { startTestServer, createUser } from '../helpers/server.ts';

const s = await startTestServer({});
t.teardown(() => s.close());
const alice = await createUser(s, 'alice@example.com');
const UPLOADS = `${s.url}/api/v1/filedb/uploads`;
const H = { authorization: `Bearer ${alice.token}`, 'tus-resumable': '1.0.0' };
const md = `name ${Buffer.from('a.txt').toString('base64')}`;

async function create(length = 10): Promise<string> {
  const res = await fetch(UPLOADS, { method: 'POST', headers: { ...H, 'upload-length': String(length), 'upload-metadata': md } });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
  return res.headers.get('location')!;
}

const patch = (url: string, offset: number, body: string, type = 'application/offset+octet-stream') =>
  fetch(url, { method: 'PATCH', headers: { ...H, 'upload-offset': String(offset), 'content-type': type }, body });

t.test('an unsupported or missing Tus-Resumable is 412 with Tus-Version', async (t) => {
  for (const version of ['0.2.2', undefined]) {
    const headers: Record<string, string> = { authorization: H.authorization, 'upload-length': '10', 'upload-metadata': md };
    if (version) headers['tus-resumable'] = version;
    const res = await fetch(UPLOADS, { method: 'POST', headers });
    t.equal(res.status, 412, `Tus-Resumable ${version ?? '(none)'}`);
    t.equal(res.headers.get('tus-version'), '1.0.0');
    t.equal(res.headers.get('tus-resumable'), '1.0.0');
    t.equal(((await res.json()) as { code: string }).code, 'tus_version_unsupported');
  }
  const url = await create();
  const head = await fetch(url, { method: 'HEAD', headers: { ...H, 'tus-resumable': '2.0.0' } });
  t.equal(head.status, 412, 'HEAD too');
  t.equal(head.headers.get('tus-version'), '1.0.0');
});

t.test('a PATCH in another media type is 415, and nothing is written', async (t) => {
  const url = await create();
  const res = await patch(url, 0, 'abc', 'text/plain');
  t.equal(res.status, 415);
  t.equal(res.headers.get('tus-resumable'), '1.0.0');
  t.equal(((await res.json()) as { code: string }).code, 'unsupported_media_type');
  const head = await fetch(url, { method: 'HEAD', headers: H });
  t.equal(head.headers.get('upload-offset'), '0');
});

t.test('every answer says Tus-Resumable: refusals, 404 and 401 included', async (t) => {
  const url = await create();
  const answers = [
    await fetch(url, { method: 'HEAD', headers: { 'tus-resumable': '1.0.0' } }),
    await fetch(`${UPLOADS}/00000000-0000-4000-8000-000000000000`, { method: 'HEAD', headers: H }),
    await patch(url, 5, 'abc'),
    await fetch(UPLOADS, { method: 'POST', headers: { ...H, 'upload-length': '10' } }),
  ];
  t.same(
    answers.map((r) => r.status),
    [401, 404, 409, 400],
  );
  for (const r of answers) t.equal(r.headers.get('tus-resumable'), '1.0.0', `on the ${r.status}`);
});

t.test('OPTIONS says what the server speaks', async (t) => {
  for (const url of [UPLOADS, await create()]) {
    const res = await fetch(url, { method: 'OPTIONS' });
    t.equal(res.status, 204);
    t.equal(res.headers.get('tus-version'), '1.0.0');
    t.match(res.headers.get('tus-extension'), /creation.*termination.*expiration/);
    t.match(res.headers.get('tus-max-size'), /^\d+$/);
  }
});

t.test('HEAD answers the metadata the client sent, not who owns the upload', async (t) => {
  const url = await create();
  const head = await fetch(url, { method: 'HEAD', headers: H });
  t.equal(head.status, 200);
  t.equal(head.headers.get('upload-metadata'), md);
  t.notMatch(head.headers.get('upload-metadata') ?? '', /folio_owner/);
});

t.test('an empty PATCH that does not finish the upload is refused', async (t) => {
  const url = await create();
  const answers = await Promise.all(Array.from({ length: 5 }, () => patch(url, 0, '')));
  for (const r of answers) {
    t.equal(r.status, 400);
    t.equal(r.headers.get('tus-resumable'), '1.0.0');
    t.match(((await r.json()) as { detail: string }).detail, /must bring bytes/);
  }
  // Chunked (no Content-Length), ending without a byte: refused too, once the body has ended.
  const chunked = await fetch(url, {
    method: 'PATCH',
    headers: { ...H, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
    body: new ReadableStream({ start: (c) => c.close() }),
    duplex: 'half',
  });
  t.equal(chunked.status, 400, 'a chunked body with no byte');
  t.equal(chunked.headers.get('tus-resumable'), '1.0.0');
  t.match(((await chunked.json()) as { detail: string }).detail, /must bring bytes/);
  const head = await fetch(url, { method: 'HEAD', headers: H });
  t.equal(head.headers.get('upload-offset'), '0', 'the offset has not moved');
  const done = await patch(url, 0, '0123456789');
  t.equal(done.status, 200, 'bytes are taken as before');
});

t.test('an expired upload is 404 to GET, HEAD and PATCH alike', async (t) => {
  const url = await create();
  t.equal((await patch(url, 0, 'abc')).status, 204);
  const id = url.split('/').pop()!;
  // Its creation date, moved back past the 24 h expiry, in the tus file store's record of it.
  const record = path.join(s.folio.config.dataDir, 'uploads', `${id}.json`);
  const info = JSON.parse(await readFile(record, 'utf8')) as { creation_date: string };
  info.creation_date = new Date(Date.now() - 25 * 3600_000).toISOString();
  await writeFile(record, JSON.stringify(info));
  const get = await fetch(url, { headers: { authorization: H.authorization } });
  const head = await fetch(url, { method: 'HEAD', headers: H });
  const more = await patch(url, 3, 'def');
  t.same([get.status, head.status, more.status], [404, 404, 404]);
});
