// The connection to one Folio: which server and token a command uses (flags, then FOLIO_URL /
// FOLIO_TOKEN, then the logged-in profile), the typed client generated from the REST API's OpenAPI
// document, and the translation of every failure into one line and an exit code.
import createClient from 'openapi-fetch';
import type { paths } from '../generated/openapi.d.ts';
import { DEFAULT_URL, loadConfig, normalizeUrl } from './config.ts';
import { defaultStore, type CredentialStore } from './credentials.ts';
import { refresh, stale } from './oauth.ts';
import { CliError, EXIT, exitForStatus, problemLine, type Problem } from './errors.ts';

export const API_PREFIX = '/api/v1';

export interface Target {
  url: string;
  token: string | undefined;
  /** The profile the token came from, or undefined when FOLIO_TOKEN gave it. */
  profile: string | undefined;
  tokenFrom: 'FOLIO_TOKEN' | 'profile' | 'none';
  /** The profile asked for (--profile, FOLIO_PROFILE, else the server's or the default one). */
  named?: string;
}

export interface GlobalOptions {
  profile?: string;
}

let store: CredentialStore | undefined;
/** Where this process keeps tokens (the keyring is probed once). */
export function credentials(): CredentialStore {
  return (store ??= defaultStore());
}

/** The profile a command acts on: --profile, FOLIO_PROFILE, the current one, or "default". */
export function profileName(opts: GlobalOptions): string {
  return opts.profile ?? process.env['FOLIO_PROFILE'] ?? loadConfig().current ?? 'default';
}

export function resolveTarget(opts: GlobalOptions): Target {
  const config = loadConfig();
  const envUrl = process.env['FOLIO_URL'] ? normalizeUrl(process.env['FOLIO_URL']) : undefined;
  const envToken = process.env['FOLIO_TOKEN'] || undefined;
  let name = profileName(opts);
  // FOLIO_URL alone picks the profile logged in to that server, when there is one.
  if (envUrl && !opts.profile && config.profiles[name]?.url !== envUrl) {
    name = Object.entries(config.profiles).find(([, p]) => p.url === envUrl)?.[0] ?? name;
  }
  const profile = config.profiles[name];
  const url = envUrl ?? profile?.url ?? DEFAULT_URL;
  if (envToken) return { url, token: envToken, profile: undefined, tokenFrom: 'FOLIO_TOKEN' };
  const stored = profile && (!envUrl || profile.url === envUrl) ? credentials().get(name) : undefined;
  return { url, token: stored, profile: stored ? name : undefined, tokenFrom: stored ? 'profile' : 'none', named: name };
}

/**
 * Before a command runs: a browser sign-in whose access token has run out (or will within a minute)
 * is renewed with its refresh token, and the new pair stored, so commands never see it expire.
 */
export async function renewSignIn(opts: GlobalOptions): Promise<void> {
  const t = resolveTarget(opts);
  if (t.tokenFrom !== 'profile' || !t.profile) return;
  const store = credentials();
  const c = store.record(t.profile);
  if (typeof c !== 'object' || !stale(c)) return;
  store.set(t.profile, await refresh(c));
}

/** How to get a working token, for the messages that need one. */
export function loginHint(t: Target): string {
  if (t.tokenFrom === 'FOLIO_TOKEN') return 'FOLIO_TOKEN was refused: set a valid token, or unset it to use a logged-in profile';
  if (t.tokenFrom === 'none') return `not logged in: run folio auth login --url ${t.url}, or set FOLIO_TOKEN`;
  const profile = t.profile && t.profile !== 'default' ? ` --profile ${t.profile}` : '';
  return `log in again: folio auth login --url ${t.url}${profile}`;
}

function requireToken(t: Target): string {
  if (t.token) return t.token;
  const profile = t.named && t.named !== 'default' ? ` --profile ${t.named}` : '';
  throw new CliError(
    `not logged in to ${t.url}${profile ? ` (profile ${t.named})` : ''}: run folio auth login --url ${t.url}${profile}, or set FOLIO_TOKEN`,
    EXIT.auth,
  );
}

/** fetch, with a failure to connect turned into one line and its own exit code. */
export async function send(t: Target, input: Request | string, init?: RequestInit): Promise<Response> {
  try {
    return await fetch(input, init);
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (err as Error).message;
    throw new CliError(
      `cannot reach Folio at ${t.url} (${why}); is the server running? (set FOLIO_URL or folio auth login --url)`,
      EXIT.unreachable,
    );
  }
}

/**
 * The server's messages point at REST routes (they serve every client); where the CLI has a command
 * for that route, the message names the command instead.
 */
const CLI_FOR_ROUTE: Array<[RegExp, string]> = [
  [/GET \/api\/v1\/tokens\/scopes/g, 'folio tokens scopes'],
  [/GET \/api\/v1\/tokens\/self/g, 'folio tokens self'],
  [/GET \/api\/v1\/users\/me/g, 'folio users me'],
];
export function cliHints(line: string): string {
  return CLI_FOR_ROUTE.reduce((text, [route, command]) => text.replace(route, command), line);
}

/** The error for a response that is not 2xx: its problem+json in one line, and for 401 how to log in. */
export async function failure(t: Target, res: Response, parsed?: unknown): Promise<CliError> {
  let problem: Problem | undefined;
  if (parsed && typeof parsed === 'object') problem = parsed;
  else {
    const text = await res.text().catch(() => '');
    try {
      problem = JSON.parse(text) as Problem;
    } catch {
      problem = text ? { detail: text.trim().split('\n')[0]! } : undefined;
    }
  }
  let line = cliHints(problemLine(res.status, problem, res.statusText || 'request failed'));
  if (res.status === 401) line += `; ${loginHint(t)}`;
  return new CliError(line, exitForStatus(res.status));
}

export type Api = ReturnType<typeof createClient<paths>>;

/** The typed REST client for the target: every call carries the token and fails as one line. */
export function api(t: Target): Api {
  const token = requireToken(t);
  return createClient<paths>({
    baseUrl: t.url + API_PREFIX,
    headers: { authorization: `Bearer ${token}` },
    fetch: (req) => send(t, req),
  });
}

/** The data of an openapi-fetch result, or the CliError its failure means. */
export async function ok<D>(t: Target, r: { data?: D; error?: unknown; response: Response }): Promise<D> {
  if (!r.response.ok) throw await failure(t, r.response, r.error);
  return r.data as D;
}

/** A raw request to the REST API (the `api` command), with the token when there is one (a few paths need none). */
export async function raw(
  t: Target,
  method: string,
  path: string,
  init: { headers?: Record<string, string>; body?: string; signal?: AbortSignal },
): Promise<Response> {
  const p = path.startsWith(API_PREFIX) ? path : `${API_PREFIX}${path.startsWith('/') ? '' : '/'}${path}`;
  return send(t, t.url + p, {
    method,
    headers: { ...(t.token ? { authorization: `Bearer ${t.token}` } : {}), ...init.headers },
    ...(init.body !== undefined ? { body: init.body } : {}),
    ...(init.signal ? { signal: init.signal } : {}),
  });
}
