// First-party plugin: user provisioning, the same operations as the REST group users
// (/api/v1/users), through ctx.services.identity: the service keeps the rules.
import { Type } from 'typebox';
import { definePlugin } from 'folio/sdk';

const Id = Type.String({ format: 'uuid', description: 'The user id.' });
const Role = Type.String({ pattern: '^[a-z][a-z0-9_-]{0,31}$' });
const ADMIN = { roles: ['admin'], scopes: ['users'] };

export default definePlugin({
  namespace: 'users',
  description: 'Your own account; for admins: create, list, update, deactivate and delete users.',
  catalogue: 'public',
  functions: {
    me: {
      title: 'Your account',
      description: 'Your own account: id, email, name, roles.',
      handler: async (_args, ctx) => ctx.services.identity.users.me(),
    },
    list: {
      title: 'List users',
      description: 'Users by email; filter by email, role or active. Page with limit and cursor.',
      args: Type.Object({
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
        cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
        email: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
        role: Type.Optional(Role),
        active: Type.Optional(Type.Boolean()),
      }),
      requires: ADMIN,
      handler: async (args, ctx) => ctx.services.identity.users.list(args),
    },
    get: {
      title: 'Get a user',
      description: 'One user by id.',
      args: Type.Object({ id: Id }),
      requires: ADMIN,
      handler: async ({ id }, ctx) => ctx.services.identity.users.get(id),
    },
    create: {
      title: 'Create a user account',
      description: 'Create a user (no token yet; admin.create_user makes one with it).',
      args: Type.Object({
        email: Type.String({ minLength: 3, maxLength: 320 }),
        name: Type.Optional(Type.String({ maxLength: 200 })),
        roles: Type.Optional(Type.Array(Role, { maxItems: 16, uniqueItems: true })),
      }),
      requires: ADMIN,
      handler: async (args, ctx) => ctx.services.identity.users.create(args),
    },
    update: {
      title: 'Update a user',
      description:
        'Change email, name, roles (the whole new set) or active. A new email is the one they sign in with; their tokens stay valid. active: false deactivates: all their tokens stop at once; data is kept.',
      args: Type.Object({
        id: Id,
        email: Type.Optional(Type.String({ minLength: 3, maxLength: 320 })),
        name: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
        roles: Type.Optional(Type.Array(Role, { maxItems: 16, uniqueItems: true })),
        active: Type.Optional(Type.Boolean()),
      }),
      examples: [{ args: { id: '00000000-0000-4000-8000-000000000000', active: false }, description: 'deactivate a user' }],
      requires: ADMIN,
      handler: async ({ id, ...changes }, ctx) => ctx.services.identity.users.update(id, changes),
    },
    invite: {
      title: 'Invite a user',
      description:
        'A one-time link for a user to set their password (also replaces a forgotten one). Give them the url: it works once and expires (72 hours by default).',
      args: Type.Object({
        id: Id,
        expires_in_hours: Type.Optional(Type.Integer({ minimum: 1, maximum: 720, default: 72 })),
      }),
      requires: ADMIN,
      handler: async ({ id, expires_in_hours }, ctx) => ctx.services.identity.users.invite(id, expires_in_hours),
    },
    delete: {
      title: 'Delete a user',
      description: "Delete a user and all their data, for good. confirm must be the user's email address.",
      args: Type.Object({ id: Id, confirm: Type.String({ maxLength: 320 }) }),
      requires: ADMIN,
      handler: async ({ id, confirm }, ctx) => {
        await ctx.services.identity.users.delete(id, confirm);
        return { deleted: id };
      },
    },
  },
});
