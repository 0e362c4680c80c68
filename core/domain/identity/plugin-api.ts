// What plugins get as ctx.services.identity: the caller's tokens and, for admins, the users, each
// method asking the policy for its scope first (as the REST routes do), then the service, which
// keeps the rules.
import type { DomainCaller } from '../../contract/domain.ts';
import { Forbidden } from '../../contract/errors.ts';
import type { IdentityService } from './service.ts';
import type { CreateToken, RotateToken } from './personal-tokens.ts';
import type { ListUsers, UpdateUser } from './users.ts';

export function bindIdentity(identity: IdentityService, caller: DomainCaller) {
  const { principal: p } = caller;
  const { tokens, users, oauth } = identity;
  const need = (scopes: string[], what: string) => caller.entitle(scopes, what);
  const admin = (what: string) => {
    if (!p.user.roles.includes('admin')) throw new Forbidden(`${what} needs role admin, which your user does not have.`);
    need(['admin'], what);
  };
  return {
    tokens: {
      scopes: () => Promise.resolve(tokens.catalogue()),
      self: () => tokens.self(p),
      list: (opts: { limit?: number; cursor?: string; active?: boolean } = {}) => (need(['tokens'], 'tokens.list'), tokens.list(p, opts)),
      get: (id: string) => (need(['tokens'], 'tokens.get'), tokens.get(p, id)),
      create: (input: CreateToken) => (need(['tokens'], 'tokens.create'), tokens.create(p, input)),
      rotate: (id: string, input?: RotateToken) => (need(['tokens'], 'tokens.rotate'), tokens.rotate(p, id, input)),
      revoke: (id: string) => (need(['tokens'], 'tokens.revoke'), tokens.revoke(p, id)),
    },
    oauth: {
      grants: () => oauth.grants(p.user.id),
      revokeGrant: (id: string) => (need(['tokens'], 'oauth.revoke_grant'), oauth.revokeGrant(p.user.id, id)),
      clients: (opts: { limit?: number; cursor?: string } = {}) => (admin('oauth.clients'), oauth.clients(opts)),
      deleteClient: (id: string) => (admin('oauth.delete_client'), oauth.deleteClient(id)),
    },
    users: {
      me: () => users.me(p),
      list: (opts?: ListUsers) => (need(['users'], 'users.list'), users.list(p, opts)),
      get: (id: string) => (need(['users'], 'users.get'), users.get(p, id)),
      create: (input: { email: string; name?: string | null; roles?: string[] }) => (
        need(['users'], 'users.create'),
        users.create(p, input)
      ),
      update: (id: string, input: UpdateUser) => (need(['users'], 'users.update'), users.update(p, id, input)),
      delete: (id: string, confirm?: string) => (need(['users'], 'users.delete'), users.delete(p, id, confirm)),
      invite: (id: string, expiresInHours?: number) => (need(['users'], 'users.invite'), identity.passwords.invite(p, id, expiresInHours)),
    },
  };
}

export type IdentityApi = ReturnType<typeof bindIdentity>;
