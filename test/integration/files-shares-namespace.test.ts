// Share links over real HTTP (the public /s/{token} route: password, expiry, download limit,
// revocation, the throttle) and the `files` namespace over curl and MCP (read in parts, download
// bytes, write, attach, share), on one server.
import { createHash } from 'node:crypto';
import t from 'tap';
import { pdf } from '../helpers/pdf.ts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, createUser, call, req } from '../helpers/server.ts';

const s = await startTestServer({ overrides: { jobs: { pollSeconds: 1 } } });
t.teardown(() => s.close());
const alice = await createUser(s, 'alice@example.com');
const bob = await createUser(s, 'bob@example.com');
const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

async function upload(name: string, body: Buffer | string, token = alice.token) {
  const r = await fetch(`${s.url}/api/v1/filedb/files?name=${encodeURIComponent(name)}`, { method: 'POST', headers: auth(token), body });
  if (r.status !== 201) throw new Error(`upload ${r.status}`);
  return (await r.json()) as { id: string; version: number; sha256: string };
}
async function share(id: string, body: Record<string, unknown> = {}, token = alice.token) {
  const r = await req(s, 'POST', `/api/v1/filedb/files/${id}/shares`, { token, body });
  if (r.status !== 201) throw new Error(`share ${r.status} ${r.text}`);
  return r.json<{ id: string; url: string; token: string }>();
}
const open = (url: string, headers: Record<string, string> = {}, method = 'GET') => fetch(url, { method, headers });

t.test('a link serves the file without a token; only its hash is stored; revoke ends it', async (t) => {
  const f = await upload('report.txt', 'quarterly numbers');
  const link = await share(f.id, { label: 'for Ana' });
  t.match(link.url, new RegExp(`^${s.url}/s/[A-Za-z0-9_-]{43}$`), '256-bit token in the URL');
  const stored = await s.folio.db.orm.em
    .fork()
    .execute<{ token_hash: string }[]>(`select token_hash from file_shares where id = ?`, [link.id]);
  t.equal(stored[0]!.token_hash, createHash('sha256').update(link.token).digest('hex'));
  t.notOk(JSON.stringify(stored).includes(link.token), 'the token itself is not stored');
  const r = await open(link.url);
  t.equal(r.status, 200);
  t.equal(await r.text(), 'quarterly numbers');
  t.match(r.headers.get('content-disposition'), /filename="report.txt"/);
  const head = await open(link.url, {}, 'HEAD');
  t.equal(head.status, 200);
  t.equal(head.headers.get('content-length'), '17');
  const list = (await req(s, 'GET', '/api/v1/filedb/shares', { token: alice.token })).json().items;
  t.match(
    list.find((x: { id: string }) => x.id === link.id),
    { label: 'for Ana', downloads: 1, state: 'active', has_password: false },
  );
  t.ok(list.find((x: { id: string }) => x.id === link.id).last_access_at);
  t.equal((await req(s, 'DELETE', `/api/v1/filedb/shares/${link.id}`, { token: bob.token })).status, 404, 'not bob’s to revoke');
  t.equal((await req(s, 'DELETE', `/api/v1/filedb/shares/${link.id}`, { token: alice.token })).status, 204);
  const gone = await open(link.url);
  t.equal(gone.status, 404);
  const unknown = await open(`${s.url}/s/${'A'.repeat(43)}`);
  t.equal(await gone.text(), await unknown.text(), 'a revoked link reads like an unknown one');
});

t.test('download limit, expiry and a pinned version', async (t) => {
  const f = await upload('v.txt', 'one');
  await fetch(`${s.url}/api/v1/filedb/files/${f.id}/content`, {
    method: 'PUT',
    headers: { ...auth(alice.token), 'if-match': '"1"' },
    body: 'two',
  });
  const pinned = await share(f.id, { version: 1, max_downloads: 2 });
  t.equal(await (await open(pinned.url)).text(), 'one');
  t.equal((await open(pinned.url, { range: 'bytes=1-' })).status, 206, 'a range is served, and on a limited link it counts');
  t.equal((await open(pinned.url)).status, 404, 'exhausted after two answers with content');
  // The way around a limit that counted only whole downloads: the tail, then byte 0, again and again.
  const once = await share(f.id, { version: 1, max_downloads: 1 });
  t.equal(await (await open(once.url, { range: 'bytes=1-' })).text(), 'ne');
  t.equal((await open(once.url, { range: 'bytes=0-0' })).status, 404, 'the limit of one was spent by the range');
  t.equal((await open(once.url, { range: 'bytes=1-' })).status, 404);
  const current = await share(f.id);
  t.equal(await (await open(current.url)).text(), 'two');
  t.equal((await open(current.url, { range: 'bytes=1-' })).status, 206);
  const counted = (await req(s, 'GET', `/api/v1/filedb/shares?file_id=${f.id}`, { token: alice.token })).json().items;
  t.equal(counted.find((x: { id: string }) => x.id === current.id).downloads, 1, 'without a limit, a resumed range does not count again');
  const expiring = await share(f.id, { expires_in_seconds: 1 });
  t.equal((await open(expiring.url)).status, 200);
  await s.folio.db.orm.em.fork().execute(`update file_shares set expires_at = now() - interval '1 second' where id = ?`, [expiring.id]);
  t.equal((await open(expiring.url)).status, 404, 'expired');
  const listed = (await req(s, 'GET', `/api/v1/filedb/shares?file_id=${f.id}`, { token: alice.token })).json().items;
  t.same(listed.map((x: { state: string }) => x.state).sort(), ['active', 'exhausted', 'exhausted', 'expired']);
  await req(s, 'DELETE', `/api/v1/filedb/files/${f.id}`, { token: alice.token });
  t.equal((await open(current.url)).status, 404, 'a trashed file is not served');
});

