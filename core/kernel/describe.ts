// Renders registry entries as text for a language model: the signature line and the function
// documentation. Curl help (the full text) and the MCP tool descriptions (the lean one: schemas
// carry the arguments and the result there) are both renderings of this.
import type { FunctionAnnotations } from '../sdk/index.ts';

type S = Record<string, any>;

/** A short type name for a JSON Schema: string, integer, 'a' | 'b', string[], {a, b}, ... */
export function typeName(schema: S | undefined, depth = 0): string {
  if (!schema || typeof schema !== 'object') return 'any';
  if (depth > 3) return '...';
  if ('const' in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map((v: unknown) => JSON.stringify(v)).join(' | ');
  const alts: unknown = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alts)) return alts.map((a: S) => typeName(a, depth + 1)).join(' | ');
  const t: unknown = schema.type;
  if (Array.isArray(t)) return t.join(' | ');
  if (t === 'array') {
    const inner = typeName(schema.items as S | undefined, depth + 1);
    return inner.includes(' ') ? `(${inner})[]` : `${inner}[]`;
  }
  if (t === 'object' || schema.properties) {
    const properties = (schema.properties as Record<string, S> | undefined) ?? {};
    const props = Object.keys(properties);
    if (props.length === 0) return 'object';
    const shown = props.slice(0, 6).map((p) => {
      const opt = Array.isArray(schema.required) && schema.required.includes(p) ? '' : '?';
      return `${p}${opt}: ${typeName(properties[p], depth + 1)}`;
    });
    return `{ ${shown.join(', ')}${props.length > 6 ? ', ...' : ''} }`;
  }
  if (t === 'string' && schema.format === 'binary') return 'bytes';
  return typeof t === 'string' ? t : 'any';
}

export interface ArgInfo {
  name: string;
  type: string;
  required: boolean;
  default?: unknown;
  description?: string;
  constraints: string[];
}

const CONSTRAINTS: Array<[string, (v: any) => string]> = [
  ['minimum', (v) => `>= ${v}`],
  ['exclusiveMinimum', (v) => `> ${v}`],
  ['maximum', (v) => `<= ${v}`],
  ['exclusiveMaximum', (v) => `< ${v}`],
  ['minLength', (v) => `at least ${v} characters`],
  ['maxLength', (v) => `at most ${v} characters`],
  ['pattern', (v) => `matches /${v}/`],
  ['format', (v) => `format ${v}`],
  ['minItems', (v) => `at least ${v} items`],
  ['maxItems', (v) => `at most ${v} items`],
  ['uniqueItems', (v) => (v ? 'items unique' : '')],
];

export function argInfos(args: S): ArgInfo[] {
  const props = (args.properties ?? {}) as Record<string, S>;
  const required = new Set<string>(Array.isArray(args.required) ? (args.required as string[]) : []);
  return Object.entries(props).map(([name, schema]) => {
    const info: ArgInfo = {
      name,
      type: typeName(schema),
      required: required.has(name),
      constraints: CONSTRAINTS.filter(([k]) => k in schema)
        .map(([k, f]) => f(schema[k]))
        .filter((c) => c !== ''),
    };
    if ('default' in schema) info.default = schema.default;
    if (typeof schema.description === 'string') info.description = schema.description;
    return info;
  });
}

/** `acme.echo(text: string, times?: integer = 1) -> string` */
export function signature(namespace: string, name: string, args: S, returns: S | undefined): string {
  const params = argInfos(args).map(
    (a) => `${a.name}${a.required ? '' : '?'}: ${a.type}${'default' in a ? ` = ${JSON.stringify(a.default)}` : ''}`,
  );
  return `${namespace}.${name}(${params.join(', ')}) -> ${returns ? typeName(returns) : 'any'}`;
}

export interface Describable {
  namespace: string;
  name: string;
  title?: string | undefined;
  annotations?: FunctionAnnotations;
  description: string;
  args: S;
  returns: S | undefined;
  examples: Array<{ args: Record<string, unknown>; description?: string }>;
  requires: { roles?: string[]; scopes?: string[] };
  ceiling: number;
  signature: string;
}

