// The storage quota as a user meets it on every surface: a write over it is 507 quota_exceeded on
// REST (with used, quota and needed), a 507 with the same words over curl, an isError result over
// MCP, and stores nothing; the user's use is on GET /api/v1/notetaker/usage and notetaker.usage. A
// file body of unknown length (chunked, multipart) is refused as soon as it passes the quota.
import { readdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { call, createUser, startTestServer } from '../helpers/server.ts';
import { api } from './rest-support.ts';

const QUOTA = 20_000;
const s = await startTestServer({ overrides: { storage: { quotaBytesPerUser: QUOTA } } });
t.teardown(() => s.close());
const user = await createUser(s, 'quota@example.com');
const token = user.token;

const note = await api(s, 'POST', '/notetaker/notes', { token, body: { title: 'Big', body: 'x'.repeat(15_000) } });
const id = note.json<{ id: string }>().id;
const used = 3 + 15_000;

t.test('the user sees their use', async (t) => {
  const r = await api(s, 'GET', '/notetaker/usage', { token });
  t.equal(r.status, 200);
  t.same(r.json(), { used, quota: QUOTA, by_kind: { notes: used } });
  const c = await call(s, token, 'notetaker', 'usage');
  t.same(c.json(), { used, quota: QUOTA, by_kind: { notes: used } }, 'the same over curl');
});

t.test('REST: 507 quota_exceeded with the figures, and nothing stored', async (t) => {
  const r = await api(s, 'POST', '/notetaker/notes', { token, body: { title: 'More', body: 'y'.repeat(6_000) } });
  t.equal(r.status, 507);
  t.equal(r.headers.get('content-type'), 'application/problem+json');
  const p = r.json<{ code: string; detail: string; quota: unknown }>();
  t.equal(p.code, 'quota_exceeded');
  t.same(p.quota, { used, quota: QUOTA, needed: 4 + 6_000 });
  t.match(p.detail, /quota/);
  const rewrite = await api(s, 'PUT', `/notetaker/notes/${id}`, {
    token,
    headers: { 'If-Match': '"1"' },
    body: { title: 'Big', body: 'z'.repeat(15_000), tags: [] },
  });
  t.equal(rewrite.status, 507, 'a rewrite that needs a new snapshot is refused too');
  const list = await api(s, 'GET', '/notetaker/notes', { token });
  t.equal(list.json<{ items: unknown[] }>().items.length, 1, 'no note was added');
  const cur = await api(s, 'GET', `/notetaker/notes/${id}`, { token });
  t.equal(cur.json<{ version: number }>().version, 1, 'the note is unchanged');
  const appended = await api(s, 'PATCH', `/notetaker/notes/${id}`, { token, body: { append: { text: 'a small line' } } });
  t.equal(appended.status, 200, 'a small edit still fits: it stores only its delta');
});

t.test('curl and MCP refuse the same way', async (t) => {
  const c = await call(s, token, 'notetaker', 'create', { title: 'More', body: 'y'.repeat(6_000) });
  t.equal(c.status, 507);
  t.match(c.headers.get('content-type'), /^text\/plain/);
  t.match(c.text, /quota/);

  const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'quota-test', version: '1.0.0' });
  await client.connect(transport);
  t.teardown(() => client.close());
  const r = (await client.callTool({
    name: 'notetaker__create',
    arguments: { title: 'More', body: 'y'.repeat(6_000) },
  })) as CallToolResult;
  t.equal(r.isError, true);
  t.match((r.content[0] as { text: string }).text, /quota/);
  const list = await api(s, 'GET', '/notetaker/notes', { token });
  t.equal(list.json<{ items: unknown[] }>().items.length, 1, 'still one note');
});

t.test('purging frees the space', async (t) => {
  await api(s, 'DELETE', `/notetaker/notes/${id}`, { token });
  const purged = await api(s, 'DELETE', `/notetaker/trash/${id}`, { token });
  t.equal(purged.status, 204);
  const r = await api(s, 'GET', '/notetaker/usage', { token });
  t.same(r.json(), { used: 0, quota: QUOTA, by_kind: { notes: 0 } });
  const made = await api(s, 'POST', '/notetaker/notes', { token, body: { title: 'More', body: 'y'.repeat(6_000) } });
  t.equal(made.status, 201);
});

t.test('a file body of unknown length is refused as soon as it passes the quota, not at its end', async (t) => {
  const { token } = await createUser(s, 'streamer@example.com');
  const staging = path.join(s.folio.config.dataDir, 'blobs', '.staging');
  const boundary = 'folio-quota-test';
  const bodies: Array<[string, string, string]> = [
    ['chunked', 'Transfer-Encoding: chunked', ''],
    [
      'multipart',
      // A declared length far past what is sent: the form never ends.
      `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 100000000`,
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ],
  ];
  for (const [kind, framing, preamble] of bodies) {
    const sock = net.connect(Number(new URL(s.url).port), '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    sock.on('error', () => {});
    let answer = '';
    sock.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    sock.write(`POST /api/v1/filedb/files?name=big.bin HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n${framing}\r\n\r\n`);
    const chunked = kind === 'chunked';
    const send = (b: Buffer | string) =>
      chunked ? sock.write(`${Buffer.byteLength(b).toString(16)}\r\n`) && sock.write(b) && sock.write('\r\n') : sock.write(b);
    if (preamble) send(preamble);
    // Twice the quota, and then the body stays open: only the quota can end it.
    for (let i = 0; i < 10 && !sock.destroyed; i++) send(Buffer.alloc(4096, 7));
    for (let i = 0; i < 500 && !answer.includes('\r\n\r\n'); i++) await new Promise((r) => setTimeout(r, 20));
    sock.destroy();
    t.match(answer, /^HTTP\/1\.1 507 /, `${kind}: ${answer.split('\r\n')[0] ?? '(no answer)'}`);
    t.match(answer, /quota_exceeded/);
    t.match(answer, /quota/);
    t.same(await readdir(staging).catch(() => []), [], `${kind}: no staging bytes left`);
  }
  const files = await api(s, 'GET', '/filedb/files', { token });
  t.same(files.json<{ items: unknown[] }>().items, [], 'nothing stored');
  const usage = await api(s, 'GET', '/notetaker/usage', { token });
  t.equal(usage.json<{ used: number }>().used, 0);
});
