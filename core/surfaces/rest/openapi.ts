// The REST API's OpenAPI 3.1 document, made from the route table and the TypeBox schemas that also
// validate the requests. Each operation lists every response it can give, and for each problem
// response the stable codes it can carry (`x-problem-codes`), so a client can branch on them.
import type { TSchema } from 'typebox';
import { problemCodesOf, type HeaderDoc, type Route } from '../../contract/rest.ts';
import { PROBLEM_CODES, type ProblemCode } from './problems.ts';
import { Problem } from './schemas.ts';
import { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX } from '../../domain/notes/types.ts';

type Json = Record<string, any>;

const PROBLEM_MEDIA = 'application/problem+json';

/** Plain JSON (TypeBox's hidden markers dropped), with named components replaced by $refs. */
function toJson(schema: TSchema, refs: Map<string, string>, isRoot?: string): Json {
  const walk = (node: unknown, top: boolean): unknown => {
    if (Array.isArray(node)) return node.map((n) => walk(n, false));
    if (typeof node !== 'object' || node === null) return node;
    const name = refs.get(JSON.stringify(node));
    if (name && !(top && name === isRoot)) return { $ref: `#/components/schemas/${name}` };
    const out: Json = {};
    // TypeBox's `$id` (a group's schema name) would make its node a new base URI: a 2020-12
    // validator then resolves the `#/components/...` refs inside it against that name, and fails.
    for (const [k, v] of Object.entries(node)) if (k !== '$id') out[k] = walk(v, false);
    return out;
  };
  return walk(JSON.parse(JSON.stringify(schema)), true) as Json;
}

function headerParam(h: HeaderDoc): Json {
  return { name: h.name, in: 'header', required: h.required ?? false, description: h.description, schema: h.schema };
}

function parameters(r: Route, refs: Map<string, string>): Json[] {
  const out: Json[] = [];
  for (const [where, schema] of [
    ['path', r.params],
    ['query', r.query],
  ] as const) {
    if (!schema) continue;
    const json = toJson(schema, refs);
    const required = new Set((json.required as string[] | undefined) ?? []);
    for (const [name, s] of Object.entries((json.properties as Record<string, Json> | undefined) ?? {})) {
      const { description, ...rest } = s;
      out.push({
        name,
        in: where,
        required: where === 'path' || required.has(name),
        ...(description ? { description: description as string } : {}),
        schema: rest,
        ...(rest.type === 'array' ? { style: 'form', explode: true } : {}),
      });
    }
  }
  for (const h of r.headers ?? []) out.push(headerParam(h));
  return out;
}

function problemResponses(codes: ProblemCode[]): Json {
  const byStatus = new Map<number, ProblemCode[]>();
  for (const c of codes) {
    const s = PROBLEM_CODES[c].status;
    byStatus.set(s, [...(byStatus.get(s) ?? []), c]);
  }
  const out: Json = {};
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    const description = list.map((c) => `\`${c}\`: ${PROBLEM_CODES[c].about}`).join('\n\n');
    const resp: Json = {
      description,
      'x-problem-codes': list,
      content: { [PROBLEM_MEDIA]: { schema: { $ref: '#/components/schemas/Problem' } } },
    };
    if (status === 401)
      resp.headers = {
        'WWW-Authenticate': {
          description: 'Bearer realm="folio", with error="invalid_token" or "invalid_request" when it applies.',
          schema: { type: 'string' },
        },
      };
    if (status === 412) resp.headers = { ETag: { description: 'The current version of the note.', schema: { type: 'string' } } };
    if (status === 405) resp.headers = { Allow: { description: 'The methods this path takes.', schema: { type: 'string' } } };
    out[String(status)] = resp;
  }
  return out;
}

function operation(r: Route, namespace: string | undefined, refs: Map<string, string>): Json {
  const responses: Json = {};
  for (const [status, doc] of Object.entries(r.responses)) {
    const resp: Json = { description: doc.description };
    const content: Json = {};
    if (doc.schema) content['application/json'] = { schema: toJson(doc.schema, refs) };
    for (const m of doc.media ?? [])
      content[m] = { schema: m.startsWith('text/') ? { type: 'string' } : { type: 'string', format: 'binary' } };
    if (Object.keys(content).length) resp.content = content;
    if (doc.headers?.length)
      resp.headers = Object.fromEntries(
        doc.headers.map((h) => [h.name, { description: h.description, schema: h.schema, ...(h.required ? { required: true } : {}) }]),
      );
    // A refusal that is not a problem document (tus's 423 on HEAD, no body) carries no code.
    if (Number(status) >= 400) resp['x-problem-codes'] = [];
    responses[status] = resp;
  }
  const codes = problemCodesOf(r, namespace);
  Object.assign(responses, problemResponses(codes));
  // A body sent too slowly is cut by the HTTP layer before any route sees it
  // (core/surfaces/http/slow-body.ts): plain text, and the connection closes.
  if (r.body || r.upload || r.raw?.media?.length)
    responses['408'] ??= {
      description: 'The body stopped or came slower than the server takes; the connection is closed.',
      content: { 'text/plain': { schema: { type: 'string' } } },
      'x-problem-codes': [],
    };
  const op: Json = {
    operationId: r.id,
    summary: r.summary,
    ...(r.description ? { description: r.description } : {}),
    tags: r.tags,
    // Either kind of token: `bearer` lists no scopes (OpenAPI tools read scopes on OAuth schemes
    // only); `oauth2` names the ones this operation needs, as x-required-scopes does for both.
    security: [{ bearer: [] }, { oauth2: r.scopes }],
    'x-required-scopes': r.scopes,
    'x-problem-codes': codes,
  };
  const params = parameters(r, refs);
  if (params.length) op.parameters = params;
  if (r.body) op.requestBody = { required: r.bodyRequired ?? true, content: { 'application/json': { schema: toJson(r.body, refs) } } };
  if (r.upload)
    op.requestBody = {
      required: true,
      description: r.upload.description,
      content: {
        'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
        'multipart/form-data': {
          schema: {
            type: 'object',
            required: ['file'],
            properties: {
              // Empty examples: the explorer prefills a form field with its example and sends it.
              // The fields come first: a form sends its parts in this order, and the upload takes
              // `name` and `folder` only before the file's bytes.
              name: { type: 'string', description: "The file's name, if not in the query (default: the part's filename).", example: '' },
              folder: { type: 'string', description: 'A folder path, if not in the query.', example: '' },
              file: { type: 'string', format: 'binary', description: 'The bytes.' },
            },
          },
          encoding: { file: { contentType: '*/*' } },
        },
        '*/*': { schema: { type: 'string', format: 'binary' } },
      },
    };
  if (r.raw?.media?.length)
    op.requestBody = {
      required: true,
      description: r.raw.description,
      content: Object.fromEntries(r.raw.media.map((m) => [m, { schema: { type: 'string', format: 'binary' } }])),
    };
  op.responses = responses;
  return op;
}

