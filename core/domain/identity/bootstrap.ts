// First start with no users: create the admin. Its API token is BOOTSTRAP_ADMIN_TOKEN when set,
// otherwise a new one that is returned (and printed by the caller) exactly once.
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { givenToken, type IdentityService } from './service.ts';

export const BOOTSTRAP_ADMIN_EMAIL = 'admin@localhost';

export async function bootstrapAdmin(identity: IdentityService, configured: string | null, log: Logger): Promise<string | undefined> {
  // A token that could never be stored fails the start before anything is written: creating the
  // admin first left, on the next start, an admin no token opens (there were users, so no bootstrap).
  if (configured !== null) givenToken(configured);
  let admin;
  if ((await identity.countUsers()) === 0) {
    admin = await identity.createUser({ email: BOOTSTRAP_ADMIN_EMAIL, name: 'Admin', roles: ['admin'] });
  } else {
    // A first start cut off between the admin and its token (a crash, or that old failure): the
    // admin is the only user and has never had a token. Finish it; otherwise there is nothing to do.
    const only = (await identity.countUsers()) === 1 ? await identity.findUserByEmail(BOOTSTRAP_ADMIN_EMAIL) : null;
    if (!only || (await identity.countApiTokens(only.id)) > 0) return undefined;
    admin = only;
    log.warn({ userId: admin.id }, 'the first admin was created without its token (an earlier start stopped half-way); giving it one now');
  }
  const { token } = await identity.createApiToken(admin.id, {
    name: 'bootstrap',
    scopes: ['*'],
    ...(configured ? { raw: configured } : {}),
  });
  log.info({ userId: admin.id, email: admin.email, from: configured ? 'BOOTSTRAP_ADMIN_TOKEN' : 'generated' }, 'created the first admin');
  return configured ? undefined : token;
}

/**
 * The digest the Authenticator lets through its format check besides Folio's own token formats:
 * BOOTSTRAP_ADMIN_TOKEN's while it is set, else that of the bootstrap token it chose at first
 * start (still active), so unsetting the variable locks no one out.
 */
export async function bootstrapDigest(identity: IdentityService, configured: string | null): Promise<Buffer | undefined> {
  if (configured !== null) return createHash('sha256').update(configured, 'utf8').digest();
  const stored = await identity.bootstrapTokenHash();
  return stored !== null && /^[0-9a-f]{64}$/.test(stored) ? Buffer.from(stored, 'hex') : undefined;
}
