// The REST surface's machinery: turns the route table into Koa routes. For each request:
// authenticate (401) -> scopes (403 missing_scope) -> path (404) -> query, body (400) -> handler ->
// JSON or a stream. Every failure goes through problems.ts; nothing else writes an error.
import { Readable } from 'node:stream';
import Router from '@koa/router';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import type { Authenticator } from '../../kernel/auth.ts';
import { hasScope } from '../../kernel/entitlements.ts';
import { BadArguments, NotFound } from '../../kernel/errors.ts';
import { readJsonBody, type BodyLimits } from '../http/body.ts';
import { koaPath, type Call, type Reply, type Route } from './define.ts';
import { restOpenApi } from './openapi.ts';
import { mountRestPages } from './pages.ts';
import { RestProblem, toProblem, type FieldProblem, type ProblemAnswer } from './problems.ts';
import { checker, newAjv, type Checker } from './validate.ts';

export const REST_PREFIX = '/api/v1';

export interface RestFrameworkOptions {
  routes: Route[];
  tags: Array<{ name: string; description: string }>;
  auth: Authenticator;
  limits: BodyLimits;
  version: string;
  publicUrl: string | null;
}

export interface RestSurface {
  router: Router;
  /** The OpenAPI document, made once at start. */
  openapi: Record<string, unknown>;
}

const baseOf = (publicUrl: string | null, ctx: Context) => (publicUrl ?? `${ctx.protocol}://${ctx.host}`).replace(/\/+$/, '');

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

function invalid(problems: FieldProblem[]): RestProblem {
  const names = problems.map((p) => `${p.in} ${p.path || '(whole)'}`).join(', ');
  return new RestProblem('validation_failed', `the request does not match the operation's schema: ${names}. See errors for each.`, {
    errors: problems,
  });
}

/** Reads the JSON body; anything wrong with it as JSON is the request's fault: bad_request. */
async function readBody(ctx: Context, limits: BodyLimits): Promise<unknown> {
  try {
    return await readJsonBody(ctx, limits);
  } catch (err) {
    if (err instanceof BadArguments) throw new RestProblem('bad_request', err.message);
    throw err;
  }
}

interface Compiled {
  route: Route;
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
  const compiled: Compiled[] = opts.routes.map((route) => ({
    route,
    locate: locator(route),
    params: route.params ? checker(coercing, route.params, 'path') : undefined,
    query: checker(coercing, route.query ?? NoQuery, 'query'),
    body: route.body ? checker(strict, route.body, 'body') : undefined,
  }));
  const openapi = restOpenApi(opts.routes, { version: opts.version, tags: opts.tags });

  const router = new Router({ prefix: REST_PREFIX });
  mountRestPages(router, openapi, (ctx) => baseOf(opts.publicUrl, ctx));

  for (const c of compiled) {
    router.register(koaPath(c.route.path), [c.route.method], async (ctx) => {
      const log: Logger = ctx.state.log;
      const pc = { base: baseOf(opts.publicUrl, ctx), log, notFound: c.route.notFound, locate: c.locate };
      try {
        await handle(ctx, c, opts, log);
      } catch (err) {
        sendProblem(ctx, toProblem(err, pc));
      }
    });
  }

  // Whatever no operation took: 405 when the path exists with other methods, else 404.
  const patterns = opts.routes.map((r) => ({ re: new RegExp(`^${r.path.replace(/\{\w+\}/g, '[^/]+')}/?$`), method: r.method }));
  router.all('{/*rest}', async (ctx) => {
    const sub = ctx.path.slice(REST_PREFIX.length) || '/';
    const allowed = [...new Set(patterns.filter((p) => p.re.test(sub)).map((p) => p.method))];
    const base = baseOf(opts.publicUrl, ctx);
    const log: Logger = ctx.state.log;
    if (allowed.length === 0)
      return sendProblem(
        ctx,
        toProblem(
          new NotFound(
            `no operation at ${ctx.path}. The operations are listed in ${REST_PREFIX}/openapi.json and shown at ${REST_PREFIX}/docs.`,
          ),
          { base, log },
        ),
      );
    const allow = [...allowed, ...(allowed.includes('GET') ? ['HEAD'] : []), 'OPTIONS'].join(', ');
    if (ctx.method === 'OPTIONS') {
      ctx.set('Allow', allow);
      ctx.status = 204;
      return;
    }
    sendProblem(
      ctx,
      toProblem(new RestProblem('method_not_allowed', `${ctx.path} takes ${allow}, not ${ctx.method}.`, {}, { Allow: allow }), {
        base,
        log,
      }),
    );
  });

