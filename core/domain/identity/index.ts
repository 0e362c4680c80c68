// The identity domain as one registration: users, tokens and per-user namespace switches.
import { defineDomain } from '../../contract/domain.ts';
import { identityEntities } from './entities.ts';
import { Migration20261121000000_identity } from './migrations/Migration20261121000000_identity.ts';
import { IdentityService } from './service.ts';

export const identityDomain = defineDomain({
  name: 'identity',
  entities: identityEntities,
  migrations: [{ name: 'Migration20261121000000_identity', class: Migration20261121000000_identity }],
  create: ({ db, feed }) => new IdentityService(db, { feed }),
});
