// The filedb group of the REST API over real HTTP and a real database: uploads (raw and multipart),
// downloads (ETag, 304, Range, HEAD, Content-Disposition), versions with If-Match, trash, the quota
// and the per-file limit, attachments, another user's file, and an upload cut off midway. Every
// answer is checked against the server's own OpenAPI document (rest-support.ts).
import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { call, startTestServer, createUser, type Reply } from '../helpers/server.ts';
import { api, conform, spec } from './rest-support.ts';

const s = await startTestServer({ overrides: { files: { maxFileBytes: 64 * 1024, trashRetentionDays: 30, trashSweepMinutes: 60 } } });
t.teardown(() => s.close());
const alice = await createUser(s, 'alice@example.com');
const bob = await createUser(s, 'bob@example.com');
const blobs = path.join(s.folio.config.dataDir, 'blobs');

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/** fetch with a token and a raw body, checked against the OpenAPI document. */
async function raw(
  method: string,
  p: string,
  opts: { token?: string; body?: Buffer | string | FormData; headers?: Record<string, string> } = {},
): Promise<Reply & { bytes: Buffer }> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const res = await fetch(`${s.url}/api/v1${p}`, { method, headers, ...(opts.body !== undefined ? { body: opts.body } : {}) });
  const bytes = Buffer.from(await res.arrayBuffer());
  const text = bytes.toString('utf8');
  const r = { status: res.status, headers: res.headers, text, json: () => JSON.parse(text), bytes };
  // A HEAD answer has no body to check.
  if (method !== 'HEAD') conform(await spec(s), method, `/api/v1${p}`, r);
  return r;
}

async function upload(name: string, body: Buffer | string, token = alice.token, type?: string) {
  const r = await raw('POST', `/filedb/files?name=${encodeURIComponent(name)}`, {
    token,
    body,
    ...(type ? { headers: { 'content-type': type } } : {}),
  });
  if (r.status !== 201) throw new Error(`upload: ${r.status} ${r.text}`);
  return r.json();
}

async function staging(): Promise<string[]> {
  return readdir(path.join(blobs, '.staging')).catch(() => []);
}

t.test('raw upload: 201 with the contract fields; the bytes come back with their headers', async (t) => {
  const r = await raw('POST', '/filedb/files?name=pixel.png', {
    token: alice.token,
    body: PNG,
    headers: { 'content-type': 'application/octet-stream' },
  });
  t.equal(r.status, 201);
  const f = r.json();
  t.match(f, {
    name: 'pixel.png',
    version: 1,
    size: PNG.length,
    sha256: sha(PNG),
    content_type: 'image/png',
    note_id: null,
    deleted_at: null,
  });
  t.equal(r.headers.get('etag'), '"1"');
  t.equal(r.headers.get('location'), `/api/v1/filedb/files/${f.id}`);

  const got = await raw('GET', `/filedb/files/${f.id}/content`, { token: alice.token });
  t.equal(got.status, 200);
  t.same(got.bytes, PNG);
  t.equal(got.headers.get('content-type'), 'image/png');
  t.equal(got.headers.get('x-content-type-options'), 'nosniff');
  t.equal(got.headers.get('etag'), '"1"');
  t.match(got.headers.get('content-disposition'), /^inline; filename="pixel.png"/);

  const head = await raw('HEAD', `/filedb/files/${f.id}/content`, { token: alice.token });
  t.equal(head.status, 200);
  t.equal(head.headers.get('content-length'), String(PNG.length));
  t.equal(head.bytes.length, 0);

  const cached = await raw('GET', `/filedb/files/${f.id}/content`, { token: alice.token, headers: { 'if-none-match': '"1"' } });
  t.equal(cached.status, 304);
  t.equal(cached.bytes.length, 0);

  const meta = await api(s, 'GET', `/filedb/files/${f.id}`, { token: alice.token });
  t.same(meta.json(), f);
  const list = await api(s, 'GET', '/filedb/files', { token: alice.token });
  t.ok(list.json().items.some((x: { id: string }) => x.id === f.id));
});

