// Resumable streams (stateful): every SSE event carries an id, and a client that lost a response
// stream reconnects with Last-Event-ID and gets what it missed. Cancellation in stateless mode: a
// notifications/cancelled on its own POST stops the handler of the request it names.
import t from 'tap';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestServer, createUser, FIXTURES } from '../helpers/server.ts';
import { StreamLog } from '../../core/db/stream-log.ts';

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

/**
 * The response as a network that drops it would hand it on: its body passes until `until` says so
 * of what arrived so far (by default after the first chunk), then the real connection is let go
 * and the body fails as a cut connection does.
 */
function cutOff(res: Response, until: (seen: string) => boolean = () => true): Response {
  const reader = res.body!.getReader();
  let seen = '';
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      controller.enqueue(value);
      seen += new TextDecoder().decode(value);
      if (until(seen)) {
        await reader.cancel();
        controller.error(new TypeError('terminated'));
      }
    },
  });
  return new Response(body, { status: res.status, headers: res.headers });
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

/** A stateless POST of one request, on protocol 2025-11-25 (its stream opens with an id to resume from). */
const statelessPost = (base: string, token: string, message: object, signal?: AbortSignal) =>
  fetch(`${base}/mcp`, {
    method: 'POST',
    ...(signal ? { signal } : {}),
    headers: { ...HEADERS, authorization: `Bearer ${token}`, 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify(message),
  });
const resumeGet = (base: string, token: string, lastEventId: string, accept = 'text/event-stream') =>
  fetch(`${base}/mcp`, { method: 'GET', headers: { accept, authorization: `Bearer ${token}`, 'last-event-id': lastEventId } });
const countCall = (id: number, steps: number, ms: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'mcpx__count', arguments: { steps, ms }, _meta: { progressToken: 'p' } },
});

t.test('stateless: a client that leaves mid-call resumes with Last-Event-ID; the call went on meanwhile', async (t) => {
  const user = await createUser(stateless, 'sl-resume@example.com');
  const before = await readEvents(await statelessPost(stateless.url, user.token, countCall(5, 6, 60)), (e) =>
    e.data.includes('notifications/progress'),
  );
  t.match(before[0], { id: /^[0-9a-f-]{36}:1$/, data: '' }, 'the stream opens with an event id and no data');
  t.ok(
    before.every((e) => e.id),
    'every event carries an id',
  );
  const last = before.at(-1)!.id!;
  const firstSeen = JSON.parse(before.at(-1)!.data).params.progress as number;

  const resumed = await resumeGet(stateless.url, user.token, last);
  t.equal(resumed.status, 200);
  t.match(resumed.headers.get('content-type'), /^text\/event-stream/);
  const after = await readEvents(resumed, () => false);
  const messages = after.map((e) => JSON.parse(e.data) as Record<string, any>);
  t.same(messages.at(-1), { jsonrpc: '2.0', id: 5, result: messages.at(-1)?.result }, 'the stream ends with the answer');
  t.same(messages.at(-1)?.result?.structuredContent, { counted: 6 }, 'the call ran to its end while no one listened');
  const progress = messages.filter((m) => m.method === 'notifications/progress').map((m) => m.params.progress as number);
  t.ok(
    progress.length > 0 && progress.every((p, i) => p > firstSeen && (i === 0 || p > progress[i - 1]!)),
    `the progress after the cut, none twice (${firstSeen} | ${progress.join(', ')})`,
  );
  const seqs = [...before, ...after].map((e) => Number(e.id!.split(':')[1]));
  t.ok(
    seqs.every((n, i) => i === 0 || n > seqs[i - 1]!),
    `event ids increase (${seqs.join(', ')})`,
  );
  t.ok(
    after.every((e) => e.id!.startsWith(last.split(':')[0]!)),
    'the same stream',
  );

  // Again from the same point: the events are kept for the resumption window, not consumed.
  const again = await readEvents(await resumeGet(stateless.url, user.token, last), () => false);
  t.same(
    again.map((e) => e.id),
    after.map((e) => e.id),
    'a second reconnect from the same id gets the same events',
  );
  const fromEnd = await resumeGet(stateless.url, user.token, after.at(-1)!.id!);
  t.equal(fromEnd.status, 204, 'from the answer on, nothing is left: no stream at all');

  const other = await createUser(stateless, 'sl-other@example.com');
  const stolen = await resumeGet(stateless.url, other.token, last);
  const unknownId = `${last.split(':')[0]!.replace(/^./, (c) => (c === '0' ? '1' : '0'))}:1`;
  const unknown = await resumeGet(stateless.url, user.token, unknownId);
  t.equal(stolen.status, 400, "another user's event id is refused");
  t.equal(unknown.status, 400);
  const message = async (r: Response) => ((await r.json()) as { error: { message: string } }).error.message;
  t.equal((await message(stolen)).replace(last, unknownId), await message(unknown), 'exactly as an unknown one');
  const garbled = await resumeGet(stateless.url, user.token, 'no-such-event');
  t.equal(garbled.status, 400, 'an id this server could not have given');
  t.match(await message(garbled), /no stream of yours holds event 'no-such-event'/);
  t.equal(
    (await resumeGet(stateless.url, user.token, last, 'application/json')).status,
    406,
    'a resumption is a stream: Accept must allow it',
  );
  const plainGet = await fetch(`${stateless.url}/mcp`, { headers: { accept: 'text/event-stream', authorization: `Bearer ${user.token}` } });
  t.equal(plainGet.status, 405, 'a GET without Last-Event-ID is still no stream in stateless mode');
  await plainGet.text();
});