export interface OpenApiOptions {
  version: string;
  tags: Array<{ name: string; description: string; 'x-namespace': string }>;
  /** The groups' named schemas; Problem is added here. */
  components: Record<string, TSchema>;
  /** The scope catalogue: the OAuth scheme's scopes. */
  scopes: Array<{ scope: string; description: string }>;
}

/** Where the authorization server takes requests (core/surfaces/oauth): relative to the server's origin. */
export const OAUTH_ENDPOINTS = { authorizationUrl: '/oauth/auth', tokenUrl: '/oauth/token' };

/** An operation, with the namespace governing its group (its 404 when switched off for the caller). */
export interface DocumentedRoute {
  route: Route;
  namespace?: string | undefined;
}

export function restOpenApi(routes: DocumentedRoute[], opts: OpenApiOptions): Json {
  const COMPONENTS = { ...opts.components, Problem };
  const refs = new Map<string, string>();
  for (const [name, schema] of Object.entries(COMPONENTS)) refs.set(JSON.stringify(schema), name);
  const schemas: Json = {};
  for (const [name, schema] of Object.entries(COMPONENTS)) schemas[name] = toJson(schema, refs, name);

  const paths: Record<string, Json> = {};
  for (const { route: r, namespace } of routes) (paths[r.path] ??= {})[r.method.toLowerCase()] = operation(r, namespace, refs);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Folio REST API',
      version: opts.version,
      license: { name: 'MIT', identifier: 'MIT' },
      description: [
        'The stable contract of Folio: the same domain services as the curl surface and the MCP server.',
        '',
        '- **Auth**: every operation needs `Authorization: Bearer <token>` (an API token or an OAuth access token); a token in the URL is refused. The scopes an operation needs are listed in its `oauth2` security requirement and in `x-required-scopes` (the same list, for either kind of token): `notes:read` / `notes:write` for notes, `files:read` / `files:write` for files, and so on; a token without one gets 403 `missing_scope`.',
        '- **Errors** are RFC 9457 `application/problem+json` with a stable `code` (listed per response in `x-problem-codes`); `type` is a URL explaining the code.',
        `- **Lists** are pages: \`limit\` (default ${LIST_LIMIT_DEFAULT}, at most ${LIST_LIMIT_MAX}; larger values are clamped, and the response says so in \`limit_clamped_from\` and the \`Folio-Limit-Clamped\` header) and an opaque \`cursor\` from \`next_cursor\`.`,
        '- **Versions**: a note\'s `ETag` is `"<version>"`. Replacing edits (title, body, tags, replace_section, PUT) need `If-Match: "<version>"` or `expected_version`: without one 428 `precondition_required`, with a stale one 412 `precondition_failed` carrying the current note. Appends and prepends need neither.',
        "- Another user's note is 404, exactly as a note that does not exist.",
      ].join('\n'),
    },
    servers: [{ url: '/api/v1' }],
    security: [{ bearer: [] }, { oauth2: [] }],
    tags: opts.tags,
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            "An API token, an OAuth access token, or a short-lived token from POST /curl/call/admin/mint_curl_token. The token's scopes must include the ones an operation lists in `x-required-scopes` (the same as under `oauth2`); `*` grants all, `notes:*` every notes scope.",
        },
        oauth2: {
          type: 'oauth2',
          description:
            "Folio's authorization server (authorization code with PKCE; clients register dynamically at /oauth/reg or by a client ID metadata document). Ask for the token with `resource` set to this API's URL (`<origin>/api/v1`). An access token is sent as a bearer token, like an API token.",
          flows: {
            authorizationCode: {
              ...OAUTH_ENDPOINTS,
              refreshUrl: OAUTH_ENDPOINTS.tokenUrl,
              scopes: Object.fromEntries(opts.scopes.map((s) => [s.scope, s.description])),
            },
          },
        },
      },
      schemas,
    },
  };
}
