// Folio's page of the authorization server: one form that says which client asks (its name and
// where it will send you back) for which scopes, takes your email and password to sign you in
// (or one of your API tokens in place of the password), and has Allow and Deny. The grant is at
// most what your roles allow (with a token: what that token may do). Wrong sign-ins are throttled
// per account and per client (429 with Retry-After). The form is bound to the
// interaction (its uid in the path and the provider's SameSite cookie), and a post another site's
// page makes (its Origin or Sec-Fetch-Site says so) is refused before anything is read, so another
// site cannot post it; the page may not be framed.
import Router from '@koa/router';
import type { Context } from 'koa';
import type { IdentityService } from '../../domain/identity/service.ts';
import type { ScopeRules } from '../../contract/domain.ts';
import { esc, page } from '../pages/html.ts';
import { TooManyRequests } from '../../contract/errors.ts';
import { INTERACTION_PREFIX, OAUTH_PREFIX, type ProviderSource } from './mount.ts';
import { requestOrigin } from '../http/origin.ts';

const FORM_MAX_BYTES = 8 * 1024;
const OIDC_SCOPES = new Set(['openid', 'offline_access']);

export interface InteractionDeps {
  provider: ProviderSource;
  identity: IdentityService;
  scopes: ScopeRules;
  /** The resource when a request names none: Folio as a whole. */
  defaultResource: () => string;
}

function secure(ctx: Context): void {
  ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'");
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-store');
}

async function readForm(ctx: Context): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > FORM_MAX_BYTES) throw new Error('form too large');
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function requested(params: Record<string, unknown>): { oidc: string[]; folio: string[] } {
  const scope = params['scope'];
  const all = (typeof scope === 'string' ? scope : '').split(' ').filter(Boolean);
  return { oidc: all.filter((s) => OIDC_SCOPES.has(s)), folio: all.filter((s) => !OIDC_SCOPES.has(s)) };
}

/** The resources (RFC 8707) the request names, one or several; the default when none. */
function resourcesAsked(params: Record<string, unknown>, fallback: string): string[] {
  const r = params['resource'];
  const list = (Array.isArray(r) ? r : [r]).filter((x): x is string => typeof x === 'string' && x.length > 0);
  return list.length ? list : [fallback];
}

/** For a client known by its metadata URL: who publishes that document (its host). */
function publisher(clientId: string): string {
  if (!clientId.startsWith('https://')) return '';
  try {
    return ` (published by <strong>${esc(new URL(clientId).host)}</strong>)`;
  } catch {
    return '';
  }
}

