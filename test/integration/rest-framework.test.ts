// The REST framework on its own, with small routes of this test's making over real HTTP: streamed
// replies (first chunk pulled before the status, an error after it cuts the connection, a client that
// goes away stops the producer), the saved-report id as a header or, past 1 MiB, as an HTTP trailer.
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { Type } from 'typebox';
import { pino } from 'pino';
import type { Authenticator } from '../../core/kernel/auth.ts';
import { BadArguments } from '../../core/contract/errors.ts';
import { route } from '../../core/contract/rest.ts';
import { restFramework } from '../../core/surfaces/rest/router.ts';
import { Policy } from '../../core/kernel/policy.ts';
import { Registry } from '../../core/kernel/registry.ts';
import { isolationSettings } from '../../core/kernel/isolation/host.ts';
import { loadConfig } from '../../core/kernel/config.ts';
import { ScopeCatalogue } from '../../core/kernel/scopes.ts';
import { streamReport } from '../../core/domain/notes/rest/report.ts';

const principal = {
  user: { id: 'u', email: 'u@example.com', name: null, roles: [] },
  scopes: ['*'],
  tokenKind: 'api' as const,
  tokenId: 't',
  tokenExpiresAt: null,
};
const auth = { authenticate: async () => principal } as unknown as Authenticator;
const enc = (s: string) => new TextEncoder().encode(s);
const tick = () => new Promise((r) => setTimeout(r, 5));

let stopped = false;
let produced = 0;

