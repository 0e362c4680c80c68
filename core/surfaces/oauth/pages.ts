// Folio's page of the authorization server: one form that says which client asks (its name and
// where it will send you back) for which scopes, takes your Folio API token to sign you in, and
// has Allow and Deny. The grant is at most what that token may do. The form is bound to the
// interaction (its uid in the path and the provider's SameSite cookie), so another site cannot
// post it; the page may not be framed.
import Router from '@koa/router';
import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import type { IdentityService } from '../../domain/identity/service.ts';
import type { ScopeRules } from '../../contract/domain.ts';
import { esc, page } from '../pages/html.ts';
import { INTERACTION_PREFIX, OAUTH_PREFIX } from './provider.ts';

const FORM_MAX_BYTES = 8 * 1024;
const OIDC_SCOPES = new Set(['openid', 'offline_access']);

export interface InteractionDeps {
  provider: () => Provider | null;
  identity: IdentityService;
  scopes: ScopeRules;
  /** The resource a request names none of. */
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

export function interactionRouter(deps: InteractionDeps): Router {
  const router = new Router({ prefix: OAUTH_PREFIX });

  const details = async (ctx: Context) => {
    const provider = deps.provider();
    if (!provider) throw new Error('the authorization server is not started');
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
<p><strong>${esc(client.clientName ?? client.clientId)}</strong> asks to act as you in Folio. After you decide, you go back to <strong>${esc(host)}</strong>.</p>
<p>It asks for:</p><ul>${items}</ul>
${problem ? `<p role="alert"><strong>${esc(problem)}</strong></p>` : ''}
<form method="post" action="${esc(`${INTERACTION_PREFIX}${d.uid}`)}">
<p><label>Email <input name="email" type="email" autocomplete="username" required></label></p>
<p><label>Password (your Folio API token) <input name="password" type="password" autocomplete="current-password" required></label></p>
<p>The client gets at most what this token may do, and you can revoke it at any time.</p>
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

  router.post('/interaction/:uid', async (ctx) => {
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
    const principal = await deps.identity.authenticate(form.get('password') ?? '');
    const email = (form.get('email') ?? '').trim().toLowerCase();
    if (!principal || principal.tokenKind === 'oauth' || principal.user.email !== email)
      return render(ctx, 401, 'That email and token do not match an active account.');
    const { oidc, folio } = requested(d.params);
    // At most what the signing-in token may do, for this user (roles included).
    const catalogue = deps.scopes.list().map((s) => s.scope);
    const wanted = folio.length ? folio.filter((s) => catalogue.includes(s)) : catalogue;
    const granted = wanted.filter((s) => deps.scopes.allows(principal.scopes, s, principal.user.roles));
    const resource = typeof d.params['resource'] === 'string' ? d.params['resource'] : deps.defaultResource();
    const grant = new provider.Grant({ accountId: principal.user.id, clientId: client.clientId });
    if (oidc.length || granted.length) grant.addOIDCScope([...oidc, ...granted].join(' '));
    if (granted.length) grant.addResourceScope(resource, granted.join(' '));
    // What was asked but is beyond the token: refused, so consent is not asked again for it.
    const refused = folio.filter((s) => !granted.includes(s));
    if (refused.length) {
      grant.rejectOIDCScope(refused.join(' '));
      grant.rejectResourceScope(resource, refused.join(' '));
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
