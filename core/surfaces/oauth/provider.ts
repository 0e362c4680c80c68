// The OAuth 2.1 authorization server at /oauth, so MCP clients (and any OAuth client) can connect
// without a hand-pasted token: oidc-provider (a certified implementation) does the protocol;
// Folio gives it storage (core/domain/identity/oauth-store.ts), accounts, the resources it protects
// (/mcp, /api/v1, /curl) with the scope catalogue, and the sign-in and consent page (./pages.ts).
//
// Profile: authorization code with PKCE S256 only (no implicit, no password grant), dynamic client
// registration (RFC 7591) for public clients, client ID metadata documents (an https URL as the
// client_id, fetched with the limits of ./metadata-fetch.ts), registered as native by default (loopback redirect
// URIs on any port, RFC 8252), refresh tokens rotated on every use (a reused one revokes the
// grant), revocation (RFC 7009), resource indicators (RFC 8707). Opaque access tokens, stored
// hashed, checked by the same authentication and policy as API tokens.
//
// This module loads oidc-provider (and jose): the server imports it when the authorization server
// is first needed (./mount.ts), not at start.
import Provider, { errors, type Configuration } from 'oidc-provider';
import type { Logger } from 'pino';
import type { IdentityService } from '../../domain/identity/service.ts';
import type { ScopeRules } from '../../contract/domain.ts';
import { metadataFetch } from './metadata-fetch.ts';
import { ProxyTrust, trustProxies } from '../http/client-address.ts';

import { INTERACTION_PREFIX } from './mount.ts';

const ACCESS_TOKEN_TTL = 3600;
const DAY = 86_400;

export interface OAuthServerDeps {
  identity: IdentityService;
  scopes: ScopeRules;
  log: Logger;
  /** The proxies whose forwarding headers are believed (the client's address in ctx.ip). */
  proxies: ProxyTrust;
  /** Where Folio is reached, when configured: the endpoints the provider announces are under it. */
  publicUrl: string | null;
  /**
   * Whether Folio itself serves every loopback name of its address (it listens on both 127.0.0.1
   * and [::1] at its port, or the machine has no IPv6): only then are they aliases of it.
   */
  loopbackAliases: boolean;
  /** Client ID metadata documents: on or off, from private addresses too, extra CAs (PEM). */
  clientMetadata: { enabled: boolean; allowPrivate: boolean; ca?: string | undefined };
}

/** How long a fetched client metadata document is kept, in seconds (its Cache-Control within these). */
const CLIENT_METADATA_CACHE = { min: 300, max: DAY };

/**
 * The resources Folio protects, as resource indicators: each surface, and Folio as a whole (the
 * base URL, what a client gets when it names no resource: a token for every surface).
 */
