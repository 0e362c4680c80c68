// The REST API's machine description and pages: the OpenAPI 3.1 document is valid (Redocly's strict
// ruleset: structure, every $ref resolves, every operation has responses), made from the same
// route table as the router, and lists each operation's problem codes; the docs pages are served by
// Folio with no outside asset; problem type URLs explain their code.
import t from 'tap';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { startTestServer, req } from '../helpers/server.ts';
import { PROBLEM_CODES } from '../../core/surfaces/rest/problems.ts';

const s = await startTestServer();
t.teardown(() => s.close());

const r = await req(s, 'GET', '/api/v1/openapi.json');
const doc = r.json();

t.test('served without a token, OpenAPI 3.1, the package version, no user data', async (t) => {
  t.equal(r.status, 200);
  t.match(r.headers.get('content-type'), /^application\/json/);
  t.equal(doc.openapi, '3.1.0');
  t.equal(doc.info.version, '1.2.4');
  t.same(doc.servers, [{ url: '/api/v1' }]);
  t.same(doc.components.securitySchemes.bearer, {
    type: 'http',
    scheme: 'bearer',
    description: doc.components.securitySchemes.bearer.description,
  });
  t.same(doc.security, [{ bearer: [] }, { oauth2: [] }]);
});

t.test('scopes are on an OAuth2 scheme with the real endpoints and the whole catalogue', async (t) => {
  const oauth = doc.components.securitySchemes.oauth2;
  t.equal(oauth.type, 'oauth2');
  const flow = oauth.flows.authorizationCode;
  t.same([flow.authorizationUrl, flow.tokenUrl, flow.refreshUrl], ['/oauth/auth', '/oauth/token', '/oauth/token']);
  const catalogue = await req(s, 'GET', '/api/v1/tokens/scopes', { token: s.adminToken });
  const scopes: Array<{ scope: string; description: string }> = catalogue.json().items;
  t.ok(scopes.length >= 4);
  t.same(flow.scopes, Object.fromEntries(scopes.map((x) => [x.scope, x.description])), 'every catalogued scope, described');
  // The authorization server really is there: its metadata names the same endpoints.
  const meta = await req(s, 'GET', '/.well-known/oauth-authorization-server/oauth');
  t.equal(meta.status, 200);
  t.equal(new URL(meta.json().authorization_endpoint).pathname, flow.authorizationUrl);
  t.equal(new URL(meta.json().token_endpoint).pathname, flow.tokenUrl);
});

t.test('no component schema carries $id: refs inside them resolve in a 2020-12 validator', async (t) => {
  const withId = Object.entries<any>(doc.components.schemas)
    .filter(([, sch]) => JSON.stringify(sch).includes('"$id"'))
    .map(([name]) => name);
  t.same(withId, []);
});

t.test("Redocly's recommended-strict ruleset finds no problem", async (t) => {
  const config = await createConfig({ extends: ['recommended-strict'] });
  const problems = await lintFromString({ source: r.text, absoluteRef: `${s.url}/api/v1/openapi.json`, config });
  t.same(
    problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`),
    [],
  );
});

t.test('every $ref resolves; every operation has an id, a summary, security, responses and its problem codes', async (t) => {
  const refs: string[] = [];
  const walk = (n: unknown) => {
    if (Array.isArray(n)) n.forEach(walk);
    else if (n && typeof n === 'object')
      for (const [k, v] of Object.entries(n)) {
        if (k === '$ref') refs.push(v as string);
        else walk(v);
      }
  };
  walk(doc);
  t.ok(refs.length > 20, `${refs.length} refs`);
  for (const ref of new Set(refs)) {
    t.match(ref, /^#\//, `${ref} is local`);
    const target = ref
      .slice(2)
      .split('/')
      .reduce((o: any, k) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    t.ok(target, `${ref} resolves`);
  }
  const ids = new Set<string>();
  const ops = Object.entries<any>(doc.paths).flatMap(([p, item]) => Object.entries<any>(item).map(([m, op]) => ({ p, m, op })));
  const count = (tag: string) => ops.filter(({ op }) => op.tags.includes(tag)).length;
  t.equal(count('notetaker'), 17, 'seventeen notetaker operations');
  t.equal(count('tokens'), 7, 'seven tokens operations');
  t.equal(count('users'), 9, 'nine users operations');
  t.equal(count('admin'), 9, 'nine admin operations');
  t.equal(count('oauth'), 4, 'four oauth operations');
  t.equal(count('filedb'), 22, 'twenty-two filedb operations');
  t.equal(count('transcribe'), 8, 'eight transcribe operations');
  t.equal(count('search'), 2, 'two search operations');
  t.equal(count('exports') + count('imports'), 5, 'five exports and imports operations');
  t.equal(ops.length, 83, 'and no others');
  // Any token may read itself, its account and the scope catalogue.
  const scopeFree = new Set(['GET /tokens/self', 'GET /tokens/scopes', 'GET /users/me', 'GET /users/me/events', 'GET /oauth/grants']);
  for (const { p, m, op } of ops) {
    const what = `${m.toUpperCase()} ${p}`;
    t.ok(op.operationId && !ids.has(op.operationId), `${what}: unique operationId`);
    ids.add(op.operationId);
    t.ok(op.summary, `${what}: summary`);
    t.ok(op.description, `${what}: description`);
    t.same(op.tags, [p.split('/')[1]], `${what}: tag`);
    t.same(op.security[0], { bearer: [] }, `${what}: an API token, scopes not listed on the http scheme`);
    t.same(op.security[1].oauth2, op['x-required-scopes'], `${what}: the OAuth scheme lists the scopes`);
    t.equal(op.security[1].oauth2.length > 0, !scopeFree.has(what), `${what}: names its scopes`);
    for (const scope of op.security[1].oauth2)
      t.ok(doc.components.securitySchemes.oauth2.flows.authorizationCode.scopes[scope], `${what}: ${scope} is defined`);
    t.ok(
      Object.keys(op.responses).some((c) => /^2/.test(c)),
      `${what}: a success response`,
    );
    const codes: string[] = op['x-problem-codes'];
    t.ok(
      codes.includes('unauthenticated') && codes.includes('internal') && codes.includes('missing_scope') !== scopeFree.has(what),
      `${what}: the codes every operation has`,
    );
    for (const code of codes) {
      const status = String(PROBLEM_CODES[code as keyof typeof PROBLEM_CODES].status);
      const resp = op.responses[status];
      t.ok(resp?.['x-problem-codes']?.includes(code), `${what}: ${code} listed under ${status}`);
      t.equal(resp.content['application/problem+json'].schema.$ref, '#/components/schemas/Problem');
    }
    for (const [status, resp] of Object.entries<any>(op.responses))
      if (Number(status) >= 400)
        t.ok(
          resp['x-problem-codes'].every((c: string) => codes.includes(c)),
          `${what} ${status}: codes in the operation's list`,
        );
    for (const param of (op.parameters ?? []).filter((x: any) => x.in === 'path'))
      t.ok(p.includes(`{${param.name}}`), `${what}: path parameter ${param.name} is in the path`);
  }
  const edit = doc.paths['/notetaker/notes/{id}'].patch;
  t.same(edit.responses['412']['x-problem-codes'], ['precondition_failed']);
  t.same(edit.responses['428']['x-problem-codes'], ['precondition_required']);
  t.same(edit.responses['400']['x-problem-codes'].sort(), ['bad_request', 'validation_failed']);
  t.ok(edit.parameters.some((x: any) => x.in === 'header' && x.name === 'If-Match'));
  const list = doc.paths['/notetaker/notes'].get;
  const limit = list.parameters.find((x: any) => x.name === 'limit');
  t.match(limit, { in: 'query', required: false, schema: { type: 'integer', minimum: 1, default: 20 } });
  t.match(limit.description, /at most 100/);
  t.ok(list.responses['200'].headers['Folio-Limit-Clamped']);
  t.same(list.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/NotePage' });
  t.ok(doc.paths['/notetaker/reports'].post.responses['200'].content['application/pdf']);
});

