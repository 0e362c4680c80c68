// Identity tables. The schema itself is owned by the hand-written migrations in ./migrations/;
// these definitions must describe the same columns.
import { randomUUID } from 'node:crypto';
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const User = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: {
    id: p
      .uuid()
      .primary()
      .onCreate(() => randomUUID()),
    /** Always stored lowercased (the service does it); unique. */
    email: p.text().unique('users_email_unique').check('email = lower(email)'),
    name: p.text().nullable(),
    roles: p.array().columnType('text[]').default([]),
    disabled: p.boolean().default(false),
    /** argon2id hash of the password for interactive sign-in; null: none set. */
    passwordHash: p.text().nullable().lazy(),
    passwordSetAt: p.datetime().columnType('timestamptz').nullable(),
    /** What a SCIM client sent that has no column here (externalId, name parts, extensions); null: none. */
    scim: p.json<Record<string, unknown>>().columnType('jsonb').nullable().lazy(),
    createdAt: p
      .datetime()
      .columnType('timestamptz')
      .defaultRaw('now()')
      .onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .columnType('timestamptz')
      .defaultRaw('now()')
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  // Declared so the schema tools know it; the migration creates it. A userName kept in the SCIM
  // profile (one that is not an email address) is unique without case.
  indexes: [
    {
      name: 'users_scim_username_unique',
      expression: "create unique index users_scim_username_unique on users (lower(scim->>'userName'))",
    },
  ],
});
export type User = InferEntity<typeof User>;

export const API_TOKEN_KINDS = ['api', 'minted'] as const;
export type ApiTokenKind = (typeof API_TOKEN_KINDS)[number];

export const ApiToken = defineEntity({
  name: 'ApiToken',
  tableName: 'api_tokens',
  properties: {
    id: p
      .uuid()
      .primary()
      .onCreate(() => randomUUID()),
    user: p.manyToOne(User).fieldName('user_id').deleteRule('cascade').index('api_tokens_user_id_index'),
    kind: p.enum(API_TOKEN_KINDS).columnType('text'),
    name: p.text().nullable(),
    description: p.text().nullable(),
    /** Lowercase hex sha-256 of the raw token; the raw token is never stored. */
    tokenHash: p.text().unique('api_tokens_token_hash_unique'),
    scopes: p.array().columnType('text[]').default([]),
    expiresAt: p.datetime().columnType('timestamptz').nullable(),
    lastUsedAt: p.datetime().columnType('timestamptz').nullable(),
    revokedAt: p.datetime().columnType('timestamptz').nullable(),
    /** For a minted token, the API token that minted it. */
    parent: () => p.manyToOne(ApiToken).fieldName('parent_id').nullable().deleteRule('cascade').index('api_tokens_parent_id_index'),
    createdAt: p
      .datetime()
      .columnType('timestamptz')
      .defaultRaw('now()')
      .onCreate(() => new Date()),
  },
  checks: [{ name: 'api_tokens_minted_parent_check', expression: "(kind = 'minted') = (parent_id is not null)" }],
});
export type ApiToken = InferEntity<typeof ApiToken>;

export const NAMESPACE_ACCESS = ['enabled', 'disabled'] as const;
export type NamespaceAccessValue = (typeof NAMESPACE_ACCESS)[number];

export const NamespaceAccess = defineEntity({
  name: 'NamespaceAccess',
  tableName: 'namespace_access',
  properties: {
    user: p.manyToOne(User).fieldName('user_id').primary().deleteRule('cascade'),
    namespace: p.text().primary(),
    access: p.enum(NAMESPACE_ACCESS).columnType('text'),
    updatedAt: p
      .datetime()
      .columnType('timestamptz')
      .defaultRaw('now()')
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  primaryKeys: ['user', 'namespace'],
});
export type NamespaceAccess = InferEntity<typeof NamespaceAccess>;

/** One record of the OAuth authorization server (core/domain/identity/oauth-store.ts). */
export const OAuthRecord = defineEntity({
  name: 'OAuthRecord',
  tableName: 'oauth_records',
  properties: {
    model: p.text().primary(),
    /** sha-256 (hex) of the record's id. */
    id: p.text().primary(),
    payload: p.json().columnType('jsonb'),
    grantId: p.text().nullable().index('oauth_records_grant_id_index'),
    uid: p.text().nullable().index('oauth_records_uid_index'),
    userCode: p.text().nullable(),
    expiresAt: p.datetime().columnType('timestamptz').nullable(),
    consumedAt: p.datetime().columnType('timestamptz').nullable(),
    createdAt: p.datetime().columnType('timestamptz').defaultRaw('clock_timestamp()'),
  },
  primaryKeys: ['model', 'id'],
});
export type OAuthRecord = InferEntity<typeof OAuthRecord>;

/** A one-time link an admin makes for a user to set their password; the secret is stored hashed. */
export const UserInvitation = defineEntity({
  name: 'UserInvitation',
  tableName: 'user_invitations',
  properties: {
    id: p
      .uuid()
      .primary()
      .onCreate(() => randomUUID()),
    user: p.manyToOne(User).fieldName('user_id').deleteRule('cascade').index('user_invitations_user_id_index'),
    /** Lowercase hex sha-256 of the link's secret. */
    tokenHash: p.text().unique('user_invitations_token_hash_unique'),
    createdBy: p.manyToOne(User).fieldName('created_by').nullable().deleteRule('set null'),
    expiresAt: p.datetime().columnType('timestamptz'),
    usedAt: p.datetime().columnType('timestamptz').nullable(),
    createdAt: p
      .datetime()
      .columnType('timestamptz')
      .defaultRaw('now()')
      .onCreate(() => new Date()),
  },
});
export type UserInvitation = InferEntity<typeof UserInvitation>;

/** Failed sign-ins for one key (sha-256 of an account or a client) in its current window. */
export const SignInFailures = defineEntity({
  name: 'SignInFailures',
  tableName: 'sign_in_failures',
  properties: {
    key: p.text().primary(),
    failures: p.integer(),
    windowEnds: p.datetime().columnType('timestamptz'),
  },
});
export type SignInFailures = InferEntity<typeof SignInFailures>;

/** The namespaces a user pinned (MCP lists only their tools when there are any). */
export const NamespacePin = defineEntity({
  name: 'NamespacePin',
  tableName: 'namespace_pins',
  properties: {
    user: p.manyToOne(User).fieldName('user_id').primary().deleteRule('cascade'),
    namespace: p.text().primary(),
    createdAt: p.datetime().columnType('timestamptz').defaultRaw('now()'),
  },
  primaryKeys: ['user', 'namespace'],
});
export type NamespacePin = InferEntity<typeof NamespacePin>;

export const identityEntities = [User, ApiToken, NamespaceAccess, NamespacePin, OAuthRecord, UserInvitation, SignInFailures] as const;