t.test('passwords: header for programs, a form for browsers, throttled when wrong', async (t) => {
  const f = await upload('secret.txt', 'the secret');
  const link = await share(f.id, { password: 'correct horse' });
  const stored = await s.folio.db.orm.em
    .fork()
    .execute<{ password_hash: string }[]>(`select password_hash from file_shares where id = ?`, [link.id]);
  t.match(stored[0]!.password_hash, /^\$argon2id\$/);
  t.equal((await open(link.url)).status, 401);
  const page = await open(link.url, { accept: 'text/html' });
  t.equal(page.status, 401);
  t.match(await page.text(), /<form method="post">/);
  const ok = await open(link.url, { 'x-share-password': 'correct horse' });
  t.equal(await ok.text(), 'the secret');
  const form = await fetch(link.url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'password=correct+horse',
  });
  t.equal(await form.text(), 'the secret', 'the browser form');
  let last = 0;
  for (let i = 0; i < 11; i++) last = (await open(link.url, { 'x-share-password': `wrong ${i}` })).status;
  t.equal(last, 429, 'throttled after repeated wrong passwords');
  const blocked = await open(link.url, { 'x-share-password': 'correct horse' });
  t.equal(blocked.status, 429, 'even the right password waits');
  t.ok(Number(blocked.headers.get('retry-after')) > 0);
});

t.test('parallel wrong passwords on one link: at most the limit checked; other links stay open', async (t) => {
  const link = await share((await upload('hammered.txt', 'alice data')).id, { password: 'alice password' });
  const bobs = await share((await upload('bob.txt', 'bob data', bob.token)).id, { password: 'bob password' }, bob.token);
  const free = await share((await upload('open.txt', 'open data', bob.token)).id, {}, bob.token);
  const statuses = await Promise.all(
    Array.from({ length: 30 }, (_, i) => fetch(link.url, { headers: { 'x-share-password': `guess ${i}` } }).then((r) => r.status)),
  );
  t.equal(statuses.filter((x) => x === 401).length, 5, 'five wrong passwords checked (per link and client), no more');
  t.equal(statuses.filter((x) => x === 429).length, 25, 'the rest refused before any check');
  t.equal((await fetch(link.url, { headers: { 'x-share-password': 'alice password' } })).status, 429, 'the right one waits too');
  const other = await fetch(bobs.url, { headers: { 'x-share-password': 'bob password' } });
  t.equal(await other.text(), 'bob data', "another user's link with a password still opens for this client");
  t.equal((await fetch(bobs.url, { headers: { 'x-share-password': 'not it' } })).status, 401, 'and a wrong one there is just wrong');
  t.equal(await (await fetch(free.url)).text(), 'open data', 'a link without a password is never throttled');
  t.equal(await (await fetch(free.url, { headers: { 'x-share-password': 'whatever' } })).text(), 'open data');
});

