// One policy, every surface: for each group (a row below) x each namespace state x each token kind,
// the curl call, curl help, MCP tools/list, MCP tools/call and the REST API must reach the same
// decision: hidden (404 / not listed / unknown tool), forbidden (403; not listed on MCP either,
// listed with the reason by curl help), or admitted (the handler ran, whatever it then answered). This is the test that would have caught REST serving a namespace an
// operator had switched off. A new group joins by adding a row, not a test file.
//
// States: default; disabled for the user (operator's switch); hidden by the namespace's own
// `visible` rule; and enabled for the user while its rule would hide it (the switch wins).
// To hide a namespace by rule without editing it, the test serves copies of the first-party plugins
// whose entry adds one rule on top of the plugin's own: users with the role `hide-<namespace>`
// do not see it.
import t from 'tap';
import path from 'node:path';
import { cp, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, req, call, createUser, FIRST_PARTY, type TestServer } from '../helpers/server.ts';

type Decision = 'admitted' | 'forbidden' | 'hidden';
type Args = Record<string, unknown>;

interface User {
  id: string;
  token: string;
  /** Whatever a row's setup made for this user (a note to edit, ...). */
  data: Record<string, any>;
}

interface Probe {
  fn: string;
  args: (u: User) => Args;
}

interface RestProbe {
  method: string;
  path: (u: User) => string;
  body?: (u: User) => unknown;
}

/** A group: its namespace, a read and a write over curl/MCP, and over REST when it has a REST group. */
interface Row {
  namespace: string;
  /** The scope a read-only token gets: it allows the read probes and not the write ones. */
  readScope: string;
  /** The scope the write probes need (default: readScope with :write for :read). */
  writeScope?: string;
  /** Roles of the row's users (besides the one that hides the namespace by rule). */
  roles?: string[];
  /** Makes what the probes need for a user, with the user's own API token, before any switch. */
  setup?: (s: TestServer, u: User) => Promise<void>;
  read: Probe;
  /** None for a namespace that only reads (search). */
  write?: Probe;
  rest?: { read: RestProbe; write?: RestProbe };
}

/** The operations a row probes. */
const opsOf = (row: Row): Array<'read' | 'write'> => (row.write ? ['read', 'write'] : ['read']);