export interface DescribeOptions {
  /** How the caller lowers the byte budget on this surface, e.g. 'add "max_bytes_llm": N to the body'. */
  budgetHint: string;
  /** Renders one example as a runnable command on this surface; omit for no EXAMPLES section. */
  example?: (fn: Describable, args: Record<string, unknown>) => string;
}

/** What a call does, in words: "read-only", "destructive, idempotent", ...; '' when not declared. */
export function effectText(a: FunctionAnnotations | undefined): string {
  if (!a) return '';
  const bits: string[] = [];
  if (a.readOnlyHint === true) bits.push('read-only');
  else {
    if (a.destructiveHint === true) bits.push('destructive (may overwrite or remove data)');
    else if (a.destructiveHint === false) bits.push('writes, adds only (destroys nothing)');
    else if (a.readOnlyHint === false) bits.push('writes');
    if (a.idempotentHint === true) bits.push('idempotent (repeating it changes nothing more)');
  }
  if (a.openWorldHint === true) bits.push('reaches outside Folio');
  return bits.join(', ');
}

/** The full documentation of one function, written for a language model. */
export function describeFunction(fn: Describable, opts: DescribeOptions): string {
  const effect = effectText(fn.annotations);
  const out: string[] = [fn.signature, ...(fn.title ? [fn.title + (effect ? ` (${effect})` : '')] : effect ? [effect] : []), ''];
  out.push(fn.description.trim(), '');
  const infos = argInfos(fn.args);
  out.push('ARGUMENTS');
  if (infos.length === 0) out.push('  (none)');
  for (const a of infos) {
    const bits = [a.type, a.required ? 'required' : 'optional'];
    if ('default' in a) bits.push(`default ${JSON.stringify(a.default)}`);
    bits.push(...a.constraints);
    out.push(`  ${a.name}: ${bits.join(', ')}`);
    if (a.description) out.push(`      ${a.description}`);
  }
  if (fn.args.additionalProperties === false) out.push('  No other arguments are accepted.');
  out.push('', 'RETURNS');
  if (fn.returns) {
    out.push(`  ${typeName(fn.returns)}`);
    if (typeof fn.returns.description === 'string') out.push(`      ${fn.returns.description}`);
  } else out.push('  any (JSON, or text when the function returns a string)');
  const req = [...(fn.requires.roles ?? []).map((r) => `role ${r}`), ...(fn.requires.scopes ?? []).map((s) => `scope ${s}`)];
  if (req.length > 0) out.push('', 'REQUIRES', `  ${req.join(', ')}`);
  out.push(
    '',
    'SIZE',
    `  Answers over ${fn.ceiling} bytes are refused (413), never cut. When an answer is too big,`,
    '  ask for less: narrow the arguments (a smaller limit, a filter, one part or page at a time).',
    `  To cap an answer yourself, ${opts.budgetHint}; it lowers the ceiling, never raises it.`,
  );
  if (opts.example && fn.examples.length > 0) {
    out.push('', 'EXAMPLES');
    for (const ex of fn.examples) {
      if (ex.description) out.push(`  # ${ex.description}`);
      out.push(`  ${opts.example(fn, ex.args)}`);
    }
  }
  return out.join('\n') + '\n';
}