t.test('Range: 206 with Content-Range, suffix ranges, 416 past the end', async (t) => {
  const body = Buffer.from('0123456789abcdef');
  const f = await upload('digits.txt', body, alice.token, 'text/plain');
  const part = await raw('GET', `/filedb/files/${f.id}/content`, { token: alice.token, headers: { range: 'bytes=2-5' } });
  t.equal(part.status, 206);
  t.equal(part.text, '2345');
  t.equal(part.headers.get('content-range'), 'bytes 2-5/16');
  const tail = await raw('GET', `/filedb/files/${f.id}/content`, { token: alice.token, headers: { range: 'bytes=-3' } });
  t.equal(tail.text, 'def');
  const past = await raw('GET', `/filedb/files/${f.id}/content`, { token: alice.token, headers: { range: 'bytes=16-' } });
  t.equal(past.status, 416);
  t.equal(past.json().code, 'range_not_satisfiable');
  t.equal(past.headers.get('content-range'), 'bytes */16');
  const stale = await raw('GET', `/filedb/files/${f.id}/content`, {
    token: alice.token,
    headers: { range: 'bytes=2-5', 'if-range': '"9"' },
  });
  t.equal(stale.status, 200, 'If-Range that does not match: the whole content');
  t.equal(stale.text, body.toString());
});

t.test('names: unicode is kept and encoded per RFC 5987; bad ones are a clear 400; zero bytes is fine', async (t) => {
  const f = await upload('Ünïcødé "quote" 報告.txt', '', alice.token, 'text/plain');
  t.equal(f.size, 0);
  t.equal(f.sha256, sha(''));
  const got = await raw('GET', `/filedb/files/${f.id}/content`, { token: alice.token });
  t.equal(got.status, 200);
  t.equal(got.bytes.length, 0);
  const cd = got.headers.get('content-disposition')!;
  t.match(cd, /filename="_n_c_d_ _quote_ __\.txt"/);
  t.match(cd, /filename\*=UTF-8''%C3%9Cn%C3%AFc%C3%B8d%C3%A9%20%22quote%22%20%E5%A0%B1%E5%91%8A\.txt/);
  for (const bad of ['../etc/passwd', 'a/b', 'nul\u0000byte', 'line\nbreak', 'tab\there', '..', 'x'.repeat(256), 'é'.repeat(128)]) {
    const r = await raw('POST', `/filedb/files?name=${encodeURIComponent(bad)}`, { token: alice.token, body: 'x' });
    t.equal(r.status, 400, JSON.stringify(bad.slice(0, 20)));
    t.equal(r.json().code, 'validation_failed');
    t.match(r.json().errors[0], { path: '/name' });
  }
  const none = await raw('POST', '/filedb/files', { token: alice.token, body: 'x' });
  t.equal(none.status, 400);
});

t.test('a name with an invisible or text-direction character is a 400 naming it, however the name arrives', async (t) => {
  const detail = (text: string) => (JSON.parse(text) as { detail: string }).detail;
  const named = /U\+202E \(right-to-left override\)/;
  const spoof = 'invoice\u202Efdp.exe';
  const query = await raw('POST', `/filedb/files?name=${encodeURIComponent(spoof)}`, { token: alice.token, body: 'x' });
  t.equal(query.status, 400, 'upload, ?name=');
  t.match(detail(query.text), named);
  for (const [how, build] of [
    ['multipart field', (f: FormData) => (f.append('name', spoof), f.append('file', new Blob(['x']), 'x.bin'))],
    ['multipart file name', (f: FormData) => f.append('file', new Blob(['x']), spoof)],
  ] as const) {
    const form = new FormData();
    build(form);
    const r = await raw('POST', '/filedb/files', { token: alice.token, body: form });
    t.equal(r.status, 400, how);
    t.match(detail(r.text), named, how);
  }
  const f = await upload('plain.txt', 'x');
  const renamed = await raw('PATCH', `/filedb/files/${f.id}`, {
    token: alice.token,
    body: JSON.stringify({ name: 'a\u200Bb.txt' }),
    headers: { 'content-type': 'application/json' },
  });
  t.equal(renamed.status, 400, 'rename');
  t.match(detail(renamed.text), /U\+200B \(zero width space\)/);
  const curl = await call(s, alice.token, 'files', 'write', { name: '\uFEFFnotes.md', text: 'x' });
  t.equal(curl.status, 400, 'files.write over curl');
  t.match(curl.text, /U\+FEFF/);
  t.equal((await api(s, 'GET', `/filedb/files/${f.id}`, { token: alice.token })).json().name, 'plain.txt', 'the name is unchanged');
  const form = new FormData();
  form.append('file', new Blob(['x']), 'Ünïcødé 報告.txt');
  t.equal(
    (await raw('POST', '/filedb/files', { token: alice.token, body: form })).json().name,
    'Ünïcødé 報告.txt',
    'a form keeps a unicode file name',
  );
  // A joiner inside a word of a script that needs it, or an emoji sequence, is part of the name.
  for (const ok of ['نمی\u200Cخواهم.txt', '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}.png']) t.equal((await upload(ok, 'x')).name, ok);
});

