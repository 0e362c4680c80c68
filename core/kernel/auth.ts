// Bearer token -> Principal. Junk is refused before any database lookup: a token must carry one
// of our prefixes and a valid checksum, or be the bootstrap admin token (BOOTSTRAP_ADMIN_TOKEN's, or
// while it is unset the one it chose at first start, still active).
// Each surface has its own view (forAudiences): an OAuth access token is accepted only where the
// resource it was issued for (RFC 8707, its audience) is that surface.
import { timingSafeEqual, createHash } from 'node:crypto';
import type { IdentityService } from '../domain/identity/service.ts';
import type { Principal } from '../domain/identity/types.ts';
import { looksLikeOAuthToken, parseToken } from '../domain/identity/tokens.ts';
import { Unauthenticated } from '../contract/errors.ts';

/** Query parameters that would carry a token; a URL ends up in logs and histories. */
const TOKEN_PARAMS = ['access_token', 'token', 'api_key', 'apikey', 'bearer', 'auth'];

/** The query of a URL without a query string (nothing to parse). */
export const NO_QUERY: Pick<URLSearchParams, 'has'> = { has: () => false };

/** A request's query string as `authenticate` reads it. */
export const queryOf = (querystring: string): Pick<URLSearchParams, 'has'> =>
  querystring === '' ? NO_QUERY : new URLSearchParams(querystring);

export class Authenticator {
  readonly #identity: IdentityService;
  readonly #bootstrapDigest: Buffer | undefined;
  /** The OAuth audiences this view accepts, the first being its own resource; undefined: any. */
  readonly #audiences: (() => readonly string[]) | undefined;

  constructor(
    identity: IdentityService,
    bootstrapToken: string | null | { digest: Buffer | undefined },
    audiences?: () => readonly string[],
  ) {
    this.#identity = identity;
    this.#bootstrapDigest =
      typeof bootstrapToken === 'object' && bootstrapToken !== null
        ? bootstrapToken.digest
        : bootstrapToken
          ? sha(bootstrapToken)
          : undefined;
    this.#audiences = audiences;
  }

  /** The same authentication for one surface: OAuth access tokens must be for one of `audiences`. */
  forAudiences(audiences: () => readonly string[]): Authenticator {
    return new Authenticator(this.#identity, { digest: this.#bootstrapDigest }, audiences);
  }

  /** Throws Unauthenticated (401) unless the request carries a usable bearer token. */
  async authenticate(authorization: string | undefined, query: Pick<URLSearchParams, 'has'>): Promise<Principal> {
    const inQuery = TOKEN_PARAMS.find((p) => query.has(p));
    if (inQuery)
      throw new Unauthenticated(
        `a token in the URL ('${inQuery}=') is refused: URLs end up in logs. Send it as the header Authorization: Bearer <token>.`,
        'invalid_request',
      );
    if (!authorization) throw new Unauthenticated('no bearer token. Send the header Authorization: Bearer <token>.');
    const m = /^Bearer[ ]+([^\s]+)\s*$/i.exec(authorization);
    if (!m) throw new Unauthenticated('the Authorization header must be "Bearer <token>".', 'invalid_request');
    const raw = m[1]!;
    // A token authenticated lately is known without checking its format again or any I/O.
    let principal = this.#identity.cached(raw) ?? null;
    if (!principal) {
      if (!parseToken(raw) && !looksLikeOAuthToken(raw) && !this.#isBootstrap(raw))
        throw new Unauthenticated('this is not a Folio token (wrong prefix or checksum).', 'invalid_token');
      principal = await this.#identity.authenticate(raw);
    }
    if (!principal) throw await this.#refused(raw);
    if (principal.tokenKind === 'oauth' && this.#audiences) {
      const accepted = this.#audiences();
      if (!accepted.includes(principal.audience ?? ''))
        throw new Unauthenticated(
          `this OAuth access token was issued for ${principal.audience ?? 'another resource'}, not for ${accepted[0] ?? 'this one'}: ask the authorization server for a token with resource=${accepted[0] ?? ''}.`,
          'invalid_token',
        );
    }
    return principal;
  }

  async #refused(raw: string): Promise<Unauthenticated> {
    const why = await this.#identity.refusal(raw).catch(() => null);
    const text =
      why === 'expired'
        ? looksLikeOAuthToken(raw)
          ? 'this OAuth access token has expired: refresh it (grant_type=refresh_token) or sign in again.'
          : 'this token has expired: make a new one, or rotate it while it still works.'
        : why === 'revoked'
          ? 'this token was revoked.'
          : why === 'user disabled'
            ? 'the account of this token is deactivated.'
            : 'this token is unknown, expired or revoked, or its user is disabled.';
    return new Unauthenticated(text, 'invalid_token');
  }

  #isBootstrap(raw: string): boolean {
    if (!this.#bootstrapDigest) return false;
    return timingSafeEqual(sha(raw), this.#bootstrapDigest);
  }
}

function sha(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}
