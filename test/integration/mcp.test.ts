// The MCP surface over real HTTP with the SDK's own Client and StreamableHTTPClientTransport:
// tools are exactly what curl help shows each user, calls answer what POST /curl/call answers,
// skills are resources, and changes reach connected clients live.
import t, { type Test } from 'tap';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  LoggingMessageNotificationSchema,
  McpError,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';
import { mcpWording, sizeText, typeName } from '../../core/kernel/describe.ts';
import { startTestServer, req, call, createUser, FIXTURES, type Reply } from '../helpers/server.ts';

const s = await startTestServer({
  plugins: [path.join(FIXTURES, 'basic'), path.join(FIXTURES, 'gated'), path.join(FIXTURES, 'typed'), path.join(FIXTURES, 'mcp/extra')],
  overrides: {
    limits: {
      responseBytes: 4096,
      responseHardCapBytes: 262144,
      requestBytes: 65536,
      jsonDepth: 32,
      handlerTimeoutMs: 8000,
      visibleTimeoutMs: 100,
    },
  },
});
t.teardown(() => s.close());
const admin = s.adminToken;
const alice = await createUser(s, 'alice@example.com');
const sam = await createUser(s, 'sam@example.com', ['staff']);

const setAccess = async (userId: string, namespace: string, access: 'enabled' | 'disabled' | 'default') => {
  const r = await call(s, admin, 'admin', 'set_namespace_access', { user_id: userId, namespace, access });
  if (r.status !== 200) throw new Error(`set_namespace_access: ${r.status} ${r.text}`);
};

interface Connected {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** Resolves once the server-sent GET stream (the notification channel) is open. */
  streamOpen: Promise<void>;
  counts: { tools: number; resources: number; logs: number };
  /** Resolves on the next notification of that kind. */
  next(kind: 'tools' | 'resources'): Promise<void>;
}

async function connect(token: string): Promise<Connected> {
  let opened!: () => void;
  const streamOpen = new Promise<void>((r) => (opened = r));
  const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    // Only to learn when the GET stream is up; the request goes out unchanged.
    fetch: async (url, init) => {
      const res = await fetch(url, init);
      if ((init?.method ?? 'GET') === 'GET' && res.ok) opened();
      return res;
    },
  });
  const client = new Client({ name: 'folio-test', version: '1.0.0' });
  const counts = { tools: 0, resources: 0, logs: 0 };
  const waiters: Record<'tools' | 'resources', Array<() => void>> = { tools: [], resources: [] };
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    counts.tools++;
    for (const w of waiters.tools.splice(0)) w();
  });
  client.setNotificationHandler(ResourceListChangedNotificationSchema, async () => {
    counts.resources++;
    for (const w of waiters.resources.splice(0)) w();
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, async () => {
    counts.logs++;
  });
  await client.connect(transport);
  t.teardown(() => client.close().catch(() => {}));
  return { client, transport, streamOpen, counts, next: (kind) => new Promise<void>((r) => waiters[kind].push(r)) };
}

const within = <T>(p: Promise<T>, ms: number, what: string) =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms))]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const text = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;
const mcpError = async (p: Promise<unknown>): Promise<McpError> => {
  try {
    await p;
  } catch (err) {
    if (err instanceof McpError) return err;
    throw err;
  }
  throw new Error('expected an MCP error');
};

/** Every (namespace, function) the registry has, hidden ones included. */
function everyFunction(): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const ns of s.folio.registry.snapshot.namespaces.values()) for (const fn of ns.functions.keys()) out.push([ns.name, fn]);
  return out;
}

