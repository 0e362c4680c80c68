// The tokens and users REST groups, as route tables over the identity service. The rules (whose
// token, what scopes a new token may carry, who may provision users) are the service's.
import { LIMIT_CLAMPED, pageReply, route, type Route } from '../../../contract/rest.ts';
import type { IdentityService } from '../service.ts';
import * as S from './schemas.ts';

const TOKEN_404 = 'no such token. It may never have existed or belong to another account.';
const USER_404 = 'no such user.';

/** Drops undefined members, for the service's exact optional types. */
function compact<T extends Record<string, unknown>>(o: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}

export function tokenRoutes(identity: IdentityService): Route[] {
  const tokens = identity.tokens;
  const tags = ['tokens'];
  const SCOPE = ['tokens'];
  return [
    route({
      id: 'listTokenScopes',
      method: 'GET',
      path: '/tokens/scopes',
      summary: 'The scope catalogue',
      description:
        'Every scope a token may carry, what it allows, what it implies and the roles it needs. The same catalogue governs REST, curl and MCP.',
      tags,
      scopes: [],
      responses: { 200: { description: 'The catalogue.', schema: S.ScopeList } },
      handler: () => Promise.resolve({ status: 200, body: { items: tokens.catalogue() } }),
    }),
    route({
      id: 'getCurrentToken',
      method: 'GET',
      path: '/tokens/self',
      summary: 'The token you are calling with',
      description: 'Its scopes, expiry and last use. Any token may read itself; no scope needed.',
      tags,
      scopes: [],
      responses: { 200: { description: 'The calling token.', schema: S.Token } },
      handler: async ({ principal }) => ({ status: 200, body: await tokens.self(principal) }),
    }),
    route({
      id: 'listTokens',
      method: 'GET',
      path: '/tokens',
      summary: 'List your personal tokens',
      description: 'Newest first, revoked and expired ones included unless `active` says otherwise. Secrets are never listed.',
      tags,
      scopes: SCOPE,
      query: S.TokenListQuery,
      responses: { 200: { description: 'A page of tokens.', schema: S.TokenPage, headers: [LIMIT_CLAMPED] } },
      handler: async ({ principal, query }) =>
        pageReply(await tokens.list(principal, compact({ limit: query.limit, cursor: query.cursor, active: query.active })), query.limit),
    }),
    route({
      id: 'createToken',
      method: 'POST',
      path: '/tokens',
      summary: 'Create a personal token',
      description:
        'A new personal API token with a name, scopes (each within the token you call with, and within your roles) and a required expiry. The secret is in `token`, shown this once. A minted token cannot create tokens.',
      tags,
      scopes: SCOPE,
      body: S.CreateToken,
      problems: ['forbidden'],
      responses: { 201: { description: 'The token, with its secret.', schema: S.NewToken } },
      handler: async ({ principal, body }) => ({
        status: 201,
        body: await tokens.create(
          principal,
          compact({
            name: body.name,
            description: body.description,
            scopes: body.scopes,
            expires_in_days: body.expires_in_days,
            expires_at: body.expires_at,
          }) as Parameters<typeof tokens.create>[1],
        ),
      }),
    }),
    route({
      id: 'getToken',
      method: 'GET',
      path: '/tokens/{id}',
      summary: 'Get one of your tokens',
      description: "Its name, scopes, expiry and last use; never its secret. Another account's token is 404, as one that does not exist.",
      tags,
      scopes: SCOPE,
      params: S.IdParams,
      notFound: TOKEN_404,
      responses: { 200: { description: 'The token.', schema: S.Token } },
      handler: async ({ principal, params }) => ({ status: 200, body: await tokens.get(principal, params.id) }),
    }),
    route({
      id: 'rotateToken',
      method: 'POST',
      path: '/tokens/{id}/rotate',
      summary: 'Rotate a token',
      description:
        'Revokes the token and returns a new one with the same name, description and scopes; the new secret is shown this once. Expiry: as given, else the old lifetime again from now. A revoked token cannot be rotated (409); one whose scopes are beyond the token you call with is refused (403, naming them).',
      tags,
      scopes: SCOPE,
      params: S.IdParams,
      body: S.RotateToken,
      bodyRequired: false,
      notFound: TOKEN_404,
      problems: ['conflict', 'forbidden'],
      responses: { 200: { description: 'The new token, with its secret.', schema: S.NewToken } },
      handler: async ({ principal, params, body }) => ({
        status: 200,
        body: await tokens.rotate(principal, params.id, compact({ expires_in_days: body?.expires_in_days, expires_at: body?.expires_at })),
      }),
    }),
    route({
      id: 'revokeToken',
      method: 'DELETE',
      path: '/tokens/{id}',
      summary: 'Revoke a token',
      description: 'It stops working at once, on every node, with any token minted from it. Revoking a revoked token is not an error.',
      tags,
      scopes: SCOPE,
      params: S.IdParams,
      notFound: TOKEN_404,
      responses: { 200: { description: 'The token, now revoked.', schema: S.Token } },
      handler: async ({ principal, params }) => ({ status: 200, body: await tokens.revoke(principal, params.id) }),
    }),
  ];
}

