// Resumable streams (stateful): every SSE event carries an id, and a client that lost a response
// stream reconnects with Last-Event-ID and gets what it missed. Cancellation in stateless mode: a
// notifications/cancelled on its own POST stops the handler of the request it names.
import t from 'tap';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestServer, createUser, FIXTURES } from '../helpers/server.ts';

const plugins = [path.join(FIXTURES, 'basic'), path.join(FIXTURES, 'mcp/extra')];
const stateful = await startTestServer({ plugins });
t.teardown(() => stateful.close());
const stateless = await startTestServer({ plugins, overrides: { mcp: { mode: 'stateless' } } });
t.teardown(() => stateless.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };

interface Event {
  id: string | undefined;
  data: string;
}

/** Reads SSE events from a response until `stop` says so (or the stream ends). */
async function readEvents(res: Response, stop: (e: Event, all: Event[]) => boolean): Promise<Event[]> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const events: Event[] = [];
  let buf = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let cut: number;
    while ((cut = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      const id = /^id: (.*)$/m.exec(block)?.[1];
      const data = /^data: ?(.*)$/m.exec(block)?.[1] ?? '';
      const e = { id, data };
      events.push(e);
      if (stop(e, events)) {
        await reader.cancel();
        return events;
      }
    }
  }
  return events;
}

t.test('stateful: a response stream cut mid-call is resumed with Last-Event-ID, nothing lost', async (t) => {
  const user = await createUser(stateful, 'resume@example.com');
  const auth = { ...HEADERS, authorization: `Bearer ${user.token}` };
  const url = `${stateful.url}/mcp`;
  const init = await fetch(url, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
  const session = init.headers.get('mcp-session-id')!;
  await init.text();
  const inSession = { ...auth, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
  await (
    await fetch(url, { method: 'POST', headers: inSession, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })
  ).text();

  const call = await fetch(url, {
    method: 'POST',
    headers: inSession,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'mcpx__count', arguments: { steps: 6, ms: 60 }, _meta: { progressToken: 'p' } },
    }),
  });
  // Read until the first progress notification, then drop the connection.
  const before = await readEvents(call, (e) => e.data.includes('notifications/progress'));
  t.ok(
    before.every((e) => e.id !== undefined && e.id !== ''),
    'every event carries an id',
  );
  const last = before.at(-1)!.id!;

  // A client reconnects after a pause (the SSE retry interval); the server must have seen the cut.
  let resumed = await fetch(url, { method: 'GET', headers: { ...inSession, 'last-event-id': last } });
  for (let i = 0; i < 20 && resumed.status === 409; i++) {
    await resumed.text();
    await sleep(50);
    resumed = await fetch(url, { method: 'GET', headers: { ...inSession, 'last-event-id': last } });
  }
  t.equal(resumed.status, 200, `the reconnect is accepted (${resumed.status === 200 ? '' : await resumed.clone().text()})`);
  const after = await readEvents(resumed, (e) => e.data.includes('"id":7'));
  const messages = after.filter((e) => e.data !== '').map((e) => JSON.parse(e.data) as Record<string, any>);
  const answer = messages.find((m) => m.id === 7);
  t.same(answer?.result?.structuredContent, { counted: 6 }, 'the answer, sent while no one listened, arrives on the resumed stream');
  const progress = messages.filter((m) => m.method === 'notifications/progress').map((m) => m.params.progress as number);
  const firstSeen = JSON.parse(before.at(-1)!.data).params.progress as number;
  t.ok(
    progress.length > 0 && progress.every((p) => p > firstSeen),
    `the progress after the cut is replayed, none twice (${progress.join(', ')})`,
  );
  const ids = [...before, ...after].map((e) => Number(e.id));
  t.ok(
    ids.every((id, i) => i === 0 || id > ids[i - 1]!),
    'event ids increase',
  );

  const unknown = await fetch(url, { method: 'GET', headers: { ...inSession, 'last-event-id': 'no-such-event' } });
  t.equal(unknown.status, 400, 'an event id the session never gave is refused');
  await unknown.text();
});

t.test('stateless: notifications/cancelled on its own POST stops the handler it names', async (t) => {
  const user = await createUser(stateless, 'cancel@example.com');
  const client = new Client({ name: 'cancel-test', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${stateless.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${user.token}` } },
    }),
  );
  t.teardown(() => client.close());
  const text = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;
  const count = async () => JSON.parse(text(await client.callTool({ name: 'acme__aborted_count' }))).aborted as number;
  const before = await count();
  const ac = new AbortController();
  const started = Date.now();
  const pending = client.callTool({ name: 'acme__slow', arguments: { ms: 20000 } }, undefined, { signal: ac.signal }).then(
    () => 'finished',
    () => 'rejected',
  );
  await sleep(300);
  ac.abort('changed my mind');
  t.equal(await pending, 'rejected', 'the client stops waiting');
  let after = before;
  for (let i = 0; i < 80 && after === before; i++) {
    await sleep(25);
    after = await count();
  }
  t.equal(after, before + 1, "the handler's signal fired");
  t.ok(Date.now() - started < 5000, 'long before the handler timeout');
});
