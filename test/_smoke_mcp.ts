import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, createUser, FIXTURES } from './helpers/server.ts';

const s = await startTestServer({ plugins: [path.join(FIXTURES, 'basic'), path.join(FIXTURES, 'mcp/extra')] });
try {
  const alice = await createUser(s, 'alice@example.com');
  const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${alice.token}` } } });
  const client = new Client({ name: 't', version: '1' });
  await client.connect(transport);
  console.log('session', transport.sessionId);
  const { tools } = await client.listTools();
  console.log(tools.map((t) => t.name).join(' '));
  console.log(tools.find((t) => t.name === 'acme__echo')?.description);
  console.log(JSON.stringify(await client.callTool({ name: 'acme__echo', arguments: { text: 'hi', times: 2 } })));
  console.log(JSON.stringify(await client.callTool({ name: 'acme__echo', arguments: { text: 5 } })));
  console.log(JSON.stringify(await client.callTool({ name: 'mcpx__tags' })));
  console.log(JSON.stringify(await client.callTool({ name: 'mcpx__csv' })));
  console.log(JSON.stringify(await client.callTool({ name: 'acme__file' })));
  console.log(JSON.stringify(await client.callTool({ name: 'edge___ping' })));
  const prog: unknown[] = [];
  console.log(JSON.stringify(await client.callTool({ name: 'mcpx__count', arguments: { steps: 3 } }, undefined, { onprogress: (p) => prog.push(p) })), JSON.stringify(prog));
  try { await client.callTool({ name: 'staff__ping' }); } catch (e) { console.log('err', (e as Error).message); }
  console.log(JSON.stringify(await client.listResources()));
  console.log(JSON.stringify(await client.readResource({ uri: 'skill://acme/how_it_works' })));
  await client.close();
} finally {
  await s.close();
}
