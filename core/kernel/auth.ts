// Bearer token -> Principal. Junk is refused before any database lookup: a token must carry one
// of our prefixes and a valid checksum, or be the configured bootstrap admin token.
import { timingSafeEqual, createHash } from 'node:crypto';
import type { IdentityService } from '../domain/identity/service.ts';
import type { Principal } from '../domain/identity/types.ts';
import { looksLikeOAuthToken, parseToken } from '../domain/identity/tokens.ts';
import { Unauthenticated } from '../contract/errors.ts';

/** Query parameters that would carry a token; a URL ends up in logs and histories. */
const TOKEN_PARAMS = ['access_token', 'token', 'api_key', 'apikey', 'bearer', 'auth'];

export class Authenticator {
  readonly #identity: IdentityService;
  readonly #bootstrapDigest: Buffer | undefined;

  constructor(identity: IdentityService, bootstrapToken: string | null) {
    this.#identity = identity;
    this.#bootstrapDigest = bootstrapToken ? sha(bootstrapToken) : undefined;
  }

  /** Throws Unauthenticated (401) unless the request carries a usable bearer token. */
  async authenticate(authorization: string | undefined, query: URLSearchParams): Promise<Principal> {
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
    if (!parseToken(raw) && !looksLikeOAuthToken(raw) && !this.#isBootstrap(raw))
      throw new Unauthenticated('this is not a Folio token (wrong prefix or checksum).', 'invalid_token');
    const principal = await this.#identity.authenticate(raw);
    if (!principal) throw new Unauthenticated('this token is unknown, expired or revoked, or its user is disabled.', 'invalid_token');
    return principal;
  }

  #isBootstrap(raw: string): boolean {
    if (!this.#bootstrapDigest) return false;
    return timingSafeEqual(sha(raw), this.#bootstrapDigest);
  }
}

function sha(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}
