// First-party plugin: your personal API tokens, the same operations as the REST group tokens
// (/api/v1/tokens), through ctx.services.identity: the service keeps the rules.
import { Type } from 'typebox';
import { definePlugin } from 'folio/sdk';

const Id = Type.String({ format: 'uuid', description: 'The token id (from list or create).' });
const Expiry = {
  expires_in_days: Type.Optional(Type.Integer({ minimum: 1, description: 'Expire this many days from now (365 at most by default).' })),
  expires_at: Type.Optional(Type.String({ format: 'date-time', description: 'Or: expire at this instant.' })),
};

export default definePlugin({
  namespace: 'tokens',
  description: 'Your personal API tokens: create (secret shown once), list, rotate, revoke; and the scope catalogue.',
  catalogue: 'public',
  functions: {
    scopes: {
      title: 'List token scopes',
      description: 'Every scope a token may carry: what it allows, what it implies, the roles it needs.',
      handler: async (_args, ctx) => ctx.services.identity.tokens.scopes(),
    },
    self: {
      title: 'Describe this token',
      description: 'The token you are calling with: its kind, scopes, expiry and last use. Needs no scope.',
      handler: async (_args, ctx) => ctx.services.identity.tokens.self(),
    },
    list: {
      title: 'List your tokens',
      description: 'Your personal tokens, newest first (secrets are never shown again). Page with limit and cursor.',
      args: Type.Object({
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
        cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'next_cursor of the previous page.' })),
        active: Type.Optional(Type.Boolean({ description: 'true: usable ones only; false: revoked or expired ones only.' })),
      }),
      requires: { scopes: ['tokens'] },
      handler: async (args, ctx) => ctx.services.identity.tokens.list(args),
    },
    get: {
      title: 'Get a token',
      description: 'One of your tokens by id.',
      args: Type.Object({ id: Id }),
      requires: { scopes: ['tokens'] },
      handler: async ({ id }, ctx) => ctx.services.identity.tokens.get(id),
    },
    create: {
      title: 'Create a token',
      description:
        'A new personal API token. Its scopes must be within the token you call with; an expiry is required. The answer carries the secret in `token`, shown this once.',
      args: Type.Object({
        name: Type.String({ minLength: 1, maxLength: 100 }),
        description: Type.Optional(Type.String({ maxLength: 1000 })),
        scopes: Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: 32, uniqueItems: true }),
        ...Expiry,
      }),
      examples: [
        { args: { name: 'read-only script', scopes: ['notes:read'], expires_in_days: 30 }, description: 'a read-only token for a month' },
      ],
      requires: { scopes: ['tokens'] },
      handler: async (args, ctx) => ctx.services.identity.tokens.create(args),
    },
    rotate: {
      title: 'Rotate a token',
      description: 'Revoke a token and get a new one with the same name and scopes; the new secret is shown this once.',
      args: Type.Object({ id: Id, ...Expiry }),
      requires: { scopes: ['tokens'] },
      handler: async ({ id, ...expiry }, ctx) => ctx.services.identity.tokens.rotate(id, expiry),
    },
    revoke: {
      title: 'Revoke a token',
      description: 'Revoke a token: it stops working at once, with every token minted from it.',
      args: Type.Object({ id: Id }),
      requires: { scopes: ['tokens'] },
      handler: async ({ id }, ctx) => ctx.services.identity.tokens.revoke(id),
    },
  },
});
