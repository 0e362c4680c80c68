// Routes that take no bearer token (a share link's public URL, /s/{token}), mounted at the root.
// Nothing of the policy applies: the link's token is the credential, checked by the domain. Failures
// answer in plain text, as the curl surface words them (a browser shows them as they are).
import Router from '@koa/router';
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { BadArguments } from '../../contract/errors.ts';
import { koaPath, type PublicRoute } from '../../contract/rest.ts';
import { errorAnswer } from '../http/error-text.ts';
import type { RequestLogState } from '../http/request-log.ts';
import { send } from './send.ts';

const FORM_MAX = 16 * 1024;

async function readForm(ctx: Context): Promise<Record<string, string>> {
  const type = ctx.get('content-type').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return {};
  let text: string;
  try {
    text = (await getRawBody(ctx.req, { limit: FORM_MAX })).toString('utf8');
  } catch {
    throw new BadArguments(`the form must be at most ${FORM_MAX} bytes`);
  }
  return Object.fromEntries(new URLSearchParams(text));
}

export function mountPublicRoutes(routes: PublicRoute[], baseOf: (ctx: Context) => string): Router {
  const router = new Router<RequestLogState>();
  for (const route of routes) {
    router.register(koaPath(route.path), [route.method], async (ctx) => {
      const log = ctx.state.log;
      const gone = new AbortController();
      const onClose = () => {
        if (!ctx.res.writableFinished) gone.abort(new Error('client closed the connection'));
      };
      ctx.res.once('close', onClose);
      try {
        ctx.set('Cache-Control', 'no-store');
        ctx.set('Referrer-Policy', 'no-referrer');
        const reply = await route.handler({
          params: { ...(ctx as unknown as { params: Record<string, string> }).params },
          method: ctx.method,
          header: (name) => ctx.get(name) || undefined,
          client: ctx.ip,
          baseUrl: baseOf(ctx),
          form: () => readForm(ctx),
          log,
          signal: gone.signal,
        });
        await send(ctx, reply, log);
      } catch (err) {
        const answer = errorAnswer(err, log);
        for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
        ctx.status = answer.status;
        ctx.type = 'text/plain; charset=utf-8';
        ctx.body = answer.aborted ? '' : `${answer.text}\n`;
      } finally {
        ctx.res.off('close', onClose);
      }
    });
  }
  return router;
}