t.test('the document is the route table: every documented operation is routed, and nothing else is', async (t) => {
  for (const [p, item] of Object.entries<any>(doc.paths)) {
    for (const m of Object.keys(item)) {
      const path = p.replace('{id}', '00000000-0000-4000-8000-000000000000').replace('{version}', '1');
      const res = await req(s, m.toUpperCase(), `/api/v1${path}`);
      t.equal(res.status, 401, `${m.toUpperCase()} ${p} is routed and needs a token`);
    }
  }
});

t.test('/docs and /redoc: served by Folio, no CDN, assets load, CSP keeps them local', async (t) => {
  for (const page of ['/api/v1/docs', '/api/v1/redoc']) {
    const res = await req(s, 'GET', page);
    t.equal(res.status, 200, page);
    t.match(res.headers.get('content-type'), /^text\/html/);
    t.match(res.text, /\/api\/v1\/openapi\.json/);
    t.notMatch(res.text, /https?:\/\//, `${page}: no absolute URL, no CDN`);
    t.match(res.headers.get('content-security-policy'), /connect-src 'self'/);
    const assets = [...res.text.matchAll(/(?:src|href)="(\/[^"]+)"/g)].map((m) => m[1]!);
    t.ok(assets.length > 0);
    for (const a of assets) {
      const got = await fetch(s.url + a);
      t.equal(got.status, 200, `${a} is served`);
      t.match(got.headers.get('content-type'), /javascript|css/);
      const text = await got.text();
      t.notMatch(text, /cdn\.redoc\.ly/, `${a}: no asset from a CDN`);
    }
  }
});

t.test('problem type URLs explain their code', async (t) => {
  const res = await req(s, 'GET', '/api/v1/problems/precondition_failed');
  t.equal(res.status, 200);
  t.match(res.text, /precondition_failed/);
  t.match(res.text, /412/);
  const all = await req(s, 'GET', '/api/v1/problems');
  for (const code of Object.keys(PROBLEM_CODES)) t.match(all.text, new RegExp(`id="${code}"`));
  const unknown = await req(s, 'GET', '/api/v1/problems/nonsense');
  t.equal(unknown.status, 404);
  t.equal(unknown.json().code, 'not_found');
});

t.test('docs/rest.md shows every operation and explains every problem code', async (t) => {
  const md = await readFile(path.join(PACKAGE_ROOT, 'docs/rest.md'), 'utf8');
  for (const [p, item] of Object.entries<any>(doc.paths)) {
    for (const m of Object.keys(item)) {
      const pattern = p
        .replace(/\{id\}/g, '$ID')
        .replace(/\{version\}/g, '\\d+')
        .replace(/[.?]/g, '\\$&')
        // Any other path parameter: an example value (a namespace name, a plugin's).
        .replace(/\{\w+\}/g, '[^"/?]+')
        .replace(/\$ID/g, '\\$ID');
      const method = m.toUpperCase();
      const re =
        method === 'GET'
          ? new RegExp(`curl -s[^\\n]*"\\$FOLIO/api/v1${pattern}[?"]`)
          : new RegExp(`-X ${method} "\\$FOLIO/api/v1${pattern}"`);
      t.match(md, re, `${method} ${p} has a curl example`);
    }
  }
  for (const code of Object.keys(PROBLEM_CODES)) t.match(md, `\`${code}\``, `${code} is explained`);
});
