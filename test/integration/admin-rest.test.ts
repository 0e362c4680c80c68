// The admin REST group over a real server: namespace access per user (read, switched by id or
// email, the closest names for an unknown one, the matrix), the switch taking effect on curl, MCP
// and REST for that user, jobs (a failed transcription listed with its reason, retried), plugins,
// the last admin, and the landing page. Answers are checked against the OpenAPI document.
import t from 'tap';
import http from 'node:http';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, req, call, createUser, FIXTURES } from '../helpers/server.ts';
import { runFolio } from '../helpers/cli.ts';
import { PACKAGE } from '../../core/kernel/config.ts';

const run = promisify(execFile);

// An OpenAI-compatible engine the test steers: failing (a transcription ends failed, with a
// reason), stalling (it stays running until cancelled), or answering.
let engine: 'fail' | 'stall' | 'ok' = 'fail';
const stalled: http.ServerResponse[] = [];
const stub = http.createServer((request, res) => {
  request.resume();
  request.on('end', () => {
    if (engine === 'stall') stalled.push(res);
    else if (engine === 'ok')
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ text: 'hello', duration: 1, language: 'en' }));
    else res.writeHead(500).end('{"error":"engine down"}');
  });
});
await new Promise<void>((r) => stub.listen(0, '127.0.0.1', r));
t.teardown(() => {
  for (const res of stalled) res.destroy();
  return new Promise<void>((r) => stub.close(() => r()));
});

const s = await startTestServer({
  plugins: [path.join(FIXTURES, 'basic')],
  copyToScratch: [path.join(FIXTURES, 'gated', 'staff')],
  checkAnswers: true,
  overrides: {
    transcribe: {
      engine: 'openai',
      allowEngineChoice: false,
      openai: { url: `http://127.0.0.1:${(stub.address() as AddressInfo).port}`, key: 'sk-test', model: 'whisper-1' },
    },
  },
});
t.teardown(() => s.close());
const admin = s.adminToken;
const api = (method: string, p: string, token: string, body?: unknown) =>
  req(s, method, `/api/v1${p}`, { token, ...(body !== undefined ? { body } : {}) });

interface Access {
  user: { id: string; email: string };
  namespaces: Array<{ namespace: string; enabled: boolean; source: string; switch: string | null; loaded: boolean }>;
}
const ns = (a: Access, name: string) => a.namespaces.find((n) => n.namespace === name);