t.test('active content is always an attachment', async (t) => {
  const html = await upload('page.html', '<script>alert(1)</script>', alice.token, 'text/html');
  t.equal(html.content_type, 'text/html');
  const r = await raw('GET', `/filedb/files/${html.id}/content`, { token: alice.token });
  t.match(r.headers.get('content-disposition'), /^attachment;/);
  t.match(r.headers.get('content-security-policy'), /sandbox/);
  const svg = await upload(
    'logo.svg',
    '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
    alice.token,
    'image/svg+xml',
  );
  const r2 = await raw('GET', `/filedb/files/${svg.id}/content`, { token: alice.token });
  t.match(r2.headers.get('content-type'), /^image\/svg\+xml/);
  t.match(r2.headers.get('content-disposition'), /^attachment;/);
});

t.test('multipart/form-data with a part `file` (a browser form)', async (t) => {
  const form = new FormData();
  form.append('folder', 'scans/2026');
  form.append('file', new Blob([PNG], { type: 'image/png' }), 'scan.png');
  const r = await raw('POST', '/filedb/files', { token: alice.token, body: form });
  t.equal(r.status, 201);
  t.match(r.json(), { name: 'scan.png', folder: 'scans/2026', size: PNG.length, sha256: sha(PNG), content_type: 'image/png' });
  const empty = new FormData();
  empty.append('name', 'x.txt');
  const missing = await raw('POST', '/filedb/files', { token: alice.token, body: empty });
  t.equal(missing.status, 400);
  t.match(missing.json().detail, /part named `file`/);
});

t.test('a multipart body that ends before its closing boundary is a 400, and the server stays up', async (t) => {
  const first = await upload('cut-form.txt', 'v1');
  const cut = '--zzz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello';
  const headers = { 'content-type': 'multipart/form-data; boundary=zzz' };
  const post = await raw('POST', '/filedb/files', { token: alice.token, body: cut, headers });
  t.equal(post.status, 400);
  t.match(post.json().detail, /multipart/);
  const put = await raw('PUT', `/filedb/files/${first.id}/content`, {
    token: alice.token,
    body: cut,
    headers: { ...headers, 'if-match': '"1"' },
  });
  t.equal(put.status, 400);
  const after = await raw('GET', `/filedb/files/${first.id}`, { token: alice.token });
  t.equal(after.status, 200, 'the server still answers');
  t.equal(after.json().version, 1, 'no version was made');
  t.same(await staging(), [], 'no staging file left');
  const names = (await api(s, 'GET', '/filedb/files?limit=100', { token: alice.token })).json().items.map((f: { name: string }) => f.name);
  t.notOk(names.includes('a.txt'), 'no file record');
});

t.test('a name or folder field after the file part is a 400 naming the order, and nothing is stored', async (t) => {
  const form = new FormData();
  form.append('file', new Blob([PNG], { type: 'image/png' }), 'late.png');
  form.append('folder', 'late/2026');
  const r = await raw('POST', '/filedb/files', { token: alice.token, body: form });
  t.equal(r.status, 400);
  t.match(r.json().detail, /`folder` came after the part `file`/);
  t.same(await staging(), [], 'no staging file left');
  const names = (await api(s, 'GET', '/filedb/files?limit=100', { token: alice.token })).json().items.map((f: { name: string }) => f.name);
  t.notOk(names.includes('late.png'), 'no file record');
  // Another field after the file is not one the upload reads: it changes nothing.
  const other = new FormData();
  other.append('file', new Blob([PNG], { type: 'image/png' }), 'other.png');
  other.append('comment', 'ignored');
  t.equal((await raw('POST', '/filedb/files', { token: alice.token, body: other })).status, 201);
});

