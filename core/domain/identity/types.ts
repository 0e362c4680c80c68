import type { TokenKind } from './tokens.ts';

/** Who is calling: the user behind a valid token, and what that token may do. */
export interface Principal {
  user: { id: string; email: string; name: string | null; roles: string[] };
  scopes: string[];
  tokenKind: TokenKind;
  tokenId: string;
  tokenExpiresAt: Date | null;
  /** An OAuth access token's audience: the resource (RFC 8707) it was issued for. */
  audience?: string | null;
}

export type NamespaceAccessSetting = 'enabled' | 'disabled' | 'default';