async function mcpTools(token: string): Promise<string[]> {
  const client = new Client({ name: 'admin-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  try {
    return (await client.listTools()).tools.map((x) => x.name);
  } finally {
    await client.close();
  }
}

t.test("a user's access: each namespace with where the answer comes from, by id or email", async (t) => {
  const ada = await createUser(s, 'ada-access@example.com');
  const byId = await api('GET', `/admin/users/${ada.id}/access`, admin);
  t.equal(byId.status, 200, byId.text);
  const a = byId.json<Access>();
  t.equal(a.user.email, 'ada-access@example.com');
  t.match(ns(a, 'acme'), { enabled: true, source: 'default', switch: null, loaded: true });
  t.match(ns(a, 'staff'), { enabled: false, source: 'visible', switch: null }, "the plugin's rule hides it");
  t.match(ns(a, 'notetaker'), { enabled: true, source: 'default' });
  const byEmail = await api('GET', `/admin/users/${encodeURIComponent('ADA-access@example.com')}/access`, admin);
  t.equal(byEmail.status, 200);
  t.same(byEmail.json<Access>().namespaces, a.namespaces, 'by email, any case: the same answer');

  const on = await api('PUT', `/admin/users/ada-access@example.com/access/staff`, admin, { access: 'enabled' });
  t.equal(on.status, 200, on.text);
  t.match(ns(on.json<Access>(), 'staff'), { enabled: true, source: 'switch', switch: 'enabled' });
  t.equal((await call(s, ada.token, 'staff', 'ping')).text, 'pong', 'the switch beats the rule at once');
  const back = await api('PUT', `/admin/users/${ada.id}/access/staff`, admin, { access: 'default' });
  t.match(ns(back.json<Access>(), 'staff'), { enabled: false, source: 'visible', switch: null });
});

t.test('a switch off takes effect on curl, MCP and REST for that user only', async (t) => {
  const bo = await createUser(s, 'bo-access@example.com');
  const cy = await createUser(s, 'cy-access@example.com');
  t.equal((await api('GET', '/notetaker/notes', bo.token)).status, 200);
  t.ok(
    (await mcpTools(bo.token)).some((n) => n.startsWith('notetaker')),
    'notetaker tools listed before',
  );
  const off = await api('PUT', `/admin/users/${bo.id}/access/notetaker`, admin, { access: 'disabled' });
  t.equal(off.status, 200, off.text);
  t.match(ns(off.json<Access>(), 'notetaker'), { enabled: false, source: 'switch', switch: 'disabled' });
  t.equal((await api('GET', '/notetaker/notes', bo.token)).status, 404, 'REST');
  t.equal((await call(s, bo.token, 'notetaker', 'list_notes')).status, 404, 'curl');
  t.notOk(
    (await mcpTools(bo.token)).some((n) => n.startsWith('notetaker')),
    'MCP lists no notetaker tool',
  );
  t.equal((await api('GET', '/notetaker/notes', cy.token)).status, 200, 'another user keeps it');
  t.ok((await mcpTools(cy.token)).some((n) => n.startsWith('notetaker')));
  await api('PUT', `/admin/users/${bo.id}/access/notetaker`, admin, { access: 'default' });
  t.equal((await api('GET', '/notetaker/notes', bo.token)).status, 200, 'back to the default');
});

t.test('an unknown namespace is refused with the closest names, on REST, curl and MCP', async (t) => {
  const di = await createUser(s, 'di-access@example.com');
  const rest = await api('PUT', `/admin/users/${di.id}/access/acm`, admin, { access: 'disabled' });
  t.equal(rest.status, 400, rest.text);
  t.match(rest.json(), { code: 'validation_failed', detail: /closest: acme/ });
  const nosuch = await api('PUT', `/admin/users/${di.id}/access/nosuchns`, admin, { access: 'disabled' });
  t.equal(nosuch.status, 400);
  const curl = await call(s, admin, 'admin', 'set_namespace_access', { user_id: di.id, namespace: 'nosuchns', access: 'disabled' });
  t.equal(curl.status, 400, curl.text);
  t.match(curl.text, /no namespace "nosuchns"/);
  const near = await call(s, admin, 'admin', 'set_namespace_access', {
    user_id: 'di-access@example.com',
    namespace: 'notetake',
    access: 'disabled',
  });
  t.equal(near.status, 400);
  t.match(near.text, /closest: notetaker/);
  const html = await api('PUT', `/admin/users/${di.id}/access/${encodeURIComponent('<b>x</b>')}`, admin, { access: 'disabled' });
  t.equal(html.status, 400);
  t.notMatch(html.headers.get('content-type') ?? '', /html/, 'never answered as HTML');
  t.match(html.json().detail, /not a namespace name/);
  const after = (await api('GET', `/admin/users/${di.id}/access`, admin)).json<Access>();
  t.notOk(
    after.namespaces.some((n) => n.switch !== null),
    'nothing was stored',
  );

  const client = new Client({ name: 'admin-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${admin}` } } }),
  );
  t.teardown(() => client.close());
  const mcp = await client.callTool({
    name: 'admin__set_namespace_access',
    arguments: { user_id: di.id, namespace: 'nosuchns', access: 'disabled' },
  });
  t.equal(mcp.isError, true, 'MCP: an error result');
  t.match(JSON.stringify(mcp.content), /no namespace \\"nosuchns\\"/);
  // Setting by email on curl works like REST.
  const byEmail = await call(s, admin, 'admin', 'set_namespace_access', {
    user_id: 'di-access@example.com',
    namespace: 'acme',
    access: 'disabled',
  });
  t.equal(byEmail.status, 200, byEmail.text);
  t.equal((await call(s, di.token, 'acme', 'noop')).status, 404);
  const view = await call(s, admin, 'admin', 'user_access', { user_id: di.id });
  t.match(ns(view.json<Access>(), 'acme'), { enabled: false, source: 'switch' });
});

t.test("bad input: other systems' id shapes, a huge page, no body, non-admins", async (t) => {
  for (const id of ['12345', 'auth0|5f7c8ec7c33c6c004bbafe82', 'nobody@example.com', '00000000-0000-4000-8000-000000000000']) {
    const r = await api('GET', `/admin/users/${encodeURIComponent(id)}/access`, admin);
    t.equal(r.status, 404, `${id}: ${r.text}`);
    t.equal(r.json().code, 'not_found');
  }
  // A NUL in any path segment is refused where the REST framework reads the path, as curl does.
  for (const [m, p, b] of [
    ['GET', '/admin/users/a%40b%00c/access', undefined],
    ['PUT', '/admin/users/x%00%40y/access/acme', { access: 'enabled' }],
    ['PUT', '/admin/users/admin@localhost/access/ac%00me', { access: 'enabled' }],
    ['POST', '/admin/jobs/%00/retry', undefined],
  ] as const) {
    const r = await api(m, p, admin, b);
    t.equal(r.status, 400, `${m} ${p}: ${r.text}`);
    t.match(r.json(), { code: 'validation_failed', errors: [{ in: 'path', message: /NUL/ }] });
  }
  const near = await api('PUT', '/admin/users/admin@localhost/access/acm', admin, { access: 'enabled' });
  t.match(near.json(), { errors: [{ in: 'path', path: '/namespace' }] }, 'a bad {namespace} is named in the path');
  const huge = await api('GET', '/admin/access?limit=1000000', admin);
  t.equal(huge.status, 200, huge.text);
  t.equal(huge.json().limit, 200);
  t.equal(huge.headers.get('folio-limit-clamped'), 'requested=1000000; limit=200');
  t.equal((await api('GET', '/admin/access?limit=0', admin)).status, 400);
  t.equal((await api('GET', '/admin/jobs?limit=-1', admin)).status, 400);
  t.equal((await api('GET', '/admin/jobs?state=exploded', admin)).status, 400);
  const u = await createUser(s, 'eve-access@example.com');
  t.equal((await api('PUT', `/admin/users/${u.id}/access/acme`, admin, { access: 'maybe' })).status, 400);
  t.equal((await api('PUT', `/admin/users/${u.id}/access/acme`, admin, {})).status, 400);
  const off = await api('PUT', `/admin/users/admin@localhost/access/admin`, admin, { access: 'disabled' });
  t.equal(off.status, 400, 'the admin namespace cannot be hidden from an admin');
  for (const [m, p, b] of [
    ['GET', `/admin/users/${u.id}/access`, undefined],
    ['PUT', `/admin/users/${u.id}/access/acme`, { access: 'enabled' }],
    ['GET', '/admin/access', undefined],
    ['GET', '/admin/jobs', undefined],
    ['GET', '/admin/plugins', undefined],
    ['POST', '/admin/plugins/acme/reload', undefined],
  ] as const) {
    const r = await api(m, p, u.token, b);
    t.equal(r.status, 403, `${m} ${p} is for admins`);
    t.equal(r.json().code, 'forbidden');
  }
  t.equal((await call(s, u.token, 'acme', 'noop')).status, 200, 'a refused switch changed nothing');
});

t.test('the matrix pages through users, each with every namespace', async (t) => {
  const first = await api('GET', '/admin/access?limit=2', admin);
  t.equal(first.status, 200);
  const page = first.json<{ namespaces: string[]; items: Access[]; next_cursor: string | null }>();
  t.ok(page.namespaces.includes('acme') && page.namespaces.includes('admin'));
  t.equal(page.items.length, 2);
  for (const row of page.items)
    t.same(
      row.namespaces.map((n) => n.namespace).filter((n) => page.namespaces.includes(n)),
      page.namespaces,
    );
  t.type(page.next_cursor, 'string');
  const next = (await api('GET', `/admin/access?limit=2&cursor=${page.next_cursor}`, admin)).json<{ items: Access[] }>();
  t.notOk(
    next.items.some((r) => page.items.some((p) => p.user.id === r.user.id)),
    'the next page holds other users',
  );
});

t.test('plugins: status with versions and capabilities; reload; unknown is 404', async (t) => {
  const list = await api('GET', '/admin/plugins', admin);
  t.equal(list.status, 200);
  const rows = list.json<{ items: Array<{ namespace: string; version: string; state: string }> }>().items;
  t.match(
    rows.find((r) => r.namespace === 'admin'),
    { version: '1.0.0', state: 'loaded' },
  );
  const re = await api('POST', '/admin/plugins/acme/reload', admin);
  t.equal(re.status, 200, re.text);
  t.match(re.json(), { namespace: 'acme', state: 'loaded' });
  t.equal((await call(s, admin, 'acme', 'noop')).status, 200, 'serves after the reload');
  t.equal((await api('POST', '/admin/plugins/nosuch/reload', admin)).status, 404);
});

t.test('jobs: a failed transcription is listed with its reason, on REST and curl, and can be retried', async (t) => {
  const have = await run('ffmpeg', ['-version']).then(
    () => true,
    () => false,
  );
  if (!have) {
    // CI has ffmpeg: there, its absence is a failure, not a pass that proves nothing.
    if (process.env['CI']) t.fail('ffmpeg is needed to make test audio');
    else t.comment('ffmpeg is needed to make test audio; skipped');
    return;
  }
  const work = await mkdtemp(path.join(tmpdir(), 'folio-admin-'));
  t.teardown(() => rm(work, { recursive: true, force: true }));
  const wav = path.join(work, 'tone.wav');
  await run('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', '-ar', '16000', wav]);
  const fay = await createUser(s, 'fay-jobs@example.com');
  const up = await fetch(`${s.url}/api/v1/filedb/files?name=tone.wav`, {
    method: 'POST',
    headers: { authorization: `Bearer ${fay.token}`, 'content-type': 'audio/wav' },
    body: await readFile(wav),
  });
  t.equal(up.status, 201);
  const fileId = ((await up.json()) as { id: string }).id;
  const statusOf = async (id: string) => (await api('GET', `/transcribe/jobs/${id}`, fay.token)).json<{ status: string }>().status;
  const until = async (id: string, want: string) => {
    let status = '';
    for (let i = 0; i < 400 && status !== want; i++) {
      status = await statusOf(id);
      if (status !== want) await new Promise((r) => setTimeout(r, 25));
    }
    return status;
  };
  const job = (await api('POST', '/transcribe/jobs', fay.token, { file_id: fileId })).json<{ id: string }>();
  t.equal(await until(job.id, 'failed'), 'failed');

  const failed = await api('GET', '/admin/jobs?state=failed', admin);
  t.equal(failed.status, 200, failed.text);
  const item = failed.json<{ items: Array<Record<string, unknown>> }>().items.find((j) => j.id === job.id);
  t.match(item, {
    kind: 'transcribe',
    source: 'transcription',
    state: 'failed',
    owner_id: fay.id,
    reason: /500/,
    job_id: job.id,
    data: { owner_id: fay.id, file_id: fileId },
  });
  const all = await api('GET', '/admin/jobs', admin);
  t.equal(all.status, 200, all.text);
  t.ok(
    all.json<{ items: Array<{ id: string }> }>().items.some((j) => j.id === job.id),
    'in the unfiltered list too',
  );
  const curl = await call(s, admin, 'admin', 'failed_jobs', {});
  t.equal(curl.status, 200);
  t.match(
    curl.json<Array<Record<string, unknown>>>().find((j) => j.id === job.id),
    { job: 'transcribe', job_id: job.id, data: { file_id: fileId }, error: /500/ },
    'admin.failed_jobs lists the failed transcription, with what it was given',
  );
  t.equal((await call(s, admin, 'admin', 'failed_jobs', { limit: 1000 })).status, 200, "the tool's documented limit holds");
  const retried = await api('POST', `/admin/jobs/${job.id}/retry`, admin);
  t.equal(retried.status, 200, retried.text);
  t.same(retried.json(), { id: job.id, retried: true });
  t.not((await api('GET', `/transcribe/jobs/${job.id}`, fay.token)).json<{ status: string }>().status, 'failed', 'queued again');
  t.equal(await until(job.id, 'failed'), 'failed', 'and failed again');

  // Paging: newest first, a page at a time, each job once.
  const seen: Array<{ id: string; created_at: string }> = [];
  let cursor: string | null = null;
  do {
    const r = await api('GET', `/admin/jobs?state=failed&limit=1${cursor ? `&cursor=${cursor}` : ''}`, admin);
    t.equal(r.status, 200, r.text);
    const page = r.json<{ items: Array<{ id: string; created_at: string }>; next_cursor: string | null }>();
    seen.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor && seen.length < 50);
  t.equal(new Set(seen.map((j) => j.id)).size, seen.length, 'no job on two pages');
  t.ok(seen.some((j) => j.id === job.id));
  t.same(
    seen.map((j) => j.created_at),
    seen.map((j) => j.created_at).sort((a, b) => b.localeCompare(a)),
    'newest first',
  );
  t.equal((await api('GET', '/admin/jobs?cursor=bm9wZQ', admin)).status, 400, 'a cursor the server did not give');

  // A running transcription: not retried (409), cancelled by the operator.
  engine = 'stall';
  const slow = (await api('POST', '/transcribe/jobs', fay.token, { file_id: fileId })).json<{ id: string }>();
  t.equal(await until(slow.id, 'running'), 'running');
  const running = await api('GET', '/admin/jobs?state=running', admin);
  t.ok(
    running.json<{ items: Array<{ id: string }> }>().items.some((j) => j.id === slow.id),
    'listed as running',
  );
  const busy = await api('POST', `/admin/jobs/${slow.id}/retry`, admin);
  t.equal(busy.status, 409, busy.text);
  const cancelled = await api('POST', `/admin/jobs/${slow.id}/cancel`, admin);
  t.equal(cancelled.status, 200, cancelled.text);
  t.same(cancelled.json(), { id: slow.id, cancelled: true });
  t.equal(await statusOf(slow.id), 'cancelled', 'the owner sees it cancelled');
  t.equal((await api('POST', `/admin/jobs/${slow.id}/cancel`, admin)).status, 409, 'cancelled once');

  // A succeeded transcription is not the operator's to run again: that would write a new version of the note.
  engine = 'ok';
  const good = (await api('POST', '/transcribe/jobs', fay.token, { file_id: fileId })).json<{ id: string }>();
  t.equal(await until(good.id, 'succeeded'), 'succeeded');
  const again = await api('POST', `/admin/jobs/${good.id}/retry`, admin);
  t.equal(again.status, 409, again.text);
  t.equal(again.json().code, 'conflict');
  t.equal(await statusOf(good.id), 'succeeded', 'left as it was');
  engine = 'fail';

  t.equal((await api('POST', '/admin/jobs/00000000-0000-4000-8000-000000000000/cancel', admin)).status, 404);
  t.equal((await api('POST', '/admin/jobs/not-a-job/retry', admin)).status, 404);
});

t.test('the last admin cannot deactivate themselves', async (t) => {
  const me = (await api('GET', '/users/me', admin)).json<{ id: string }>();
  const r = await api('PATCH', `/users/${me.id}`, admin, { active: false });
  t.equal(r.status, 409, r.text);
  t.equal((await req(s, 'GET', '/curl/whoami', { token: admin })).status, 200, 'still active');
});

t.test('the landing page: HTML for a browser, plain text for a program', async (t) => {
  const page = await req(s, 'GET', '/', { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
  t.equal(page.status, 200);
  t.match(page.headers.get('content-type'), /text\/html/);
  t.match(page.headers.get('content-security-policy'), /default-src 'none'/);
  t.match(page.text, new RegExp(`Folio ${PACKAGE.version.replaceAll('.', '\\.')}`));
  for (const href of ['/api/v1/docs', '/curl/help', '/admin']) t.match(page.text, `href="${href}"`);
  t.match(page.text, /\/mcp/);
  t.notMatch(page.text, /<script|https?:\/\/(?!127\.0\.0\.1|localhost)/, 'no script, nothing from elsewhere');
  const program = await req(s, 'GET', '/');
  t.equal(program.status, 404);
  t.match(program.headers.get('content-type'), /text\/plain/);
  t.match(program.text, /^404 Not Found/);
  for (const r of [page, program]) t.match(r.headers.get('vary'), /\bAccept\b/i, 'a cache keeps the two answers apart');
});

t.test('folio admin: access, jobs and plugins end to end', async (t) => {
  const home = await mkdtemp(path.join(tmpdir(), 'folio-admin-cli-'));
  t.teardown(() => rm(home, { recursive: true, force: true }));
  const gil = await createUser(s, 'gil-cli@example.com');
  const folio = (args: string[], token = admin) => runFolio(home, ['admin', ...args], { env: { FOLIO_URL: s.url, FOLIO_TOKEN: token } });

  const off = await folio(['access', 'set', 'gil-cli@example.com', 'acme', 'disabled']);
  t.equal(off.code, 0, off.stderr);
  t.match(off.stderr, /acme is disabled for gil-cli@example\.com \(switch\)/);
  t.equal((await call(s, gil.token, 'acme', 'noop')).status, 404, 'the switch holds on curl');
  const get = await folio(['access', 'get', gil.id, '--json']);
  t.equal(get.code, 0, get.stderr);
  t.match(
    JSON.parse(get.stdout).namespaces.find((n: { namespace: string }) => n.namespace === 'acme'),
    { enabled: false, source: 'switch' },
  );
  const human = await folio(['access', 'get', 'gil-cli@example.com']);
  t.match(human.stdout, /^acme\tno\tswitch\tdisabled\tyes$/m, 'one row per namespace (tab-separated through a pipe)');
  const typo = await folio(['access', 'set', gil.id, 'acm', 'enabled']);
  t.not(typo.code, 0);
  t.match(typo.stderr, /did you mean acme/);
  const badAccess = await folio(['access', 'set', gil.id, 'acme', 'maybe']);
  t.not(badAccess.code, 0);
  t.match(badAccess.stderr, /must be one of: enabled, disabled, default/);
  t.equal((await folio(['access', 'set', gil.id, 'acme', 'default'])).code, 0);
  t.equal((await call(s, gil.token, 'acme', 'noop')).status, 200, 'back to the default');
  const matrix = await folio(['access', 'matrix', '--json']);
  t.equal(matrix.code, 0, matrix.stderr);
  t.ok(JSON.parse(matrix.stdout).items.some((u: { user: { email: string } }) => u.user.email === 'gil-cli@example.com'));

  const jobs = await folio(['jobs', 'list', '--state', 'failed', '--json']);
  t.equal(jobs.code, 0, jobs.stderr);
  t.ok(Array.isArray(JSON.parse(jobs.stdout)));
  const cancel = await folio(['jobs', 'cancel', '00000000-0000-4000-8000-000000000000']);
  t.not(cancel.code, 0);
  t.match(cancel.stderr, /no failed job/);

  const plugins = await folio(['plugins', 'list']);
  t.equal(plugins.code, 0, plugins.stderr);
  t.match(plugins.stdout, /^admin\t1\.0\.0\tloaded\t/m);
  const reload = await folio(['plugins', 'reload', 'acme']);
  t.equal(reload.code, 0, reload.stderr);
  t.match(reload.stderr, /acme: loaded/);

  const denied = await folio(['jobs', 'list'], gil.token);
  t.not(denied.code, 0, 'a non-admin is refused');
  t.match(denied.stderr, /admin/);
});