t.test('versions: PUT needs If-Match (428), a stale one is 412 with the file; list, download and restore', async (t) => {
  const f = await upload('plan.md', 'v1 text', alice.token, 'text/markdown');
  const no = await raw('PUT', `/filedb/files/${f.id}/content`, { token: alice.token, body: 'v2 text' });
  t.equal(no.status, 428);
  t.match(no.json().detail, /send If-Match: "<version>" \(the ETag of GET \/api\/v1\/filedb\/files\/\{id\}\)/);
  t.notMatch(no.json().detail, /expected_version|Appends/, 'in terms of files, not of notes');
  const v2 = await raw('PUT', `/filedb/files/${f.id}/content`, {
    token: alice.token,
    body: 'v2 text',
    headers: { 'if-match': '"1"', 'content-type': 'text/markdown' },
  });
  t.equal(v2.status, 200);
  t.match(v2.json(), { version: 2, size: 7, sha256: sha('v2 text'), content_type: 'text/markdown' });
  t.equal(v2.headers.get('etag'), '"2"');
  const stale = await raw('PUT', `/filedb/files/${f.id}/content`, { token: alice.token, body: 'v3 text', headers: { 'if-match': '"1"' } });
  t.equal(stale.status, 412);
  t.match(stale.json().current, { version: 2, sha256: sha('v2 text') });
  t.equal(stale.headers.get('etag'), '"2"');
  const versions = await api(s, 'GET', `/filedb/files/${f.id}/versions`, { token: alice.token });
  t.same(
    versions.json().items.map((v: { version: number; change: string }) => [v.version, v.change]),
    [
      [2, 'upload'],
      [1, 'upload'],
    ],
  );
  const old = await raw('GET', `/filedb/files/${f.id}/versions/1/content`, { token: alice.token });
  t.equal(old.text, 'v1 text');
  const restored = await api(s, 'POST', `/filedb/files/${f.id}/versions/1/restore`, { token: alice.token });
  t.match(restored.json(), { version: 3, sha256: sha('v1 text') });
  const now = await raw('GET', `/filedb/files/${f.id}/content`, { token: alice.token });
  t.equal(now.text, 'v1 text');
  const missing = await raw('GET', `/filedb/files/${f.id}/versions/9/content`, { token: alice.token });
  t.equal(missing.status, 404);

  // PATCH (rename) takes If-Match when sent: a stale one is 412 and the name stays.
  const version = (await api(s, 'GET', `/filedb/files/${f.id}`, { token: alice.token })).json().version as number;
  const staleRename = await api(s, 'PATCH', `/filedb/files/${f.id}`, {
    token: alice.token,
    body: { name: 'stale.txt' },
    headers: { 'if-match': `"${version - 1}"` },
  });
  t.equal(staleRename.status, 412);
  t.equal(staleRename.json().current.version, version);
  const fresh = await api(s, 'PATCH', `/filedb/files/${f.id}`, {
    token: alice.token,
    body: { name: 'fresh.txt' },
    headers: { 'if-match': `"${version}"` },
  });
  t.equal(fresh.status, 200);
  t.equal(fresh.json().name, 'fresh.txt');
  const any = await api(s, 'PATCH', `/filedb/files/${f.id}`, {
    token: alice.token,
    body: { folder: 'kept' },
    headers: { 'if-match': '*' },
  });
  t.equal(any.status, 200, 'If-Match: * matches the file');
  t.equal(any.json().folder, 'kept');
  t.equal(
    (await api(s, 'GET', `/filedb/files/${f.id}`, { token: alice.token })).json().name,
    'fresh.txt',
    'the stale rename changed nothing',
  );
});

