// The REST surface's machinery: turns the domains' route tables into Koa routes. For each request:
// authenticate (401) -> the policy: is the group's namespace visible to this caller (404, the same
// answer as an unknown route), is the caller entitled (403) -> path (404) -> query (400) -> body:
// its media type (415), then its JSON (400) -> handler, under the policy's deadline and the
// caller-gone signal -> JSON or a stream. Every failure goes through problems.ts; nothing else
// writes an error.
import Router from '@koa/router';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import type { TSchema } from 'typebox';
import type { Authenticator } from '../../kernel/auth.ts';
import type { Policy } from '../../kernel/policy.ts';
import { traced, tracingOn, type CallObserver } from '../../contract/observe.ts';
import {
  BadArguments,
  callersOwn,
  FolioError,
  MethodNotAllowed,
  NotFound,
  UnknownName,
  UnsupportedMediaType,
  type ArgProblem,
} from '../../contract/errors.ts';
import { koaPath, type PublicRoute, type Route } from '../../contract/rest.ts';
import { readJsonBody, type BodyLimits } from '../http/body.ts';
import { markCallersOutcome, type RequestLogState } from '../http/request-log.ts';
import { restOpenApi } from './openapi.ts';
import { mountRestPages } from './pages.ts';
import { toProblem, type FieldProblem, type ProblemAnswer } from './problems.ts';
import { openUpload, type OpenedUpload } from './upload.ts';
import { mountPublicRoutes } from './public.ts';
import { send } from './send.ts';
import { checker, newAjv, type Checker } from './validate.ts';
import { requestOrigin } from '../http/origin.ts';
import { queryTextProblem } from '../http/query-text.ts';
import { textProblem } from '../../contract/text.ts';

export const REST_PREFIX = '/api/v1';

/** A group of routes under one tag, governed by one registry namespace. */
export interface MountedGroup {
  tag: string;
  description: string;
  namespace: string;
  routes: Route[];
  components?: Record<string, TSchema> | undefined;
  publicRoutes?: PublicRoute[] | undefined;
}

export interface RestFrameworkOptions {
  groups: MountedGroup[];
  auth: Authenticator;
  policy: Policy;
  limits: BodyLimits;
  version: string;
  publicUrl: string | null;
  /**
   * Counts and times each call by its route template. REST routes call the domains' services, not
   * the dispatcher, so this is where their calls are seen (the curl and MCP ones are in dispatch.ts).
   */
  observer?: CallObserver | undefined;
}

export interface RestSurface {
  router: Router;
  /** The groups' token-less routes outside /api/v1 (share links). */
  publicRouter: Router;
  /** The OpenAPI document, made once at start. */
  openapi: Record<string, unknown>;
}

const baseOf = (publicUrl: string | null, ctx: Context) => (publicUrl ?? requestOrigin(ctx)).replace(/\/+$/, '');

export function sendProblem(ctx: Context, answer: ProblemAnswer): void {
  for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
  ctx.status = answer.status;
  if (answer.aborted) {
    ctx.body = '';
    return;
  }
  ctx.set('Cache-Control', 'no-store');
  ctx.type = 'application/problem+json';
  ctx.body = JSON.stringify(answer.body);
}

function invalid(problems: FieldProblem[]): BadArguments {
  const names = problems.map((p) => `${p.in} ${p.path || '(whole)'}`).join(', ');
  return new BadArguments(
    `the request does not match the operation's schema: ${names}. See errors for each.`,
    problems.map((p): ArgProblem => ({ in: p.in, path: p.path, message: p.message })),
  );
}

/** The answer to a path no operation has: also the answer to a group hidden from the caller. */
function unknownRoute(path: string): UnknownName {
  return new UnknownName(
    `no operation at ${path}. The operations are listed in ${REST_PREFIX}/openapi.json and shown at ${REST_PREFIX}/docs.`,
  );
}