const routes = [
  route({
    id: 'failsFirst',
    method: 'GET',
    path: '/t/fails-first',
    summary: 'A stream that fails before its first chunk',
    tags: ['t'],
    scopes: [],
    responses: { 200: { description: 'never', media: ['text/plain'] } },
    handler: async () => ({
      status: 200,
      // Like the service's report generator: its checks run on the first pull, not on the call.
      stream: {
        [Symbol.asyncIterator]: () => ({
          next: async (): Promise<IteratorResult<Uint8Array>> => {
            throw new BadArguments('no such heading', [{ path: '/heading', message: 'is not in the note' }]);
          },
        }),
      },
    }),
  }),
  route({
    id: 'failsLater',
    method: 'GET',
    path: '/t/fails-later',
    summary: 'A stream that fails after it started',
    tags: ['t'],
    scopes: [],
    responses: { 200: { description: 'cut', media: ['text/plain'] } },
    handler: async () => ({
      status: 200,
      headers: { 'Content-Type': 'text/plain' },
      stream: (async function* () {
        yield enc('first part\n');
        await tick();
        throw new Error('disk on fire');
      })(),
    }),
  }),
  route({
    id: 'endless',
    method: 'GET',
    path: '/t/endless',
    summary: 'A stream that goes on until the client leaves',
    tags: ['t'],
    scopes: [],
    responses: { 200: { description: 'chunks', media: ['text/plain'] } },
    handler: async () => ({
      status: 200,
      headers: { 'Content-Type': 'text/plain' },
      stream: (async function* () {
        try {
          for (;;) {
            produced++;
            yield enc('x'.repeat(64 * 1024));
            await tick();
          }
        } finally {
          stopped = true;
        }
      })(),
    }),
  }),
  route({
    id: 'report',
    method: 'POST',
    path: '/t/report',
    summary: 'A saved report of a given size',
    tags: ['t'],
    scopes: [],
    body: Type.Object({ kib: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
    responses: { 200: { description: 'the report', media: ['text/markdown'] } },
    handler: async ({ body }) => {
      let resolve!: (id: string) => void;
      const saved = new Promise<string>((r) => (resolve = r));
      const stream = (async function* () {
        for (let i = 0; i < body.kib; i++) yield enc(`${String(i).padStart(1023, '.')}\n`);
        await tick();
        resolve('11111111-1111-4111-8111-111111111111');
      })();
      return streamReport({ contentType: 'text/markdown; charset=utf-8', filename: 'r é.md', stream, saved_note_id: saved });
    },
  }),
];

// The real policy over an empty registry: no namespace switches, no notes.
const policy = new Policy({
  registry: new Registry({
    pluginsDirs: [],
    skillsDirs: [],
    log: pino({ level: 'silent' }),
    debounceMs: 50,
    isolation: isolationSettings(loadConfig({ env: {} })),
  }),
  scopes: new ScopeCatalogue([]),
  limits: { handlerTimeoutMs: 30_000, visibleTimeoutMs: 200 },
  overrides: async () => new Map(),
  notesSummary: async () => ({ count: 0, tags: {} }),
});
const rest = restFramework({
  groups: [{ tag: 't', description: 'test', namespace: 't', routes }],
  auth,
  policy,
  limits: { requestBytes: 1 << 20, jsonDepth: 32 },
  version: '0.0.0',
  publicUrl: null,
});
const app = new Koa();
const log = pino({ level: 'silent' });
app.use(async (ctx, next) => {
  ctx.state.log = log;
  await next();
});
app.use(rest.router.routes());
const handle = app.callback();
const server = http.createServer((req, res) => {
  handle(req, res).catch((err: unknown) => t.error(err));
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
t.teardown(() => new Promise<void>((r) => server.close(() => r())));

/** node:http, to see trailers and aborted responses as they are. */
function raw(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; trailers: NodeJS.Dict<string>; text: string; error?: Error }> {
  return new Promise((resolve, reject) => {
    const r = http.request(
      `${base}${path}`,
      { method, headers: { authorization: 'Bearer x', 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, trailers: res.trailers, text }));
        res.on('error', (error) => resolve({ status: res.statusCode!, headers: res.headers, trailers: res.trailers, text, error }));
        res.on('aborted', () =>
          resolve({ status: res.statusCode!, headers: res.headers, trailers: res.trailers, text, error: new Error('aborted') }),
        );
      },
    );
    r.on('error', reject);
    r.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

t.test('an error before the first chunk is still a problem answer', async (t) => {
  const r = await raw('GET', '/t/fails-first');
  t.equal(r.status, 400);
  t.match(r.headers['content-type'], /^application\/problem\+json/);
  t.match(JSON.parse(r.text), { code: 'validation_failed', errors: [{ path: '/heading' }] });
});

t.test('an error after the first chunk cuts the connection: the client sees a truncated answer', async (t) => {
  const r = await raw('GET', '/t/fails-later');
  t.equal(r.status, 200);
  t.equal(r.text, 'first part\n');
  t.ok(r.error, `the client is told the answer is incomplete (${r.error?.message})`);
});

t.test('a client that goes away stops the producer', async (t) => {
  const ctrl = new AbortController();
  const res = await fetch(`${base}/t/endless`, { headers: { authorization: 'Bearer x' }, signal: ctrl.signal });
  const reader = res.body!.getReader();
  await reader.read();
  ctrl.abort();
  for (let i = 0; i < 200 && !stopped; i++) await tick();
  t.ok(stopped, 'the generator was returned');
  const at = produced;
  await new Promise((r) => setTimeout(r, 100));
  t.equal(produced, at, 'and produces nothing more');
});

t.test('saved report id: a header when the report is small, a trailer past 1 MiB', async (t) => {
  const small = await raw('POST', '/t/report', { kib: 3 });
  t.equal(small.status, 200);
  t.equal(small.headers['folio-saved-note-id'], '11111111-1111-4111-8111-111111111111');
  t.equal(small.headers['content-disposition'], 'inline; filename="r_.md"');
  t.equal(small.text.length, 3 * 1024);

  const big = await raw('POST', '/t/report', { kib: 1500 });
  t.equal(big.status, 200);
  t.notOk(big.headers['folio-saved-note-id'], 'not known when the headers went out');
  t.equal(big.headers['trailer'], 'Folio-Saved-Note-Id');
  t.equal(big.trailers['folio-saved-note-id'], '11111111-1111-4111-8111-111111111111', 'sent as a trailer');
  t.equal(big.text.length, 1500 * 1024, 'every byte, in order');
  t.match(big.text.slice(-1024 * 2), /\.1498\n\.+1499\n$/);
});

t.test('own routes get the same OpenAPI treatment', async (t) => {
  const doc = rest.openapi as any;
  t.same(Object.keys(doc.paths).sort(), ['/t/endless', '/t/fails-first', '/t/fails-later', '/t/report']);
  t.same(
    doc.paths['/t/fails-first'].get['x-problem-codes'],
    ['unauthenticated', 'not_found', 'validation_failed', 'bad_request', 'internal'],
    'no scopes, no missing_scope; 404 when its namespace is switched off; 400 for a malformed request',
  );
  t.ok(doc.paths['/t/report'].post.responses['200'].content['text/markdown']);
});
