import type { TokenKind } from './tokens.ts';

/** Who is calling: the user behind a valid token, and what that token may do. */
export interface Principal {
  user: { id: string; email: string; name: string | null; roles: string[] };
  scopes: string[];
  tokenKind: TokenKind;
  tokenId: string;
  tokenExpiresAt: Date | null;
}

export type NamespaceAccessSetting = 'enabled' | 'disabled' | 'default';
