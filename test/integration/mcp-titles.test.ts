// Every first-party function has a human title (words a client UI can show, not the dotted
// name), and the MCP tool list passes it through. A description that names another function
// names it only to a caller who can see it.
import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer } from '../helpers/server.ts';

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