t.test('tools are exactly the functions curl help offers the caller as callable, per user', async (t) => {
  // staff is hidden from alice by its visible rule; mcpx is switched off for sam by an operator.
  await setAccess(sam.id, 'mcpx', 'disabled');
  t.teardown(() => setAccess(sam.id, 'mcpx', 'default'));
  const lists: Record<string, string[]> = {};
  for (const [who, token] of [
    ['alice', alice.token],
    ['sam', sam.token],
  ] as const) {
    const { client } = await connect(token);
    const listed = new Set((await client.listTools()).tools.map((tool) => tool.name));
    const expected: string[] = [];
    for (const [ns, fn] of everyFunction()) {
      const help = await req(s, 'GET', `/curl/help/${ns}/${fn}`, { token });
      if (help.status === 200 && !help.text.includes('Not callable by you')) expected.push(`${ns}__${fn}`);
      else if (help.status !== 200) t.equal(help.status, 404, `${who}: ${ns}.${fn} help is 200 or 404`);
    }
    t.same([...listed].sort(), expected.sort(), `${who}: tools/list = the functions /curl/help offers them`);
    lists[who] = [...listed];
  }
  t.ok(lists.alice!.includes('mcpx__count') && !lists.sam!.includes('mcpx__count'), 'the toggled namespace differs');
  t.ok(lists.sam!.includes('staff__ping') && !lists.alice!.includes('staff__ping'), 'the rule-gated namespace differs');
  t.notOk(
    lists.alice!.some((n) => n.startsWith('throws__') || n.startsWith('hangs__')),
    'rules that throw or hang hide',
  );
  t.notOk(lists.sam!.includes('staff__purge'), 'visible but not entitled (a role sam lacks) is not listed');
  t.notOk(lists.alice!.includes('admin__create_user'), 'nor are admin-only tools for a plain user');
  t.ok(lists.alice!.includes('admin__mint_curl_token'), 'while the admin namespace tools she may call are');
  const help = await req(s, 'GET', '/curl/help/staff', { token: sam.token });
  t.match(
    help.text,
    /staff\.purge\(.*\n.*\n {6}Not callable by you \(403\): needs role/,
    'curl help still lists it, saying why it is not callable',
  );
  const purge = (await (await connect(sam.token)).client.callTool({ name: 'staff__purge' })) as CallToolResult;
  t.equal(purge.isError, true, 'calling it anyway is the 403 result, as on curl');
  for (const name of [...lists.alice!, ...lists.sam!]) t.match(name, /^[a-zA-Z0-9_-]{1,64}$/, `${name} suits strict clients`);
  t.ok(lists.alice!.includes('edge___ping'), 'a namespace ending in _ still maps one way');
});

const isFunction = (ns: string, fn: string) => s.folio.registry.snapshot.namespaces.get(ns)?.functions.has(fn) === true;

/** The ARGUMENTS block of a curl help text: name -> { type, description }. */
function helpArguments(help: string): Map<string, { type: string; description: string | undefined }> {
  const out = new Map<string, { type: string; description: string | undefined }>();
  const block = help.split('\nARGUMENTS\n')[1]!.split('\n\n')[0]!.split('\n');
  for (const [i, line] of block.entries()) {
    const m = /^ {2}([a-z_][a-z0-9_]*): (.+?), (required|optional)/.exec(line);
    if (!m) continue;
    const next = block[i + 1];
    out.set(m[1]!, { type: m[2]!, description: next?.startsWith('      ') ? next.trim() : undefined });
  }
  return out;
}

t.test('a tool is lean (purpose and ceiling; arguments and result in its schemas) and loses nothing curl help says', async (t) => {
  const { client } = await connect(alice.token);
  const { tools } = await client.listTools();
  const instructions = client.getInstructions() ?? '';
  t.match(instructions, /refused, never cut/, 'the size rule is said once, in the server instructions');
  t.match(instructions, /max_bytes_llm/, 'with how to lower the ceiling');
  t.ok(tools.length > 10);
  for (const tool of tools) {
    const [, ns, name] = /^([a-z0-9_]+?)__(?=[a-z])(.+)$/.exec(tool.name)!;
    const fn = s.folio.registry.snapshot.namespaces.get(ns!)!.functions.get(name!)!;
    const help = await req(s, 'GET', `/curl/help/${ns}/${name}`, { token: alice.token });
    const ceiling = /Answers over (\d+) bytes are refused/.exec(help.text)![1]!;
    t.ok(
      tool.description!.startsWith(mcpWording(fn.description.trim(), isFunction)),
      `${tool.name}: the description is the function's own`,
    );
    t.notMatch(
      tool.description,
      /\/curl\/|\b(notetaker|meetings|admin)\.[a-z_]+\b/,
      `${tool.name}: in MCP words (tools, skill:// URIs), not curl's`,
    );
    t.match(tool.description, new RegExp(`Answers up to ${sizeText(Number(ceiling))}\\.$`), `${tool.name}: and its ceiling`);
    t.notMatch(tool.description, /ARGUMENTS|RETURNS|SIZE|EXAMPLES/, `${tool.name}: no blocks repeating the schemas`);
    const props = (tool.inputSchema.properties ?? {}) as Record<string, Record<string, unknown>>;
    t.notOk('max_bytes_llm' in props, `${tool.name}: no budget argument in every schema`);
    const args = helpArguments(help.text);
    t.same(Object.keys(props).sort(), [...args.keys()].sort(), `${tool.name}: the arguments help lists`);
    for (const [arg, doc] of args) {
      t.equal(typeName(props[arg]), doc.type, `${tool.name}.${arg}: same type`);
      t.equal(props[arg]!.description, doc.description && mcpWording(doc.description, isFunction), `${tool.name}.${arg}: same description`);
    }
    const returns = /\nRETURNS\n {2}(.+)\n/.exec(help.text)![1]!;
    if (tool.outputSchema) {
      const out = tool.outputSchema as Record<string, any>;
      const shape = fn.returns?.type === 'object' ? out : out.properties.result;
      t.equal(typeName(shape), returns, `${tool.name}: outputSchema is what RETURNS says`);
    } else t.match(returns, /^any/, `${tool.name}: no outputSchema only without returns`);
  }
  const echo = tools.find((x) => x.name === 'acme__echo')!;
  const fn = s.folio.registry.snapshot.namespaces.get('acme')!.functions.get('echo')!;
  t.same(echo.inputSchema, fn.args, "inputSchema is the function's args schema");
  t.same(
    echo.outputSchema,
    { type: 'object', properties: { result: { type: 'string' } }, required: ['result'] },
    'a non-object return is wrapped',
  );
  t.same(
    tools.find((x) => x.name === 'mcpx__count')!.outputSchema,
    s.folio.registry.snapshot.namespaces.get('mcpx')!.functions.get('count')!.returns,
  );
  t.notOk(tools.find((x) => x.name === 'acme__noop')!.outputSchema, 'no returns, no outputSchema');
});

t.test('every first-party tool has a human title and annotations, passed through; curl help says read-only or destructive', async (t) => {
  const { client } = await connect(admin);
  const tools = (await client.listTools()).tools.filter((x) => /^(admin|notetaker|meetings)__/.test(x.name));
  t.ok(tools.length >= 18, 'the first-party tools an admin may call');
  for (const tool of tools) {
    const [ns, name] = tool.name.split('__') as [string, string];
    const fn = s.folio.registry.snapshot.namespaces.get(ns)!.functions.get(name)!;
    t.ok(tool.title && tool.title !== `${ns}.${name}`, `${tool.name}: a human title (${tool.title})`);
    t.equal(tool.title, fn.title);
    t.type(tool.annotations?.readOnlyHint, 'boolean', `${tool.name}: says whether it only reads`);
    if (tool.annotations?.readOnlyHint === false)
      t.type(tool.annotations.destructiveHint, 'boolean', `${tool.name}: and if not, whether it destroys`);
    t.equal(tool.annotations?.openWorldHint, false, `${tool.name}: works on Folio's own data`);
    t.same(tool.annotations, fn.annotations, `${tool.name}: the plugin's annotations, as declared`);
  }
  const byName = new Map(tools.map((x) => [x.name, x]));
  t.equal(byName.get('notetaker__search')!.annotations!.readOnlyHint, true);
  t.equal(byName.get('notetaker__delete')!.annotations!.destructiveHint, true);
  t.equal(byName.get('notetaker__append')!.annotations!.destructiveHint, false, 'an append destroys nothing');
  const list = await req(s, 'GET', '/curl/help/notetaker', { token: admin });
  t.match(list.text, /^ {2}notetaker\.search\(.*\) -> .* \[read-only\]$/m, 'the namespace help marks read-only functions');
  t.match(list.text, /^ {2}notetaker\.delete\(.*\) -> .* \[destructive\]$/m, 'and destructive ones');
  const one = await req(s, 'GET', '/curl/help/notetaker/replace_section', { token: admin });
  t.match(one.text, /^Replace a section \(destructive/m, "a function's help gives its title and effect");
});

/** The curl answer as an MCP client reads it: the function named as its tool, help as its inputSchema. */
function inMcpWords(curlText: string, tool: string): string {
  const dotted = tool.replace(/__(?=[a-z])/, '.');
  return curlText
    .replaceAll(`help: GET /curl/help/${dotted.replace('.', '/')}`, `help: the inputSchema of ${tool} (tools/list)`)
    .replaceAll(`see GET /curl/help/${dotted.replace('.', '/')}`, `see the inputSchema of the tool ${tool}`)
    .replaceAll(`${dotted}(`, `${tool}(`)
    .replaceAll(`${dotted} `, `${tool} `);
}

/** Same outcome on both surfaces: the MCP text is the curl body in MCP words, isError exactly when curl is not 200. */
function sameAnswer(t: Test, mcp: CallToolResult, curl: Reply, what: string, tool: string, mask = (x: string) => x) {
  t.equal(mcp.isError === true, curl.status !== 200, `${what}: isError iff curl answers ${curl.status}`);
  t.equal(mask(text(mcp)), mask(inMcpWords(curl.text, tool)), `${what}: same text as curl (${curl.status})`);
  t.notMatch(text(mcp), /\/curl\//, `${what}: no curl route in the MCP text`);
}

t.test('calls answer what POST /curl/call answers: text, JSON, 400, 403, 404, 409, 413, 500', async (t) => {
  const a = await connect(alice.token);
  const b = await connect(sam.token);
  const uuid = (x: string) => x.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>');
  const cases: Array<[string, Connected, string, string, string, Record<string, unknown>]> = [
    ['text', a, alice.token, 'acme', 'echo', { text: 'hi', times: 2 }],
    ['json', a, alice.token, 'acme', 'noop', {}],
    ['400', a, alice.token, 'acme', 'echo', { text: 5, times: 0, extra: true }],
    ['400 server supplies the user', a, alice.token, 'acme', 'noop', { user: 'admin@localhost' }],
    ['403 role', b, sam.token, 'staff', 'purge', {}],
    ['403 admin only', a, alice.token, 'admin', 'create_user', { email: 'x@example.com' }],
    ['413', a, alice.token, 'acme', 'big', { size: 5000 }],
    ['413 lowered', a, alice.token, 'acme', 'big', { size: 3000, max_bytes_llm: 1000 }],
    ['400 bad budget', a, alice.token, 'acme', 'noop', { max_bytes_llm: 0 }],
    ['404 raised by the handler (a result, not an unknown tool)', a, alice.token, 'errs', 'missing', {}],
    ['400 raised by the handler', a, alice.token, 'errs', 'bad', {}],
    ['403 raised by the handler', a, alice.token, 'errs', 'nope', {}],
    ['409 raised by the handler', a, alice.token, 'errs', 'stale', {}],
    ['500', a, alice.token, 'acme', 'boom', {}],
    ['500 not JSON', a, alice.token, 'acme', 'circular', {}],
  ];
  for (const [what, c, token, ns, fn, args] of cases) {
    const viaMcp = (await c.client.callTool({ name: `${ns}__${fn}`, arguments: args })) as CallToolResult;
    const viaCurl = await call(s, token, ns, fn, args);
    sameAnswer(t, viaMcp, viaCurl, what, `${ns}__${fn}`, uuid);
  }
  const noop = (await a.client.callTool({ name: 'acme__noop' })) as CallToolResult;
  t.same(JSON.parse(text(noop)), { ok: true });
  const boom = (await a.client.callTool({ name: 'acme__boom' })) as CallToolResult;
  t.notMatch(text(boom), /secret|\/srv\/folio/, 'no handler detail leaks');
  const count = await a.client.callTool({ name: 'mcpx__count', arguments: { steps: 1, ms: 0 } });
  t.same(count.structuredContent, { counted: 1 }, 'structuredContent where returns is an object');
  const tags = await a.client.callTool({ name: 'mcpx__tags' });
  t.same(tags.structuredContent, { result: ['a', 'b'] }, 'wrapped where returns is not an object');
});

t.test('the byte budget can also come in _meta; the lower one wins, none raises', async (t) => {
  const { client } = await connect(alice.token);
  const meta = (await client.callTool({ name: 'acme__big', arguments: { size: 3000 }, _meta: { max_bytes_llm: 1000 } })) as CallToolResult;
  t.equal(meta.isError, true);
  t.match(text(meta), /ceiling of 1000 bytes/);
  const both = (await client.callTool({
    name: 'acme__big',
    arguments: { size: 3000, max_bytes_llm: 2000 },
    _meta: { max_bytes_llm: 1500 },
  })) as CallToolResult;
  t.match(text(both), /ceiling of 1500 bytes/);
  const raise = (await client.callTool({
    name: 'acme__big',
    arguments: { size: 5000 },
    _meta: { max_bytes_llm: 100000 },
  })) as CallToolResult;
  t.match(text(raise), /ceiling of 4096 bytes/, 'never raises');
  const fits = (await client.callTool({ name: 'acme__big', arguments: { size: 100 }, _meta: { max_bytes_llm: 1000 } })) as CallToolResult;
  t.notOk(fits.isError);
});

t.test('hints in answers name the next call as the caller makes it: the tool on MCP, the dotted name on curl', async (t) => {
  const { client } = await connect(alice.token);
  const body = Array.from({ length: 400 }, (_, i) => `line ${i} of a long note`).join('\n');
  const created = (await client.callTool({ name: 'notetaker__create', arguments: { title: 'Long', body } })) as CallToolResult;
  const id = (created.structuredContent as { id: string }).id;
  const part = (await client.callTool({ name: 'notetaker__get', arguments: { id } })) as CallToolResult;
  const more = (part.structuredContent as { more: string; next_offset: number }).more;
  t.match(more, new RegExp(`Next part: notetaker__get \\{"id": "${id}", "offset": \\d+\\}\\.$`), 'MCP: the tool and its arguments');
  const viaCurl = (await call(s, alice.token, 'notetaker', 'get', { id })).json<{ more: string }>();
  t.match(viaCurl.more, new RegExp(`Next part: notetaker\\.get \\{"id": "${id}", "offset": \\d+\\}\\.$`), 'curl: as before');
  const stale = (await client.callTool({
    name: 'notetaker__update',
    arguments: { id, expected_version: 99, title: 'x' },
  })) as CallToolResult;
  t.equal(stale.isError, true);
  t.match(text(stale), /Read it again \(notetaker__get\).*use notetaker__append\./, 'a conflict says which tools to use');
  t.notMatch(text(stale), /notetaker\.(get|append)/);
  const guide = (await client.listTools()).tools.find((x) => x.name === 'notetaker__search')!;
  t.match(guide.description, /skill:\/\/notetaker\/search_syntax/, 'a guide is named by its resource URI');
});

t.test('completion: prompt arguments from their values and the caller own tags; the guide template', async (t) => {
  const { client } = await connect(alice.token);
  t.ok(client.getServerCapabilities()?.completions, 'the capability is declared');
  for (const tags of [['standup', 'work'], ['standup'], ['stats']])
    await req(s, 'POST', '/api/v1/notetaker/notes', { token: alice.token, body: { title: 'tagged', tags } });
  const complete = async (
    ref: { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string },
    name: string,
    value: string,
    context?: Record<string, string>,
  ) => (await client.complete({ ref, argument: { name, value }, ...(context ? { context: { arguments: context } } : {}) })).completion;
  const week = { type: 'ref/prompt' as const, name: 'notetaker__summarize_week' };
  t.same((await complete(week, 'days', '1')).values, ['1', '14'], 'declared values, by prefix');
  const tags = await complete(week, 'tag', 'st');
  t.same(tags.values, ['standup', 'stats'], "the caller's tags, most used first");
  t.equal(tags.total, 2);
  t.same((await complete(week, 'tag', 'ST')).values, ['standup', 'stats'], 'ignoring case');
  t.same((await complete(week, 'nosuch', '')).values, [], 'an argument it does not take: nothing');
  const sams = await connect(sam.token);
  t.notOk(
    (await sams.client.complete({ ref: week, argument: { name: 'tag', value: 'st' } })).completion.values.includes('standup'),
    "another user's tags are never suggested",
  );
  await sams.client.close();

  const guide = { type: 'ref/resource' as const, uri: 'skill://{namespace}/{name}' };
  t.ok((await complete(guide, 'namespace', 'note')).values.includes('notetaker'));
  t.same((await complete(guide, 'name', 'search', { namespace: 'notetaker' })).values, ['search_syntax']);
  t.ok((await complete(guide, 'name', 'how', { namespace: 'search' })).values.includes('how_it_works'));
  const unknown = await mcpError(
    client.complete({ ref: { type: 'ref/resource', uri: 'file:///etc/passwd' }, argument: { name: 'x', value: '' } }),
  );
  t.equal(unknown.code, -32002, 'another URI is not a resource here');
  await client.close();
});

t.test('prompts: listed per caller, rendered in MCP words, arguments checked, gated like the namespace', async (t) => {
  const { client } = await connect(alice.token);
  const { prompts } = await client.listPrompts();
  const week = prompts.find((p) => p.name === 'notetaker__summarize_week')!;
  t.ok(week, 'a first-party prompt is listed');
  t.equal(week.title, "Summarize my week's notes");
  t.same(
    week.arguments?.map((a) => a.name),
    ['days', 'tag'],
  );
  t.ok(
    prompts.find((p) => p.name === 'notetaker__prepare_meeting')?.arguments?.some((a) => a.name === 'topic' && a.required),
    'a required argument is marked',
  );

  const got = await client.getPrompt({ name: 'notetaker__summarize_week', arguments: { days: '3', tag: 'meeting' } });
  const since = new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10);
  const first = got.messages[0]!;
  t.equal(first.role, 'user');
  const body = (first.content as { text: string }).text;
  t.match(
    body,
    `notetaker__generate_report {"from": "${since}", "tags": ["meeting"], "group_by": "day"}`,
    'the arguments shape the request',
  );
  t.notMatch(body, /\/curl\/|notetaker\.[a-z]/, 'tools named as MCP names them');

  const missing = await mcpError(client.getPrompt({ name: 'notetaker__prepare_meeting', arguments: {} }));
  t.equal(missing.code, -32602);
  t.match(missing.message, /missing required argument: topic/);
  const extra = await mcpError(client.getPrompt({ name: 'notetaker__summarize_week', arguments: { weeks: '2' } }));
  t.match(extra.message, /'weeks' is not an argument of this prompt \(it takes: days, tag\)/);

  await setAccess(alice.id, 'notetaker', 'disabled');
  t.teardown(() => setAccess(alice.id, 'notetaker', 'default'));
  t.notOk(
    (await client.listPrompts()).prompts.some((p) => p.name.startsWith('notetaker__')),
    'a hidden namespace has no prompts',
  );
  const hiddenCompletion = await mcpError(
    client.complete({ ref: { type: 'ref/prompt', name: 'notetaker__summarize_week' }, argument: { name: 'tag', value: '' } }),
  );
  t.equal(hiddenCompletion.code, -32602, 'no completion for a hidden namespace');
  const hidden = await mcpError(client.getPrompt({ name: 'notetaker__summarize_week' }));
  const absent = await mcpError(client.getPrompt({ name: 'nosuch__summarize_week' }));
  t.equal(hidden.code, -32602);
  t.equal(hidden.message.replace('notetaker', 'X'), absent.message.replace('nosuch', 'X'), 'hidden and absent read the same');
});

t.test('a hidden tool and an absent one are the same unknown-tool error', async (t) => {
  const { client } = await connect(alice.token);
  const hidden = await mcpError(client.callTool({ name: 'staff__ping' }));
  const absent = await mcpError(client.callTool({ name: 'nosuch__ping' }));
  const noFn = await mcpError(client.callTool({ name: 'acme__nope' }));
  const dotted = await mcpError(client.callTool({ name: 'acme.echo' }));
  for (const e of [hidden, absent, noFn, dotted]) t.equal(e.code, -32602, "JSON-RPC invalid params, the spec's unknown tool");
  t.equal(hidden.message.replace('staff__ping', 'X'), absent.message.replace('nosuch__ping', 'X'), 'same words');
  t.match(hidden.message, /Unknown tool: staff__ping/);
  const asSam = (await (await connect(sam.token)).client.callTool({ name: 'staff__ping' })) as CallToolResult;
  t.equal(text(asSam), 'pong', 'callable by whoever can see it');
});

t.test('binary answers: image content and embedded resources', async (t) => {
  const { client } = await connect(alice.token);
  const png = (await client.callTool({ name: 'acme__file' })) as CallToolResult;
  t.match(png.content[0], { type: 'image', mimeType: 'image/png' });
  t.same([...Buffer.from((png.content[0] as { data: string }).data, 'base64')], [0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]);
  const csv = (await client.callTool({ name: 'mcpx__csv' })) as CallToolResult;
  t.match(csv.content[0], { type: 'resource', resource: { mimeType: 'text/csv', text: 'id,name\n1,Ada\n', uri: /people\.csv$/ } });
  const blob = (await client.callTool({ name: 'mcpx__blob' })) as CallToolResult;
  const r = (blob.content[0] as { resource: { blob: string; mimeType: string } }).resource;
  t.equal(r.mimeType, 'application/octet-stream');
  t.same([...Buffer.from(r.blob, 'base64')], [0, 1, 2, 250, 251, 252]);
});

t.test('skills are resources, listed and read by the same gating as /curl/skill', async (t) => {
  const erin = await createUser(s, 'erin@example.com');
  await setAccess(erin.id, 'acme', 'disabled');
  for (const [who, token] of [
    ['alice', alice.token],
    ['erin', erin.token],
  ] as const) {
    const { client } = await connect(token);
    const listed = (await client.listResources()).resources;
    const expected: string[] = [];
    for (const ns of s.folio.registry.snapshot.namespaces.values())
      for (const name of ns.skills.keys()) {
        const r = await req(s, 'GET', `/curl/skill/${ns.name}/${name}`, { token });
        if (r.status === 200) expected.push(`skill://${ns.name}/${name}`);
      }
    t.same(listed.map((r) => r.uri).sort(), expected.sort(), `${who}: the guides /curl/skill serves`);
    for (const r of listed) t.equal(r.mimeType, 'text/markdown');
  }
  const a = (await connect(alice.token)).client;
  const read = await a.readResource({ uri: 'skill://acme/how_it_works' });
  const curl = await req(s, 'GET', '/curl/skill/acme/how_it_works', { token: alice.token });
  t.equal((read.contents[0] as { text: string }).text, curl.text, 'the same guide as curl');
  const e = (await connect(erin.token)).client;
  const hidden = await mcpError(e.readResource({ uri: 'skill://acme/how_it_works' }));
  const missing = await mcpError(e.readResource({ uri: 'skill://acme/nope' }));
  const absent = await mcpError(e.readResource({ uri: 'skill://nosuch/how_it_works' }));
  for (const err of [hidden, missing, absent]) t.equal(err.code, -32002, 'resource not found');
  t.equal(hidden.message.replace('acme/how_it_works', 'X'), absent.message.replace('nosuch/how_it_works', 'X'), 'hidden reads like absent');
  t.same(
    (await a.listResourceTemplates()).resourceTemplates.map((x) => x.uriTemplate),
    ['skill://{namespace}/{name}'],
  );
});

t.test('live: a plugin dropped in mid-session, then removed, reaches the client as list_changed', async (t) => {
  const c = await connect(alice.token);
  await within(c.streamOpen, 5000, 'GET stream');
  t.notOk((await c.client.listTools()).tools.some((x) => x.name === 'fresh__hello'));
  const dir = path.join(s.scratchPlugins, 'fresh');
  const added = c.next('tools');
  await mkdir(dir, { recursive: true });
  await writeFile(
    path.join(dir, 'index.mjs'),
    `export default { namespace: 'fresh', description: 'New.', functions: { hello: { description: 'Say hello.', handler: () => 'hello' } } };`,
  );
  await within(added, 5000, 'tools/list_changed after adding a plugin');
  t.ok(
    (await c.client.listTools()).tools.some((x) => x.name === 'fresh__hello'),
    'listed without a reconnect',
  );
  t.equal(text(await c.client.callTool({ name: 'fresh__hello' })), 'hello', 'and callable');
  t.ok(c.counts.logs >= 1, 'a log message says what changed');

  const edited = c.next('tools');
  await writeFile(
    path.join(dir, 'index.mjs'),
    `export default { namespace: 'fresh', description: 'New.', functions: { hello: { description: 'Say hello, politely.', handler: () => 'hello!' } } };`,
  );
  await within(edited, 5000, 'tools/list_changed after an edit');
  t.match((await c.client.listTools()).tools.find((x) => x.name === 'fresh__hello')!.description, /politely/);

  const removed = c.next('tools');
  await rm(dir, { recursive: true, force: true });
  await within(removed, 5000, 'tools/list_changed after removing the plugin');
  t.notOk((await c.client.listTools()).tools.some((x) => x.name === 'fresh__hello'));
  t.equal((await mcpError(c.client.callTool({ name: 'fresh__hello' }))).code, -32602, 'gone: unknown tool');
});

t.test('set_namespace_access reaches that user only, tools and guides alike', async (t) => {
  const a = await connect(alice.token);
  const b = await connect(sam.token);
  await Promise.all([within(a.streamOpen, 5000, 'GET a'), within(b.streamOpen, 5000, 'GET b')]);
  await Promise.all([a.client.listTools(), b.client.listTools(), a.client.listResources(), b.client.listResources()]);
  const before = { ...b.counts };
  const tools = a.next('tools');
  const resources = a.next('resources');
  await setAccess(alice.id, 'acme', 'disabled');
  await within(Promise.all([tools, resources]), 5000, "alice's list_changed");
  t.notOk(
    (await a.client.listTools()).tools.some((x) => x.name.startsWith('acme__')),
    'acme is gone for alice',
  );
  t.notOk((await a.client.listResources()).resources.some((r) => r.uri.startsWith('skill://acme/')));
  await sleep(400);
  t.same(
    { tools: b.counts.tools, resources: b.counts.resources },
    { tools: before.tools, resources: before.resources },
    'sam heard nothing',
  );
  t.ok(
    (await b.client.listTools()).tools.some((x) => x.name === 'acme__echo'),
    'and still has acme',
  );
  const back = a.next('tools');
  await setAccess(alice.id, 'acme', 'default');
  await within(back, 5000, 'list_changed when access returns to the rule');
});

t.test("a user's own notes can change their tools: the first meeting note brings meetings__*", async (t) => {
  const dana = await createUser(s, 'dana@example.com');
  const d = await connect(dana.token);
  await within(d.streamOpen, 5000, 'GET stream');
  t.notOk(
    (await d.client.listTools()).tools.some((x) => x.name.startsWith('meetings__')),
    'no meeting note yet: no meetings tools',
  );
  const changed = d.next('tools');
  const made = await d.client.callTool({
    name: 'notetaker__create',
    arguments: { title: 'Standup', body: '- [ ] ship it', tags: ['meeting'] },
  });
  t.notOk(made.isError, 'the note is created through MCP itself');
  await within(changed, 5000, 'tools/list_changed after the first meeting note');
  const names = (await d.client.listTools()).tools.map((x) => x.name);
  t.ok(names.includes('meetings__action_items'), 'meetings tools are listed now');
  const items = await d.client.callTool({ name: 'meetings__action_items', arguments: {} });
  t.match(text(items), /ship it/);
});

t.test('cancelling a call aborts the handler signal', async (t) => {
  const { client } = await connect(alice.token);
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
  t.equal(after, before + 1, 'the handler saw its signal fire');
  t.ok(Date.now() - started < 5000, 'long before the handler timeout');
  t.equal(text(await client.callTool({ name: 'acme__echo', arguments: { text: 'still here' } })), 'still here', 'the session carries on');
});

t.test('progress reported by a handler reaches the client', async (t) => {
  const { client } = await connect(alice.token);
  const seen: Array<{ progress: number; total?: number | undefined; message?: string | undefined }> = [];
  const r = await client.callTool({ name: 'mcpx__count', arguments: { steps: 4, ms: 40 } }, undefined, { onprogress: (p) => seen.push(p) });
  t.same(r.structuredContent, { counted: 4 });
  t.ok(seen.length >= 3, `several notifications (${seen.length})`);
  t.ok(
    seen.every((p, i) => i === 0 || p.progress > seen[i - 1]!.progress),
    'strictly increasing',
  );
  t.same(seen.at(-1), { progress: 4, total: 4, message: 'step 4 of 4' });
  const quiet = await client.callTool({ name: 'mcpx__count', arguments: { steps: 2, ms: 0 } });
  t.same(quiet.structuredContent, { counted: 2 }, 'without a progress token, ctx.progress is a no-op');
});

/** POST one JSON-RPC message on a session; the messages of the answer (SSE or JSON). */
async function rpc(token: string, session: string, message: object): Promise<Array<Record<string, any>>> {
  const res = await fetch(`${s.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': session,
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify(message),
  });
  const body = await res.text();
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) return [JSON.parse(body)];
  return (
    body
      .split('\n')
      // An empty data line is the priming event of a resumable stream (an id to resume from).
      .filter((l) => l.startsWith('data: ') && l.length > 'data: '.length)
      .map((l) => JSON.parse(l.slice(6)))
  );
}

t.test('two clients sending the same JSON-RPC ids at once each get only their own answers', async (t) => {
  const a = await connect(alice.token);
  const b = await connect(sam.token);
  const rounds = 15;
  const jobs: Array<Promise<[string, Array<Record<string, any>>]>> = [];
  for (let i = 0; i < rounds; i++) {
    for (const [who, token, c] of [
      ['alice', alice.token, a],
      ['sam', sam.token, b],
    ] as const) {
      const msg = { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'acme__echo', arguments: { text: `${who}-${i}` } } };
      jobs.push(rpc(token, c.transport.sessionId!, msg).then((m) => [`${who}-${i}`, m]));
    }
  }
  let ok = 0;
  for (const [want, messages] of await Promise.all(jobs)) {
    const answers = messages.filter((m) => 'result' in m || 'error' in m);
    if (answers.length === 1 && answers[0]!.result?.content?.[0]?.text === want && answers[0]!.id === Number(want.split('-')[1])) ok++;
    else t.fail(`${want}: got ${JSON.stringify(messages)}`);
  }
  t.equal(ok, rounds * 2, 'every request got exactly its own answer');
  // The SDK clients number their requests the same way; they do not cross either.
  const both = await Promise.all([
    ...Array.from({ length: 10 }, (_, i) => a.client.callTool({ name: 'acme__echo', arguments: { text: `a${i}` } })),
    ...Array.from({ length: 10 }, (_, i) => b.client.callTool({ name: 'acme__echo', arguments: { text: `b${i}` } })),
  ]);
  t.same(
    both.map((r) => text(r)),
    [...Array.from({ length: 10 }, (_, i) => `a${i}`), ...Array.from({ length: 10 }, (_, i) => `b${i}`)],
  );
});

t.test('the connection example of docs/mcp.md runs as written', async (t) => {
  const doc = await readFile(path.join(PACKAGE_ROOT, 'docs/mcp.md'), 'utf8');
  const m = /<!-- tested: test\/integration\/mcp\.test\.ts -->\s*```ts\n([\s\S]*?)\n```/.exec(doc);
  t.ok(m, 'the doc has the tested example');
  const { stdout } = await new Promise<{ stdout: string }>((resolve, reject) =>
    execFile(
      process.execPath,
      ['--input-type=module-typescript', '-e', m![1]!],
      { cwd: PACKAGE_ROOT, env: { ...process.env, FOLIO_URL: s.url, FOLIO_TOKEN: alice.token }, timeout: 30000 },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve({ stdout })),
    ),
  );
  t.match(stdout, /^acme__echo$/m, 'it lists the tools');
  t.match(stdout, /token: 'folio_mnt_/, 'and calls one');
});

t.test('large catalogues: find tools by what they do; pinned namespaces are all that is listed', async (t) => {
  const connected = await connect(alice.token);
  const { client } = connected;
  const found = (await client.callTool({ name: 'folio__find_tools', arguments: { query: 'upload a file' } })) as CallToolResult;
  t.notOk(found.isError, text(found));
  const tools = (found.structuredContent as { tools: Array<{ name: string; input_schema: { properties?: object } }> }).tools;
  t.ok(tools.length > 0 && tools[0]!.name.startsWith('files__'), `a files tool comes first: ${tools.map((x) => x.name).join(', ')}`);
  t.ok(tools[0]!.input_schema.properties, 'with its argument schema');
  t.notOk(
    tools.some((x) => x.name.startsWith('admin__')),
    'only tools the caller may call',
  );

  const all = (await client.listTools()).tools.map((x) => x.name);
  t.ok(all.some((n) => n.startsWith('notetaker__')) && all.some((n) => n.startsWith('files__')));
  const changed = connected.next('tools');
  const pinned = (await client.callTool({ name: 'folio__pin', arguments: { namespaces: ['search'] } })) as CallToolResult;
  t.same((pinned.structuredContent as { pinned: string[] }).pinned, ['search']);
  await changed;
  const listed = (await client.listTools()).tools.map((x) => x.name);
  t.ok(
    listed.every((n) => n.startsWith('search__') || n.startsWith('folio__')),
    `only the pinned namespace and the catalogue: ${listed.join(', ')}`,
  );
  t.ok(listed.includes('folio__find_tools'));
  const unlisted = (await client.callTool({ name: 'notetaker__list', arguments: {} })) as CallToolResult;
  t.notOk(unlisted.isError, 'an unlisted tool can still be called');
  const bad = (await client.callTool({ name: 'folio__pin', arguments: { namespaces: ['nosuch'] } })) as CallToolResult;
  t.ok(bad.isError);
  t.match(text(bad), /no namespace 'nosuch' here to pin/);
  await client.callTool({ name: 'folio__pin', arguments: { namespaces: [] } });
  t.same((await client.listTools()).tools.map((x) => x.name).sort(), [...all].sort(), 'no pins: everything again');
  await client.close();
});
