// A browser and a native OAuth client, as far as Folio's authorization server needs them: cookies,
// manual redirects, the sign-in and consent form, PKCE, a loopback redirect URI.
import { createHash, randomBytes } from 'node:crypto';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

export const LOOPBACK_REDIRECT = 'http://127.0.0.1:53682/callback';

export class Browser {
  readonly base: string;
  cookies = new Map<string, string>();
  constructor(base: string) {
    this.base = base;
  }
  async go(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair = ''] = c.split(';');
      const i = pair.indexOf('=');
      this.cookies.set(pair.slice(0, i), pair.slice(i + 1));
    }
    return res;
  }
  /** Follows redirects on Folio; stops at the first one that leaves it (the client's redirect URI). */
  async follow(url: string, init: RequestInit = {}): Promise<{ res: Response; url: string }> {
    let res = await this.go(url, init);
    let at = url;
    while (res.status >= 300 && res.status < 400) {
      const next = new URL(res.headers.get('location')!, at).href;
      if (!next.startsWith(this.base)) return { res, url: next };
      at = next;
      res = await this.go(next);
    }
    return { res, url: at };
  }
  post(url: string, form: Record<string, string>): Promise<{ res: Response; url: string }> {
    return this.follow(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
  }
}

/** Registers a public native client (RFC 7591) with the loopback redirect URI. */
export async function registerClient(base: string, name = 'Native App', redirect = LOOPBACK_REDIRECT): Promise<string> {
  const res = await fetch(`${base}/oauth/reg`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: [redirect], token_endpoint_auth_method: 'none' }),
  });
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { client_id: string }).client_id;
}

export interface Tokens {
  access_token: string;
  refresh_token?: string;
  scope?: string;
  error?: string;
}

export interface Flow {
  /** The sign-in page as first shown. */
  page: { status: number; html: string };
  /** What posting the form answered when it stayed on Folio (a refusal), else null. */
  refused: { status: number; html: string; retryAfter: string | null } | null;
  /** Where the browser was sent back to (the redirect URI with code or error), else null. */
  landed: string | null;
  /** The token endpoint's answer to the code, when there was one. */
  tokens: Tokens | null;
}

/**
 * The authorization code flow with PKCE, as a native client does it, signing in with `form`
 * (email, password). `resource` none: Folio as a whole.
 */
export async function authorize(
  base: string,
  clientId: string,
  form: { email: string; password: string },
  opts: { resource?: string; redirect?: string; scope?: string } = {},
): Promise<Flow> {
  const verifier = randomBytes(32).toString('base64url');
  const redirect = opts.redirect ?? LOOPBACK_REDIRECT;
  const u = new URL(`${base}/oauth/auth`);
  const params: Record<string, string> = {
    client_id: clientId,
    redirect_uri: redirect,
    response_type: 'code',
    scope: opts.scope ?? 'notes:read notes:write offline_access',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: 'st',
  };
  if (opts.resource) params['resource'] = opts.resource;
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  const browser = new Browser(base);
  const first = await browser.follow(u.href);
  const page = { status: first.res.status, html: await first.res.text() };
  if (page.status !== 200) return { page, refused: null, landed: first.url.startsWith(base) ? null : first.url, tokens: null };
  const posted = await browser.post(first.url, { ...form, decision: 'allow' });
  if (posted.url.startsWith(base)) {
    return {
      page,
      refused: { status: posted.res.status, html: await posted.res.text(), retryAfter: posted.res.headers.get('retry-after') },
      landed: null,
      tokens: null,
    };
  }
  const code = new URL(posted.url).searchParams.get('code');
  if (!code) return { page, refused: null, landed: posted.url, tokens: null };
  const res = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: redirect,
      client_id: clientId,
    }).toString(),
  });
  return { page, refused: null, landed: posted.url, tokens: (await res.json()) as Tokens };
}

/** The status /mcp answers an initialize with, as `token`. */
export async function mcpStatus(base: string, token: string): Promise<number> {
  const res = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
    }),
  });
  await res.body?.cancel();
  return res.status;
}

/** The MCP SDK's OAuth client state, kept in memory: a public client with a loopback redirect URI. */
export class MemoryProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  readonly #name: string;
  readonly #redirect: string;
  constructor(name: string, redirect = LOOPBACK_REDIRECT) {
    this.#name = name;
    this.#redirect = redirect;
  }
  get redirectUrl() {
    return this.#redirect;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.#name,
      redirect_uris: [this.#redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}