export function interactionRouter(deps: InteractionDeps): Router {
  const router = new Router({ prefix: OAUTH_PREFIX });

  const details = async (ctx: Context) => {
    const made = deps.provider();
    if (!made) throw new Error('the authorization server is not started');
    const provider = await made;
    const d = await provider.interactionDetails(ctx.req, ctx.res);
    if (d.uid !== (ctx.params as { uid: string }).uid) throw new Error('interaction mismatch');
    const client = await provider.Client.find(String(d.params['client_id']));
    if (!client) throw new Error('unknown client');
    return { provider, d, client };
  };

  const render = async (ctx: Context, status: number, problem?: string) => {
    const { d, client } = await details(ctx);
    const redirect = typeof d.params['redirect_uri'] === 'string' ? d.params['redirect_uri'] : '';
    let host = redirect;
    try {
      host = new URL(redirect).host || redirect;
    } catch {
      // shown as given
    }
    const { folio } = requested(d.params);
    const catalogue = new Map(deps.scopes.list().map((s) => [s.scope, s.description]));
    const items = (folio.length ? folio : ['(none named: everything your token may do)'])
      .map((s) => `<li><code>${esc(s)}</code> ${esc(catalogue.get(s) ?? '')}</li>`)
      .join('');
    secure(ctx);
    ctx.status = status;
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = page(
      'Connect to Folio',
      `<h1>Connect ${esc(client.clientName ?? client.clientId)} to Folio</h1>
<p><strong>${esc(client.clientName ?? client.clientId)}</strong>${publisher(client.clientId)} asks to act as you in Folio. After you decide, you go back to <strong>${esc(host)}</strong>.</p>
<p>It asks for, on ${resourcesAsked(d.params, deps.defaultResource())
        .map((r) => `<code>${esc(r)}</code>`)
        .join(', ')}:</p><ul>${items}</ul>
${problem ? `<p role="alert"><strong>${esc(problem)}</strong></p>` : ''}
<form method="post" action="${esc(`${INTERACTION_PREFIX}${d.uid}`)}">
<p><label>Email <input name="email" type="email" autocomplete="username" required></label></p>
<p><label>Password <input name="password" type="password" autocomplete="current-password" required></label></p>
<p>The client gets at most what your account may do (signing in with one of your API tokens as the password: at most what that token may do). You can revoke it at any time.</p>
<p><button type="submit" name="decision" value="allow">Allow</button> <button type="submit" name="decision" value="deny" formnovalidate>Deny</button></p>
</form>`,
    );
  };

  const refuse = (ctx: Context, err: unknown) => {
    secure(ctx);
    ctx.status = 400;
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = `400 Bad Request: this sign-in link is no longer valid (${err instanceof Error ? err.message : 'unknown'}). Start again from your client.\n`;
  };

  router.get('/interaction/:uid', async (ctx) => {
    try {
      await render(ctx, 200);
    } catch (err) {
      refuse(ctx, err);
    }
  });

  /**
   * A browser says where a form post comes from; only Folio's own page may send this one. Browsers
   * that send Sec-Fetch-Site are believed on it (this page's no-referrer policy makes their Origin
   * "null"); older ones are judged by Origin when it names one.
   */
  const crossSite = (ctx: Context): boolean => {
    const site = ctx.get('sec-fetch-site');
    if (site) return site !== 'same-origin' && site !== 'none';
    const origin = ctx.get('origin');
    if (!origin || origin === 'null') return false;
    // Folio's public origin, or the one this request was addressed to (ctx.origin is not that: it
    // echoes the Origin header).
    const here = requestOrigin(ctx);
    let own = here;
    try {
      own = new URL(deps.defaultResource()).origin;
    } catch {
      // no public URL configured: the request's own origin
    }
    return origin !== own && origin !== here;
  };

  router.post('/interaction/:uid', async (ctx) => {
    if (crossSite(ctx)) {
      secure(ctx);
      ctx.status = 403;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = "403 Forbidden: this form can only be sent from Folio's own sign-in page. Start again from your client.\n";
      return;
    }
    let form: URLSearchParams;
    let found: Awaited<ReturnType<typeof details>>;
    try {
      found = await details(ctx);
      form = await readForm(ctx);
    } catch (err) {
      return refuse(ctx, err);
    }
    const { provider, d, client } = found;
    if (form.get('decision') !== 'allow') {
      ctx.respond = false;
      return provider.interactionFinished(
        ctx.req,
        ctx.res,
        { error: 'access_denied', error_description: 'the user denied the request' },
        { mergeWithLastSubmission: false },
      );
    }
    let principal;
    try {
      principal = await deps.identity.passwords.signIn(form.get('email') ?? '', form.get('password') ?? '', ctx.ip);
    } catch (err) {
      if (!(err instanceof TooManyRequests)) throw err;
      ctx.set('Retry-After', String(err.retryAfter));
      return render(ctx, 429, `Too many failed sign-ins. Try again in ${err.retryAfter} seconds.`);
    }
    if (!principal) return render(ctx, 401, 'That email and password do not match an active account.');
    const { oidc, folio } = requested(d.params);
    // At most what the user's roles allow (signed in with a token: what it may do).
    const catalogue = deps.scopes.list().map((s) => s.scope);
    const wanted = folio.length ? folio.filter((s) => catalogue.includes(s)) : catalogue;
    const granted = wanted.filter((s) => deps.scopes.allows(principal.scopes, s, principal.user.roles));
    const grant = new provider.Grant({ accountId: principal.user.id, clientId: client.clientId });
    if (oidc.length || granted.length) grant.addOIDCScope([...oidc, ...granted].join(' '));
    // What was asked but is beyond the account or token: refused, so consent is not asked again for it.
    const refused = folio.filter((s) => !granted.includes(s));
    if (refused.length) grant.rejectOIDCScope(refused.join(' '));
    for (const resource of resourcesAsked(d.params, deps.defaultResource())) {
      if (granted.length) grant.addResourceScope(resource, granted.join(' '));
      if (refused.length) grant.rejectResourceScope(resource, refused.join(' '));
    }
    const grantId = await grant.save();
    ctx.respond = false;
    await provider.interactionFinished(
      ctx.req,
      ctx.res,
      { login: { accountId: principal.user.id }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
  });

  return router;
}
