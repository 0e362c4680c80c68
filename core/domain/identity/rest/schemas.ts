// TypeBox schemas of the tokens and users REST groups: they validate the requests and make the
// OpenAPI document (the ones in COMPONENTS appear there by name).
import { Type, type TSchema } from 'typebox';
import { TOKEN_LIST_LIMIT_DEFAULT, TOKEN_LIST_LIMIT_MAX } from '../personal-tokens.ts';
import { USER_LIST_LIMIT_DEFAULT, USER_LIST_LIMIT_MAX } from '../users.ts';
import { CLIENT_LIST_LIMIT_DEFAULT, CLIENT_LIST_LIMIT_MAX } from '../oauth-store.ts';
import { INVITATION_HOURS_DEFAULT, INVITATION_HOURS_MAX, PASSWORD_MAX, PASSWORD_MIN } from '../passwords.ts';

const DateTime = Type.String({ format: 'date-time' });
const NullableDateTime = Type.Union([DateTime, Type.Null()]);
const ScopeName = Type.String({ pattern: '^(\\*|[a-z][a-z0-9_]*(:(\\*|[a-z][a-z0-9_]*))?)$', maxLength: 64 });
const Role = Type.String({ pattern: '^[a-z][a-z0-9_-]{0,31}$', description: 'A role name, e.g. admin or staff.' });
const Cursor = Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'next_cursor of the previous page.' }));

export const IdParams = Type.Object({ id: Type.String({ format: 'uuid', description: 'The id.' }) });

function limit(def: number, max: number) {
  return Type.Optional(
    Type.Integer({
      minimum: 1,
      default: def,
      description: `How many to return; default ${def}, at most ${max} (a larger value is lowered to it).`,
    }),
  );
}

function page(name: string, item: TSchema) {
  return Type.Object(
    {
      items: Type.Array(item),
      next_cursor: Type.Union([Type.String(), Type.Null()], {
        description: 'Pass it back as `cursor` for the next page. Null on the last page.',
      }),
      limit: Type.Integer({ minimum: 1, description: 'The limit actually used.' }),
      limit_clamped_from: Type.Optional(
        Type.Integer({
          description:
            'Present when the limit asked for was over the maximum and was lowered to it (the Folio-Limit-Clamped header says the same).',
        }),
      ),
    },
    { description: `A page of ${name}.` },
  );
}

// ---- tokens

export const Token = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    kind: Type.Union([Type.Literal('api'), Type.Literal('minted')], {
      description: 'api: a personal token; minted: a short-lived child of one.',
    }),
    name: Type.Union([Type.String(), Type.Null()]),
    description: Type.Union([Type.String(), Type.Null()]),
    scopes: Type.Array(Type.String(), { description: 'As granted: each scope with the scopes it implies.' }),
    created_at: DateTime,
    last_used_at: Type.Union([DateTime, Type.Null()], { description: 'Written at most once a minute per token.' }),
    expires_at: NullableDateTime,
    revoked_at: NullableDateTime,
    active: Type.Boolean({ description: 'Neither revoked nor expired.' }),
  },
  { description: 'A token as its owner sees it; the secret is never shown again.' },
);

export const NewToken = Type.Object(
  {
    ...Token.properties,
    token: Type.String({ description: 'The secret, shown this once: store it now. Send it as Authorization: Bearer <token>.' }),
  },
  { description: 'A token just made, with its secret.' },
);

export const TokenPage = page('your personal tokens, newest first', Token);

export const TokenListQuery = Type.Object(
  {
    limit: limit(TOKEN_LIST_LIMIT_DEFAULT, TOKEN_LIST_LIMIT_MAX),
    cursor: Cursor,
    active: Type.Optional(Type.Boolean({ description: 'true: only usable tokens; false: only revoked or expired ones.' })),
  },
  { additionalProperties: false },
);

const Expiry = {
  expires_in_days: Type.Optional(
    Type.Integer({ minimum: 1, description: 'Expire this many days from now (at most the server maximum, 365 by default).' }),
  ),
  expires_at: Type.Optional(
    Type.String({ format: 'date-time', description: 'Or: expire at this instant (in the future, within the maximum).' }),
  ),
};

export const CreateToken = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, description: 'What the token is for, e.g. "laptop sync".' }),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()])),
    scopes: Type.Array(ScopeName, {
      minItems: 1,
      maxItems: 32,
      description: 'Scopes from GET /api/v1/tokens/scopes, each within the token you call with; * for all of yours.',
    }),
    ...Expiry,
  },
  { additionalProperties: false, description: 'A new personal token. An expiry is required: expires_in_days or expires_at.' },
);

export const RotateToken = Type.Object(Expiry, {
  additionalProperties: false,
  description: "The new token's expiry; by default the old token's lifetime again, from now.",
});

export const ScopeInfo = Type.Object({
  scope: Type.String(),
  description: Type.String(),
  implies: Type.Array(Type.String(), { description: 'Scopes this one grants too.' }),
  roles: Type.Array(Type.String(), { description: 'Roles the user must have for the scope to work.' }),
});

