// Resumable uploads (tus) at /api/v1/filedb/uploads over real HTTP and a real database: a real tus
// client (tus-js-client) uploads in chunks; a connection cut mid-PATCH resumes from the offset the
// server reports; the last byte makes the file (same hash, same checks as any upload); limits and
// the quota refuse at creation, before any byte; another user's upload is 404; an abandoned upload
// expires and the job removes its bytes.
import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import * as tus from 'tus-js-client';
import { startTestServer, createUser } from '../helpers/server.ts';
import { api } from './rest-support.ts';

const MAX = 2 * 1024 * 1024;
const s = await startTestServer({
  overrides: { files: { maxFileBytes: MAX, trashRetentionDays: 30, trashSweepMinutes: 60 }, jobs: { pollSeconds: 1 } },
});
t.teardown(() => s.close());
const alice = await createUser(s, 'alice@example.com');
const bob = await createUser(s, 'bob@example.com');
const uploadsDir = path.join(s.folio.config.dataDir, 'uploads');
const UPLOADS = `${s.url}/api/v1/filedb/uploads`;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const b64 = (v: string) => Buffer.from(v).toString('base64');

function tusHeaders(token: string, extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${token}`, 'tus-resumable': '1.0.0', ...extra };
}

async function create(token: string, length: number, metadata: Record<string, string>): Promise<Response> {
  const md = Object.entries(metadata)
    .map(([k, v]) => `${k} ${b64(v)}`)
    .join(',');
  return fetch(UPLOADS, { method: 'POST', headers: tusHeaders(token, { 'upload-length': String(length), 'upload-metadata': md }) });
}

async function patch(token: string, url: string, offset: number, body: Buffer): Promise<Response> {
  return fetch(url, {
    method: 'PATCH',
    headers: tusHeaders(token, { 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' }),
    body,
  });
}

async function offsetOf(token: string, url: string): Promise<Response> {
  return fetch(url, { method: 'HEAD', headers: tusHeaders(token) });
}

async function download(id: string): Promise<Buffer> {
  const res = await fetch(`${s.url}/api/v1/filedb/files/${id}/content`, { headers: { authorization: `Bearer ${alice.token}` } });
  return Buffer.from(await res.arrayBuffer());
}

const leftovers = async () => (await readdir(uploadsDir).catch(() => [] as string[])).filter((n) => !n.endsWith('.json'));

t.test('tus-js-client uploads a file in chunks; the file has the bytes, the hash and the sniffed type', async (t) => {
  const bytes = Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(300 * 1024)]);
  let fileId: string | null = null;
  const url = await new Promise<string>((resolve, reject) => {
    const up = new tus.Upload(bytes, {
      endpoint: UPLOADS,
      chunkSize: 64 * 1024,
      headers: { authorization: `Bearer ${alice.token}` },
      metadata: { filename: 'scan.pdf', filetype: 'application/octet-stream', folder: 'inbox' },
      retryDelays: [],
      onAfterResponse: (_req, res) => {
        fileId = res.getHeader('Folio-File-Id') ?? fileId;
      },
      onError: reject,
      onSuccess: () => resolve(up.url!),
    });
    up.start();
  });
  t.match(url, /\/api\/v1\/filedb\/uploads\/[0-9a-f-]{36}$/);
  t.ok(fileId, 'the last PATCH names the file');
  t.equal(fileId, url.split('/').pop(), 'the file has the upload id');
  const f = await api(s, 'GET', `/filedb/files/${fileId}`, { token: alice.token });
  t.match(f.json(), {
    name: 'scan.pdf',
    folder: 'inbox',
    size: bytes.length,
    sha256: sha(bytes),
    content_type: 'application/pdf',
    version: 1,
  });
  t.same(await download(fileId!), bytes, 'the bytes come back as sent');
  t.same(await leftovers(), [], 'the temporary bytes are gone');
  // Asked again afterwards (a lost answer), the upload says where it went.
  const again = await offsetOf(alice.token, url);
  t.equal(again.status, 200);
  t.equal(again.headers.get('upload-offset'), String(bytes.length));
  t.equal(again.headers.get('folio-file-id'), fileId);
  const status = await api(s, 'GET', `/filedb/uploads/${fileId}`, { token: alice.token });
  t.match(status.json(), { id: fileId, offset: bytes.length, length: bytes.length, file_id: fileId });
});

t.test('a connection cut mid-PATCH: HEAD says what arrived, the rest completes the file', async (t) => {
  const bytes = randomBytes(512 * 1024);
  const created = await create(alice.token, bytes.length, { name: 'big.bin' });
  t.equal(created.status, 201);
  t.ok(created.headers.get('upload-expires'), 'an unfinished upload says when it expires');
  const url = created.headers.get('location')!;
  const u = new URL(url);
  // Send the headers for all of it and only part of the body, then drop the connection.
  const sent = 200 * 1024;
  await new Promise<void>((resolve, reject) => {
    const sock = net.connect(Number(u.port), u.hostname, () => {
      sock.write(
        `PATCH ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: Bearer ${alice.token}\r\nTus-Resumable: 1.0.0\r\n` +
          `Upload-Offset: 0\r\nContent-Type: application/offset+octet-stream\r\nContent-Length: ${bytes.length}\r\n\r\n`,
      );
      sock.write(bytes.subarray(0, sent), () => setTimeout(() => (sock.destroy(), resolve()), 300));
    });
    sock.on('error', reject);
  });
  let head: Response | undefined;
  for (let i = 0; i < 50; i++) {
    head = await offsetOf(alice.token, url);
    if (head.status === 200 && Number(head.headers.get('upload-offset')) > 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  t.equal(head!.status, 200);
  const offset = Number(head!.headers.get('upload-offset'));
  t.ok(offset > 0 && offset <= sent, `resumes from ${offset} of ${sent} sent`);
  t.equal(head!.headers.get('upload-length'), String(bytes.length));
  t.equal(
    (await api(s, 'GET', '/filedb/files', { token: alice.token })).json().items.filter((f: any) => f.name === 'big.bin').length,
    0,
    'no file yet',
  );

  const wrong = await patch(alice.token, url, 0, bytes.subarray(0, 10));
  t.equal(wrong.status, 409, 'a PATCH from the wrong offset is a conflict');
  t.equal(((await wrong.json()) as any).code, 'conflict');
  const rest = await patch(alice.token, url, offset, bytes.subarray(offset));
  t.equal(rest.status, 200, 'the last bytes store the file');
  const f = (await rest.json()) as any;
  t.match(f, { name: 'big.bin', size: bytes.length, sha256: sha(bytes) });
  t.same(await download(f.id), bytes);
});

t.test('the per-file limit and the quota refuse at creation; nothing is kept', async (t) => {
  const big = await create(alice.token, MAX + 1, { name: 'huge.iso' });
  t.equal(big.status, 413);
  t.equal(big.headers.get('content-type'), 'application/problem+json');
  t.equal(((await big.json()) as any).code, 'file_too_large');
  const before = (await readdir(uploadsDir)).length;
  const noName = await create(alice.token, 10, { filetype: 'text/plain' });
  t.equal(noName.status, 400);
  t.equal(((await noName.json()) as any).code, 'validation_failed');
  const badName = await create(alice.token, 10, { name: '../etc/passwd' });
  t.equal(badName.status, 400);
  const deferred = await fetch(UPLOADS, {
    method: 'POST',
    headers: tusHeaders(alice.token, { 'upload-defer-length': '1', 'upload-metadata': `name ${b64('x.txt')}` }),
  });
  t.equal(deferred.status, 400, 'the size must be known up front');
  t.equal((await readdir(uploadsDir)).length, before, 'no upload was created');

  const quota = await startTestServer({ overrides: { storage: { quotaBytesPerUser: 1000 } } });
  t.teardown(() => quota.close());
  const carol = await createUser(quota, 'carol@example.com');
  const over = await fetch(`${quota.url}/api/v1/filedb/uploads`, {
    method: 'POST',
    headers: tusHeaders(carol.token, { 'upload-length': '1001', 'upload-metadata': `name ${b64('a.bin')}` }),
  });
  t.equal(over.status, 507);
  t.equal(((await over.json()) as any).code, 'quota_exceeded');
});

t.test("another user's upload is 404 on every method; no token is 401", async (t) => {
  const created = await create(alice.token, 100, { name: 'mine.txt' });
  const url = created.headers.get('location')!;
  t.equal((await offsetOf(bob.token, url)).status, 404);
  t.equal((await patch(bob.token, url, 0, Buffer.alloc(100))).status, 404);
  t.equal((await fetch(url, { method: 'DELETE', headers: tusHeaders(bob.token) })).status, 404);
  t.equal((await fetch(url, { method: 'HEAD', headers: { 'tus-resumable': '1.0.0' } })).status, 401);
  t.equal((await offsetOf(alice.token, url)).headers.get('upload-offset'), '0', 'still there, untouched');
  const cancel = await fetch(url, { method: 'DELETE', headers: tusHeaders(alice.token) });
  t.equal(cancel.status, 204, 'the owner cancels it');
  t.equal((await offsetOf(alice.token, url)).status, 404);
});

t.test('an upload left unfinished past its expiry is removed by the files-expire-uploads job', async (t) => {
  const created = await create(alice.token, 1000, { name: 'abandoned.bin' });
  const url = created.headers.get('location')!;
  const id = url.split('/').pop()!;
  t.equal((await patch(alice.token, url, 0, randomBytes(400))).status, 204);
  // Age it: its record says it was created two days ago.
  const info = path.join(uploadsDir, `${id}.json`);
  const record = JSON.parse(await readFile(info, 'utf8'));
  record.creation_date = new Date(Date.now() - 48 * 3600_000).toISOString();
  await writeFile(info, JSON.stringify(record));
  t.equal((await patch(alice.token, url, 400, randomBytes(600))).status, 404, 'an expired upload takes no more bytes');
  await s.folio.jobs.send('files-expire-uploads', {});
  const deadline = Date.now() + 30_000;
  while ((await readdir(uploadsDir)).some((n) => n.startsWith(id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  t.same(
    (await readdir(uploadsDir)).filter((n) => n.startsWith(id)),
    [],
    'its bytes and record are gone',
  );
  t.equal((await offsetOf(alice.token, url)).status, 404);
});

t.test('a complete upload left behind (the process died around the hand-over) is finished by a HEAD or removed by the sweep', async (t) => {
  // Leave two uploads with every byte on disk but no hand-over, as a crash between the last byte
  // and storing the file would: write the bytes and the offset into tus's own files.
  const leftBehind = async (name: string, ageHours: number) => {
    const body = randomBytes(300);
    const created = await create(alice.token, body.length, { name });
    const url = created.headers.get('location')!;
    const id = url.split('/').pop()!;
    await writeFile(path.join(uploadsDir, id), body);
    const info = path.join(uploadsDir, `${id}.json`);
    const record = JSON.parse(await readFile(info, 'utf8'));
    record.offset = body.length;
    record.creation_date = new Date(Date.now() - ageHours * 3600_000).toISOString();
    await writeFile(info, JSON.stringify(record));
    return { id, url, body };
  };
  const fresh = await leftBehind('fresh-complete.bin', 1);
  const stale = await leftBehind('stale-complete.bin', 48);
  await s.folio.jobs.send('files-expire-uploads', {});
  const deadline = Date.now() + 30_000;
  while ((await readdir(uploadsDir)).some((n) => n.startsWith(stale.id)) && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 200));
  t.same(
    (await readdir(uploadsDir)).filter((n) => n.startsWith(stale.id)),
    [],
    'past its expiry, the complete upload is removed',
  );
  t.ok(
    (await readdir(uploadsDir)).some((n) => n === fresh.id),
    'a fresh one is kept for its client',
  );
  const head = await offsetOf(alice.token, fresh.url);
  t.equal(head.status, 200, 'a HEAD finishes it');
  const file = await api(s, 'GET', `/filedb/files/${fresh.id}`, { token: alice.token });
  t.match(file.json(), { name: 'fresh-complete.bin', size: 300, sha256: sha(fresh.body) });
  t.same(
    (await readdir(uploadsDir)).filter((n) => n.startsWith(fresh.id)),
    [],
    'and its temporary file is gone',
  );
});

t.test('malformed tus requests get a clear 4xx problem, never a 5xx', async (t) => {
  const created = await create(alice.token, 100, { name: 'x.txt' });
  const url = created.headers.get('location')!;
  const cases: Array<[string, string, Record<string, string>, string | undefined]> = [
    ['POST', UPLOADS, { authorization: `Bearer ${alice.token}`, 'upload-length': '10' }, undefined],
    ['POST', UPLOADS, tusHeaders(alice.token, { 'upload-length': 'abc', 'upload-metadata': `name ${b64('a')}` }), undefined],
    ['POST', UPLOADS, tusHeaders(alice.token, { 'upload-length': '-5', 'upload-metadata': `name ${b64('a')}` }), undefined],
    ['POST', UPLOADS, tusHeaders(alice.token, { 'upload-length': '10', 'upload-metadata': 'name !!!notbase64' }), undefined],
    ['PATCH', url, tusHeaders(alice.token, { 'upload-offset': '0' }), 'abc'],
    ['PATCH', url, tusHeaders(alice.token, { 'upload-offset': 'x', 'content-type': 'application/offset+octet-stream' }), 'abc'],
    ['PATCH', url, tusHeaders(alice.token, { 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }), 'a'.repeat(200)],
    [
      'PATCH',
      `${UPLOADS}/00000000-0000-4000-8000-000000000000`,
      tusHeaders(alice.token, { 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }),
      'a',
    ],
    ['HEAD', url, { authorization: `Bearer ${alice.token}` }, undefined],
    ['PATCH', `${UPLOADS}/not-a-uuid`, tusHeaders(alice.token, { 'upload-offset': '0' }), 'a'],
  ];
  for (const [method, u, headers, body] of cases) {
    const r = await fetch(u, { method, headers, ...(body !== undefined ? { body } : {}) });
    t.ok(r.status >= 400 && r.status < 500, `${method} ${u.slice(-12)} ${JSON.stringify(headers).slice(0, 80)} -> ${r.status}`);
    if (method !== 'HEAD') t.equal(r.headers.get('content-type'), 'application/problem+json');
  }
  t.equal((await offsetOf(alice.token, url)).headers.get('upload-offset'), '0', 'the upload took none of it');
});

t.test('OPTIONS on the upload URLs tells a tus client what this server speaks, without a token', async (t) => {
  for (const url of [`${s.url}/api/v1/filedb/uploads`, `${s.url}/api/v1/filedb/uploads/00000000-0000-4000-8000-000000000000`]) {
    const r = await fetch(url, { method: 'OPTIONS' });
    t.equal(r.status, 204, url);
    t.equal(r.headers.get('tus-version'), '1.0.0');
    t.equal(r.headers.get('tus-resumable'), '1.0.0');
    t.same(r.headers.get('tus-extension')?.split(','), ['creation', 'creation-with-upload', 'termination', 'expiration']);
    t.equal(r.headers.get('tus-max-size'), String(MAX), 'the per-file limit');
    t.match(r.headers.get('allow'), /OPTIONS/);
  }
  const other = await fetch(`${s.url}/api/v1/filedb/files`, { method: 'OPTIONS' });
  t.equal(other.headers.get('tus-version'), null, 'other paths are not tus');
});

t.test('unfinished uploads hold their declared length of the quota until they finish, are cancelled or expire', async (t) => {
  const q = await startTestServer({ overrides: { storage: { quotaBytesPerUser: 10_000 }, jobs: { pollSeconds: 1 } } });
  t.teardown(() => q.close());
  const dave = await createUser(q, 'dave@example.com');
  const start = (length: number, name: string) =>
    fetch(`${q.url}/api/v1/filedb/uploads`, {
      method: 'POST',
      headers: tusHeaders(dave.token, { 'upload-length': String(length), 'upload-metadata': `name ${b64(name)}` }),
    });
  const usage = async () => (await api(q, 'GET', '/notetaker/usage', { token: dave.token })).json();

  // Six uploads of 1,500 bytes, each left one byte short, hold 9,000 bytes of the 10,000.
  const held: string[] = [];
  for (let i = 0; i < 6; i++) {
    const r = await start(1500, `part-${i}.bin`);
    t.equal(r.status, 201, `upload ${i} is created`);
    const url = r.headers.get('location')!;
    t.equal((await patch(dave.token, url, 0, randomBytes(1499))).status, 204);
    held.push(url);
  }
  t.match(await usage(), { used: 9000, by_kind: { uploads: 9000 } }, 'the usage shows what uploads in progress hold');
  const over = await start(1500, 'one-more.bin');
  t.equal(over.status, 507, 'another upload does not fit beside them');
  t.match(await over.json(), { code: 'quota_exceeded', quota: { used: 9000, quota: 10_000, needed: 1500 } });
  const plain = await api(q, 'POST', '/filedb/files?name=plain.bin', {
    token: dave.token,
    body: 'x'.repeat(1500),
    headers: { 'content-type': 'application/octet-stream' },
  });
  t.equal(plain.status, 507, 'nor does a plain upload');

  // Cancelled: its bytes and its share of the quota are given back.
  t.equal((await fetch(held[0]!, { method: 'DELETE', headers: tusHeaders(dave.token) })).status, 204);
  t.match(await usage(), { used: 7500, by_kind: { uploads: 7500 } });

  // Finished: the file takes the upload's share, it is not counted twice.
  const last = await patch(dave.token, held[1]!, 1499, randomBytes(1));
  t.equal(last.status, 200, 'the last byte stores the file');
  t.match(await usage(), { used: 7500, by_kind: { uploads: 6000, files: 1500 } });

  // Expired: the job removes it and gives its share back.
  const id = held[2]!.split('/').pop()!;
  const info = path.join(q.folio.config.dataDir, 'uploads', `${id}.json`);
  const record = JSON.parse(await readFile(info, 'utf8'));
  record.creation_date = new Date(Date.now() - 48 * 3600_000).toISOString();
  await writeFile(info, JSON.stringify(record));
  await q.folio.jobs.send('files-expire-uploads', {});
  const deadline = Date.now() + 30_000;
  while ((await usage()).by_kind.uploads !== 4500 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  t.match(await usage(), { used: 6000, by_kind: { uploads: 4500, files: 1500 } }, 'an expired upload holds nothing');
  t.equal((await start(4000, 'fits-now.bin')).status, 201, 'what was given back can be used');
});

t.test('Upload-Concat (the concatenation extension, not offered) is a 400 that says what is offered', async (t) => {
  for (const concat of ['partial', `final;${UPLOADS}/00000000-0000-4000-8000-000000000000`]) {
    const r = await fetch(UPLOADS, {
      method: 'POST',
      headers: tusHeaders(alice.token, { 'upload-concat': concat, 'upload-length': '10', 'upload-metadata': `name ${b64('part.bin')}` }),
    });
    t.equal(r.status, 400, concat.slice(0, 7));
    t.equal(r.headers.get('content-type'), 'application/problem+json');
    const p = (await r.json()) as { code: string; detail: string };
    t.equal(p.code, 'bad_request');
    t.match(p.detail, /[Cc]oncatenation/);
    t.match(p.detail, /creation, creation-with-upload, termination, expiration/);
  }
});

t.test('a name with an invisible or text-direction character is refused in the tus metadata', async (t) => {
  const r = await create(alice.token, 10, { name: 'invoice\u202Efdp.exe' });
  t.equal(r.status, 400);
  const p = (await r.json()) as { code: string; detail: string };
  t.equal(p.code, 'validation_failed');
  t.match(p.detail, /U\+202E \(right-to-left override\)/);
});