t.test('stateless: resuming before the call has ended waits for the rest', async (t) => {
  const user = await createUser(stateless, 'sl-wait@example.com');
  const before = await readEvents(await statelessPost(stateless.url, user.token, countCall(6, 8, 150)), (e) => e.id !== undefined);
  t.equal(before.length, 1, 'left right after the first event');
  const started = Date.now();
  const after = await readEvents(await resumeGet(stateless.url, user.token, before[0]!.id!), () => false);
  const answer = JSON.parse(after.at(-1)!.data) as { id: number; result: { structuredContent: unknown } };
  t.same([answer.id, answer.result.structuredContent], [6, { counted: 8 }], 'the answer came on the resumed stream');
  t.ok(Date.now() - started >= 500, 'the resumed stream stayed open while the call ran');
  t.ok(after.filter((e) => e.data.includes('notifications/progress')).length >= 8, 'with every progress event after the first');
});

t.test('stateless: the official SDK client resumes a cut stream by itself', async (t) => {
  const user = await createUser(stateless, 'sl-sdk@example.com');
  let cut = 0;
  // The first tools/call response is cut after its first progress event, as a network would.
  const cutting: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    const sent = typeof init?.body === 'string' ? init.body : '';
    if (cut > 0 || !sent.includes('"tools/call"') || !res.body) return res;
    cut++;
    return cutOff(res, (seen) => seen.includes('notifications/progress'));
  };
  const transport = new StreamableHTTPClientTransport(new URL(`${stateless.url}/mcp`), {
    fetch: cutting,
    requestInit: { headers: { Authorization: `Bearer ${user.token}` } },
    reconnectionOptions: { initialReconnectionDelay: 100, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1.5, maxRetries: 5 },
  });
  const client = new Client({ name: 'resume-test', version: '1' });
  await client.connect(transport);
  t.teardown(() => client.close());
  const progress: number[] = [];
  const result = (await client.callTool({ name: 'mcpx__count', arguments: { steps: 5, ms: 80 } }, undefined, {
    onprogress: (p) => progress.push(p.progress),
  })) as CallToolResult;
  t.equal(cut, 1, 'the stream was cut once');
  t.same(result.structuredContent, { counted: 5 }, 'the call completes');
  t.ok(
    progress.at(-1) === 5 && progress.every((p, i) => i === 0 || p > progress[i - 1]!),
    `progress arrives, in order (${progress.join(', ')})`,
  );
});

t.test('the stream log keeps a stream for its window, then sweeps it', async (t) => {
  const log = new StreamLog(stateless.folio.db);
  const user = await createUser(stateless, 'sl-sweep@example.com');
  const stream = '4a0b7c1e-0000-4000-8000-000000000001';
  await log.append(user.id, stream, [
    { seq: 1, json: null, end: false },
    { seq: 2, json: '{"jsonrpc":"2.0","id":1,"result":{}}', end: false },
    { seq: 3, json: null, end: true },
  ]);
  t.same(
    (await log.read(user.id, stream, 2)).map((e) => e.seq),
    [2, 3],
  );
  t.same(await log.read(randomUUID(), stream, 1), [], "another user's read finds nothing");
  t.equal(await log.sweep(60_000), 0, 'nothing is older than a minute');
  t.ok((await log.sweep(0)) >= 3, 'past the window it is removed');
  t.same(await log.read(user.id, stream, 1), []);
});

