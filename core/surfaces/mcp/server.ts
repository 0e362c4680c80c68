// One MCP server (the SDK's low-level Server) per session, or per request in stateless mode. Its
// handlers are thin: who is calling comes from the HTTP request (authInfo), and everything else
// from the Dispatcher, the same one POST /curl/call uses.
import { createHash } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type ProgressToken,
  type Resource,
  type ServerNotification,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { Principal } from '../../domain/identity/types.ts';
import type { Dispatcher } from '../../kernel/dispatch.ts';
import { NotFound, UnknownName } from '../../contract/errors.ts';
import { errorAnswer } from '../http/error-text.ts';
import { fingerprintResources, listSkills, parseSkillUri, readSkill, SKILL_TEMPLATE } from './resources.ts';
import { errorResult, MAX_BYTES_ARG, parseToolName, renderTool, resultOf } from './tools.ts';
import { argumentCandidates, completeFrom, listPrompts, promptArgumentsProblem, promptResult } from './prompts.ts';
import { callRef } from '../../kernel/describe.ts';

/** What a handler knows of the HTTP request it came in on. */
export interface RequestCaller {
  principal: Principal;
  log: Logger;
}

export function authInfoFor(caller: RequestCaller): AuthInfo {
  // The token itself stays out: nothing below the transport needs it.
  // The principal's scopes are frozen (core/domain/identity/service.ts): shared, not copied per request.
  return { token: '', clientId: caller.principal.user.id, scopes: caller.principal.scopes, extra: { folio: caller } };
}

function callerOf(extra: { authInfo?: AuthInfo | undefined }): RequestCaller {
  const caller = extra.authInfo?.extra?.['folio'] as RequestCaller | undefined;
  if (!caller) throw new McpError(ErrorCode.InternalError, 'no caller on this request');
  return caller;
}

export interface ToolListing {
  tools: Tool[];
  /** Tool name -> content hash, to tell what changed. */
  hashes: Map<string, string>;
}

/**
 * The caller's tools: the functions whose /curl/help/{ns}/{fn} answers 200 for them and that they
 * are entitled to call. Curl help also shows the ones they are not (with what is missing); a tool
 * list is what an agent may call, and every tool in it costs context, so a 403 is left out.
 */
export async function listTools(dispatcher: Dispatcher, caller: RequestCaller): Promise<ToolListing> {
  const viewer = await dispatcher.viewer(caller.principal, caller.log);
  const tools: Tool[] = [];
  const hashes = new Map<string, string>();
  const snapshot = dispatcher.registry.snapshot;
  // References to functions in descriptions name tools; any function of the registry counts.
  const isFunction = (ns: string, fn: string) => snapshot.namespaces.get(ns)?.functions.has(fn) === true;
  const visibleNamespaces = await dispatcher.namespaces(viewer);
  // The functions this caller may call (pinned or not: a pinned-away tool is still callable).
  const callable = new Set<string>();
  for (const ns of visibleNamespaces)
    for (const fn of ns.functions.values())
      if (dispatcher.policy.entitled(caller.principal, fn.requires)) callable.add(`${ns.name}.${fn.name}`);
  // A description names only tools the caller can see: references to the others are left out.
  const hiddenList = [...snapshot.namespaces.values()].flatMap((ns) =>
    [...ns.functions.keys()].map((fn) => `${ns.name}.${fn}`).filter((ref) => !callable.has(ref)),
  );
  const hiding = {
    hidden: (ns: string, fn: string) => isFunction(ns, fn) && !callable.has(`${ns}.${fn}`),
    key: hiddenList.length ? createHash('sha1').update(hiddenList.join(' ')).digest('base64url') : '',
  };
  // With pinned namespaces, only theirs and the catalogue's own tools (which find the rest); every
  // callable tool can still be called.
  const pins = new Set(await dispatcher.policy.pins(viewer));
  for (const ns of visibleNamespaces) {
    if (pins.size > 0 && !pins.has(ns.name) && ns.name !== CATALOGUE_NAMESPACE) continue;
    for (const fn of [...ns.functions.values()].sort((a, b) => a.name.localeCompare(b.name))) {
      if (!callable.has(`${ns.name}.${fn.name}`)) continue;
      const r = renderTool(fn, dispatcher.ceiling(fn), isFunction, snapshot.generation, hiding);
      tools.push(r.tool);
      hashes.set(r.tool.name, r.hash);
    }
  }
  return { tools, hashes };
}

/** The caller's skill guides: the same gating as /curl/skill. */
export async function listResources(dispatcher: Dispatcher, caller: RequestCaller): Promise<Resource[]> {
  return listSkills(await dispatcher.namespaces(await dispatcher.viewer(caller.principal, caller.log)));
}

/** The namespace of the catalogue tools (plugins/@folio/folio): listed even when the caller pinned others. */
export const CATALOGUE_NAMESPACE = 'folio';

