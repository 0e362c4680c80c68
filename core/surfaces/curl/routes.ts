// The curl surface (spec §4.1): help, skills and calls over plain HTTP, all one registry.
import Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import type { Principal } from '../../domain/identity/types.ts';
import { queryOf, type Authenticator } from '../../kernel/auth.ts';
import type { Dispatcher } from '../../kernel/dispatch.ts';
import type { Viewer } from '../../kernel/entitlements.ts';
import { BadArguments, NotFound, UnknownName } from '../../contract/errors.ts';
import { readJsonBody, type BodyLimits } from '../http/body.ts';
import { catalogueHtml, wantsHtml } from '../pages/catalogue.ts';
import { docsHtml } from '../pages/docs.ts';
import { curlOpenApi } from './openapi.ts';
import { DOWNLOAD_HEADERS, sendError, sendText } from './respond.ts';
import * as text from './help.ts';
import { requestOrigin } from '../http/origin.ts';

export interface CurlDeps {
  dispatcher: Dispatcher;
  auth: Authenticator;
  limits: BodyLimits;
  version: string;
  publicUrl: string | null;
  /** Lines about the server itself that whoami shows admins (e.g. which transcription engine can run). */
  serverNotes?: () => Promise<string[]>;
}

interface State {
  log: Logger;
  principal: Principal;
  viewer: Viewer;
  params: Record<string, unknown>;
}

type Ctx = Context & { state: State; params: Record<string, string> };

const READ_METHODS = ['GET', 'QUERY'];
/** The longest `?wait=` on help for a namespace. */
const MAX_WAIT_SECONDS = 10;