t.test('stateless: a client back before its node saw it leave (a half-open connection) still gets everything', async (t) => {
  const user = await createUser(stateless, 'sl-halfopen@example.com');
  // The first connection is never closed: to the server, its client is still there.
  const first = await statelessPost(stateless.url, user.token, countCall(8, 5, 150));
  const reader = first.body!.getReader();
  let seen = '';
  while (!seen.includes('notifications/progress')) seen += new TextDecoder().decode((await reader.read()).value);
  const last = [...seen.matchAll(/^id: (.+)$/gm)].at(-1)![1]!;
  const after = await readEvents(await resumeGet(stateless.url, user.token, last, 'text/event-stream'), () => false);
  const answer = after.map((e) => JSON.parse(e.data || 'null') as { id?: number; result?: any } | null).find((m) => m?.id === 8);
  t.same(answer?.result?.structuredContent, { counted: 5 }, 'the answer arrives on the new connection');
  const old = await reader.read().then(
    (r) => (r.done ? 'ended' : 'more'),
    () => 'cut',
  );
  t.not(old, 'more', 'the stale connection is let go rather than fed twice');
});

t.test('stateless: the SDK client keeps its place even when a resumed stream is cut before anything new', async (t) => {
  const user = await createUser(stateless, 'sl-sdk2@example.com');
  const seen: string[] = [];
  let cutPost = false;
  let cutGet = false;
  const cutting: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    const sent = typeof init?.body === 'string' ? init.body : '';
    seen.push(`${init?.method ?? 'GET'} ${new Headers(init?.headers).get('last-event-id') ?? '-'} ${res.status}`);
    if (!cutPost && sent.includes('"tools/call"')) {
      cutPost = true;
      return cutOff(res);
    }
    if (!cutGet && init?.method === 'GET' && res.ok) {
      cutGet = true;
      return cutOff(res);
    }
    return res;
  };
  const client = new Client({ name: 'resume-test-2', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${stateless.url}/mcp`), {
      fetch: cutting,
      requestInit: { headers: { Authorization: `Bearer ${user.token}` } },
      reconnectionOptions: { initialReconnectionDelay: 100, maxReconnectionDelay: 500, reconnectionDelayGrowFactor: 1.5, maxRetries: 5 },
    }),
  );
  t.teardown(() => client.close());
  const result = (await client.callTool({ name: 'acme__slow', arguments: { ms: 800 } })) as CallToolResult;
  t.equal((result.content[0] as { text: string }).text, 'done', 'the call completes');
  // The client's first GET, right after initialize, is its notification stream: 405 in stateless mode.
  const resumptions = seen.filter((l) => l.startsWith('GET') && !l.endsWith(' 405'));
  t.ok(cutGet && resumptions.length >= 2, `the first resumption was cut, and the client came back (${seen.join('; ')})`);
  t.ok(
    resumptions.every((l) => !l.includes(' - ')),
    'every reconnect named the event it had',
  );
});

t.test('stateless: resumptions are bounded per user, and a failing log is a 503, not a hang', async (t) => {
  const user = await createUser(stateless, 'sl-bounds@example.com');
  // 17 calls left running by a client that went away, each with an id to resume from.
  const firsts = await Promise.all(
    Array.from({ length: 17 }, async (_, i) => {
      const post = await statelessPost(stateless.url, user.token, {
        jsonrpc: '2.0',
        id: i,
        method: 'tools/call',
        params: { name: 'acme__slow', arguments: { ms: 3000 } },
      });
      return (await readEvents(post, (e) => e.id !== undefined))[0]!.id!;
    }),
  );
  const opened: AbortController[] = [];
  t.teardown(() => opened.forEach((ac) => ac.abort()));
  const resume = async (id: string) => {
    const ac = new AbortController();
    opened.push(ac);
    const r = await fetch(`${stateless.url}/mcp`, {
      signal: ac.signal,
      headers: { accept: 'text/event-stream', authorization: `Bearer ${user.token}`, 'last-event-id': id },
    });
    return r.status;
  };
  const statuses: number[] = [];
  for (const id of firsts.slice(0, 16)) statuses.push(await resume(id));
  t.same(statuses, Array(16).fill(200), '16 resumptions open at once');
  t.equal(await resume(firsts[16]!), 429, 'a 17th is refused');
  t.equal(await resume(firsts[0]!), 200, 'resuming one of them again replaces it rather than counting twice');

  // The database failing under a resumption (the log's reads fail, as they would with it gone).
  const read = Object.getOwnPropertyDescriptor(StreamLog.prototype, 'read')!;
  const restore = () => Object.defineProperty(StreamLog.prototype, 'read', read);
  t.teardown(restore);
  Object.defineProperty(StreamLog.prototype, 'read', { ...read, value: () => Promise.reject(new Error('the database went away')) });
  const broken = await resumeGet(stateless.url, user.token, firsts[0]!);
  restore();
  t.equal(broken.status, 503, 'answered at once');
  t.match(await broken.text(), /could not be read; try again/);
});

t.test('stateless: a stream with nothing left to send is a 204, so the SDK client stops asking', async (t) => {
  const short = await startTestServer({ plugins, overrides: { mcp: { mode: 'stateless', streamDeadlineMs: 1200 } } });
  t.teardown(() => short.close());
  const user = await createUser(short, 'sl-nothing@example.com');

  // Read whole: resuming it is answered at once, with nothing.
  const whole = await readEvents(await statelessPost(short.url, user.token, countCall(1, 2, 10)), () => false);
  const started = Date.now();
  const again = await resumeGet(short.url, user.token, whole[0]!.id!);
  t.equal(again.status, 204, 'a stream its client read to the end');
  t.ok(Date.now() - started < 500, 'without waiting for a log it was never written to');

  // Ended with an error while no one listened: the error is resumed, and after it there is nothing.
  const [first] = await readEvents(
    await statelessPost(short.url, user.token, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'acme__slow', arguments: { ms: 5000 } },
    }),
    (e) => e.id !== undefined,
  );
  // A resumption waits one deadline at most; the error comes at the call's deadline, which on a busy
  // machine can be just after it: the client then comes back with the last id it has, as the SDK does.
  const rest: Array<{ id?: string | undefined; data: string }> = [];
  let lastId = first!.id!;
  const errorOf = () => rest.map((e) => JSON.parse(e.data) as { id: number; error?: { message: string } }).find((m) => m.id === 2);
  for (let i = 0; i < 5 && errorOf() === undefined; i++) {
    const r = await resumeGet(short.url, user.token, lastId);
    if (r.status !== 200) break;
    const got = await readEvents(r, () => false);
    rest.push(...got.filter((e) => e.data !== ''));
    lastId = got.at(-1)?.id ?? lastId;
  }
  t.match(errorOf()?.error?.message, /no answer within 1200 ms/, 'the abandoned call answers its error');
  t.equal((await resumeGet(short.url, user.token, lastId)).status, 204, 'and after the error, nothing');

  // A stream whose node stopped without ending it: once no call can be behind it, what is there is all.
  const stream = randomUUID();
  await short.folio.db.orm.em
    .fork()
    .execute(
      `insert into mcp_stream_events (stream_id, seq, user_id, message, created_at) values (?::uuid, 1, ?::uuid, null, now() - interval '5 minutes')`,
      [stream, user.id],
    );
  const t0 = Date.now();
  t.equal((await resumeGet(short.url, user.token, `${stream}:1`)).status, 204, 'an orphaned stream ends at once');
  t.ok(Date.now() - t0 < 1000);

  // The official client on a stream that ends in an error: it does not come back again and again.
  let gets = 0;
  let cut = false;
  const cutting: typeof fetch = async (input, init) => {
    if ((init?.method ?? 'GET') === 'GET') gets++;
    const res = await fetch(input, init);
    if (cut || typeof init?.body !== 'string' || !init.body.includes('"tools/call"') || !res.body) return res;
    cut = true;
    return cutOff(res);
  };
  const client = new Client({ name: 'resume-error', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${short.url}/mcp`), {
      fetch: cutting,
      requestInit: { headers: { Authorization: `Bearer ${user.token}` } },
      reconnectionOptions: { initialReconnectionDelay: 100, maxReconnectionDelay: 300, reconnectionDelayGrowFactor: 1.5, maxRetries: 5 },
    }),
  );
  t.teardown(() => client.close());
  const before = gets;
  const outcome = await client.callTool({ name: 'acme__slow', arguments: { ms: 5000 } }).then(
    () => 'answered',
    (err: Error) => err.message,
  );
  t.match(outcome, /no answer within 1200 ms/, 'the client gets the error');
  await sleep(1500);
  t.ok(gets - before <= 3, `and reconnects no more than it needs (${gets - before} GETs)`);
});

t.test('stateless: a server shutting down answers the calls it still runs', async (t) => {
  const node = await startTestServer({ plugins, overrides: { mcp: { mode: 'stateless' } } });
  const user = await createUser(node, 'sl-shutdown@example.com');
  const post = await statelessPost(node.url, user.token, {
    jsonrpc: '2.0',
    id: 3,
    method: 'tools/call',
    params: { name: 'acme__slow', arguments: { ms: 20000 } },
  });
  const events = readEvents(post, () => false);
  await sleep(200);
  const closing = node.close();
  const got = (await events).filter((e) => e.data !== '').map((e) => JSON.parse(e.data) as { id: number; error?: { message: string } });
  await closing;
  t.match(got.at(-1), { id: 3, error: { message: /the server is shutting down/ } }, 'an error answer, not a cut');
});