/** application/json, and other types with the +json suffix (RFC 6839) but for the two patch formats. */
const JSON_MEDIA = /^application\/(?:json|[a-z0-9!#$&^_.+-]+\+json)$/;
// A JSON Merge Patch (RFC 7396) or JSON Patch (RFC 6902) document means what those formats say;
// Folio's PATCH takes its own edits (append, replace_section, ...), so taking either would misread it.
const PATCH_FORMATS = new Set(['application/merge-patch+json', 'application/json-patch+json']);

/**
 * A body must be what the OpenAPI document declares: JSON, in UTF-8, not compressed. (The curl
 * surface reads any body as JSON, because `curl -d` labels it a form; REST holds to its contract.)
 */
function requireJson(ctx: Context): void {
  const hasBody = ctx.req.headers['transfer-encoding'] !== undefined || Number(ctx.get('content-length') || 0) > 0;
  if (!hasBody) return;
  const given = ctx.get('content-type');
  const [media = '', ...params] = given.split(';').map((p) => p.trim());
  const type = media.toLowerCase();
  const charset = params
    .map((p) => /^charset\s*=\s*"?([^"]*)"?$/i.exec(p)?.[1])
    .find((c) => c !== undefined)
    ?.toLowerCase();
  const coding = ctx.get('content-encoding').trim().toLowerCase();
  const send = 'send it as Content-Type: application/json (UTF-8, no Content-Encoding)';
  if (!given) throw new UnsupportedMediaType(`the body has no Content-Type; ${send}.`);
  if (PATCH_FORMATS.has(type))
    throw new UnsupportedMediaType(
      `${type} is not a format this API implements (its operations take the JSON bodies described in the OpenAPI document); ${send}.`,
    );
  if (!JSON_MEDIA.test(type)) throw new UnsupportedMediaType(`a ${media} body is not taken here; ${send}.`);
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')
    throw new UnsupportedMediaType(`a body in charset ${charset} is not taken here; ${send}.`);
  if (coding && coding !== 'identity') throw new UnsupportedMediaType(`a ${coding}-encoded body is not taken here; ${send}.`);
}

/** Reads the JSON body; anything wrong with it as JSON is the request's fault: bad_request. */
async function readBody(ctx: Context, limits: BodyLimits): Promise<unknown> {
  requireJson(ctx);
  try {
    return await readJsonBody(ctx, limits);
  } catch (err) {
    if (err instanceof BadArguments) throw new BadArguments(err.message);
    throw err;
  }
}

interface Compiled {
  route: Route;
  namespace: string;
  locate: (path: string) => Pick<FieldProblem, 'in' | 'path'>;
  params: Checker | undefined;
  query: Checker;
  body: Checker | undefined;
}

/** A query string with no parameters declared must be empty (typos like ?limt=5 are caught). */
const NoQuery = { type: 'object', additionalProperties: false, properties: {} } as never;

export function restFramework(opts: RestFrameworkOptions): RestSurface {
  const coercing = newAjv(true);
  const strict = newAjv(false);
  const routes = opts.groups.flatMap((g) => g.routes);
  const compiled: Compiled[] = opts.groups
    .flatMap((g) => g.routes.map((route) => ({ route, namespace: g.namespace })))
    .map(({ route, namespace }) => ({
      route,
      namespace,
      locate: locator(route),
      params: route.params ? checker(coercing, route.params, 'path') : undefined,
      query: checker(coercing, route.query ?? NoQuery, 'query'),
      body: route.body ? checker(strict, route.body, 'body') : undefined,
    }));
  const openapi = restOpenApi(compiled, {
    version: opts.version,
    // Each tag names the registry namespace that governs its group (x-namespace).
    tags: opts.groups.map((g) => ({ name: g.tag, description: g.description, 'x-namespace': g.namespace })),
    components: Object.assign({}, ...opts.groups.map((g) => g.components ?? {})) as Record<string, TSchema>,
    scopes: opts.policy.scopes.list(),
  });

  const router = new Router<RequestLogState>({ prefix: REST_PREFIX });
  mountRestPages(router, openapi, (ctx) => baseOf(opts.publicUrl, ctx));

  for (const c of compiled) {
    const label = `${c.route.method} ${REST_PREFIX}${c.route.path}`;
    router.register(koaPath(c.route.path), [c.route.method], async (ctx) => {
      const log = ctx.state.log;
      const observer = opts.observer;
      const started = observer ? performance.now() : 0;
      try {
        await (tracingOn
          ? traced('folio.rest', { 'folio.surface': 'rest', 'folio.function': label }, () => handle(ctx, c, opts, log))
          : handle(ctx, c, opts, log));
        observer?.called('rest', label, 'ok', (performance.now() - started) / 1000);
      } catch (err) {
        observer?.called('rest', label, err instanceof FolioError ? err.code : 'internal', (performance.now() - started) / 1000);
        // An upload refused before its body was read: close the connection after the answer rather
        // than read (maybe) a gigabyte nobody wants; lingering (core/surfaces/http/linger.ts), so the
        // client gets to read the answer.
        if ((c.route.upload || c.route.raw) && !ctx.req.complete) ctx.set('Connection', 'close');
        // The route's own 404 text is for its resources; an unknown name (a hidden group) reads as an unknown route.
        const notFound = err instanceof UnknownName ? undefined : c.route.notFound;
        if (callersOwn(err)) markCallersOutcome(ctx.res);
        sendProblem(ctx, toProblem(err, { base: baseOf(opts.publicUrl, ctx), log, notFound, locate: c.locate }));
      }
    });
  }

  // Whatever no operation took: 405 when the path exists with other methods, else 404.
  const patterns = routes.map((r) => ({
    re: new RegExp(`^${r.path.replace(/\{\w+\}/g, '[^/]+')}/?$`),
    method: r.method,
    options: r.options,
  }));
  router.all('{/*rest}', (ctx) => {
    const sub = ctx.path.slice(REST_PREFIX.length) || '/';
    const matching = patterns.filter((p) => p.re.test(sub));
    const allowed = [...new Set(matching.map((p) => p.method))];
    const base = baseOf(opts.publicUrl, ctx);
    const log = ctx.state.log;
    if (allowed.length === 0) return sendProblem(ctx, toProblem(unknownRoute(ctx.path), { base, log }));
    const allow = [...allowed, ...(allowed.includes('GET') ? ['HEAD'] : []), 'OPTIONS'].join(', ');
    if (ctx.method === 'OPTIONS') {
      ctx.set('Allow', allow);
      for (const p of matching) if (p.options) ctx.set(p.options());
      ctx.status = 204;
      return;
    }
    sendProblem(ctx, toProblem(new MethodNotAllowed(`${ctx.path} takes ${allow}, not ${ctx.method}.`, allow), { base, log }));
  });

  const publicRouter = mountPublicRoutes(
    opts.groups.flatMap((g) => g.publicRoutes ?? []),
    (ctx) => baseOf(opts.publicUrl, ctx),
  );
  return { router, publicRouter, openapi };
}

/**
 * The service names what it refused by argument ('/limit', '/tags/0', '/version'); say whether that
 * was a query parameter, a path segment or the body. A service's plural filter (`tags`, `kinds`) is
 * the query's singular, repeatable parameter (`tag`, `kind`).
 */
function locator(route: Route): (path: string) => Pick<FieldProblem, 'in' | 'path'> {
  const names = (schema: unknown) => new Set(Object.keys((schema as { properties?: object } | undefined)?.properties ?? {}));
  const query = names(route.query);
  const params = names(route.params);
  const body = names(route.body);
  return (path) => {
    const [, first = '', ...rest] = path.split('/');
    const singular = first.endsWith('s') ? first.slice(0, -1) : first;
    const alias = !query.has(first) && singular !== first && query.has(singular) ? singular : first;
    if (query.has(alias)) return { in: 'query', path: ['', alias, ...rest].join('/') };
    if (params.has(first) && !body.has(first)) return { in: 'path', path };
    return { in: 'body', path };
  };
}

async function handle(ctx: Context, c: Compiled, opts: RestFrameworkOptions, log: Logger): Promise<void> {
  const { route } = c;
  const { policy } = opts;
  ctx.set('Cache-Control', 'no-store');
  const principal = await opts.auth.authenticate(ctx.get('authorization') || undefined, new URLSearchParams(ctx.querystring));
  const viewer = await policy.viewer(principal, log);
  if (!(await policy.groupVisible(viewer, c.namespace))) throw unknownRoute(ctx.path);
  const what = `${route.method} ${REST_PREFIX}${route.path}`;
  policy.entitle(principal, { scopes: route.scopes, roles: route.roles }, what);

  // A path segment is a string a service will look up: one that cannot be text is refused here, for
  // every route, as the body and the query are (PostgreSQL would otherwise answer it with a 500).
  const rawParams = { ...(ctx as unknown as { params: Record<string, string> }).params };
  for (const [name, value] of Object.entries(rawParams)) {
    const message = textProblem(value);
    if (message) throw invalid([{ in: 'path', path: `/${name}`, message }]);
  }
  let params: unknown = {};
  if (c.params) {
    const r = c.params(rawParams);
    // A path that names nothing (not a uuid, not a version number) is a resource that does not exist.
    if (!r.ok) throw new NotFound(route.notFound ?? 'no such resource');
    params = r.value;
  }

  const bad = queryTextProblem(ctx.querystring);
  if (bad) throw invalid([{ in: 'query', path: bad.name, message: bad.message }]);
  const q = c.query({ ...ctx.query });
  if (!q.ok) throw invalid(q.problems);

  let body: unknown;
  let upload: OpenedUpload | undefined;
  if (c.route.upload) {
    upload = await openUpload(ctx);
  } else if (c.route.raw) {
    // Its own protocol reads the body (and answers for it).
  } else if (c.body) {
    const raw = await readBody(ctx, opts.limits);
    if (raw === undefined && route.bodyRequired !== false) throw invalid([{ in: 'body', path: '', message: 'a JSON object is required' }]);
    if (raw !== undefined) {
      const b = c.body(raw);
      if (!b.ok) throw invalid(b.problems);
      body = b.value;
    }
  }

  // The caller going away aborts the work, as on the other surfaces.
  const gone = new AbortController();
  const onClose = () => {
    if (!ctx.res.writableFinished) gone.abort(new Error('client closed the connection'));
  };
  ctx.res.once('close', onClose);
  try {
    const reply = await policy.run(
      what,
      gone.signal,
      log,
      (signal) =>
        route.handler({
          params,
          query: q.value,
          body,
          upload: upload?.body,
          raw: c.route.raw ? { req: ctx.req, res: ctx.res } : undefined,
          method: ctx.method,
          baseUrl: baseOf(opts.publicUrl, ctx),
          principal,
          header: (name) => ctx.get(name) || undefined,
          log,
          signal,
          requireScope: (scope) => policy.entitle(principal, { scopes: [scope] }, what),
          mayRead: (namespace, scope) => policy.mayRead(viewer, namespace, scope),
        }),
      { untimed: route.upload !== undefined || route.raw !== undefined },
    );
    await send(ctx, reply, log);
  } finally {
    ctx.res.off('close', onClose);
    upload?.finish();
  }
}