  return { router, openapi };
}

/**
 * The service names what it refused by argument ('/limit', '/tags/0', '/version'); say whether that
 * was a query parameter, a path segment or the body. The service's `tags` filter is the query's `tag`.
 */
function locator(route: Route): (path: string) => Pick<FieldProblem, 'in' | 'path'> {
  const names = (schema: unknown) => new Set(Object.keys((schema as { properties?: object } | undefined)?.properties ?? {}));
  const query = names(route.query);
  const params = names(route.params);
  return (path) => {
    const [, first = '', ...rest] = path.split('/');
    const alias = first === 'tags' && query.has('tag') ? 'tag' : first;
    if (query.has(alias)) return { in: 'query', path: ['', alias, ...rest].join('/') };
    if (params.has(first) && !route.body) return { in: 'path', path };
    return { in: 'body', path };
  };
}

async function handle(ctx: Context, c: Compiled, opts: RestFrameworkOptions, log: Logger): Promise<void> {
  const { route } = c;
  ctx.set('Cache-Control', 'no-store');
  const principal = await opts.auth.authenticate(ctx.get('authorization') || undefined, new URLSearchParams(ctx.querystring));

  const requireScope = (scope: string) => {
    if (hasScope(principal.scopes, scope)) return;
    throw new RestProblem(
      'missing_scope',
      `${route.method} ${REST_PREFIX}${route.path} needs the scope ${scope}, which this ${principal.tokenKind} token does not carry (it has: ${principal.scopes.join(' ') || 'none'}).`,
      { missing_scopes: [scope] },
      { 'WWW-Authenticate': `Bearer realm="folio", error="insufficient_scope", scope="${scope}"` },
    );
  };
  for (const s of route.scopes) requireScope(s);

  let params: unknown = {};
  if (c.params) {
    const r = c.params({ ...(ctx as unknown as { params: Record<string, string> }).params });
    // A path that names nothing (not a uuid, not a version number) is a resource that does not exist.
    if (!r.ok) throw new NotFound(route.notFound ?? 'no such resource');
    params = r.value;
  }

  const q = c.query({ ...ctx.query });
  if (!q.ok) throw invalid(q.problems);

  let body: unknown;
  if (c.body) {
    const raw = await readBody(ctx, opts.limits);
    if (raw === undefined && route.bodyRequired !== false) throw invalid([{ in: 'body', path: '', message: 'a JSON object is required' }]);
    if (raw !== undefined) {
      const b = c.body(raw);
      if (!b.ok) throw invalid(b.problems);
      body = b.value;
    }
  }

  const call: Call<any, any, any> = {
    params,
    query: q.value,
    body,
    principal,
    header: (name) => ctx.get(name) || undefined,
    log,
    requireScope,
  };
  const reply = await route.handler(call);
  await send(ctx, reply, log);
}

async function send(ctx: Context, reply: Reply, log: Logger): Promise<void> {
  for (const [name, value] of Object.entries(reply.headers ?? {})) ctx.set(name, value);
  if (reply.stream) {
    // Pull the first chunk before the status goes out: an error raised on it is still a problem answer.
    const it = reply.stream[Symbol.asyncIterator]();
    const first = await it.next();
    ctx.status = reply.status;
    const res = ctx.res;
    ctx.body = Readable.from(
      (async function* () {
        let finished = first.done === true;
        try {
          if (!first.done) yield first.value;
          for (let n = await it.next(); !n.done; n = await it.next()) yield n.value;
          finished = true;
          if (reply.trailers) res.addTrailers(await reply.trailers());
        } catch (err) {
          // Headers are gone: cut the connection so the client sees a truncated response, not a short one.
          log.error({ err }, 'stream failed after the response started');
          res.socket?.destroy();
        } finally {
          if (!finished) await it.return?.();
        }
      })(),
      { objectMode: false },
    );
    return;
  }
  ctx.status = reply.status;
  if (reply.status === 204 || reply.status === 304) return;
  ctx.body = reply.body ?? null;
}