export function curlRouter(deps: CurlDeps): Router {
  const router = new Router({ prefix: '/curl' });
  const base = (ctx: Context) => deps.publicUrl ?? requestOrigin(ctx);

  /** Authenticates; for QUERY merges the JSON body over the query string (the body wins). */
  const authed = async (ctx: Ctx, next: Next) => {
    try {
      ctx.state.principal = await deps.auth.authenticate(ctx.get('authorization') || undefined, queryOf(ctx.querystring));
      ctx.state.viewer = await deps.dispatcher.viewer(ctx.state.principal, ctx.state.log);
      const params: Record<string, unknown> = { ...ctx.query };
      if (ctx.method === 'QUERY') {
        const body = await readJsonBody(ctx, deps.limits);
        if (body !== undefined) {
          if (typeof body !== 'object' || body === null || Array.isArray(body))
            throw new BadArguments('a QUERY body must be a JSON object of parameters', [
              { path: '(body)', message: 'must be a JSON object' },
            ]);
          Object.assign(params, body);
        }
      }
      ctx.state.params = params;
    } catch (err) {
      return sendError(ctx, err, ctx.state.log);
    }
    await next();
  };

  /** Help and skill routes answer the public HTML catalogue to a browser, without a token. */
  const htmlOr = (handler: (ctx: Ctx) => Promise<void> | void) => async (ctx: Ctx) => {
    if (ctx.method === 'GET' && wantsHtml(ctx)) {
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = catalogueHtml(deps.dispatcher.registry.snapshot, ctx.path, deps.version);
      return;
    }
    return authed(ctx, async () => {
      try {
        await handler(ctx);
      } catch (err) {
        sendError(ctx, err, ctx.state.log);
      }
    });
  };

  const read = (path: string, handler: (ctx: Ctx) => Promise<void> | void) => router.register(path, READ_METHODS, htmlOr(handler));

  router.get('/openapi.json', (ctx) => {
    ctx.body = curlOpenApi(deps.version);
  });
  router.get('/docs', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = docsHtml('Folio curl surface', '/curl/openapi.json');
  });

  read('/', (ctx) => sendText(ctx, 200, text.startText(base(ctx), deps.version)));
  read('/whoami', async (ctx) => {
    const { principal, viewer } = ctx.state;
    const namespaces = await deps.dispatcher.namespaces(viewer);
    const notes = principal.user.roles.includes('admin') && deps.serverNotes ? await deps.serverNotes().catch(() => []) : [];
    sendText(ctx, 200, [text.whoamiText(principal, namespaces, deps.version, principal.tokenExpiresAt), ...notes].join('\n'));
  });
  read('/help', async (ctx) => {
    const namespaces = await deps.dispatcher.namespaces(ctx.state.viewer);
    const errors = ctx.state.principal.user.roles.includes('admin') ? deps.dispatcher.registry.errors() : [];
    sendText(ctx, 200, text.namespacesText(namespaces, errors));
  });
  /**
   * The namespace; with `?wait=N` (seconds, at most 10) one that is not there yet (a plugin just
   * dropped in, still loading) is waited for, up to N seconds, before the 404.
   */
  const namespaceWaiting = async (ctx: Ctx) => {
    const wait = ctx.state.params.wait;
    // Plain digits only (`2`, `0.5`): not `0x2`, `1e1`, `true` or JSON.
    const seconds = wait === undefined ? 0 : typeof wait === 'string' && /^\d{1,2}(\.\d{1,3})?$/.test(wait) ? Number(wait) : NaN;
    if (!Number.isFinite(seconds) || seconds < 0 || seconds > MAX_WAIT_SECONDS)
      throw new BadArguments(`wait must be a number of seconds from 0 to ${MAX_WAIT_SECONDS}`, [
        { path: 'wait', message: `0 to ${MAX_WAIT_SECONDS}` },
      ]);
    const deadline = Date.now() + seconds * 1000;
    // A client that went away is not waited for (nor does it hold a draining server).
    const gone = () => ctx.res.destroyed || ctx.req.socket.destroyed;
    for (;;) {
      try {
        return await deps.dispatcher.namespace(ctx.state.viewer, ctx.params.namespace!);
      } catch (err) {
        if (!(err instanceof NotFound) || Date.now() >= deadline || gone()) throw err;
      }
      // Until the registry changes, the client leaves, or a short while (a change may have landed
      // before listening).
      await new Promise<void>((resolve) => {
        const done = () => {
          off();
          clearTimeout(timer);
          ctx.res.off('close', done);
          resolve();
        };
        const off = deps.dispatcher.registry.onChange(done);
        const timer = setTimeout(done, Math.min(250, Math.max(0, deadline - Date.now())));
        ctx.res.once('close', done);
      });
    }
  };

  read('/help/:namespace', async (ctx) => {
    const ns = await namespaceWaiting(ctx);
    const principal = ctx.state.principal;
    sendText(
      ctx,
      200,
      text.namespaceText(ns, (fn) => deps.dispatcher.policy.entitled(principal, fn.requires)),
    );
  });
  read('/help/:namespace/:function', async (ctx) => {
    const fn = await deps.dispatcher.function(ctx.state.viewer, ctx.params.namespace!, ctx.params.function!);
    const examples = ctx.state.params.examples;
    const withExamples = examples === true || examples === 'true' || examples === '1';
    const callable = deps.dispatcher.policy.entitled(ctx.state.principal, fn.requires);
    sendText(ctx, 200, text.functionText(fn, deps.dispatcher.ceiling(fn), base(ctx), withExamples, callable));
  });
  read('/skill', async (ctx) => {
    sendText(ctx, 200, text.skillNamespacesText(await deps.dispatcher.namespaces(ctx.state.viewer)));
  });
  read('/skill/:namespace', async (ctx) => {
    const ns = await deps.dispatcher.namespace(ctx.state.viewer, ctx.params.namespace!);
    if (ns.skills.size === 0) throw new UnknownName(`no skills in '${ns.name}'. GET /curl/skill lists the namespaces that have guides.`);
    sendText(ctx, 200, text.skillsText(ns));
  });
  read('/skill/:namespace/:name', async (ctx) => {
    const ns = await deps.dispatcher.namespace(ctx.state.viewer, ctx.params.namespace!);
    const skill = ns.skills.get(ctx.params.name!);
    if (!skill) throw new UnknownName(`no skill '${ctx.params.name}' in '${ns.name}'. GET /curl/skill/${ns.name} lists its guides.`);
    sendText(ctx, 200, skill.markdown);
  });

  router.post('/call/:namespace/:function', async (ctx) => {
    const c = ctx as unknown as Ctx;
    const log = c.state.log;
    try {
      const principal = await deps.auth.authenticate(ctx.get('authorization') || undefined, queryOf(ctx.querystring));
      const body = await readJsonBody(ctx, deps.limits);
      const gone = new AbortController();
      const onClose = () => {
        if (!ctx.res.writableFinished) gone.abort(new Error('client closed the connection'));
      };
      ctx.res.once('close', onClose);
      try {
        const { fn, encoded } = await deps.dispatcher.call({
          principal,
          namespace: c.params.namespace!,
          fn: c.params.function!,
          body,
          signal: gone.signal,
          log,
        });
        ctx.status = 200;
        if (encoded.kind === 'bytes') {
          ctx.attachment(encoded.filename ?? `${fn.namespace}-${fn.name}`, { type: 'attachment' });
          ctx.set(DOWNLOAD_HEADERS);
        }
        ctx.body = encoded.text ?? encoded.body;
        // Set last and verbatim: Koa would add a charset to a text/* type the plugin chose.
        ctx.set('Content-Type', encoded.contentType);
      } finally {
        ctx.res.off('close', onClose);
      }
    } catch (err) {
      sendError(ctx, err, log);
    }
  });

  // A call is a POST (with its arguments as a JSON body): any other method names the route rightly
  // and is told so, rather than "no route".
  router.all('/call/:namespace/:function', (ctx) => {
    ctx.set('Allow', 'POST');
    const { namespace, function: fn } = (ctx as unknown as Ctx).params;
    sendText(
      ctx,
      405,
      `405 Method Not Allowed: a call is a POST, with its arguments as a JSON object: curl -X POST -H "Authorization: Bearer $TOKEN" -d '{}' ${base(ctx)}/curl/call/${namespace}/${fn}. GET /curl/help/${namespace}/${fn} says what it takes.`,
    );
  });

  return router;
}