/** Hooks a session uses to keep track of what its client has seen. */
export interface SessionHooks {
  toolsListed(listing: ToolListing): void;
  resourcesListed(fingerprint: string): void;
}

export interface ServerDeps {
  dispatcher: Dispatcher;
  version: string;
  stateful: boolean;
}

/**
 * What is the same for every tool, said once here instead of in each tool's description: the
 * naming, where the documentation is, and the size rule.
 */
export const INSTRUCTIONS = [
  "Folio: the user's notes, files and tools. Tools are named {namespace}__{function}. A tool's description says what it is for and its answer ceiling; its inputSchema documents each argument, its outputSchema the result.",
  "Size: an answer over its tool's ceiling is refused, never cut. When that happens, ask for less: narrow the arguments (a smaller limit, a filter, one part or page at a time). To cap an answer yourself, send max_bytes_llm: N in the tools/call _meta (or among the arguments); it lowers the ceiling, never raises it.",
  "Guides for agents are resources skill://{namespace}/{name}; start with a namespace's how_it_works where there is one.",
  'Not listed? folio__find_tools finds the tools you may call by what they do (with their schemas); any of them can be called, listed or not.',
].join('\n\n');

/** A JSON-RPC error as the SDK sends it (code, message, data), without McpError's message prefix. */
function rpcError(code: number, message: string, data?: unknown): Error {
  return Object.assign(new Error(message), { code }, data === undefined ? {} : { data });
}
// The spec's unknown-tool error; the same for a hidden tool as for one that does not exist.
const unknownTool = (name: string) => rpcError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
// The same for a hidden prompt as for one that does not exist.
const unknownPrompt = (name: string) => rpcError(ErrorCode.InvalidParams, `Unknown prompt: ${name}`);
// -32002: the spec's "resource not found"; the same for a hidden guide as for a missing one.
const resourceNotFound = (uri: string) => rpcError(-32002, `Resource not found: ${uri}`, { uri });

/** The caller's budget: max_bytes_llm from the arguments and from _meta, the lower winning. */
function withBudget(args: Record<string, unknown>, meta: unknown): Record<string, unknown> {
  if (meta === undefined) return args;
  const own = args[MAX_BYTES_ARG];
  // Both only ever lower the ceiling; a bad value is passed on so dispatch names it (400).
  const pick = own === undefined || typeof meta !== 'number' ? meta : typeof own !== 'number' ? own : Math.min(own, meta);
  return { ...args, [MAX_BYTES_ARG]: pick };
}

const PROGRESS_MIN_GAP_MS = 20;

/**
 * ctx.progress -> notifications/progress on the request's own stream: only increasing values
 * (the spec's rule), at most one per 20 ms (the latest wins), and nothing once the call is over.
 */
function progressChannel(token: ProgressToken, send: (n: ServerNotification) => Promise<void>, log: Logger) {
  let last = -Infinity;
  let lastSentAt = 0;
  let pending: { progress: number; total?: number; message?: string } | undefined;
  let timer: NodeJS.Timeout | undefined;
  let over = false;
  const emit = (p: { progress: number; total?: number; message?: string }) => {
    lastSentAt = Date.now();
    send({ method: 'notifications/progress', params: { progressToken: token, ...p } }).catch((err: unknown) =>
      log.debug({ err }, 'progress notification not delivered'),
    );
  };
  return {
    report: (p: { progress: number; total?: number; message?: string }) => {
      if (over || p.progress <= last) return;
      last = p.progress;
      const wait = PROGRESS_MIN_GAP_MS - (Date.now() - lastSentAt);
      if (wait <= 0 || (p.total !== undefined && p.progress >= p.total)) {
        clearTimeout(timer);
        timer = undefined;
        pending = undefined;
        emit(p);
        return;
      }
      pending = p;
      timer ??= setTimeout(() => {
        timer = undefined;
        if (pending && !over) emit(pending);
        pending = undefined;
      }, wait);
    },
    end() {
      over = true;
      clearTimeout(timer);
    },
  };
}

