// Registry functions as MCP tools: names, descriptions, schemas, and results. Renderings of the
// same registry entries the curl help shows (core/kernel/describe.ts), never hand-kept copies.
import { createHash } from 'node:crypto';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { FunctionEntry } from '../../kernel/manifest.ts';
import type { Encoded } from '../../kernel/limits.ts';
import { FUNCTION_RE, NAMESPACE_RE } from '../../kernel/manifest.ts';
import { describeFunction, type Describable } from '../../kernel/describe.ts';

type Json = Record<string, any>;

/** How a caller lowers the byte budget on this surface (the SIZE section of each description). */
export const BUDGET_HINT = 'add "max_bytes_llm": N to the arguments (or to the request\'s _meta)';

/** The reserved argument every tool takes on top of its own; dispatch consumes it. */
export const MAX_BYTES_ARG = 'max_bytes_llm';

/** `{namespace}__{function}`: valid for strict clients (^[a-zA-Z0-9_-]{1,64}$), no dots. */
export function toolName(namespace: string, fn: string): string {
  return `${namespace}__${fn}`;
}

/**
 * The inverse of toolName, or undefined for a name no function can have. Neither part contains
 * `__` and a function starts with a letter, so the separator is the first `__` followed by a
 * letter (a namespace may end in one `_`: `ns_` + `__` + `fn` is `ns___fn`).
 */
export function parseToolName(name: string): { namespace: string; fn: string } | undefined {
  const m = /^([a-z0-9_]+?)__(?=[a-z])(.+)$/.exec(name);
  if (!m) return undefined;
  const [, namespace, fn] = m as unknown as [string, string, string];
  return NAMESPACE_RE.test(namespace) && FUNCTION_RE.test(fn) ? { namespace, fn } : undefined;
}

/** An example as the JSON-RPC params of tools/call: what an MCP client sends. */
export function exampleCall(fn: { namespace: string; name: string }, args: Record<string, unknown>): string {
  return JSON.stringify({ name: toolName(fn.namespace, fn.name), arguments: args });
}

/** The curl help text of the function, with this surface's budget hint and examples. */
export function toolDescription(fn: FunctionEntry, ceiling: number): string {
  const d: Describable = { ...fn, ceiling };
  return describeFunction(d, { budgetHint: BUDGET_HINT, example: exampleCall });
}

/**
 * MCP wants an object outputSchema and object structuredContent. A function that declares an
 * object `returns` gets it as is; any other declared JSON shape (array, string, number, ...) is
 * wrapped as `{ result: <value> }`; binary results and functions without `returns` get none.
 */
export function outputShape(fn: FunctionEntry): { schema: Json; wrapped: boolean } | undefined {
  const r = fn.returns;
  if (!r) return undefined;
  if (r.type === 'string' && r.format === 'binary') return undefined;
  if (r.type === 'object') return { schema: r, wrapped: false };
  return { schema: { type: 'object', properties: { result: r }, required: ['result'] }, wrapped: true };
}

function inputSchema(fn: FunctionEntry, ceiling: number): Tool['inputSchema'] {
  const args = fn.args;
  return {
    ...args,
    type: 'object',
    properties: {
      ...((args.properties as Json | undefined) ?? {}),
      [MAX_BYTES_ARG]: {
        type: 'integer',
        minimum: 1,
        description: `Optional: refuse answers over this many bytes. Lowers this tool's ceiling of ${ceiling} bytes, never raises it.`,
      },
    },
  };
}

export interface RenderedTool {
  tool: Tool;
  /** Content hash: a reload that changes nothing a client sees changes nothing here. */
  hash: string;
}

// Registry entries are replaced whole on reload, so an entry's rendering never goes stale and is
// dropped with the entry.
const rendered = new WeakMap<FunctionEntry, RenderedTool>();

export function renderTool(fn: FunctionEntry, ceiling: number): RenderedTool {
  let r = rendered.get(fn);
  if (!r) {
    const out = outputShape(fn);
    const tool: Tool = {
      name: toolName(fn.namespace, fn.name),
      title: `${fn.namespace}.${fn.name}`,
      description: toolDescription(fn, ceiling),
      inputSchema: inputSchema(fn, ceiling),
      ...(out ? { outputSchema: out.schema as Tool['outputSchema'] } : {}),
    };
    r = { tool, hash: createHash('sha1').update(JSON.stringify(tool)).digest('base64url') };
    rendered.set(fn, r);
  }
  return r;
}

const base64 = (b: Buffer) => b.toString('base64');

function isTextual(mime: string, params: string): boolean {
  const charset = /charset\s*=\s*"?([^";\s]+)/i.exec(params)?.[1]?.toLowerCase();
  if (charset && charset !== 'utf-8' && charset !== 'utf8') return false;
  return /^text\//.test(mime) || /^application\/(json|xml|yaml|x-yaml|[\w.-]+\+(json|xml))$/.test(mime);
}

/** A successful call as a tool result: the same text curl answers, structure where declared. */
export function resultOf(fn: FunctionEntry, encoded: Encoded): CallToolResult {
  if (encoded.kind === 'bytes') {
    const [mime = 'application/octet-stream', ...rest] = encoded.contentType.split(';');
    const mimeType = mime.trim().toLowerCase();
    if (mimeType.startsWith('image/')) return { content: [{ type: 'image', data: base64(encoded.body), mimeType }] };
    if (mimeType.startsWith('audio/')) return { content: [{ type: 'audio', data: base64(encoded.body), mimeType }] };
    // Not a readable resource: the URI only names what this call returned.
    const uri = `folio://result/${fn.namespace}/${fn.name}/${encodeURIComponent(encoded.filename ?? `${fn.namespace}-${fn.name}`)}`;
    const resource = isTextual(mimeType, rest.join(';'))
      ? { uri, mimeType, text: encoded.text ?? encoded.body.toString('utf8') }
      : { uri, mimeType, blob: base64(encoded.body) };
    return { content: [{ type: 'resource', resource }] };
  }
  const result: CallToolResult = { content: [{ type: 'text', text: encoded.text ?? encoded.body.toString('utf8') }] };
  const out = outputShape(fn);
  if (out) {
    const value = encoded.value;
    if (out.wrapped) result.structuredContent = { result: value };
    else if (typeof value === 'object' && value !== null && !Array.isArray(value)) result.structuredContent = value as Json;
  }
  return result;
}

/** A failed call: byte for byte the body the curl surface answers for the same outcome. */
export function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text: text.endsWith('\n') ? text : `${text}\n` }], isError: true };
}
