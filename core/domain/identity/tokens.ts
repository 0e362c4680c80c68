// Token format, GitHub style: a prefix naming the kind, 32 random base62 characters, then a 6-character
// base62 CRC32 of everything before it. The checksum lets us reject typos and junk without touching
// the database; the database only ever sees the sha-256 of the whole token.
//
//   folio_api_  personal API token (long-lived, created by a user or an admin)
//   folio_mnt_  minted token (short-lived child of an API token)
//   folio_oat_  reserved. OAuth access tokens come from the authorization server (oidc-provider):
//               43 base64url characters (256 random bits), without a prefix.
import { hash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

export type TokenKind = 'api' | 'minted' | 'oauth';

export const TOKEN_PREFIXES = {
  api: 'folio_api_',
  minted: 'folio_mnt_',
  oauth: 'folio_oat_',
} as const satisfies Record<TokenKind, string>;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6; // 62^6 > 2^32, so any CRC32 fits
const PREFIX_LENGTH = 10; // every prefix above is 10 characters
export const TOKEN_LENGTH = PREFIX_LENGTH + RANDOM_LENGTH + CHECKSUM_LENGTH;

const BODY_RE = /^[0-9A-Za-z]+$/;
const KIND_BY_PREFIX = new Map<string, TokenKind>(
  (Object.entries(TOKEN_PREFIXES) as [TokenKind, string][]).map(([kind, prefix]) => [prefix, kind]),
);

function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 * 62: dropping bytes >= 248 keeps every character equally likely
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

function checksum(text: string): string {
  let n = crc32(text);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/** A new random token of the given kind, e.g. `folio_api_<32 base62><6 base62 crc32>`. */
export function generateToken(kind: TokenKind): string {
  const body = TOKEN_PREFIXES[kind] + randomBase62(RANDOM_LENGTH);
  return body + checksum(body);
}

/** The kind whose prefix `raw` starts with, or null. Says nothing about the rest of the token. */
export function tokenPrefixKind(raw: string): TokenKind | null {
  return (typeof raw === 'string' && KIND_BY_PREFIX.get(raw.slice(0, PREFIX_LENGTH))) || null;
}

/**
 * Recognises a token of our format without any I/O. Null for anything else: unknown prefix,
 * wrong length, characters outside base62, or a checksum that does not match.
 */
export function parseToken(raw: string): { kind: TokenKind } | null {
  if (typeof raw !== 'string' || raw.length !== TOKEN_LENGTH) return null;
  const kind = KIND_BY_PREFIX.get(raw.slice(0, PREFIX_LENGTH));
  if (!kind) return null;
  const rest = raw.slice(PREFIX_LENGTH);
  if (!BODY_RE.test(rest)) return null;
  const body = raw.slice(0, TOKEN_LENGTH - CHECKSUM_LENGTH);
  if (checksum(body) !== raw.slice(TOKEN_LENGTH - CHECKSUM_LENGTH)) return null;
  return { kind };
}

/** What is stored: the lowercase hex sha-256 of the raw token. */
export function hashToken(raw: string): string {
  return hash('sha256', raw, 'hex');
}

const OAUTH_RE = /^[A-Za-z0-9_-]{43}$/;

/** Shaped like an OAuth access token of Folio's authorization server (no I/O). */
export function looksLikeOAuthToken(raw: string): boolean {
  return typeof raw === 'string' && OAUTH_RE.test(raw);
}