const ROWS: Row[] = [
  {
    namespace: 'notetaker',
    readScope: 'notes:read',
    setup: async (s, u) => {
      const r = await req(s, 'POST', '/api/v1/notetaker/notes', { token: u.token, body: { title: 'matrix', body: 'text' } });
      u.data.note = r.json();
    },
    read: { fn: 'list', args: () => ({}) },
    write: { fn: 'append', args: (u) => ({ id: u.data.note.id, text: 'more' }) },
    rest: {
      read: { method: 'GET', path: (u) => `/api/v1/notetaker/notes/${u.data.note.id}` },
      write: { method: 'POST', path: () => '/api/v1/notetaker/notes', body: () => ({ title: 'matrix write' }) },
    },
  },
  {
    namespace: 'files',
    readScope: 'files:read',
    setup: async (s, u) => {
      const r = await req(s, 'POST', '/api/v1/filedb/files?name=matrix.txt', {
        token: u.token,
        body: 'matrix text',
        headers: { 'content-type': 'text/plain' },
      });
      u.data.file = r.json();
    },
    read: { fn: 'info', args: (u) => ({ id: u.data.file.id }) },
    write: { fn: 'write', args: () => ({ name: 'matrix-write.txt', text: 'written' }) },
    rest: {
      read: { method: 'GET', path: (u) => `/api/v1/filedb/files/${u.data.file.id}/content` },
      write: { method: 'POST', path: () => '/api/v1/filedb/files?name=matrix-rest.txt', body: () => 'rest write' },
    },
  },
  {
    namespace: 'transcribe',
    readScope: 'transcribe:read',
    writeScope: 'transcribe',
    // A file that is not audio: each write probe queues a job that fails at once, writing nothing.
    setup: async (s, u) => {
      const r = await req(s, 'POST', '/api/v1/filedb/files?name=matrix.txt', {
        token: u.token,
        body: 'not audio',
        headers: { 'content-type': 'text/plain' },
      });
      u.data.file = r.json();
    },
    read: { fn: 'list', args: () => ({}) },
    write: { fn: 'start', args: (u) => ({ file_id: u.data.file.id, to_note: false }) },
    rest: {
      read: { method: 'GET', path: () => '/api/v1/transcribe/jobs' },
      write: { method: 'POST', path: () => '/api/v1/transcribe/jobs', body: (u) => ({ file_id: u.data.file.id, to_note: false }) },
    },
  },
  {
    // Reads only: one scope for the query, the kinds searched are each governed by their own group.
    namespace: 'search',
    readScope: 'search',
    read: { fn: 'query', args: () => ({ q: 'matrix' }) },
    rest: { read: { method: 'GET', path: () => '/api/v1/search?q=matrix' } },
  },
  {
    // No REST group; its own rule already hides it from users without a meeting note.
    namespace: 'meetings',
    readScope: 'notes:read',
    setup: async (s, u) => {
      const r = await req(s, 'POST', '/api/v1/notetaker/notes', {
        token: u.token,
        body: { title: 'standup', body: '- [ ] ship it', tags: ['meeting'] },
      });
      u.data.meeting = r.json();
    },
    read: { fn: 'action_items', args: () => ({}) },
    // A stale version: admitted, the handler answers 409 and writes nothing.
    write: { fn: 'mark_done', args: (u) => ({ note_id: u.data.meeting.id, line: 1, expected_version: 99 }) },
  },
  {
    namespace: 'tokens',
    readScope: 'notes:read',
    writeScope: 'tokens',
    setup: async (s, u) => {
      const body = { name: 'matrix', scopes: ['notes:read'], expires_in_days: 1 };
      u.data.victim = (await req(s, 'POST', '/api/v1/tokens', { token: u.token, body })).json();
    },
    read: { fn: 'self', args: () => ({}) },
    // Revoking is idempotent, so every probe can revoke the same token.
    write: { fn: 'revoke', args: (u) => ({ id: u.data.victim.id }) },
    rest: {
      read: { method: 'GET', path: () => '/api/v1/tokens/self' },
      write: { method: 'DELETE', path: (u) => `/api/v1/tokens/${u.data.victim.id}` },
    },
  },
  {
    namespace: 'users',
    readScope: 'notes:read',
    writeScope: 'users',
    roles: ['admin'],
    read: { fn: 'me', args: () => ({}) },
    write: { fn: 'update', args: (u) => ({ id: u.id, name: 'matrix' }) },
    rest: {
      read: { method: 'GET', path: () => '/api/v1/users/me' },
      write: { method: 'PATCH', path: (u) => `/api/v1/users/${u.id}`, body: () => ({ name: 'matrix' }) },
    },
  },
  {
    namespace: 'oauth',
    readScope: 'notes:read',
    writeScope: 'tokens',
    // A grant per write probe: revoking one is not idempotent (a second time is 404).
    setup: async (s, u) => {
      const store = s.folio.identity.oauth.adapter('Grant');
      u.data.grants = [];
      for (let i = 0; i < 12; i++) {
        const id = `matrix-grant-${u.id}-${i}`;
        await store.upsert(id, { kind: 'Grant', jti: id, accountId: u.id, clientId: 'matrix', iat: 1, resources: {} }, 3600);
        u.data.grants.push(id);
      }
    },
    read: { fn: 'grants', args: () => ({}) },
    write: { fn: 'revoke_grant', args: (u) => ({ id: u.data.grants.pop() }) },
    rest: {
      read: { method: 'GET', path: () => '/api/v1/oauth/grants' },
      write: { method: 'DELETE', path: (u) => `/api/v1/oauth/grants/${u.data.grants.pop()}` },
    },
  },
];

const STATES = ['default', 'disabled', 'hidden by rule', 'enabled over rule'] as const;
type State = (typeof STATES)[number];
const TOKENS = ['api', 'minted', 'read-only'] as const;
type TokenKind = (typeof TOKENS)[number];

const visibleIn = (state: State) => state === 'default' || state === 'enabled over rule';

function expected(state: State, token: TokenKind, op: 'read' | 'write' | 'list'): Decision {
  if (!visibleIn(state)) return 'hidden';
  if (op === 'write' && token === 'read-only') return 'forbidden';
  return 'admitted';
}

/** An HTTP status as a policy decision: 404 hidden, 403 forbidden, anything else got past the policy. */
function decided(status: number): Decision {
  if (status === 404) return 'hidden';
  if (status === 403) return 'forbidden';
  if (status === 401) throw new Error('401: the token was refused, a setup error');
  return 'admitted';
}

// ---- the server, with rule-wrapped copies of the first-party plugins

