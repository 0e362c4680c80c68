// Checks the REST API's answers against its OpenAPI document: the status is one the operation
// documents, the body's media type is one that status documents, a JSON body validates against its
// schema (Ajv in JSON Schema 2020-12 mode, the dialect of OpenAPI 3.1), and a problem's `code` is
// one the response lists in `x-problem-codes`. test/helpers/server.ts checks each answer of a test
// server here as it goes out (see `checkAnswers` there), keeps only what contradicts the document,
// and fails close() listing it. Validators are compiled once per process, on first use of each
// (operation, status, media type).
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import { appendFileSync } from 'node:fs';
import path from 'node:path';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

type Json = Record<string, any>;

/** One answer of the server, as it went out. */
export interface RecordedAnswer {
  method: string;
  /** The request's path and query, as sent. */
  url: string;
  status: number;
  contentType: string | undefined;
  body: Buffer;
  /** The body was longer than what was kept (a big download): its bytes are not checked. */
  truncated: boolean;
}

/** The REST API's mount point: answers elsewhere are not its operations. */
export const REST_PREFIX = '/api/v1';

const DOC_ID = 'https://folio.invalid/api/v1/openapi.json';

/** What one server's checked answers covered: how many, and which operations with which statuses. */
export interface Tally {
  answers: number;
  covered: Map<string, Set<string>>;
}

interface Operation {
  key: string;
  re: RegExp;
  params: number;
  method: string;
  op: Json;
}

export class AnswerChecker {
  readonly #ops: Operation[] = [];
  readonly #ajv: Ajv2020;
  readonly #validators = new Map<string, ValidateFunction>();

  constructor(doc: Json) {
    for (const [p, item] of Object.entries<Json>(doc.paths))
      for (const [method, op] of Object.entries<Json>(item))
        this.#ops.push({
          key: `${method.toUpperCase()} ${p}`,
          re: new RegExp(`^${p.replace(/[.]/g, '\\.').replace(/\{\w+\}/g, '[^/]+')}/?$`),
          params: (p.match(/\{/g) ?? []).length,
          method: method.toUpperCase(),
          op,
        });
    // A literal path wins over a template that also matches it (/tokens/scopes, not /tokens/{id}).
    this.#ops.sort((a, b) => a.params - b.params);
    this.#ajv = new Ajv2020({ strict: false, allErrors: true, logger: false });
    addFormats(this.#ajv);
    // The components, under the document's own URI: every `#/components/...` ref resolves there.
    this.#ajv.addSchema({ $id: DOC_ID, components: { schemas: doc.components.schemas } });
  }

  /** The documented operation an answer to `method url` belongs to, if any. */
  operation(method: string, url: string): Operation | undefined {
    const pathname = new URL(url, 'http://x').pathname;
    if (!pathname.startsWith(`${REST_PREFIX}/`)) return undefined;
    const sub = pathname.slice(REST_PREFIX.length);
    const m = method === 'HEAD' ? 'GET' : method;
    return this.#ops.find((o) => o.method === m && o.re.test(sub));
  }

  /** What is wrong with an answer, per the document; [] when it is as documented or no operation's. */
  check(a: RecordedAnswer, tally?: Tally): string[] {
    const found = this.operation(a.method, a.url);
    if (!found) return [];
    const where = `${a.method} ${a.url} -> ${a.status} (${found.key})`;
    const responses: Json = found.op.responses;
    const status = String(a.status);
    const resp: Json | undefined = responses[status] ?? responses[`${status[0]}XX`] ?? responses['default'];
    if (tally) {
      tally.answers++;
      let statuses = tally.covered.get(found.key);
      if (!statuses) tally.covered.set(found.key, (statuses = new Set()));
      statuses.add(status);
    }
    if (!resp) return [`${where}: status ${status} is not documented (documented: ${Object.keys(responses).join(', ')})`];
    // No body (204, 304, HEAD, a tus answer carrying only headers): nothing more to hold to.
    if (a.body.length === 0 || a.method === 'HEAD') return [];
    const media = a.contentType?.split(';')[0]?.trim().toLowerCase();
    if (!media) return [`${where}: a body without a Content-Type`];
    const content: Json = resp.content ?? {};
    const declared = content[media] ?? content[`${media.split('/')[0]}/*`] ?? content['*/*'];
    if (!declared)
      return [`${where}: ${media} is not documented for ${status} (documented: ${Object.keys(content).join(', ') || 'no body'})`];
    if (!/[/+]json$/.test(media) || !declared.schema || a.truncated) return [];
    let body: unknown;
    try {
      body = JSON.parse(a.body.toString('utf8'));
    } catch {
      return [`${where}: the ${media} body is not JSON`];
    }
    const problems: string[] = [];
    const validate = this.#validator(`${found.key} ${status} ${media}`, declared.schema);
    if (!validate(body))
      for (const e of (validate.errors ?? []).slice(0, 5)) problems.push(`${where}: body${e.instancePath} ${e.message} (${e.schemaPath})`);
    const codes: string[] | undefined = resp['x-problem-codes'];
    const code = (body as { code?: unknown } | null)?.code;
    if (codes && typeof code === 'string' && !codes.includes(code))
      problems.push(`${where}: problem code ${code} is not listed for ${status} (listed: ${codes.join(', ')})`);
    return problems;
  }

  #validator(key: string, schema: Json): ValidateFunction {
    let v = this.#validators.get(key);
    if (!v) {
      v = this.#ajv.compile({ $id: `${DOC_ID}/${this.#validators.size}`, ...absoluteRefs(schema) });
      this.#validators.set(key, v);
    }
    return v;
  }
}

/** `#/components/...` refs made absolute, so that they resolve against the document's components. */
function absoluteRefs(node: unknown): any {
  if (Array.isArray(node)) return node.map(absoluteRefs);
  if (typeof node !== 'object' || node === null) return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node))
    out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? DOC_ID + v : absoluteRefs(v);
  return out;
}

const checkers = new Map<string, AnswerChecker>();

/** One checker per document text in this process: validators are compiled once, not per server. */
export function answerChecker(docText: string): AnswerChecker {
  let c = checkers.get(docText);
  if (!c) checkers.set(docText, (c = new AnswerChecker(JSON.parse(docText) as Json)));
  return c;
}

/**
 * Whether a test server checks its answers: yes, for every test file, unless FOLIO_CHECK_ANSWERS=0
 * (to tell a failing check from a failing test while debugging).
 */
export function checkAnswersByDefault(): boolean {
  return process.env['FOLIO_CHECK_ANSWERS'] !== '0';
}

/**
 * With FOLIO_CHECK_ANSWERS_LOG=<file>, one JSON line per checked server: the test file, how many
 * answers were checked and the operations (with their statuses) they covered. test/openapi-coverage.ts
 * sums such a file up.
 */
export function logTally(tally: Tally): void {
  const file = process.env['FOLIO_CHECK_ANSWERS_LOG'];
  if (!file) return;
  const operations = Object.fromEntries([...tally.covered].map(([k, s]) => [k, [...s].sort()]));
  appendFileSync(file, JSON.stringify({ file: path.basename(process.argv[1] ?? ''), answers: tally.answers, operations }) + '\n');
}
