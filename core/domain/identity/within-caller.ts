// The one rule for every operation that makes or reveals a secret (a personal token created or
// rotated, a minted token, a password): what the secret opens is within what the calling token
// holds. Otherwise a narrow token (a script's `tokens` token, an OAuth client granted `tokens`)
// would be a way to a wider one. Roles are the user's, not the token's, and are not looked at
// here: a scope that needs a role the user lacks opens nothing whatever token carries it.
import type { ScopeRules } from '../../contract/domain.ts';
import { MissingScope } from '../../contract/errors.ts';
import type { Principal } from './types.ts';

/** The scopes of `wanted` the calling token does not hold ('*' is held only by a '*' token). */
export function scopesBeyondCaller(rules: ScopeRules, p: Principal, wanted: readonly string[]): string[] {
  return [...new Set(wanted)].filter((s) => !rules.allows(p.scopes, s));
}

/** Refuses (403, naming what is missing) unless every scope of `wanted` is within the calling token. */
export function requireWithinCaller(rules: ScopeRules, p: Principal, wanted: readonly string[], what: string): void {
  const beyond = scopesBeyondCaller(rules, p, wanted);
  if (beyond.length === 0) return;
  throw new MissingScope(
    `${what} needs scope ${beyond.join(', ')}, which this ${p.tokenKind} token does not carry (it has: ${p.scopes.join(' ') || 'none'}); use a token that holds it.`,
    beyond,
  );
}