export const ScopeList = Type.Object({
  items: Type.Array(ScopeInfo, { description: 'Every scope, in name order. * grants all of them.' }),
});

// ---- users

export const UserRecord = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    email: Type.String(),
    name: Type.Union([Type.String(), Type.Null()]),
    roles: Type.Array(Type.String()),
    active: Type.Boolean({ description: 'false: deactivated; none of their tokens work, their data is kept.' }),
    has_password: Type.Boolean({ description: 'Whether they have a password to sign in with on the authorization pages.' }),
    created_at: DateTime,
    updated_at: DateTime,
  },
  { description: 'A user account.' },
);

export const UserPage = page('users, by email', UserRecord);

export const UserListQuery = Type.Object(
  {
    limit: limit(USER_LIST_LIMIT_DEFAULT, USER_LIST_LIMIT_MAX),
    cursor: Cursor,
    email: Type.Optional(Type.String({ minLength: 1, maxLength: 320, description: 'Only the user with this email (case-insensitive).' })),
    role: Type.Optional(Role),
    active: Type.Optional(Type.Boolean({ description: 'Only active (true) or deactivated (false) users.' })),
  },
  { additionalProperties: false },
);

export const CreateUser = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 320 }),
    name: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
    roles: Type.Optional(Type.Array(Role, { maxItems: 16, uniqueItems: true })),
    password: Type.Optional(
      Type.String({
        minLength: PASSWORD_MIN,
        maxLength: PASSWORD_MAX,
        description: 'A first password for sign-in. Better: leave it out and send the user an invitation link to set their own.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const SetPassword = Type.Object(
  {
    password: Type.String({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX, description: 'The new password.' }),
    current_password: Type.Optional(
      Type.String({ maxLength: PASSWORD_MAX, description: 'Your password as it is now; required when you have one.' }),
    ),
  },
  { additionalProperties: false },
);

export const CreateInvitation = Type.Object(
  {
    expires_in_hours: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: INVITATION_HOURS_MAX,
        default: INVITATION_HOURS_DEFAULT,
        description: `How long the link works (default ${INVITATION_HOURS_DEFAULT} hours). It works once.`,
      }),
    ),
  },
  { additionalProperties: false },
);

export const Invitation = Type.Object(
  {
    url: Type.String({ description: 'The link to give the user, shown this once: it opens a page where they set their password.' }),
    expires_at: DateTime,
  },
  { description: 'A one-time invitation link.' },
);

export const UpdateUser = Type.Object(
  {
    email: Type.Optional(
      Type.String({
        maxLength: 320,
        description:
          'A new email address, the one they sign in with (compared without case; 409 when another user has it). Their tokens and sessions stay valid.',
      }),
    ),
    name: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
    roles: Type.Optional(Type.Array(Role, { maxItems: 16, uniqueItems: true, description: 'The whole new set of roles.' })),
    active: Type.Optional(
      Type.Boolean({ description: 'false deactivates the user: every token of theirs stops at once; their data is kept.' }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const DeleteUserQuery = Type.Object(
  {
    confirm: Type.Optional(
      Type.String({ maxLength: 320, description: "The user's email address: deleting removes the user and all their data, for good." }),
    ),
  },
  { additionalProperties: false },
);

// ---- oauth

export const OAuthIdParams = Type.Object({
  id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,128}$', description: 'The id (from the list).' }),
});

export const OAuthGrant = Type.Object(
  {
    id: Type.String(),
    client_id: Type.String(),
    client_name: Type.Union([Type.String(), Type.Null()]),
    redirect_uris: Type.Array(Type.String()),
    scopes: Type.Array(Type.String(), { description: 'What the client may do as you.' }),
    created_at: Type.Union([DateTime, Type.Null()]),
  },
  { description: 'A client you authorised.' },
);

export const OAuthClient = Type.Object(
  {
    client_id: Type.String(),
    client_name: Type.Union([Type.String(), Type.Null()]),
    redirect_uris: Type.Array(Type.String()),
    registered_at: Type.Union([DateTime, Type.Null()]),
  },
  { description: 'A registered OAuth client.' },
);

export const OAuthGrantList = Type.Object({ items: Type.Array(OAuthGrant) });
export const OAuthClientList = page('the registered clients, newest first', OAuthClient);

export const OAuthClientListQuery = Type.Object(
  { limit: limit(CLIENT_LIST_LIMIT_DEFAULT, CLIENT_LIST_LIMIT_MAX), cursor: Cursor },
  { additionalProperties: false },
);

export const OAUTH_COMPONENTS: Record<string, TSchema> = { OAuthGrant, OAuthGrantList, OAuthClient, OAuthClientList };

export const TOKEN_COMPONENTS: Record<string, TSchema> = { Token, NewToken, TokenPage, CreateToken, RotateToken, ScopeInfo, ScopeList };
export const USER_COMPONENTS: Record<string, TSchema> = {
  User: UserRecord,
  UserPage,
  CreateUser,
  UpdateUser,
  SetPassword,
  CreateInvitation,
  Invitation,
};