const pluginsDir = await mkdtemp(path.join(tmpdir(), 'folio-matrix-'));
// Every row's plugin, and admin (which the test uses to set switches and mint tokens).
for (const name of new Set(['admin', 'notetaker', ...ROWS.map((r) => r.namespace)])) {
  const dir = path.join(pluginsDir, name);
  await cp(path.join(FIRST_PARTY, name), dir, { recursive: true });
  if (name === 'admin') continue;
  await rename(path.join(dir, 'index.ts'), path.join(dir, 'inner.ts'));
  await writeFile(
    path.join(dir, 'index.ts'),
    [
      "import plugin from './inner.ts';",
      'export default {',
      '  ...plugin,',
      '  visible: async (caller: any) =>',
      `    !caller.user.roles.includes('hide-${name}') && (plugin.visible ? await plugin.visible(caller) : true),`,
      '};',
      '',
    ].join('\n'),
  );
}
const s = await startTestServer({ firstParty: false, plugins: [pluginsDir] });
t.teardown(async () => {
  await s.close();
  await rm(pluginsDir, { recursive: true, force: true });
});

const adminToken = s.adminToken;
// The answer to a path with no operation: a hidden group must answer exactly this (but the path).
const unknownRouteBody = (path: string) =>
  req(s, 'GET', path.replace(/\/api\/v1\/[^/]+/, '/api/v1/no-such-group'), { token: adminToken }).then((r) => r.json());

