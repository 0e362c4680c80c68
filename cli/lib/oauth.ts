// `folio auth login --web`: OAuth 2.1 for a native app (RFC 8252) against Folio's own authorization
// server. Discovery (RFC 8414), dynamic registration of a public client (RFC 7591) remembered per
// profile, the authorization code flow with PKCE S256 and a state, received on a loopback redirect
// (127.0.0.1, a free port: Folio accepts any port for loopback URIs), then the tokens are stored
// like an API token is, with the refresh token to renew the access token when it runs out.
import { createHash, randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CliError, EXIT } from './errors.ts';

export interface OAuthCredential {
  kind: 'oauth';
  access_token: string;
  refresh_token: string | undefined;
  /** ms since the epoch; undefined when the server gave no lifetime. */
  expires_at: number | undefined;
  client_id: string;
  token_endpoint: string;
}

interface Metadata {
  authorization_endpoint: string;
  token_endpoint: string;
  registration_endpoint?: string;
  scopes_supported?: string[];
}

interface TokenAnswer {
  access_token?: string;
  refresh_token?: string;
  expires_in?: number;
  error?: string;
  error_description?: string;
}

async function json<T>(res: Response, what: string): Promise<T> {
  const text = await res.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new CliError(`${what} answered ${res.status} with no JSON: ${text.slice(0, 120)}`, EXIT.server);
  }
}

async function discover(url: string): Promise<Metadata> {
  const res = await fetch(`${url}/.well-known/oauth-authorization-server`).catch((err: Error) => {
    throw new CliError(`cannot reach ${url}: ${err.message}`, EXIT.unreachable);
  });
  if (!res.ok) throw new CliError(`${url} offers no OAuth sign-in (${res.status}): log in with an API token instead`, EXIT.failed);
  return json<Metadata>(res, 'the authorization server metadata');
}

async function register(meta: Metadata, redirectUri: string): Promise<string> {
  if (!meta.registration_endpoint) throw new CliError('the server does not let clients register: log in with an API token', EXIT.failed);
  const res = await fetch(meta.registration_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'folio command line',
      application_type: 'native',
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    }),
  });
  const body = await json<{ client_id?: string; error_description?: string }>(res, 'client registration');
  if (res.status !== 201 || !body.client_id)
    throw new CliError(`client registration refused (${res.status}): ${body.error_description ?? 'no reason given'}`, EXIT.failed);
  return body.client_id;
}

function credentialFrom(answer: TokenAnswer, clientId: string, tokenEndpoint: string, previousRefresh?: string): OAuthCredential {
  if (!answer.access_token)
    throw new CliError(`the server gave no token: ${answer.error_description ?? answer.error ?? 'no reason'}`, EXIT.auth);
  return {
    kind: 'oauth',
    access_token: answer.access_token,
    refresh_token: answer.refresh_token ?? previousRefresh,
    expires_at: typeof answer.expires_in === 'number' ? Date.now() + answer.expires_in * 1000 : undefined,
    client_id: clientId,
    token_endpoint: tokenEndpoint,
  };
}

/** Opens `url` in the desktop's browser; false when there is none to open. */
function openBrowser(url: string): boolean {
  const cmd = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  try {
    const child = spawn(cmd, [url], { stdio: 'ignore', detached: true });
    child.on('error', () => undefined);
    child.unref();
    return true;
  } catch {
    return false;
  }
}

const PAGE = (text: string) =>
  `<!doctype html><meta charset="utf-8"><title>folio</title><body style="font-family:system-ui;margin:3em"><p>${text}</p></body>`;

/**
 * The whole browser sign-in. `announce` is told the URL to open (printed on stderr by the command,
 * so it works over SSH too). Resolves with the credential to store.
 */
export async function browserLogin(opts: {
  url: string;
  clientId: string | undefined;
  scopes: string[] | undefined;
  openBrowser: boolean;
  timeoutMs: number;
  announce: (authorizeUrl: string) => void;
}): Promise<OAuthCredential> {
  const meta = await discover(opts.url);
  const state = randomBytes(16).toString('base64url');
  const verifier = randomBytes(32).toString('base64url');

  let answer!: (r: { code?: string; error?: string }) => void;
  const arrived = new Promise<{ code?: string; error?: string }>((resolve) => (answer = resolve));
  const server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (u.pathname !== '/callback' || u.searchParams.get('state') !== state) {
      res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE('Not the sign-in this folio is waiting for.'));
      return;
    }
    const error = u.searchParams.get('error');
    const code = u.searchParams.get('code');
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(
        PAGE(code ? 'Signed in. You can close this tab and go back to the terminal.' : `Sign-in did not finish: ${error ?? 'no code'}.`),
      );
    answer(code ? { code } : { error: u.searchParams.get('error_description') ?? error ?? 'no code' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  try {
    const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
    const clientId = opts.clientId ?? (await register(meta, redirectUri));
    const scopes = opts.scopes ?? (meta.scopes_supported ?? []).filter((s) => s !== 'openid');
    const auth = new URL(meta.authorization_endpoint);
    for (const [k, v] of Object.entries({
      client_id: clientId,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: [...new Set([...scopes, 'offline_access'])].join(' '),
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      state,
    }))
      auth.searchParams.set(k, v);
    opts.announce(auth.href);
    if (opts.openBrowser) openBrowser(auth.href);

    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(new CliError(`no answer from the browser within ${Math.round(opts.timeoutMs / 1000)} s; nothing was saved`, EXIT.auth)),
        opts.timeoutMs,
      );
    });
    const got = await Promise.race([arrived, timeout]).finally(() => clearTimeout(timer));
    if (!got.code) throw new CliError(`sign-in refused: ${got.error}; nothing was saved`, EXIT.auth);

    const res = await fetch(meta.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: got.code,
        code_verifier: verifier,
        redirect_uri: redirectUri,
        client_id: clientId,
      }),
    });
    return credentialFrom(await json<TokenAnswer>(res, 'the token endpoint'), clientId, meta.token_endpoint);
  } finally {
    server.close();
    server.closeAllConnections();
  }
}

/** A new access token from the refresh token (rotated: the answer carries the next one). */
export async function refresh(c: OAuthCredential): Promise<OAuthCredential> {
  if (!c.refresh_token) throw new CliError('the sign-in has expired and cannot be renewed: run folio auth login --web again', EXIT.auth);
  const res = await fetch(c.token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: c.refresh_token, client_id: c.client_id }),
  }).catch((err: Error) => {
    throw new CliError(`cannot reach ${new URL(c.token_endpoint).origin} to renew the sign-in: ${err.message}`, EXIT.unreachable);
  });
  const answer = await json<TokenAnswer>(res, 'the token endpoint');
  if (!res.ok)
    throw new CliError(`the sign-in could not be renewed (${answer.error ?? res.status}): run folio auth login --web again`, EXIT.auth);
  return credentialFrom(answer, c.client_id, c.token_endpoint, c.refresh_token);
}

/** Due for renewal: expired, or expiring within a minute. */
export function stale(c: OAuthCredential, now = Date.now()): boolean {
  return c.expires_at !== undefined && c.expires_at - now < 60_000;
}