t.test("another user's file, version, attachment list and share link are 404 everywhere", async (t) => {
  const f = await upload('secret.txt', 'alice only');
  const share = await api(s, 'POST', `/filedb/files/${f.id}/shares`, { token: alice.token, body: {} });
  const asBob = { token: bob.token };
  const reads: Array<[string, string]> = [
    ['GET', `/filedb/files/${f.id}`],
    ['GET', `/filedb/files/${f.id}/content`],
    ['HEAD', `/filedb/files/${f.id}/content`],
    ['GET', `/filedb/files/${f.id}/versions`],
    ['GET', `/filedb/files/${f.id}/versions/1/content`],
    ['POST', `/filedb/files/${f.id}/versions/1/restore`],
    ['DELETE', `/filedb/files/${f.id}`],
    ['POST', `/filedb/files/${f.id}/restore`],
    ['DELETE', `/filedb/trash/${f.id}`],
    ['DELETE', `/filedb/shares/${share.json().id}`],
  ];
  for (const [m, p] of reads) {
    const r = await raw(m, p, asBob);
    t.equal(r.status, 404, `${m} ${p}`);
  }
  t.equal((await api(s, 'POST', `/filedb/files/${f.id}/shares`, { ...asBob, body: {} })).status, 404);
  t.equal((await api(s, 'PATCH', `/filedb/files/${f.id}`, { ...asBob, body: { name: 'mine.txt' } })).status, 404);
  const put = await raw('PUT', `/filedb/files/${f.id}/content`, { ...asBob, body: 'x', headers: { 'if-match': '"1"' } });
  t.equal(put.status, 404);
  t.same((await api(s, 'GET', '/filedb/shares', asBob)).json().items, []);
  t.notOk((await api(s, 'GET', '/filedb/files', asBob)).json().items.some((x: { id: string }) => x.id === f.id));
  const still = await raw('GET', `/filedb/files/${f.id}/content`, { token: alice.token });
  t.equal(still.text, 'alice only', 'nothing changed');
});

t.test('trash, restore, purge; purge gives the bytes back to the quota', async (t) => {
  const f = await upload('old.bin', Buffer.alloc(1000, 7));
  const usage = async () =>
    (
      await s.folio.db.orm.em
        .fork()
        .execute<{ bytes: string }[]>(`select bytes from storage_usage where owner_id = ? and kind = 'files'`, [alice.id])
    )[0]!.bytes;
  const before = Number(await usage());
  t.equal((await api(s, 'POST', `/filedb/files/${f.id}/purge`, { token: alice.token })).status, 404, 'no such route');
  const early = await api(s, 'DELETE', `/filedb/trash/${f.id}`, { token: alice.token });
  t.equal(early.status, 409, 'a live file cannot be purged');
  const trashed = await api(s, 'DELETE', `/filedb/files/${f.id}`, { token: alice.token });
  t.ok(trashed.json().deleted_at);
  t.ok((await api(s, 'GET', '/filedb/trash', { token: alice.token })).json().items.some((x: { id: string }) => x.id === f.id));
  t.notOk((await api(s, 'GET', '/filedb/files', { token: alice.token })).json().items.some((x: { id: string }) => x.id === f.id));
  const put = await raw('PUT', `/filedb/files/${f.id}/content`, { token: alice.token, body: 'x', headers: { 'if-match': '"1"' } });
  t.equal(put.status, 409, 'a trashed file takes no new content');
  // Like a trashed note, a trashed file is still its owner's to read until it is purged...
  const kept = await raw('GET', `/filedb/files/${f.id}/content`, { token: alice.token });
  t.equal(kept.status, 200, 'its owner can still download it');
  t.same(kept.bytes, Buffer.alloc(1000, 7));
  t.equal((await raw('GET', `/filedb/files/${f.id}/versions/1/content`, { token: alice.token })).status, 200);
  t.equal((await api(s, 'GET', `/filedb/files/${f.id}/versions`, { token: alice.token })).status, 200);
  // ...and nobody else's, and not to be shared.
  t.equal((await raw('GET', `/filedb/files/${f.id}/content`, { token: bob.token })).status, 404);
  t.equal((await api(s, 'POST', `/filedb/files/${f.id}/shares`, { token: alice.token, body: {} })).status, 409);
  t.equal((await api(s, 'POST', `/filedb/files/${f.id}/restore`, { token: alice.token })).json().deleted_at, null);
  await api(s, 'DELETE', `/filedb/files/${f.id}`, { token: alice.token });
  t.equal((await api(s, 'DELETE', `/filedb/trash/${f.id}`, { token: alice.token })).status, 204);
  t.equal(Number(await usage()), before - 1000);
  t.equal((await api(s, 'GET', `/filedb/files/${f.id}`, { token: alice.token })).status, 404);
});