async function mcpClient(token: string): Promise<Client> {
  const client = new Client({ name: 'folio-matrix', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  );
  return client;
}

async function mcpCall(client: Client, tool: string, args: Args): Promise<Decision> {
  try {
    const r = await client.callTool({ name: tool, arguments: args });
    const text = (r.content as Array<{ text?: string }>)[0]?.text ?? '';
    if (r.isError && /^403 /.test(text)) return 'forbidden';
    if (r.isError && /^404 Not Found: no (namespace|function)/.test(text)) return 'hidden';
    return 'admitted';
  } catch (err) {
    if (/Unknown tool/.test((err as Error).message)) return 'hidden';
    throw err;
  }
}

let n = 0;
for (const row of ROWS) {
  t.test(`namespace ${row.namespace}`, async (t) => {
    for (const state of STATES) {
      const hideRole = state === 'hidden by rule' || state === 'enabled over rule' ? [`hide-${row.namespace}`] : [];
      const created = await createUser(s, `matrix-${++n}@example.com`, [...(row.roles ?? []), ...hideRole]);
      const user: User = { ...created, data: {} };
      // Setup runs with the row's namespace visible (it may use its group); switches come after.
      if (hideRole.length) await toggle(user.id, row.namespace, 'enabled');
      await row.setup?.(s, user);
      if (hideRole.length) await toggle(user.id, row.namespace, 'default');
      if (state === 'disabled') await toggle(user.id, row.namespace, 'disabled');
      if (state === 'enabled over rule') await toggle(user.id, row.namespace, 'enabled');

      const tokens: Record<TokenKind, string> = {
        api: user.token,
        minted: (await call(s, user.token, 'admin', 'mint_curl_token', {})).json().token,
        'read-only': (await call(s, user.token, 'admin', 'mint_curl_token', { scopes: [row.readScope] })).json().token,
      };

      for (const kind of TOKENS) {
        const token = tokens[kind];
        const at = `${state}, ${kind} token`;
        const want = (op: 'read' | 'write' | 'list') => expected(state, kind, op);

        // curl: help and calls
        const help = await req(s, 'GET', `/curl/help/${row.namespace}`, { token });
        t.equal(decided(help.status), want('list'), `curl help, ${at}`);
        const listed = new RegExp(`^  ${row.namespace} `, 'm').test((await req(s, 'GET', '/curl/help', { token })).text);
        t.equal(listed, visibleIn(state), `curl help lists it: ${listed}, ${at}`);
        for (const op of opsOf(row)) {
          const probe = row[op]!;
          const r = await call(s, token, row.namespace, probe.fn, probe.args(user));
          t.equal(decided(r.status), want(op), `curl call ${row.namespace}.${probe.fn} (${op}), ${at}`);
        }

        // MCP: the tool list and calls
        const client = await mcpClient(token);
        try {
          const tools = (await client.listTools()).tools.map((x) => x.name);
          for (const op of opsOf(row)) {
            const tool = `${row.namespace}__${row[op]!.fn}`;
            // Listed exactly when callable: a forbidden tool (403) is left out of the list, called anyway it is the 403.
            t.equal(tools.includes(tool), want(op) === 'admitted', `MCP tools/list has ${tool}, ${at}`);
            t.equal(await mcpCall(client, tool, row[op]!.args(user)), want(op), `MCP tools/call ${tool} (${op}), ${at}`);
          }
        } finally {
          await client.close();
        }

        // REST
        for (const op of opsOf(row)) {
          const probe = row.rest?.[op];
          if (!probe) continue;
          const p = probe.path(user);
          const r = await req(s, probe.method, p, { token, ...(probe.body ? { body: probe.body(user) } : {}) });
          t.equal(decided(r.status), want(op), `REST ${probe.method} ${p} (${op}), ${at}`);
          if (want(op) === 'hidden') {
            const unknown = await unknownRouteBody(p);
            t.same(
              r.json(),
              { ...unknown, detail: unknown.detail.replace('/api/v1/no-such-group', p.match(/^\/api\/v1\/[^/?]+/)![0]) },
              `REST hidden = unknown route, ${at}`,
            );
          }
          if (want(op) === 'forbidden') t.same(r.json().missing_scopes, [scopeOf(row, op)], `REST names the missing scope, ${at}`);
        }
      }
    }
  });
}

function scopeOf(row: Row, op: 'read' | 'write'): string {
  return op === 'read' ? row.readScope : (row.writeScope ?? row.readScope.replace(':read', ':write'));
}

async function toggle(userId: string, namespace: string, access: 'enabled' | 'disabled' | 'default'): Promise<void> {
  const r = await call(s, adminToken, 'admin', 'set_namespace_access', { user_id: userId, namespace, access });
  if (r.status !== 200) throw new Error(`set_namespace_access: ${r.status} ${r.text}`);
}

// The wrapped entries really are the ones serving: a plugin copy that failed to load would make
// every "hidden" above pass for the wrong reason.
t.test('the rule-wrapped plugins are the ones loaded', async (t) => {
  const status = await call(s, adminToken, 'admin', 'plugin_status', {});
  const loaded = status.json<Array<{ namespace: string; state: string; dir: string }>>().filter((p) => p.dir.startsWith(pluginsDir));
  t.same(loaded.map((p) => [p.namespace, p.state]).sort(), [
    ['admin', 'loaded'],
    ['files', 'loaded'],
    ['meetings', 'loaded'],
    ['notetaker', 'loaded'],
    ['oauth', 'loaded'],
    ['search', 'loaded'],
    ['tokens', 'loaded'],
    ['transcribe', 'loaded'],
    ['users', 'loaded'],
  ]);
  t.match(await readFile(path.join(pluginsDir, 'notetaker', 'index.ts'), 'utf8'), /hide-notetaker/);
});

// Every operation the OpenAPI document lists, for a user whose groups' namespaces are all switched
// off: each answers 404 with the body of an unknown route, before it looks at anything else.
t.test('every REST operation of a switched-off group is 404, as an unknown route', async (t) => {
  const doc = (await req(s, 'GET', '/api/v1/openapi.json')).json<{
    paths: Record<string, Record<string, { tags: string[] }>>;
    tags: Array<{ name: string; 'x-namespace': string }>;
  }>();
  const user = await createUser(s, 'matrix-every-route@example.com');
  // Each group's tag names the namespace that governs it.
  const namespaces = doc.tags.map((tag) => tag['x-namespace']);
  t.ok(namespaces.includes('notetaker'), 'the notetaker group is governed by the notetaker namespace');
  for (const ns of namespaces) await toggle(user.id, ns, 'disabled');
  let count = 0;
  for (const [template, ops] of Object.entries(doc.paths)) {
    const p = `/api/v1${template
      .replace(/\{id\}/g, '3f0c1b7e-9a51-4c59-8f0e-2d1f5a6b7c8d')
      .replace(/\{version\}/g, '1')
      .replace(/\{\w+\}/g, 'notetaker')}`; // any other parameter (a namespace's name)
    for (const method of Object.keys(ops)) {
      const m = method.toUpperCase();
      const r = await req(s, m, p, { token: user.token, ...(m === 'GET' ? {} : { body: {} }) });
      t.equal(r.status, 404, `${method.toUpperCase()} ${template}`);
      t.equal(r.json().detail, `no operation at ${p}. The operations are listed in /api/v1/openapi.json and shown at /api/v1/docs.`);
      count++;
    }
  }
  t.ok(count >= 15, `${count} operations checked`);
});
