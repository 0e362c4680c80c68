// Shared by the rest-*.test.ts files: a request helper that checks every answer against the
// server's own OpenAPI document (status listed, problem code listed for that status, JSON body valid
// against the response schema), so the document cannot drift from what the API does.
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { req, type Reply } from '../helpers/server.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

type Json = Record<string, any>;

export interface Operation {
  method: string;
  template: string;
  re: RegExp;
  op: Json;
}

export interface Spec {
  doc: Json;
  operations: Operation[];
  /** operationId -> statuses seen (with problem codes), for coverage checks. */
  seen: Map<string, Set<string>>;
  validator(schema: Json): ValidateFunction;
}

const specs = new WeakMap<object, Promise<Spec>>();

export function spec(server: { url: string }): Promise<Spec> {
  let p = specs.get(server);
  if (!p) {
    p = load(server);
    specs.set(server, p);
  }
  return p;
}

async function load(server: { url: string }): Promise<Spec> {
  const r = await req(server, 'GET', '/api/v1/openapi.json');
  if (r.status !== 200) throw new Error(`openapi.json: ${r.status}`);
  const doc = r.json<Json>();
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (typeof node !== 'object' || node === null) return node;
    const out: Json = {};
    for (const [k, v] of Object.entries(node))
      out[k] = k === '$ref' && typeof v === 'string' ? v.replace('#/components/schemas/', 'folio#/definitions/') : rewrite(v);
    return out;
  };
  ajv.addSchema({ $id: 'folio', definitions: rewrite(doc.components.schemas) as Json });
  const cache = new Map<string, ValidateFunction>();
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries<Json>(doc.paths)) {
    for (const [method, op] of Object.entries<Json>(item)) {
      const re = new RegExp(`^/api/v1${template.replace(/\{\w+\}/g, '[^/]+')}$`);
      operations.push({ method: method.toUpperCase(), template, re, op });
    }
  }
  return {
    doc,
    operations,
    seen: new Map(),
    validator(schema) {
      const key = JSON.stringify(schema);
      let v = cache.get(key);
      if (!v) {
        v = ajv.compile(rewrite(schema) as Json);
        cache.set(key, v);
      }
      return v;
    },
  };
}

export function operationFor(s: Spec, method: string, path: string): Operation | undefined {
  const bare = path.split('?')[0]!;
  return s.operations.find((o) => o.method === method && o.re.test(bare));
}

/** Throws when the answer is not one the document describes. */
export function conform(s: Spec, method: string, path: string, r: Reply): void {
  const o = operationFor(s, method === 'HEAD' ? 'GET' : method, path);
  if (!o) return; // not an operation (404/405 of the fallback, pages)
  const where = `${method} ${path} -> ${r.status}`;
  const resp = o.op.responses[String(r.status)];
  if (!resp) throw new Error(`${where}: status not listed in the OpenAPI document (${Object.keys(o.op.responses).join(', ')})`);
  const type = r.headers.get('content-type') ?? '';
  const seen = s.seen.get(o.op.operationId) ?? new Set<string>();
  s.seen.set(o.op.operationId, seen);
  if (r.status >= 400) {
    if (!type.startsWith('application/problem+json')) throw new Error(`${where}: content-type ${type}, expected application/problem+json`);
    const body: Json = r.json();
    const v = s.validator({ $ref: '#/components/schemas/Problem' });
    if (!v(body)) throw new Error(`${where}: not a Problem: ${JSON.stringify(v.errors)}`);
    if (body.status !== r.status) throw new Error(`${where}: body.status ${body.status}`);
    if (!resp['x-problem-codes']?.includes(body.code))
      throw new Error(`${where}: code ${body.code} not in x-problem-codes ${JSON.stringify(resp['x-problem-codes'])}`);
    if (!o.op['x-problem-codes'].includes(body.code)) throw new Error(`${where}: code ${body.code} not in the operation's x-problem-codes`);
    if (!String(body.type).endsWith(`/api/v1/problems/${body.code}`)) throw new Error(`${where}: type ${body.type}`);
    seen.add(`${r.status} ${body.code}`);
    return;
  }
  seen.add(String(r.status));
  const schema = resp.content?.['application/json']?.schema;
  if (schema && type.startsWith('application/json')) {
    const v = s.validator(schema);
    if (!v(r.json())) throw new Error(`${where}: body does not match the response schema: ${JSON.stringify(v.errors)}`);
  } else if (resp.content && r.status !== 304) {
    const media = Object.keys(resp.content);
    if (!media.some((m) => m === '*/*' || type.startsWith(m))) throw new Error(`${where}: content-type ${type} not in ${media.join(', ')}`);
  }
}

/** req() against /api/v1 plus conform(). `path` is relative to /api/v1. */
export async function api(
  server: { url: string },
  method: string,
  path: string,
  opts: { token?: string | null; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const full = `/api/v1${path}`;
  const r = await req(server, method, full, opts);
  conform(await spec(server), method, full, r);
  return r;
}
