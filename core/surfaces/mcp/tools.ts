// Registry functions as MCP tools: names, descriptions, schemas, and results. Renderings of the
// same registry entries the curl help shows (core/kernel/describe.ts), never hand-kept copies.
import { createHash } from 'node:crypto';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { FunctionEntry } from '../../kernel/manifest.ts';
import type { Encoded } from '../../kernel/limits.ts';
import { FUNCTION_RE, NAMESPACE_RE } from '../../kernel/manifest.ts';
import { mcpWording, summarizeFunction, withoutHidden } from '../../kernel/describe.ts';

type Json = Record<string, any>;

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
  const known = parsedNames.get(name);
  if (known) return known;
  const m = /^([a-z0-9_]+?)__(?=[a-z])(.+)$/.exec(name);
  if (!m) return undefined;
  const [, namespace, fn] = m as unknown as [string, string, string];
  if (!NAMESPACE_RE.test(namespace) || !FUNCTION_RE.test(fn)) return undefined;
  const parsed = Object.freeze({ namespace, fn });
  // Names of every call: the ones seen are kept (a bounded few; beyond that, parsed each time).
  if (parsedNames.size < MAX_PARSED_NAMES) parsedNames.set(name, parsed);
  return parsed;
}

const MAX_PARSED_NAMES = 1024;
const parsedNames = new Map<string, Readonly<{ namespace: string; fn: string }>>();

/**
 * The tool description: purpose, when to use it, what it costs. Arguments and result are in the
 * schemas, the size rule (the same for every tool) in the server instructions.
 */
export function toolDescription(
  fn: FunctionEntry,
  ceiling: number,
  isFunction: (ns: string, fn: string) => boolean,
  hidden: (ns: string, fn: string) => boolean = () => false,
): string {
  return summarizeFunction({ description: mcpWording(withoutHidden(fn.description, hidden), isFunction), ceiling });
}

/**
 * The same schema in fewer bytes, for listing: `anyOf` of bare types becomes a type list, `anyOf`
 * of constants an `enum` (what TypeBox emits for `Union`s of `Null` and `Literal`s). It validates
 * exactly the same values; dispatch validates with the original anyway. `word` rewrites the
 * descriptions for the surface (see mcpWording).
 */
export function compactSchema(schema: unknown, word: (text: string) => string = (x) => x): unknown {
  if (Array.isArray(schema)) return schema.map((x) => compactSchema(x, word));
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema as Record<string, unknown>))
    out[k] =
      k === 'const' || k === 'default' || k === 'examples' || k === 'enum'
        ? v
        : k === 'description' && typeof v === 'string'
          ? word(v)
          : compactSchema(v, word);
  const alts = out.anyOf as Json[] | undefined;
  if (Array.isArray(alts) && alts.length > 1 && !('type' in out) && !('enum' in out)) {
    const only = (a: Json, key: string) => typeof a === 'object' && a !== null && Object.keys(a).length === 1 && key in a;
    if (alts.every((a) => only(a, 'type') && typeof a.type === 'string')) {
      delete out.anyOf;
      out.type = alts.map((a) => a.type as string);
    } else if (alts.every((a) => only(a, 'const'))) {
      delete out.anyOf;
      out.enum = alts.map((a) => a.const as unknown);
    }
  }
  return out;
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

function inputSchema(fn: FunctionEntry, word: (text: string) => string): Tool['inputSchema'] {
  return { ...(compactSchema(fn.args, word) as Json), type: 'object' };
}

export interface RenderedTool {
  tool: Tool;
  /** Content hash: a reload that changes nothing a client sees changes nothing here. */
  hash: string;
}

// Registry entries are replaced whole on reload, so an entry's rendering is dropped with the
// entry. Its description may name other namespaces' functions, so it is redone when the ceiling
// or the set of functions (the snapshot) changes.
const rendered = new WeakMap<FunctionEntry, { key: string; r: RenderedTool }>();

export function renderTool(
  fn: FunctionEntry,
  ceiling: number,
  isFunction: (ns: string, fn: string) => boolean,
  generation = 0,
  /** Functions the caller cannot see (their references are left out), and a key that names that set. */
  hiding: { hidden: (ns: string, fn: string) => boolean; key: string } = { hidden: () => false, key: '' },
): RenderedTool {
  const key = `${generation}:${ceiling}:${hiding.key}`;
  const cached = rendered.get(fn);
  let r = cached?.key === key ? cached.r : undefined;
  if (!r) {
    const out = outputShape(fn);
    const word = (text: string) => mcpWording(withoutHidden(text, hiding.hidden), isFunction);
    const tool: Tool = {
      name: toolName(fn.namespace, fn.name),
      title: fn.title ?? `${fn.namespace}.${fn.name}`,
      description: toolDescription(fn, ceiling, isFunction, hiding.hidden),
      ...(Object.keys(fn.annotations).length > 0 ? { annotations: { ...fn.annotations } } : {}),
      inputSchema: inputSchema(fn, word),
      ...(out ? { outputSchema: compactSchema(out.schema, word) as Tool['outputSchema'] } : {}),
    };
    r = { tool, hash: createHash('sha1').update(JSON.stringify(tool)).digest('base64url') };
    rendered.set(fn, { key, r });
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
