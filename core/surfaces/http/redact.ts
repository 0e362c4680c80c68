// What of a request's URL never reaches the log: credentials sent in it. A bearer token in the query
// is refused, but logged it would leak; a share link or an invitation is a secret path segment.
import { INVITATION_PATH } from '../../domain/identity/passwords.ts';

/** Query parameters whose values never reach the log (a token sent in the URL is refused, but logged it would leak). */
const SECRET_PARAMS = /^(access_token|token|api_key|apikey|bearer|auth|code|password)$/i;

/**
 * Paths whose segment after the prefix is itself a credential: a share link (/s/{token},
 * core/domain/files/rest/public.ts) and an invitation (/invite/{secret}, INVITATION_PATH). Whoever
 * reads the log could use them; the routes match without regard to case, and so does this.
 */
const SECRET_PATH = new RegExp(`^(/s/|${INVITATION_PATH})[^/]+`, 'i');

/** The path as logged: a secret segment is replaced (safeQuery does the same for secret query values). */
export function safePath(path: string): string {
  return SECRET_PATH.test(path) ? path.replace(SECRET_PATH, '$1[redacted]') : path;
}

export function safeQuery(querystring: string): string | undefined {
  if (!querystring) return undefined;
  const params = new URLSearchParams(querystring);
  for (const key of [...params.keys()]) if (SECRET_PARAMS.test(key)) params.set(key, '[redacted]');
  return params.toString();
}
