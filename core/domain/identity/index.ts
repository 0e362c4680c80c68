// The identity domain as one registration: users, tokens and per-user namespace switches, with the
// scopes that govern them and three REST groups: `tokens` (your personal API tokens), `users`
// (provisioning) and `oauth` (the clients you authorised), each governed by the namespace of the same name.
import { defineDomain } from '../../contract/domain.ts';
import { identityEntities } from './entities.ts';
import { Migration20261121000000_identity } from './migrations/Migration20261121000000_identity.ts';
import { Migration20261123100000_personal_tokens } from './migrations/Migration20261123100000_personal_tokens.ts';
import { Migration20261123110000_oauth } from './migrations/Migration20261123110000_oauth.ts';
import { Migration20261124100000_oauth_created_at } from './migrations/Migration20261124100000_oauth_created_at.ts';
import { Migration20261125100000_passwords } from './migrations/Migration20261125100000_passwords.ts';
import { Migration20261128100000_namespace_pins } from './migrations/Migration20261128100000_namespace_pins.ts';
import { Migration20261204100000_oauth_secret_ids } from './migrations/Migration20261204100000_oauth_secret_ids.ts';
import { Migration20261206100000_scim_profile } from './migrations/Migration20261206100000_scim_profile.ts';
import { Migration20261207100000_scim_username_unique } from './migrations/Migration20261207100000_scim_username_unique.ts';
import type { TokenSettings } from './personal-tokens.ts';
import { bindIdentity } from './plugin-api.ts';
import { oauthRoutes, tokenRoutes, userRoutes } from './rest/routes.ts';
import { OAUTH_COMPONENTS, TOKEN_COMPONENTS, USER_COMPONENTS } from './rest/schemas.ts';
import { IdentityService } from './service.ts';

export const identityDomain = defineDomain<IdentityService, TokenSettings>({
  name: 'identity',
  entities: identityEntities,
  migrations: [
    { name: 'Migration20261121000000_identity', class: Migration20261121000000_identity },
    { name: 'Migration20261123100000_personal_tokens', class: Migration20261123100000_personal_tokens },
    { name: 'Migration20261123110000_oauth', class: Migration20261123110000_oauth },
    { name: 'Migration20261124100000_oauth_created_at', class: Migration20261124100000_oauth_created_at },
    { name: 'Migration20261125100000_passwords', class: Migration20261125100000_passwords },
    { name: 'Migration20261128100000_namespace_pins', class: Migration20261128100000_namespace_pins },
    { name: 'Migration20261204100000_oauth_secret_ids', class: Migration20261204100000_oauth_secret_ids },
    { name: 'Migration20261206100000_scim_profile', class: Migration20261206100000_scim_profile },
    { name: 'Migration20261207100000_scim_username_unique', class: Migration20261207100000_scim_username_unique },
  ],
  scopes: {
    tokens: {
      description:
        'Manage your personal API tokens: list, create, rotate and revoke them. A new token never carries more than the token that makes it.',
    },
    users: { description: 'Provision users: create, list, update, deactivate and delete them.', roles: ['admin'] },
    admin: {
      description: 'Run the admin namespace: create users, switch namespaces per user, read plugin status.',
      roles: ['admin'],
    },
  },
  create: ({ db, feed, scopes, settings, publicUrl }) => new IdentityService(db, { feed, scopes, settings, publicUrl }),
  rest: [
    {
      tag: 'tokens',
      description: 'Your personal API tokens: create (the secret is shown once), list, rotate, revoke; and the scope catalogue.',
      namespace: 'tokens',
      routes: tokenRoutes,
      components: TOKEN_COMPONENTS,
    },
    {
      tag: 'users',
      description: 'User provisioning for admins: create, list, update, deactivate, delete; and your own account for everyone.',
      namespace: 'users',
      routes: userRoutes,
      components: USER_COMPONENTS,
    },
    {
      tag: 'oauth',
      description:
        'The OAuth clients you authorised, and revoking them; for admins, the registered clients. The authorization server itself is at /oauth.',
      namespace: 'oauth',
      routes: oauthRoutes,
      components: OAUTH_COMPONENTS,
    },
  ],
  bind: bindIdentity,
  upkeep: {
    everyMinutes: () => 60,
    run: async (identity, log) => {
      const purged = await identity.oauth.purgeExpired();
      if (purged > 0) log.info({ purged }, 'purged expired OAuth records');
      const unused = await identity.oauth.purgeUnusedClients();
      if (unused > 0) log.info({ unused }, 'deleted OAuth clients registered but never authorised');
    },
  },
});
