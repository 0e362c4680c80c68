// First-party plugin: the OAuth clients you authorised, the same operations as the REST group oauth
// (/api/v1/oauth), through ctx.services.identity.
import { Type } from 'typebox';
import { definePlugin } from 'folio/sdk';

const Id = Type.String({ pattern: '^[A-Za-z0-9_-]{1,128}$' });
const ADMIN = { roles: ['admin'], scopes: ['admin'] };

export default definePlugin({
  namespace: 'oauth',
  description: 'The OAuth clients you authorised (MCP clients and others), and revoking them; for admins, the registered clients.',
  catalogue: 'public',
  functions: {
    grants: {
      title: 'List the clients you authorised',
      description: 'The clients you authorised: name, redirect URIs, scopes. Needs no scope; revoking needs tokens.',
      handler: async (_args, ctx) => ctx.services.identity.oauth.grants(),
    },
    revoke_grant: {
      title: 'Revoke an authorised client',
      description: 'Revoke a client you authorised: all its tokens stop at once.',
      args: Type.Object({ id: Id }),
      requires: { scopes: ['tokens'] },
      handler: async ({ id }, ctx) => {
        await ctx.services.identity.oauth.revokeGrant(id);
        return { revoked: id };
      },
    },
    clients: {
      title: 'List registered OAuth clients',
      description: 'The registered OAuth clients, newest first, a page at a time: pass next_cursor back as cursor for the next one.',
      args: Type.Object({
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'At most this many.' })),
        cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'next_cursor of the previous page.' })),
      }),
      requires: ADMIN,
      handler: async ({ limit, cursor }, ctx) =>
        ctx.services.identity.oauth.clients({ ...(limit !== undefined ? { limit } : {}), ...(cursor !== undefined ? { cursor } : {}) }),
    },
    delete_client: {
      title: 'Delete an OAuth client',
      description: 'Delete a registered client with every grant made to it.',
      args: Type.Object({ client_id: Id }),
      requires: ADMIN,
      handler: async ({ client_id }, ctx) => {
        await ctx.services.identity.oauth.deleteClient(client_id);
        return { deleted: client_id };
      },
    },
  },
});