t.test('curl: files.read in parts, files.download raw bytes, write, attach', async (t) => {
  const text = 'é'.repeat(3000); // 6000 bytes, two bytes per character
  const f = await upload('long.txt', text);
  let offset: number | null = 0;
  let got = '';
  let parts = 0;
  while (offset !== null) {
    const r = await call(s, alice.token, 'files', 'read', { id: f.id, offset, max_bytes_llm: 2000 });
    t.equal(r.status, 200);
    t.ok(r.text.length <= 2000 * 2);
    const part = r.json<{ text: string; next_offset: number | null }>();
    got += part.text;
    offset = part.next_offset;
    parts++;
  }
  t.equal(got, text, 'the parts join into the file, no character split');
  t.ok(parts > 2);

  const img = await upload('pixel.png', PNG);
  const d = await fetch(`${s.url}/curl/call/files/download`, {
    method: 'POST',
    headers: { ...auth(alice.token), 'content-type': 'application/json' },
    body: JSON.stringify({ id: img.id }),
  });
  t.equal(d.status, 200);
  t.equal(d.headers.get('content-type'), 'image/png');
  t.same(Buffer.from(await d.arrayBuffer()), PNG);
  const small = await call(s, alice.token, 'files', 'download', { id: f.id, max_bytes_llm: 100 });
  t.equal(small.status, 413);
  t.match(small.text, new RegExp(`/api/v1/filedb/files/${f.id}/content`), 'says where to fetch it');

  const written = await call(s, alice.token, 'files', 'write', { name: 'todo.md', text: '# Todo', content_type: 'text/markdown' });
  const w = written.json<{ id: string; version: number; content_type: string }>();
  t.match(w, { version: 1, content_type: 'text/markdown' });
  const stale = await call(s, alice.token, 'files', 'write', { id: w.id, expected_version: 5, text: 'x' });
  t.equal(stale.status, 409);
  const v2 = await call(s, alice.token, 'files', 'write', { id: w.id, expected_version: 1, text: '# Todo\n- a' });
  t.equal(v2.json().version, 2);
  const note = (await req(s, 'POST', '/api/v1/notetaker/notes', { token: alice.token, body: { title: 'n' } })).json();
  t.equal((await call(s, alice.token, 'files', 'attach', { id: w.id, note_id: note.id })).json().note_id, note.id);
  t.same(
    (await call(s, alice.token, 'files', 'attachments', { note_id: note.id })).json().files.map((x: { id: string }) => x.id),
    [w.id],
  );
  t.equal((await call(s, bob.token, 'files', 'info', { id: w.id })).status, 404, "another user's file is 404 on curl");
  const sh = (await call(s, alice.token, 'files', 'share', { id: w.id })).json<{ id: string; url: string }>();
  t.equal(await (await open(sh.url)).text(), '# Todo\n- a');
  t.equal((await call(s, alice.token, 'files', 'revoke_share', { id: sh.id })).status, 200);
  t.equal((await open(sh.url)).status, 404);
});

t.test('MCP: images come back as image content, other binaries as embedded resources', async (t) => {
  const client = new Client({ name: 'files-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: auth(alice.token) } }));
  t.teardown(() => client.close());
  const img = await upload('dot.png', PNG);
  const r1 = await client.callTool({ name: 'files__download', arguments: { id: img.id } });
  t.same(r1.content, [{ type: 'image', data: PNG.toString('base64'), mimeType: 'image/png' }]);
  const bin = await upload('blob.bin', Buffer.from([0, 1, 2, 255]));
  const r2 = await client.callTool({ name: 'files__download', arguments: { id: bin.id } });
  const res = (r2.content as Array<{ type: string; resource: { blob: string; mimeType: string } }>)[0]!;
  t.equal(res.type, 'resource');
  t.equal(Buffer.from(res.resource.blob, 'base64').toString('hex'), '000102ff');
  const r3 = await client.callTool({ name: 'files__info', arguments: { id: bin.id } });
  t.notOk(r3.isError);
});

t.test("files.text: a PDF's extracted text, whole, in parts and per page, on curl and MCP", async (t) => {
  const f = await upload('minutes.pdf', await pdf(['Budget approved for the marketing plan.', 'Next meeting on Friday.']));
  let r = await call(s, alice.token, 'files', 'text', { id: f.id });
  for (let i = 0; i < 150 && r.json().state === 'pending'; i++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    r = await call(s, alice.token, 'files', 'text', { id: f.id });
  }
  t.equal(r.status, 200);
  t.match(r.json(), { file_id: f.id, version: 1, state: 'extracted', pages: 2, offset: 0, next_offset: null });
  t.match(r.json().text, /Budget approved[\s\S]*Next meeting/);
  const page2 = await call(s, alice.token, 'files', 'text', { id: f.id, page: 2 });
  t.match(page2.json(), { page: 2, text: /Next meeting on Friday/ });
  t.notMatch(page2.json().text, /Budget/);
  // A small budget: the text comes in parts that join up to the whole.
  let whole = '';
  let offset: number | null = 0;
  let parts = 0;
  while (offset !== null && parts < 100) {
    const part: { text: string; next_offset: number | null } = (
      await call(s, alice.token, 'files', 'text', { id: f.id, offset, max_bytes_llm: 700 })
    ).json();
    whole += part.text;
    offset = part.next_offset;
    parts++;
  }
  t.ok(parts > 1, `${parts} parts`);
  t.equal(whole, r.json().text);
  t.equal((await call(s, alice.token, 'files', 'text', { id: f.id, page: 3 })).status, 400, 'past the last page');
  t.equal((await call(s, bob.token, 'files', 'text', { id: f.id })).status, 404, "another user's file");

  const client = new Client({ name: 'files-text', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: auth(alice.token) } }));
  t.teardown(() => client.close());
  const m = await client.callTool({ name: 'files__text', arguments: { id: f.id, page: 1 } });
  t.notOk(m.isError);
  t.match((m.content as Array<{ text: string }>)[0]!.text, /Budget approved/);
});
