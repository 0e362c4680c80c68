// Every first-party function has a human title (words a client UI can show, not the dotted
// name), and the MCP tool list passes it through. A description that names another function
// names it only to a caller who can see it.
import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, req, createUser } from '../helpers/server.ts';

const s = await startTestServer();
t.teardown(() => s.close());

async function tools(token: string) {
  const client = new Client({ name: 'titles', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  const all = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    all.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  await client.close();
  return all;
}

t.test('every first-party function has a title of words', async (t) => {
  const functions = [...s.folio.registry.snapshot.namespaces.values()].flatMap((ns) => [...ns.functions.values()]);
  t.ok(functions.length >= 40, `the first-party functions (${functions.length})`);
  for (const fn of functions) {
    const title = fn.title ?? '';
    t.match(title, /^[A-Z][a-z]*( [A-Za-z0-9'’/-]+)*$/, `${fn.namespace}.${fn.name}: "${title}" is words`);
    t.notMatch(title, /[._]/, `${fn.namespace}.${fn.name}: not a dotted or snake_case name`);
  }
  const listed = await tools(s.adminToken);
  t.ok(listed.length > 0);
  for (const tool of listed) {
    const [ns, name] = tool.name.split('__') as [string, string];
    t.equal(tool.title, s.folio.registry.snapshot.namespaces.get(ns)!.functions.get(name)!.title, `${tool.name}: the title listed`);
  }
});

t.test('a description names only the tools its reader can see', async (t) => {
  const { token, id } = await createUser(s, 'no-notes@example.com');
  const before = await tools(token);
  const describes = (list: Awaited<ReturnType<typeof tools>>, ns: string) =>
    list.filter((x) => JSON.stringify([x.description, x.inputSchema]).includes(`${ns}__`)).map((x) => x.name);
  t.ok(
    describes(before, 'notetaker').some((n) => !n.startsWith('notetaker__')),
    'other tools name notetaker tools to a user who has them',
  );
  const off = await req(s, 'POST', '/curl/call/admin/set_namespace_access', {
    token: s.adminToken,
    body: { user_id: id, namespace: 'notetaker', access: 'disabled' },
  });
  t.equal(off.status, 200);
  const after = await tools(token);
  t.notOk(
    after.some((x) => x.name.startsWith('notetaker__')),
    'notetaker switched off',
  );
  t.same(describes(after, 'notetaker'), [], 'and no other tool names a notetaker tool');
  t.notOk(
    after.some((x) => /\bnotetaker\.(list|get|search)\b/.test(JSON.stringify([x.description, x.inputSchema]))),
    'not in its dotted form either',
  );
  const search = after.find((x) => x.name === 'search__query')!;
  t.match(search.description, /files__text, transcribe__transcript\)/, 'a list keeps the references the user can see');
  t.same(after.find((x) => x.name === 'files__list')?.name, 'files__list', 'the rest is listed as before');
});