export function resourcesOf(base: string): string[] {
  return [`${base}/mcp`, `${base}/api/v1`, `${base}/curl`, base];
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * `resource` in the words of `base` when it names Folio by a loopback alias of base's host
 * (`http://localhost:3000/mcp` for base `http://127.0.0.1:3000`): with no public URL configured,
 * the protected-resource metadata names the origin the client used (the MCP SDK refuses metadata
 * for another origin), so a client that typed `localhost` asks for a token for `localhost`. Only
 * loopback names, same scheme and port, and only when `base` itself is a loopback address; a
 * configured public URL is never widened (the caller does not ask then).
 */
export function canonicalResource(resource: string, base: string): string {
  let asked: URL, own: URL;
  try {
    asked = new URL(resource);
    own = new URL(base);
  } catch {
    return resource;
  }
  if (asked.origin === own.origin || !LOOPBACK_HOSTS.has(own.hostname) || !LOOPBACK_HOSTS.has(asked.hostname)) return resource;
  if (asked.protocol !== own.protocol || asked.port !== own.port || asked.username || asked.password) return resource;
  return `${own.origin}${asked.pathname}${asked.search}`;
}

export async function createProvider(issuer: string, base: string, deps: OAuthServerDeps): Promise<Provider> {
  const { identity, scopes } = deps;
  const keys = await identity.oauth.keys();
  const resources = new Set(resourcesOf(base));
  // Without a public URL, Folio is also reached at its address's loopback aliases (see above), when
  // no other local process can answer at one of them (it could then get tokens for Folio).
  const canonical =
    deps.publicUrl || !deps.loopbackAliases ? (resource: string) => resource : (resource: string) => canonicalResource(resource, base);
  const scopeNames = scopes.list().map((s) => s.scope);
  const configuration: Configuration = {
    adapter: (name: string) => refusingNul(identity.oauth.adapter(name)),
    clients: [],
    jwks: keys.jwks,
    cookies: { keys: keys.cookieKeys, long: { httpOnly: true, sameSite: 'lax' }, short: { httpOnly: true, sameSite: 'lax' } },
    findAccount: async (_ctx, sub) => {
      const user = await identity.getUser(sub);
      if (!user || user.disabled) return undefined;
      return { accountId: user.id, claims: () => ({ sub: user.id, email: user.email, name: user.name ?? undefined }) };
    },
    // Listed here too, so a client may register with them (the MCP SDK does): a grant holds them
    // both as the resources' scopes (what the access token carries) and as its own.
    scopes: ['openid', 'offline_access', ...scopeNames],
    claims: { openid: ['sub'], email: ['email'], profile: ['name'] },
    clientDefaults: {
      application_type: 'native',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'ES256',
    },
    enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
    pkce: { required: () => true },
    responseTypes: ['code'],
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true, initialAccessToken: false },
      // A client_id that is the https URL of the client's metadata (the MCP authorization spec's
      // preferred way for clients and servers that have no prior relationship).
      clientIdMetadataDocument: {
        enabled: deps.clientMetadata.enabled,
        ack: 'draft-02',
        cacheDuration: CLIENT_METADATA_CACHE,
      },
      registrationManagement: { enabled: true, rotateRegistrationAccessToken: true },
      // A client revokes only its own tokens.
      revocation: { enabled: true, allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId },
      userinfo: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, _client, oneOf) => oneOf ?? base,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => {
          // The base with a trailing slash is the base; a loopback alias is the address it names.
          const named = canonical(resource);
          const audience = named === `${base}/` ? base : named;
          if (!resources.has(audience)) throw new errors.InvalidTarget(`Folio protects ${[...resources].join(', ')}`);
          return { scope: scopeNames.join(' '), audience, accessTokenFormat: 'opaque', accessTokenTTL: ACCESS_TOKEN_TTL };
        },
      },
    },
    // Every client may have refresh tokens (public clients are rotated on each use).
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL,
      AuthorizationCode: 60,
      RefreshToken: 30 * DAY,
      Grant: 365 * DAY,
      Session: 14 * DAY,
      Interaction: 3600,
      IdToken: 3600,
    },
    fetch: metadataFetch({
      allowPrivate: deps.clientMetadata.allowPrivate,
      ca: deps.clientMetadata.ca,
    }) as unknown as Configuration['fetch'],
    interactions: { url: (_ctx, interaction) => `${INTERACTION_PREFIX}${interaction.uid}` },
    renderError: (ctx, out) => {
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = `${ctx.status} ${out.error}: ${out.error_description ?? ''}\n`;
    },
  };
  const provider = new Provider(issuer, configuration);
  // Behind a TLS proxy (a public URL is set) the endpoints it announces must be the public URL's
  // (https) whatever a request's headers say; the client's address is Folio's reading of it.
  trustProxies(provider, deps.proxies, deps.publicUrl ? new URL(deps.publicUrl) : undefined);
  provider.on('server_error', (_ctx, err) => deps.log.error({ err }, 'oauth server error'));
  return provider;
}

/**
 * PostgreSQL cannot store NUL in the jsonb records the provider writes: a client's metadata or a
 * request parameter holding one (`{"client_name":"a\u0000b"}` at /oauth/reg, a form field at
 * /oauth/auth) is the client's mistake, a 400, never a database error and a 500.
 */
function refusingNul<A extends { upsert(id: string, payload: Record<string, unknown>, expiresIn?: number): Promise<void> }>(adapter: A): A {
  return {
    ...adapter,
    upsert: async (id: string, payload: Record<string, unknown>, expiresIn?: number) => {
      if (JSON.stringify(payload).includes('\\u0000')) throw new errors.InvalidRequest('parameters must not contain NUL characters');
      await adapter.upsert(id, payload, expiresIn);
    },
  };
}