export function userRoutes(identity: IdentityService): Route[] {
  const users = identity.users;
  const tags = ['users'];
  const ADMIN = { scopes: ['users'], roles: ['admin'] };
  return [
    route({
      id: 'getMe',
      method: 'GET',
      path: '/users/me',
      summary: 'Your own account',
      description: 'For every user and every token; no scope needed.',
      tags,
      scopes: [],
      responses: { 200: { description: 'Your account.', schema: S.UserRecord } },
      handler: async ({ principal }) => ({ status: 200, body: await users.me(principal) }),
    }),
    route({
      id: 'setMyPassword',
      method: 'PUT',
      path: '/users/me/password',
      summary: 'Set your password',
      description:
        'The password you sign in with on the authorization pages (an MCP client or the CLI connecting with OAuth). At least 12 characters. When you have one already, send it as current_password. Only a personal API token with the scope * may do this (a password signs in to everything; an OAuth client may not).',
      tags,
      scopes: ['tokens'],
      body: S.SetPassword,
      problems: ['forbidden'],
      responses: { 204: { description: 'Set.' } },
      handler: async ({ principal, body }) => {
        await identity.passwords.setOwn(principal, body);
        return { status: 204 };
      },
    }),
    route({
      id: 'listUsers',
      method: 'GET',
      path: '/users',
      summary: 'List users',
      description: 'By email, filtered by email, role or active. Admins only.',
      tags,
      ...ADMIN,
      query: S.UserListQuery,
      responses: { 200: { description: 'A page of users.', schema: S.UserPage, headers: [LIMIT_CLAMPED] } },
      handler: async ({ principal, query }) =>
        pageReply(
          await users.list(
            principal,
            compact({ limit: query.limit, cursor: query.cursor, email: query.email, role: query.role, active: query.active }),
          ),
          query.limit,
        ),
    }),
    route({
      id: 'createUser',
      method: 'POST',
      path: '/users',
      summary: 'Create a user',
      description:
        'Admins only. The user has no token and no password yet: give them an invitation link (POST /users/{id}/invitations) to set their password, or set a first one here.',
      tags,
      ...ADMIN,
      body: S.CreateUser,
      problems: ['conflict'],
      responses: { 201: { description: 'The user.', schema: S.UserRecord } },
      handler: async ({ principal, body }) => ({
        status: 201,
        body: await users.create(
          principal,
          compact({ email: body.email, name: body.name, roles: body.roles, password: body.password }) as { email: string },
        ),
      }),
    }),
    route({
      id: 'inviteUser',
      method: 'POST',
      path: '/users/{id}/invitations',
      summary: 'Make an invitation link',
      description:
        'A one-time link for the user to set their password (it also replaces a forgotten one). The link is shown this once, works once, and expires (72 hours by default); it is stored hashed. Admins only.',
      tags,
      ...ADMIN,
      params: S.IdParams,
      body: S.CreateInvitation,
      bodyRequired: false,
      notFound: USER_404,
      responses: { 201: { description: 'The link.', schema: S.Invitation } },
      handler: async ({ principal, params, body }) => ({
        status: 201,
        body: await identity.passwords.invite(principal, params.id, body?.expires_in_hours),
      }),
    }),
    route({
      id: 'getUser',
      method: 'GET',
      path: '/users/{id}',
      summary: 'Get a user',
      description: 'The account: email, name, roles, whether it is active and has a password. Admins only.',
      tags,
      ...ADMIN,
      params: S.IdParams,
      notFound: USER_404,
      responses: { 200: { description: 'The user.', schema: S.UserRecord } },
      handler: async ({ principal, params }) => ({ status: 200, body: await users.get(principal, params.id) }),
    }),
    route({
      id: 'updateUser',
      method: 'PATCH',
      path: '/users/{id}',
      summary: 'Update a user',
      description:
        'Email, name, roles (the whole new set) and active. active: false deactivates: every token of theirs stops at once on every node; their data is kept. You cannot deactivate yourself or drop your own admin role (409).',
      tags,
      ...ADMIN,
      params: S.IdParams,
      body: S.UpdateUser,
      notFound: USER_404,
      problems: ['conflict'],
      responses: { 200: { description: 'The user as it is now.', schema: S.UserRecord } },
      handler: async ({ principal, params, body }) => ({
        status: 200,
        body: await users.update(
          principal,
          params.id,
          compact({ email: body.email, name: body.name, roles: body.roles, active: body.active }),
        ),
      }),
    }),
    route({
      id: 'deleteUser',
      method: 'DELETE',
      path: '/users/{id}',
      summary: 'Delete a user and their data',
      description:
        "Removes the user with everything they own (notes, revisions, tokens), for good. Confirm with ?confirm=<the user's email>; without it: 400 and nothing is deleted. To keep the data, deactivate instead.",
      tags,
      ...ADMIN,
      params: S.IdParams,
      query: S.DeleteUserQuery,
      notFound: USER_404,
      problems: ['conflict'],
      responses: { 204: { description: 'Deleted.' } },
      handler: async ({ principal, params, query }) => {
        await users.delete(principal, params.id, query.confirm);
        return { status: 204 };
      },
    }),
  ];
}

