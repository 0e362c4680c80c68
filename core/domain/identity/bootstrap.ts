// First start with no users: create the admin. Its API token is BOOTSTRAP_ADMIN_TOKEN when set,
// otherwise a new one that is returned (and printed by the caller) exactly once.
import type { Logger } from 'pino';
import type { IdentityService } from './service.ts';

export const BOOTSTRAP_ADMIN_EMAIL = 'admin@localhost';

export async function bootstrapAdmin(identity: IdentityService, configured: string | null, log: Logger): Promise<string | undefined> {
  if ((await identity.countUsers()) > 0) return undefined;
  const admin = await identity.createUser({ email: BOOTSTRAP_ADMIN_EMAIL, name: 'Admin', roles: ['admin'] });
  const { token } = await identity.createApiToken(admin.id, {
    name: 'bootstrap',
    scopes: ['*'],
    ...(configured ? { raw: configured } : {}),
  });
  log.info({ userId: admin.id, email: admin.email, from: configured ? 'BOOTSTRAP_ADMIN_TOKEN' : 'generated' }, 'created the first admin');
  return configured ? undefined : token;
}
