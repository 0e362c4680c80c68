// The curl surface's machine description (OpenAPI 3.1). Routes only: no user data, and no
// QUERY operations (QUERY mirrors each authenticated GET; the spec keeps it out of the document).
const text = (description: string) => ({ description, content: { 'text/plain': { schema: { type: 'string' } } } });

const errors = {
  '400': text('Malformed request, or arguments the function will not take. Names each bad argument and prints the signature.'),
  '401': text('No usable bearer token. Carries WWW-Authenticate: Bearer.'),
  '403': text('Authenticated but not entitled; says what is missing.'),
  '404': text('No such namespace, function or skill, including one hidden from this caller.'),
};

const ns = { name: 'namespace', in: 'path', required: true, schema: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,31}$' } };
const fn = { name: 'function', in: 'path', required: true, schema: { type: 'string' } };

function get(operationId: string, summary: string, description: string, extra: Record<string, unknown> = {}) {
  return {
    get: {
      operationId,
      summary,
      description,
      tags: ['help'],
      security: [{ bearer: [] }],
      responses: { '200': text(description), ...errors },
      ...extra,
    },
  };
}

/** A GET that needs no token (`security: []`) and answers nothing but its one document. */
function publicGet(operationId: string, summary: string, description: string, responses: Record<string, unknown>) {
  return { get: { operationId, summary, description, tags: ['service'], security: [], responses } };
}

export function curlOpenApi(version: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Folio curl surface',
      version,
      license: { name: 'MIT', identifier: 'MIT' },
      description:
        "Every function of the registry as one POST. Not a stable contract: read a function's shape at call time from GET /curl/help/{namespace}/{function}. The stable contract is the REST API at /api/v1. Every authenticated GET also answers the HTTP QUERY method with the same parameters in an optional JSON body.",
    },
    servers: [{ url: '/' }],
    tags: [
      { name: 'help', description: 'What this caller can call, and the guides: plain text, read before calling.' },
      { name: 'call', description: 'Calling a function of the registry.' },
      { name: 'service', description: 'This document, its rendering and the health check; no token needed.' },
    ],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    paths: {
      '/curl': get('start', 'Start here', 'What the sub-surfaces are.'),
      '/curl/whoami': get('whoami', 'Who am I', 'The account, the namespaces it reaches, and the server version.'),
      '/curl/help': get('listNamespaces', 'Namespaces', 'Namespaces available to this caller.'),
      '/curl/help/{namespace}': get('listFunctions', 'Functions', 'Functions in a namespace.', {
        parameters: [
          ns,
          {
            name: 'wait',
            in: 'query',
            required: false,
            schema: { type: 'number', minimum: 0, maximum: 10 },
            description: 'Seconds to wait for a namespace that is not there yet (a plugin just added, still loading) before answering 404.',
          },
        ],
      }),
      '/curl/help/{namespace}/{function}': get(
        'describeFunction',
        'One function',
        'Signature and documentation of one function; the authoritative description of the call body.',
        {
          parameters: [
            ns,
            fn,
            {
              name: 'examples',
              in: 'query',
              required: false,
              schema: { type: 'boolean' },
              description: 'Add an EXAMPLES section of runnable curl commands.',
            },
          ],
        },
      ),
      '/curl/skill': get('listSkillNamespaces', 'Skill namespaces', 'Namespaces that have guides.'),
      '/curl/skill/{namespace}': get('listSkills', 'Skills', 'Guides in a namespace.', { parameters: [ns] }),
      '/curl/skill/{namespace}/{name}': get('getSkill', 'One skill', 'One guide, as markdown.', {
        parameters: [ns, { name: 'name', in: 'path', required: true, schema: { type: 'string' } }],
      }),
      '/curl/call/{namespace}/{function}': {
        post: {
          operationId: 'callFunction',
          tags: ['call'],
          summary: 'Call a function',
          description:
            'The JSON body is the keyword arguments. The server supplies the user. max_bytes_llm (positive integer) lowers the response ceiling for this call, never raises it. Neither safe nor idempotent.',
          security: [{ bearer: [] }],
          parameters: [ns, fn],
          requestBody: {
            required: false,
            content: {
              'application/json': {
                schema: { type: 'object', properties: { max_bytes_llm: { type: 'integer', minimum: 1 } }, additionalProperties: true },
              },
            },
          },
          responses: {
            '200': {
              description: 'The result: JSON, text, or a file with its own content type.',
              content: { 'application/json': {}, 'text/plain': { schema: { type: 'string' } }, 'application/octet-stream': {} },
            },
            ...errors,
            '409': text('A write lost a race (a stale expected version); carries the current state.'),
            '413': text(
              'The response exceeded the byte ceiling (or the request body the size limit); says the size, the ceiling and how to ask for less.',
            ),
            '500': text('The function raised; carries an error id that is in the server log.'),
          },
        },
      },
      '/curl/openapi.json': publicGet('getOpenApi', 'This document', 'This OpenAPI document; no token needed.', {
        '200': { description: 'OpenAPI 3.1', content: { 'application/json': {} } },
      }),
      '/curl/docs': publicGet('getDocs', 'Rendered documentation', 'This document rendered as a page; no token needed.', {
        '200': { description: 'HTML', content: { 'text/html': {} } },
      }),
      '/health': publicGet('getHealth', 'Health', 'Whether the server and its database are up; no token needed.', {
        '200': { description: 'Healthy: status, version and a database check.', content: { 'application/json': {} } },
        '503': { description: 'The database is unreachable.', content: { 'application/json': {} } },
      }),
    },
  };
}