export function oauthRoutes(identity: IdentityService): Route[] {
  const oauth = identity.oauth;
  const tags = ['oauth'];
  const ADMIN = { scopes: ['admin'], roles: ['admin'] };
  return [
    route({
      id: 'listOAuthGrants',
      method: 'GET',
      path: '/oauth/grants',
      summary: 'The clients you authorised',
      description:
        'Each OAuth client you allowed to act as you, with the scopes it holds. Any token may see them (no scope needed); revoking needs tokens. Clients register and get tokens at /oauth (see the README).',
      tags,
      scopes: [],
      responses: { 200: { description: 'Your grants, newest first.', schema: S.OAuthGrantList } },
      handler: async ({ principal }) => ({ status: 200, body: { items: await oauth.grants(principal.user.id) } }),
    }),
    route({
      id: 'revokeOAuthGrant',
      method: 'DELETE',
      path: '/oauth/grants/{id}',
      summary: 'Revoke a client you authorised',
      description: 'Every access and refresh token of the grant stops at once, on every node.',
      tags,
      scopes: ['tokens'],
      params: S.OAuthIdParams,
      notFound: 'no such grant. It may never have existed, be revoked already, or belong to another account.',
      responses: { 204: { description: 'Revoked.' } },
      handler: async ({ principal, params }) => {
        await oauth.revokeGrant(principal.user.id, params.id);
        return { status: 204 };
      },
    }),
    route({
      id: 'listOAuthClients',
      method: 'GET',
      path: '/oauth/clients',
      summary: 'Registered OAuth clients',
      description: 'The clients registered with the authorization server, newest first, a page at a time (limit, cursor). Admins only.',
      tags,
      ...ADMIN,
      query: S.OAuthClientListQuery,
      responses: { 200: { description: 'A page of clients.', schema: S.OAuthClientList, headers: [LIMIT_CLAMPED] } },
      handler: async ({ query }) => pageReply(await oauth.clients(compact({ limit: query.limit, cursor: query.cursor })), query.limit),
    }),
    route({
      id: 'deleteOAuthClient',
      method: 'DELETE',
      path: '/oauth/clients/{id}',
      summary: 'Delete a registered client',
      description: 'With every grant made to it: all its tokens stop at once. Admins only.',
      tags,
      ...ADMIN,
      params: S.OAuthIdParams,
      notFound: 'no such client.',
      responses: { 204: { description: 'Deleted.' } },
      handler: async ({ params }) => {
        await oauth.deleteClient(params.id);
        return { status: 204 };
      },
    }),
  ];
}
