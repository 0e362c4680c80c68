// Transport security of /mcp: DNS-rebinding checks (Host, Origin), CORS for allowed browser
// origins, and the RFC 9728 protected-resource metadata that 401s point at.

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

export interface OriginPolicy {
  /** Host header values besides loopback: `host` (any port) or `host:port` (that port only). */
  allowedHosts: string[];
  /** Exact origins (scheme://host[:port]) besides Folio's own. */
  allowedOrigins: string[];
  /** Folio's public URL, when configured: its host and origin are allowed too. */
  publicUrl: string | null;
}

function hostParts(host: string): { hostname: string; host: string } | undefined {
  try {
    const u = new URL(`http://${host}`);
    if (u.username || u.password || u.pathname !== '/' || u.search || u.hash) return undefined;
    return { hostname: u.hostname.toLowerCase(), host: u.host.toLowerCase() };
  } catch {
    return undefined;
  }
}

// Verdicts per Host header value: a server sees few distinct ones, and parsing a URL per request
// shows in profiles. Bounded, so a stream of junk Host headers cannot grow it.
const verdicts = new WeakMap<OriginPolicy, Map<string, boolean>>();
const MAX_REMEMBERED = 256;

/** Is this Host header one Folio answers to? Loopback with any port, plus the configured hosts. */
export function hostAllowed(hostHeader: string | undefined, policy: OriginPolicy): boolean {
  if (!hostHeader) return false;
  let known = verdicts.get(policy);
  if (!known) verdicts.set(policy, (known = new Map<string, boolean>()));
  let verdict = known.get(hostHeader);
  if (verdict === undefined) {
    verdict = checkHost(hostHeader, policy);
    if (known.size >= MAX_REMEMBERED) known.clear();
    known.set(hostHeader, verdict);
  }
  return verdict;
}

function checkHost(hostHeader: string, policy: OriginPolicy): boolean {
  const h = hostParts(hostHeader);
  if (!h) return false;
  if (LOOPBACK.has(h.hostname)) return true;
  const allowed = [...policy.allowedHosts];
  if (policy.publicUrl) allowed.push(new URL(policy.publicUrl).hostname);
  return allowed.some((a) => {
    const want = a.toLowerCase();
    return want === h.hostname || want === h.host;
  });
}

/**
 * An Origin header, when present, must be Folio's own (same host as the validated Host header,
 * or the public URL's) or a configured one. Absent is fine: MCP clients are not browsers.
 */
export function originAllowed(origin: string | undefined, hostHeader: string | undefined, policy: OriginPolicy): boolean {
  if (origin === undefined) return true;
  let o: URL;
  try {
    o = new URL(origin);
  } catch {
    return false;
  }
  if (o.protocol !== 'http:' && o.protocol !== 'https:') return false;
  const normalized = o.origin.toLowerCase();
  if (policy.allowedOrigins.some((a) => a.toLowerCase().replace(/\/$/, '') === normalized)) return true;
  if (policy.publicUrl && new URL(policy.publicUrl).origin.toLowerCase() === normalized) return true;
  const h = hostHeader ? hostParts(hostHeader) : undefined;
  return h !== undefined && h.host === o.host.toLowerCase();
}

/** CORS answer headers for an allowed cross-origin browser caller. */
export function corsHeaders(origin: string): Record<string, string> {
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Expose-Headers': 'Mcp-Session-Id, WWW-Authenticate, X-Request-Id',
    Vary: 'Origin',
  };
}

export function preflightHeaders(origin: string): Record<string, string> {
  return {
    ...corsHeaders(origin),
    'Access-Control-Allow-Methods': 'GET, POST, DELETE, OPTIONS',
    'Access-Control-Allow-Headers': 'Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID',
    'Access-Control-Max-Age': '600',
  };
}

export const METADATA_PATH = '/.well-known/oauth-protected-resource';

export function resourceMetadataUrl(base: string): string {
  return `${base}${METADATA_PATH}`;
}

/** `WWW-Authenticate` of a 401 from /mcp: where the client learns how to get a token. */
export function wwwAuthenticate(base: string, bearerError: string | undefined): string {
  return `Bearer resource_metadata="${resourceMetadataUrl(base)}"${bearerError ? `, error="${bearerError}"` : ''}`;
}

/** The resources Folio's tokens may be issued for (RFC 8707), each with its RFC 9728 metadata. */
export const RESOURCE_PATHS = ['/mcp', '/api/v1', '/curl'] as const;

/** RFC 9728 metadata of one of Folio's resources (/mcp by default): Folio's own authorization server issues tokens for it. */
export function protectedResourceMetadata(
  base: string,
  version: string,
  oauth: { issuer: string; scopes: string[] } | null,
  resourcePath: (typeof RESOURCE_PATHS)[number] = '/mcp',
): Record<string, unknown> {
  return {
    resource: `${base}${resourcePath}`,
    resource_name: `Folio ${version}`,
    authorization_servers: oauth ? [oauth.issuer] : [],
    ...(oauth ? { scopes_supported: oauth.scopes } : {}),
    bearer_methods_supported: ['header'],
  };
}
