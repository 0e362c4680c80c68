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
/** The largest client registration (RFC 7591 metadata) accepted, in bytes. */
export const REGISTRATION_MAX_BYTES = 8 * 1024;

export interface MountOptions {
  /** Counts a registration from this client address; seconds to wait when over the limit, else 0. */
  registrationWait?: (clientAddress: string) => Promise<number>;
}

export function mountProvider(get: ProviderSource, opts: MountOptions = {}) {
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
    const bad = controlCharacterParam(ctx.querystring);
    if (bad !== null) {
      oauthError(ctx, 400, 'invalid_request', `${bad} must not contain control characters`);
      return;
    }
    if (ctx.method === 'POST' && isRegistration(path) && !(await registrationAllowed(ctx, opts))) return;
    await passTo(await provider, ctx, ctx.req.url!.slice(OAUTH_PREFIX.length) || '/');
  };
}

/** The provider's router matches paths ignoring case, repeated and trailing slashes: so must the throttle. */
function isRegistration(path: string): boolean {
  return path.slice(OAUTH_PREFIX.length).replace(/\/+/g, '/').replace(/\/$/, '').toLowerCase() === '/reg';
}

/**
 * Dynamic registration is open to anyone: throttled per client address (every attempt counts)
 * and capped in size, so a flood cannot fill the database. Answers false when it has refused.
 */
async function registrationAllowed(ctx: Context, opts: MountOptions): Promise<boolean> {
  const wait = opts.registrationWait ? await opts.registrationWait(ctx.ip) : 0;
  if (wait > 0) {
    oauthError(ctx, 429, 'temporarily_unavailable', `too many client registrations from this address; try again in ${wait} seconds.`, {
      'Retry-After': String(wait),
    });
    return false;
  }
  const length = ctx.request.length;
  if (length === undefined) {
    oauthError(ctx, 411, 'invalid_request', 'a client registration must give its Content-Length.');
    return false;
  }
  if (length > REGISTRATION_MAX_BYTES) {
    oauthError(ctx, 413, 'invalid_client_metadata', `client metadata may be at most ${REGISTRATION_MAX_BYTES} bytes; this is ${length}.`);
    return false;
  }
  return true;
}

// C0 controls (NUL among them: PostgreSQL cannot store it in the records the provider writes), DEL
// and C1 controls. No OAuth parameter (state, login_hint, ui_locales, ...) has a use for them.
// eslint-disable-next-line no-control-regex
const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f]/;

/** The name of the first query parameter whose name or value holds a control character, or null. */
function controlCharacterParam(querystring: string): string | null {
  if (!querystring) return null;
  for (const [name, value] of new URLSearchParams(querystring))
    if (CONTROL_RE.test(name) || CONTROL_RE.test(value)) return JSON.stringify(name);
  return null;
}

/** An answer in OAuth's error shape (RFC 6749 section 5.2), written by Folio rather than the provider. */
export function oauthError(ctx: Context, status: number, error: string, description: string, headers: Record<string, string> = {}): void {
  ctx.status = status;
  ctx.set({ 'Cache-Control': 'no-store', ...headers });
  ctx.body = { error, error_description: description };
}

/** Lets the provider answer `url` (a path under /oauth) for this request. */
export async function passTo(provider: Provider, ctx: Context, url: string): Promise<void> {
  const req = ctx.req as typeof ctx.req & { originalUrl?: string };
  req.originalUrl = `${OAUTH_PREFIX}${url}`;
  req.url = url;
  ctx.respond = false;
  await provider.callback()(req, ctx.res);
}
