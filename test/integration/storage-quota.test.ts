// The storage quota as a user meets it on every surface: a write over it is 507 quota_exceeded on
// REST (with used, quota and needed), a 507 with the same words over curl, an isError result over
// MCP, and stores nothing; the user's use is on GET /api/v1/notetaker/usage and notetaker.usage.
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