/** A byte count as people read it: 65536 -> 64 KiB, 1500 -> 1500 bytes. */
export function sizeText(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/**
 * The lean documentation of one function, for a client that also gets its schemas (MCP): what it
 * is for and when to use it (the author's description), and what it costs (its byte ceiling). The
 * arguments, the result and the size rule are not repeated: they are in inputSchema, outputSchema
 * and the server's instructions.
 */
export function summarizeFunction(fn: Pick<Describable, 'description' | 'ceiling'>): string {
  return `${fn.description.trim()}\nAnswers up to ${sizeText(fn.ceiling)}.`;
}

/** The surface a text is for: curl readers call routes, MCP readers call tools and read resources. */
export type Surface = 'curl' | 'mcp';

/**
 * A function as a caller on `surface` calls it, for hints in answers: `notetaker.get {"id":"..."}`
 * on curl, `notetaker__get {"id": "..."}` on MCP. `fn` is the dotted name.
 */
export function callRef(surface: Surface, fn: string, args?: Record<string, unknown>): string {
  const name = surface === 'mcp' ? fn.replace('.', '__') : fn;
  if (!args || Object.keys(args).length === 0) return name;
  // JSON, spaced as people write it: {"id": "...", "offset": 12000}
  return `${name} {${Object.entries(args)
    .map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`)
    .join(', ')}}`;
}

/** Where a caller on `surface` reads how to call a function. */
export function helpRef(surface: Surface, namespace: string, fn: string): string {
  return surface === 'mcp' ? `the inputSchema of the tool ${namespace}__${fn}` : `GET /curl/help/${namespace}/${fn}`;
}

/**
 * Author text (a description) as an MCP client should read it: the curl references plugin authors
 * write become what MCP offers. `ns.fn` of a function that exists -> the tool `ns__fn`;
 * `GET /curl/skill/ns/name` -> the resource `skill://ns/name`; `GET /curl/help/ns/fn` -> the tool.
 * Only for text authors wrote, never for data (a note's body stays as its owner wrote it).
 */
export function mcpWording(text: string, isFunction: (namespace: string, fn: string) => boolean): string {
  return text
    .replace(/GET \/curl\/skill\/([a-z][a-z0-9_]*)\/([a-z0-9][a-z0-9_-]*)/g, 'skill://$1/$2')
    .replace(/GET \/curl\/help\/([a-z][a-z0-9_]*)\/([a-z][a-z0-9_]*)/g, 'the tool $1__$2')
    .replace(/\b([a-z][a-z0-9_]*)\.([a-z][a-z0-9_]*)\b/g, (m, ns: string, fn: string) => (isFunction(ns, fn) ? `${ns}__${fn}` : m));
}

// A reference to a function as authors write it: `ns.fn`, in backticks or not.
const REF = String.raw`\x60?\b[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*\b\x60?`;
const SEP = String.raw`(?:, | or | and |/)`;

/**
 * Author text with the references to functions the reader cannot see taken out, so that a
 * description never names a tool of a namespace switched off for them: a hidden function in a list
 * ("notetaker.get, files.text") leaves the list; a parenthesis that then names only hidden ones
 * goes; any other sentence that names one goes. `hidden` is true only for functions that exist.
 */
export function withoutHidden(text: string, hidden: (namespace: string, fn: string) => boolean): string {
  const isHidden = (ref: string) => {
    const [ns = '', fn = ''] = ref.replaceAll('`', '').split('.');
    return hidden(ns, fn);
  };
  const names = (t: string) => t.match(new RegExp(REF, 'g')) ?? [];
  if (!names(text).some(isHidden)) return text;
  let out = text
    .replace(new RegExp(`(${REF})${SEP}(?=${REF})`, 'g'), (m, ref: string) => (isHidden(ref) ? '' : m))
    .replace(new RegExp(`(?<=${REF})${SEP}(${REF})`, 'g'), (m, ref: string) => (isHidden(ref) ? '' : m));
  // A parenthesis loses the clauses that name a hidden one ("(files stay; see notetaker.get)"
  // keeps "files stay"), and goes when none is left.
  out = out.replace(/ ?\(([^()]*)\)/g, (m, inner: string) => {
    if (!names(inner).some(isHidden)) return m;
    const kept = inner.split(/;\s*/).filter((clause) => !names(clause).some(isHidden));
    return kept.length ? `${m.startsWith(' ') ? ' ' : ''}(${kept.join('; ')})` : '';
  });
  const sentences = out
    .split(/(?<=[.!?])\s+/)
    .filter((sentence) => !names(sentence).some(isHidden))
    .join(' ')
    .trim();
  if (sentences) return sentences;
  // Nothing left: the sentences as they were with only the hidden references taken out, never an
  // empty description.
  return out
    .replace(new RegExp(REF, 'g'), (ref) => (isHidden(ref) ? '' : ref))
    .replace(/\(\s*\)/g, '')
    .replace(/\s+([,.;:!?)])/g, '$1')
    .replace(/\s{2,}/g, ' ')
    .trim();
}