t.test('over the per-file limit: 413 file_too_large before or while reading; nothing stored', async (t) => {
  const big = Buffer.alloc(64 * 1024 + 1, 1);
  const declared = await raw('POST', '/filedb/files?name=big.bin', { token: alice.token, body: big });
  t.equal(declared.status, 413);
  t.match(declared.json(), { code: 'file_too_large', limit: 64 * 1024 });
  // Chunked: the size is only known as the bytes arrive.
  const chunked = await fetch(`${s.url}/api/v1/filedb/files?name=big.bin`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice.token}` },
    body: new ReadableStream({
      start(c) {
        for (let i = 0; i < 17; i++) c.enqueue(new Uint8Array(4096));
        c.close();
      },
    }),
    duplex: 'half',
  });
  t.equal(chunked.status, 413);
  t.equal(((await chunked.json()) as { code: string }).code, 'file_too_large');
  t.same(await staging(), [], 'no staging file left');
  const names = (await api(s, 'GET', '/filedb/files?limit=100', { token: alice.token })).json().items.map((f: { name: string }) => f.name);
  t.notOk(names.includes('big.bin'));
});

t.test('a large chunked upload over the per-file limit is a 413 (the server stops reading it)', async (t) => {
  const port = Number(new URL(s.url).port);
  const sock = net.connect(port, '127.0.0.1');
  await new Promise((r) => sock.once('connect', r));
  sock.write(
    `POST /api/v1/filedb/files?name=huge.bin HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${alice.token}\r\nTransfer-Encoding: chunked\r\n\r\n`,
  );
  let answer = '';
  sock.on('data', (d: Buffer) => (answer += d.toString('latin1')));
  // The server answers and closes while bytes are still going out: the writes after that fail
  // (EPIPE, ECONNRESET), which is the behaviour under test, not a failure of the test.
  sock.on('error', () => {});
  const chunk = Buffer.alloc(256 * 1024, 9);
  // A client that sends its body before it reads the answer (8 MiB, a chunk every 10 ms): the server
  // answers at the limit without waiting for the end, and that answer must still be there to read
  // although bytes kept coming after it (lingering close; a connection closed at once is reset by
  // the next bytes, and a reset makes the client drop the answer it had not read yet).
  sock.pause();
  for (let i = 0; i < 32 && !sock.destroyed; i++) {
    sock.write(`${chunk.length.toString(16)}\r\n`);
    sock.write(chunk);
    sock.write('\r\n');
    await new Promise((r) => setTimeout(r, 10));
  }
  sock.resume();
  // The body never ends (no last chunk): an answer can only come from the limit. Up to 10 s for it,
  // on a machine busy with other tests.
  for (let i = 0; i < 500 && !answer.includes('\r\n\r\n'); i++) await new Promise((r) => setTimeout(r, 20));
  sock.destroy();
  t.match(answer, /^HTTP\/1\.1 413 /, answer.split('\r\n')[0] ?? '(no answer)');
  t.match(answer, /file_too_large/);
  t.same(await staging(), [], 'no staging file left');
});

t.test('a client that disconnects mid-upload leaves nothing', async (t) => {
  const sock = net.connect(Number(new URL(s.url).port), '127.0.0.1');
  await new Promise((r) => sock.once('connect', r));
  sock.write(
    `POST /api/v1/filedb/files?name=cut.bin HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${alice.token}\r\nContent-Length: 50000\r\n\r\n`,
  );
  sock.write(Buffer.alloc(20000, 3));
  await new Promise((r) => setTimeout(r, 200));
  t.equal((await staging()).length, 1, 'the upload was being staged');
  sock.destroy();
  let left = await staging();
  for (let i = 0; i < 50 && left.length > 0; i++) {
    await new Promise((r) => setTimeout(r, 20));
    left = await staging();
  }
  t.same(left, [], 'the staging file is gone');
  const names = (await api(s, 'GET', '/filedb/files?limit=100', { token: alice.token })).json().items.map((f: { name: string }) => f.name);
  t.notOk(names.includes('cut.bin'), 'no file record');
});

t.test('attachments: a note lists its files, a file knows its note', async (t) => {
  const note = (await api(s, 'POST', '/notetaker/notes', { token: alice.token, body: { title: 'trip' } })).json();
  const f = await upload('ticket.txt', 'seat 12A');
  const attached = await api(s, 'PATCH', `/filedb/files/${f.id}`, { token: alice.token, body: { note_id: note.id } });
  t.equal(attached.json().note_id, note.id);
  const notUuid = await api(s, 'PATCH', `/filedb/files/${f.id}`, { token: alice.token, body: { note_id: 'abc' } });
  t.equal(notUuid.status, 400);
  t.match(notUuid.json().errors, [{ path: '/note_id', message: 'must be one of string (uuid), null' }], 'the format is named');
  const direct = await raw('POST', `/filedb/files?name=map.txt&note_id=${note.id}`, { token: alice.token, body: 'map' });
  t.equal(direct.json().note_id, note.id);
  const list = await api(s, 'GET', `/filedb/notes/${note.id}/files`, { token: alice.token });
  t.same(
    list
      .json()
      .items.map((x: { name: string }) => x.name)
      .sort(),
    ['map.txt', 'ticket.txt'],
  );
  t.equal((await api(s, 'GET', `/filedb/notes/${note.id}/files`, { token: bob.token })).status, 404);
  const bobs = await upload('b.txt', 'b', bob.token);
  t.equal(
    (await api(s, 'PATCH', `/filedb/files/${bobs.id}`, { token: bob.token, body: { note_id: note.id } })).status,
    404,
    "bob cannot attach to alice's note",
  );
});

t.test('scopes: files:read cannot upload', async (t) => {
  const minted = await fetch(`${s.url}/curl/call/admin/mint_curl_token`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ scopes: ['files:read'] }),
  });
  const { token } = (await minted.json()) as { token: string };
  const r = await raw('POST', '/filedb/files?name=a.txt', { token, body: 'a' });
  t.equal(r.status, 403);
  t.equal(r.json().code, 'missing_scope');
  t.equal((await api(s, 'GET', '/filedb/files', { token })).status, 200);
});

t.test('a resumable (tus) upload and the extracted text, as the document describes them', async (t) => {
  const tus = { 'tus-resumable': '1.0.0' };
  const body = Buffer.from('first line\nsecond line\n');
  const md = `name ${Buffer.from('notes.txt').toString('base64')},filetype ${Buffer.from('text/plain').toString('base64')}`;
  const created = await raw('POST', '/filedb/uploads', {
    token: alice.token,
    headers: { ...tus, 'upload-length': String(body.length), 'upload-metadata': md },
  });
  t.equal(created.status, 201);
  const id = created.headers.get('location')!.split('/').pop()!;
  const part = await raw('PATCH', `/filedb/uploads/${id}`, {
    token: alice.token,
    headers: { ...tus, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
    body: body.subarray(0, 5),
  });
  t.equal(part.status, 204);
  t.equal(part.headers.get('upload-offset'), '5');
  t.match((await raw('GET', `/filedb/uploads/${id}`, { token: alice.token })).json(), {
    id,
    offset: 5,
    length: body.length,
    file_id: null,
  });
  const last = await raw('PATCH', `/filedb/uploads/${id}`, {
    token: alice.token,
    headers: { ...tus, 'upload-offset': '5', 'content-type': 'application/offset+octet-stream' },
    body: body.subarray(5),
  });
  t.equal(last.status, 200);
  t.match(last.json(), { id, name: 'notes.txt', size: body.length, sha256: sha(body), version: 1 });
  const other = await raw('POST', '/filedb/uploads', {
    token: alice.token,
    headers: { ...tus, 'upload-length': '10', 'upload-metadata': md },
  });
  const gone = other.headers.get('location')!.split('/').pop()!;
  t.equal((await raw('DELETE', `/filedb/uploads/${gone}`, { token: alice.token, headers: tus })).status, 204);
  t.equal((await raw('GET', `/filedb/uploads/${gone}`, { token: alice.token })).status, 404);

  // Its text, once the extraction job has run.
  let text = await raw('GET', `/filedb/files/${id}/text`, { token: alice.token });
  for (let i = 0; i < 150 && text.json().state === 'pending'; i++) {
    await new Promise((r) => setTimeout(r, 200));
    text = await raw('GET', `/filedb/files/${id}/text`, { token: alice.token });
  }
  t.match(text.json(), { file_id: id, version: 1, state: 'extracted', pages: 0, page: null, text: 'first line\nsecond line\n' });
  const paged = await raw('GET', `/filedb/files/${id}/text?page=1`, { token: alice.token });
  t.equal(paged.status, 400, 'a text file has no pages');
  t.equal((await raw('GET', `/filedb/files/${id}/text`, { token: bob.token })).status, 404, "another user's file");
});

t.test('a tus upload whose creation brings every byte (or none: zero length) answers with the file, once', async (t) => {
  const tus = { 'tus-resumable': '1.0.0' };
  const md = (name: string) => `name ${Buffer.from(name).toString('base64')}`;
  const whole = await raw('POST', '/filedb/uploads', {
    token: alice.token,
    headers: { ...tus, 'upload-length': '5', 'upload-metadata': md('cwu.txt'), 'content-type': 'application/offset+octet-stream' },
    body: 'hello',
  });
  t.equal(whole.status, 201, whole.text);
  t.match(whole.json(), { name: 'cwu.txt', size: 5, sha256: sha('hello'), version: 1 });
  const id = whole.json().id as string;
  t.equal(whole.headers.get('location')?.split('/').pop(), id, 'Location names the upload, which is the file');
  const again = await raw('HEAD', `/filedb/uploads/${id}`, { token: alice.token, headers: tus });
  t.equal(again.status, 200, 'a HEAD after it says the upload is whole');
  t.equal(again.headers.get('upload-offset'), '5');
  const zero = await raw('POST', '/filedb/uploads', {
    token: alice.token,
    headers: { ...tus, 'upload-length': '0', 'upload-metadata': md('zero.txt') },
  });
  t.equal(zero.status, 201, zero.text);
  t.match(zero.json(), { name: 'zero.txt', size: 0, sha256: sha('') });
  const names = (await api(s, 'GET', '/filedb/files?limit=100', { token: alice.token })).json().items.map((f: { name: string }) => f.name);
  t.equal(names.filter((n: string) => n === 'cwu.txt').length, 1, 'stored once');
  t.equal(names.filter((n: string) => n === 'zero.txt').length, 1, 'stored once');
});

t.test('the files list lowers a limit over 100 and says so, as every list does', async (t) => {
  const r = await api(s, 'GET', '/filedb/files?limit=500', { token: alice.token });
  t.equal(r.status, 200);
  t.match(r.json(), { limit: 100, limit_clamped_from: 500 });
  t.equal(r.headers.get('folio-limit-clamped'), 'requested=500; limit=100');
});

t.test('every filedb operation was exercised with a success status', async (t) => {
  const f = await upload('last.txt', 'last');
  const link = await api(s, 'POST', `/filedb/files/${f.id}/shares`, { token: alice.token, body: { label: 'x' } });
  t.equal((await api(s, 'DELETE', `/filedb/shares/${link.json().id}`, { token: alice.token })).status, 204);
  const sp = await spec(s);
  for (const o of sp.operations.filter((x) => x.template.startsWith('/filedb/'))) {
    const seen = sp.seen.get(o.op.operationId) ?? new Set();
    t.ok(
      [...seen].some((x) => /^[23]\d\d$/.test(x)),
      `${o.op.operationId} answered a success (${[...seen].join(', ')})`,
    );
  }
});