export function buildServer(deps: ServerDeps, hooks?: SessionHooks): Server {
  const { dispatcher } = deps;
  const server = new Server(
    { name: 'folio', title: 'Folio', version: deps.version },
    {
      capabilities: {
        tools: { listChanged: deps.stateful },
        resources: { listChanged: deps.stateful },
        // Prompts change with the namespaces a caller sees; clients list them when they show them.
        prompts: { listChanged: false },
        // Prompt arguments (declared values, the caller's tags) and the skill:// template's parts.
        completions: {},
        logging: {},
      },
      instructions: INSTRUCTIONS,
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => {
    const listing = await listTools(dispatcher, callerOf(extra));
    hooks?.toolsListed(listing);
    return { tools: listing.tools };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const caller = callerOf(extra);
    const { name } = request.params;
    const target = parseToolName(name);
    if (!target) throw unknownTool(name);
    const body = withBudget(request.params.arguments ?? {}, request.params._meta?.[MAX_BYTES_ARG]);
    const token = request.params._meta?.progressToken;
    const progress = token === undefined ? undefined : progressChannel(token, extra.sendNotification, caller.log);
    try {
      const { fn, encoded } = await dispatcher.call({
        principal: caller.principal,
        namespace: target.namespace,
        fn: target.fn,
        body,
        signal: extra.signal,
        log: caller.log,
        surface: 'mcp',
        ...(progress ? { onProgress: progress.report } : {}),
      });
      return resultOf(fn, encoded);
    } catch (err) {
      // A NotFound from resolving the tool is the protocol's unknown-tool error, the same for
      // hidden and absent; one a handler raised about its own data is a tool result (404 text).
      if (err instanceof UnknownName) throw unknownTool(name);
      return errorResult(errorAnswer(err, caller.log, name).text);
    } finally {
      progress?.end();
    }
  });

  server.setRequestHandler(ListPromptsRequestSchema, async (_request, extra) => {
    const caller = callerOf(extra);
    return { prompts: listPrompts(await dispatcher.namespaces(await dispatcher.viewer(caller.principal, caller.log))) };
  });

  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
    const caller = callerOf(extra);
    const { name } = request.params;
    const target = parseToolName(name);
    if (!target) throw unknownPrompt(name);
    const viewer = await dispatcher.viewer(caller.principal, caller.log);
    let prompt;
    try {
      prompt = (await dispatcher.namespace(viewer, target.namespace)).prompts.get(target.fn);
    } catch (err) {
      if (err instanceof NotFound) throw unknownPrompt(name);
      throw err;
    }
    if (!prompt) throw unknownPrompt(name);
    const args = request.params.arguments ?? {};
    const problem = promptArgumentsProblem(prompt, args);
    if (problem) throw rpcError(ErrorCode.InvalidParams, `Invalid params: ${problem}`);
    try {
      const ctx = { caller: viewer.caller, ref: (fn: string, a?: Record<string, unknown>) => callRef('mcp', fn, a) };
      const text = await dispatcher.policy.run(`prompt ${name}`, extra.signal, caller.log, () => prompt.render({ ...args }, ctx));
      if (typeof text !== 'string') throw new Error(`prompt ${name} rendered ${typeof text}, not a string`);
      return promptResult(prompt, text);
    } catch (err) {
      // A plugin's failure: said with an error id (in the log with the cause), never the cause itself.
      const answer = errorAnswer(err, caller.log);
      throw rpcError(ErrorCode.InternalError, answer.text);
    }
  });

  server.setRequestHandler(CompleteRequestSchema, async (request, extra) => {
    const caller = callerOf(extra);
    const { ref, argument } = request.params;
    const viewer = await dispatcher.viewer(caller.principal, caller.log);
    const none = { completion: { values: [], total: 0, hasMore: false } };
    if (ref.type === 'ref/prompt') {
      const target = parseToolName(ref.name);
      if (!target) throw unknownPrompt(ref.name);
      let prompt;
      try {
        prompt = (await dispatcher.namespace(viewer, target.namespace)).prompts.get(target.fn);
      } catch (err) {
        if (err instanceof NotFound) throw unknownPrompt(ref.name);
        throw err;
      }
      if (!prompt) throw unknownPrompt(ref.name);
      return { completion: completeFrom(argumentCandidates(prompt, argument.name, viewer.caller.notes.tags), argument.value) };
    }
    // ref/resource: the guide template's namespace (those the caller sees that have guides), then name.
    if (ref.uri !== SKILL_TEMPLATE.uriTemplate) throw resourceNotFound(ref.uri);
    const visible = (await dispatcher.namespaces(viewer)).filter((ns) => ns.skills.size > 0);
    if (argument.name === 'namespace')
      return {
        completion: completeFrom(
          visible.map((ns) => ns.name),
          argument.value,
        ),
      };
    if (argument.name === 'name') {
      const ns = visible.find((n) => n.name === request.params.context?.arguments?.['namespace']);
      const names = ns ? [...ns.skills.keys()].sort() : [...new Set(visible.flatMap((n) => [...n.skills.keys()]))].sort();
      return { completion: completeFrom(names, argument.value) };
    }
    return none;
  });

  server.setRequestHandler(ListResourcesRequestSchema, async (_request, extra) => {
    const resources = await listResources(dispatcher, callerOf(extra));
    hooks?.resourcesListed(fingerprintResources(resources));
    return { resources };
  });

  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [SKILL_TEMPLATE] }));

  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const caller = callerOf(extra);
    const { uri } = request.params;
    const target = parseSkillUri(uri);
    if (!target) throw resourceNotFound(uri);
    try {
      const ns = await dispatcher.namespace(await dispatcher.viewer(caller.principal, caller.log), target.namespace);
      const skill = ns.skills.get(target.name);
      if (!skill) throw resourceNotFound(uri);
      return readSkill(skill);
    } catch (err) {
      if (err instanceof NotFound) throw resourceNotFound(uri);
      throw err;
    }
  });

  return server;
}
