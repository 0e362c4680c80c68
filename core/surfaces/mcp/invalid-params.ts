// Bad params as the protocol's -32602 Invalid params, with a short message naming the parameter.
//
// The SDK checks a request against its method's schema before the handler runs (the wrapper
// Protocol.setRequestHandler puts around every handler, shared/protocol.js). A failure there is
// a ZodError, which has no JSON-RPC code, so it reaches the client as -32603 Internal error with
// the zod issue list, JSON and all, as its message. FolioTransport asks `invalidParams` about each
// -32603 it sends: if the request does not match its method's schema, that was the cause, and
// the answer is replaced. (A request that does match never fails that check, so an internal
// error of a handler stays what it is.)
import { ClientRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/** What the message needs of a zod issue (zod 4's shapes, read structurally). */
interface Issue {
  code: string;
  path: PropertyKey[];
  expected?: string;
  values?: unknown[];
  errors?: Issue[][];
  keys?: string[];
  origin?: string;
  minimum?: number | bigint;
  maximum?: number | bigint;
  format?: string;
}

interface Schema {
  safeParse(value: unknown): { success: true } | { success: false; error: { issues: unknown[] } };
}

// Every request a client may send, by method: the schemas the SDK itself checks requests against.
const SCHEMAS = new Map<string, Schema>(ClientRequestSchema.options.map((schema) => [schema.shape.method.value, schema]));

const EXPECTED: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  record: 'an object',
  array: 'an array',
  null: 'null',
};

const MAX_ISSUES = 3;

/** `params.arguments`, `params.items[0]`, `params._meta["io.example/key"]`. */
function pathName(path: PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][\w$]*$/.test(key)) out += out ? `.${key}` : key;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out || 'the request';
}

function valueAt(root: unknown, path: PropertyKey[]): unknown {
  let cur = root;
  for (const key of path) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  return typeof value === 'undefined' ? 'nothing' : `a ${typeof value}`;
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

function describe(issue: Issue, request: unknown): string {
  const name = pathName(issue.path);
  const value = valueAt(request, issue.path);
  switch (issue.code) {
    case 'invalid_type':
      if (value === undefined) return `${name} is required`;
      return `${name} must be ${EXPECTED[issue.expected ?? ''] ?? issue.expected ?? 'something else'} (got ${kindOf(value)})`;
    case 'invalid_value': {
      const values = issue.values ?? [];
      const want = values.length === 1 ? shown(values[0]) : `one of ${values.map(shown).join(', ')}`;
      return `${name} must be ${want} (got ${value === undefined ? 'nothing' : shown(value)})`;
    }
    case 'invalid_union': {
      // Alternatives that differ only by type ("a string or a number") are named; others are not.
      const types = (issue.errors ?? []).map((branch) =>
        branch.length === 1 && branch[0]!.code === 'invalid_type' && branch[0]!.path.length === 0 ? branch[0]!.expected : undefined,
      );
      if (types.length > 0 && types.every((t) => t !== undefined))
        return `${name} must be ${[...new Set(types.map((t) => EXPECTED[t] ?? t))].join(' or ')} (got ${kindOf(value)})`;
      return `${name} is not valid`;
    }
    case 'too_small':
    case 'too_big': {
      const bound = issue.code === 'too_small' ? `at least ${issue.minimum}` : `at most ${issue.maximum}`;
      const unit = issue.origin === 'string' ? ' characters long' : issue.origin === 'array' ? ' items long' : '';
      return `${name} must be ${bound}${unit}`;
    }
    case 'invalid_format':
      return `${name} must be a valid ${issue.format ?? 'value'}`;
    case 'unrecognized_keys':
      return `${name} has unknown keys: ${(issue.keys ?? []).join(', ')}`;
    default:
      return `${name} is not valid`;
  }
}

/**
 * Why this request's params do not fit its method (`Invalid params: params.arguments must be an
 * object (got an array)`), or undefined when they do or the method is not one the SDK knows.
 */
export function invalidParams(request: { method: string }): string | undefined {
  const result = SCHEMAS.get(request.method)?.safeParse(request);
  if (!result || result.success) return undefined;
  const issues = result.error.issues as Issue[];
  const said = issues.slice(0, MAX_ISSUES).map((issue) => describe(issue, request));
  const more = issues.length > MAX_ISSUES ? ` (and ${issues.length - MAX_ISSUES} more)` : '';
  return `Invalid params: ${said.join('; ')}${more}`;
}
