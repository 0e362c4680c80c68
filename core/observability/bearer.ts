// The metrics token check, shared by /metrics and /ready's details (and loaded without prom-client).
import { createHash, timingSafeEqual } from 'node:crypto';

/** The answer to a bearer token, compared in constant time (hashes of equal length). */
function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Whether `authorization` carries `token` (constant time). */
export function bearerIs(authorization: string | undefined, token: string): boolean {
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
  return timingSafeEqual(digest(m?.[1] ?? ''), digest(token)) && m !== null;
}
