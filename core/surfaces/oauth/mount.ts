// Where the OAuth authorization server (./provider.ts) meets Koa: its paths, and the handing of a
// request to it. The provider is made on first use, not at start: oidc-provider and jose are
// ~230 modules a server that never sees an OAuth client need not hold (every module held makes each
// garbage collection longer, see bench/README (f)).
import type { Context, Next } from 'koa';
import type Provider from 'oidc-provider';

export const OAUTH_PREFIX = '/oauth';
/** Where Folio's pages of the authorization server live (sign-in and consent). */
export const INTERACTION_PREFIX = `${OAUTH_PREFIX}/interaction/`;

/** The provider, made by the first call; null until the server knows its address (its issuer). */
export type ProviderSource = () => Promise<Provider> | null;

/**
 * Hands /oauth/... (but Folio's own pages) to the provider, with the prefix taken off the path as
 * a mount would. `provider` is null until the server knows its address.
 */
export function mountProvider(get: ProviderSource) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const path = ctx.path;
    if (!(path === OAUTH_PREFIX || path.startsWith(`${OAUTH_PREFIX}/`)) || path.startsWith(INTERACTION_PREFIX)) {
      await next();
      return;
    }
    const provider = get();
    if (!provider) {
      await next();
      return;
    }
    await passTo(await provider, ctx, ctx.req.url!.slice(OAUTH_PREFIX.length) || '/');
  };
}

/** Lets the provider answer `url` (a path under /oauth) for this request. */
export async function passTo(provider: Provider, ctx: Context, url: string): Promise<void> {
  const req = ctx.req as typeof ctx.req & { originalUrl?: string };
  req.originalUrl = `${OAUTH_PREFIX}${url}`;
  req.url = url;
  ctx.respond = false;
  await provider.callback()(req, ctx.res);
}
