// SCIM 2.0 (RFC 7643, RFC 7644) at /scim/v2, so an identity provider (Okta, Entra ID, ...) can
// provision Folio's users: Users (create, get, list with filter=userName eq "...", PUT, PATCH of
// active and the name, DELETE), and the discovery resources ServiceProviderConfig, Schemas and
// ResourceTypes. A surface over the identity domain's user directory: the rules (admins only, one
// account per email, what deactivating does) are the domain's; this file only speaks SCIM.
//
// Authentication: a bearer token as everywhere (an API token of an admin with the scope users, or
// an OAuth token issued for Folio as a whole). A SCIM user's userName is the Folio email.
import Router from '@koa/router';
import type { Context } from 'koa';
import type { Authenticator } from '../../kernel/auth.ts';
import type { ScopeRules } from '../../contract/domain.ts';
import type { IdentityService } from '../../domain/identity/service.ts';
import type { Principal } from '../../domain/identity/types.ts';
import type { UserInfo } from '../../domain/identity/users.ts';
import { BadArguments, Conflict, FolioError, Forbidden, NotFound, Unauthenticated } from '../../contract/errors.ts';
import { readJsonBody, type BodyLimits } from '../http/body.ts';

export const SCIM_PREFIX = '/scim/v2';
const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const PAGE_MAX = 200;

export interface ScimDeps {
  identity: IdentityService;
  auth: Authenticator;
  scopes: ScopeRules;
  limits: BodyLimits;
  publicUrl: () => string;
}

/** A SCIM error (RFC 7644 §3.12): its HTTP status, and a scimType where the RFC names one. */
class ScimError extends Error {
  readonly status: number;
  readonly scimType: string | undefined;
  constructor(status: number, detail: string, scimType?: string) {
    super(detail);
    this.status = status;
    this.scimType = scimType;
  }
}

function send(ctx: Context, status: number, body?: unknown): void {
  ctx.status = status;
  if (body === undefined) return;
  ctx.type = 'application/scim+json; charset=utf-8';
  ctx.body = JSON.stringify(body);
}

function fail(ctx: Context, err: unknown): void {
  let e: ScimError;
  if (err instanceof ScimError) e = err;
  else if (err instanceof Unauthenticated) {
    for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
    e = new ScimError(401, err.message);
  } else if (err instanceof Conflict) e = new ScimError(409, err.message, 'uniqueness');
  else if (err instanceof BadArguments) e = new ScimError(400, err.message, 'invalidValue');
  else if (err instanceof FolioError && (err instanceof NotFound || err instanceof Forbidden || err.status < 500))
    e = new ScimError(err.status, err.message);
  else throw err;
  send(ctx, e.status, {
    schemas: [ERROR_SCHEMA],
    status: String(e.status),
    ...(e.scimType ? { scimType: e.scimType } : {}),
    detail: e.message,
  });
}

/** `userName eq "value"` (any case for the attribute and operator), and nothing else: no injection. */
export function parseFilter(filter: string): { email: string } {
  const m = /^\s*userName\s+eq\s+("(?:[^"\\]|\\.)*")\s*$/i.exec(filter);
  if (!m) throw new ScimError(400, 'only the filter userName eq "<email>" is supported', 'invalidFilter');
  let email: unknown;
  try {
    email = JSON.parse(m[1]!);
  } catch {
    throw new ScimError(400, 'the filter value is not a valid string', 'invalidFilter');
  }
  return { email: String(email) };
}

export function scimRouter(deps: ScimDeps): Router {
  const router = new Router({ prefix: SCIM_PREFIX });
  const base = () => `${deps.publicUrl()}${SCIM_PREFIX}`;

  const toScim = (u: UserInfo) => ({
    schemas: [USER_SCHEMA],
    id: u.id,
    userName: u.email,
    ...(u.name ? { name: { formatted: u.name }, displayName: u.name } : {}),
    emails: [{ value: u.email, primary: true, type: 'work' }],
    active: u.active,
    meta: { resourceType: 'User', created: u.created_at, lastModified: u.updated_at, location: `${base()}/Users/${u.id}` },
  });

  /** An admin with the scope users (the same rule as the REST group users). */
  const admin = async (ctx: Context): Promise<Principal> => {
    const p = await deps.auth.authenticate(ctx.get('authorization') || undefined, new URLSearchParams(ctx.querystring));
    if (!p.user.roles.includes('admin')) throw new ScimError(403, 'SCIM provisioning needs role admin, which your user does not have.');
    if (!deps.scopes.allows(p.scopes, 'users', p.user.roles)) throw new ScimError(403, 'this token lacks the scope users.');
    return p;
  };

  const body = async (ctx: Context): Promise<Record<string, unknown>> => {
    const value = await readJsonBody(ctx, deps.limits);
    if (!value || typeof value !== 'object' || Array.isArray(value))
      throw new ScimError(400, 'the body must be a JSON object', 'invalidSyntax');
    return value as Record<string, unknown>;
  };

  const handle = (fn: (ctx: Context) => Promise<void>) => async (ctx: Context) => {
    try {
      await fn(ctx);
    } catch (err) {
      fail(ctx, err);
    }
  };

  router.get('/ServiceProviderConfig', (ctx) =>
    send(ctx, 200, {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
      documentationUri: `${deps.publicUrl()}/api/v1/docs`,
      patch: { supported: true },
      bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
      filter: { supported: true, maxResults: PAGE_MAX },
      changePassword: { supported: false },
      sort: { supported: false },
      etag: { supported: false },
      authenticationSchemes: [
        {
          type: 'oauthbearertoken',
          name: 'Bearer token',
          description: 'A Folio API token of an admin with the scope users, as Authorization: Bearer <token>.',
          primary: true,
        },
      ],
      meta: { resourceType: 'ServiceProviderConfig', location: `${base()}/ServiceProviderConfig` },
    }),
  );

  const userResourceType = () => ({
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'],
    id: 'User',
    name: 'User',
    endpoint: '/Users',
    description: 'A Folio user account; userName is the email address.',
    schema: USER_SCHEMA,
    meta: { resourceType: 'ResourceType', location: `${base()}/ResourceTypes/User` },
  });
  router.get('/ResourceTypes', (ctx) =>
    send(ctx, 200, { schemas: [LIST_SCHEMA], totalResults: 1, startIndex: 1, itemsPerPage: 1, Resources: [userResourceType()] }),
  );
  router.get('/ResourceTypes/User', (ctx) => send(ctx, 200, userResourceType()));

  const attr = (name: string, type: string, extra: Record<string, unknown> = {}) => ({
    name,
    type,
    multiValued: false,
    required: false,
    caseExact: false,
    mutability: 'readWrite',
    returned: 'default',
    uniqueness: 'none',
    ...extra,
  });
  const userSchema = () => ({
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:Schema'],
    id: USER_SCHEMA,
    name: 'User',
    description: 'A Folio user account.',
    attributes: [
      attr('userName', 'string', { required: true, uniqueness: 'server', mutability: 'immutable', description: 'The email address.' }),
      attr('name', 'complex', {
        subAttributes: [attr('formatted', 'string'), attr('givenName', 'string'), attr('familyName', 'string')],
      }),
      attr('displayName', 'string'),
      attr('active', 'boolean', { description: 'false deactivates: every token of theirs stops at once; their data is kept.' }),
      attr('emails', 'complex', {
        multiValued: true,
        mutability: 'readOnly',
        subAttributes: [attr('value', 'string'), attr('type', 'string'), attr('primary', 'boolean')],
      }),
    ],
    meta: { resourceType: 'Schema', location: `${base()}/Schemas/${USER_SCHEMA}` },
  });
  router.get('/Schemas', (ctx) =>
    send(ctx, 200, { schemas: [LIST_SCHEMA], totalResults: 1, startIndex: 1, itemsPerPage: 1, Resources: [userSchema()] }),
  );
  router.get(
    '/Schemas/:id',
    handle((ctx) => {
      if (idOf(ctx) !== USER_SCHEMA) return Promise.reject(new ScimError(404, `no schema ${idOf(ctx)}`));
      send(ctx, 200, userSchema());
      return Promise.resolve();
    }),
  );

  const users = deps.identity.users;

  router.get(
    '/Users',
    handle(async (ctx) => {
      const p = await admin(ctx);
      const q = new URLSearchParams(ctx.querystring);
      const startIndex = Math.max(1, intParam(q.get('startIndex'), 1));
      const count = Math.min(PAGE_MAX, Math.max(0, intParam(q.get('count'), 100)));
      const filter = q.get('filter');
      const email = filter === null ? undefined : parseFilter(filter).email;
      const page = await users.listByOffset(p, { email, offset: startIndex - 1, limit: count });
      send(ctx, 200, {
        schemas: [LIST_SCHEMA],
        totalResults: page.total,
        startIndex,
        itemsPerPage: page.items.length,
        Resources: page.items.map(toScim),
      });
    }),
  );

  router.post(
    '/Users',
    handle(async (ctx) => {
      const p = await admin(ctx);
      const b = await body(ctx);
      const email = userNameOf(b);
      const made = await users.create(p, { email, name: nameOf(b) ?? null });
      const u = b['active'] === false ? await users.update(p, made.id, { active: false }) : made;
      ctx.set('Location', `${base()}/Users/${u.id}`);
      send(ctx, 201, toScim(u));
    }),
  );

  router.get(
    '/Users/:id',
    handle(async (ctx) => {
      const p = await admin(ctx);
      send(ctx, 200, toScim(await users.get(p, idOf(ctx))));
    }),
  );

  // PUT replaces what Folio keeps that SCIM may change: the name and active (userName is the
  // email, which does not change here).
  router.put(
    '/Users/:id',
    handle(async (ctx) => {
      const p = await admin(ctx);
      const id = idOf(ctx);
      const current = await users.get(p, id);
      const b = await body(ctx);
      if (typeof b['userName'] === 'string' && b['userName'].trim().toLowerCase() !== current.email)
        throw new ScimError(400, 'userName (the email) cannot be changed', 'mutability');
      const active = b['active'];
      if (active !== undefined && typeof active !== 'boolean') throw new ScimError(400, 'active must be true or false', 'invalidValue');
      const u = await users.update(p, id, { name: nameOf(b) ?? null, ...(active === undefined ? {} : { active }) });
      send(ctx, 200, toScim(u));
    }),
  );

  router.patch(
    '/Users/:id',
    handle(async (ctx) => {
      const p = await admin(ctx);
      const id = idOf(ctx);
      const current = await users.get(p, id);
      const b = await body(ctx);
      const schemas = b['schemas'];
      if (!Array.isArray(schemas) || !schemas.includes(PATCH_SCHEMA))
        throw new ScimError(400, `a PATCH body names the schema ${PATCH_SCHEMA}`, 'invalidSyntax');
      const ops = b['Operations'];
      if (!Array.isArray(ops) || ops.length === 0 || ops.length > 32)
        throw new ScimError(400, 'Operations must be a list of 1 to 32 operations', 'invalidSyntax');
      const change: { name?: string | null; active?: boolean } = {};
      for (const op of ops as unknown[]) applyOp(op, change, current);
      const u = Object.keys(change).length ? await users.update(p, id, change) : current;
      send(ctx, 200, toScim(u));
    }),
  );

  // An identity provider's DELETE means it: the user goes with their data (deactivate to keep it).
  router.delete(
    '/Users/:id',
    handle(async (ctx) => {
      const p = await admin(ctx);
      const id = idOf(ctx);
      const u = await users.get(p, id);
      await users.delete(p, id, u.email);
      send(ctx, 204);
    }),
  );

  router.all(
    '/*rest',
    handle((ctx) =>
      Promise.reject(new ScimError(404, `no SCIM resource ${ctx.method} ${ctx.path} here; see ${SCIM_PREFIX}/ResourceTypes`)),
    ),
  );
  return router;
}

function idOf(ctx: Context): string {
  return String((ctx as { params?: Record<string, string> }).params?.['id'] ?? '');
}

function intParam(v: string | null, fallback: number): number {
  if (v === null || v === '') return fallback;
  const n = Number(v);
  if (!Number.isInteger(n)) throw new ScimError(400, 'startIndex and count must be integers', 'invalidValue');
  return n;
}

function userNameOf(b: Record<string, unknown>): string {
  if (typeof b['userName'] === 'string' && b['userName'].trim()) return b['userName'];
  const emails = b['emails'];
  if (Array.isArray(emails)) {
    const list = emails as Array<{ value?: unknown; primary?: unknown } | null>;
    const e = list.find((x) => x?.primary) ?? list[0];
    if (typeof e?.value === 'string') return e.value;
  }
  throw new ScimError(400, 'userName (the email address) is required', 'invalidValue');
}

/** The name as Folio keeps it (one string): name.formatted, else given + family, else displayName. */
function nameOf(b: Record<string, unknown>): string | undefined {
  const n = b['name'];
  if (n && typeof n === 'object') {
    const { formatted, givenName, familyName } = n as Record<string, unknown>;
    if (typeof formatted === 'string' && formatted.trim()) return formatted.trim();
    const parts = [givenName, familyName].filter((x): x is string => typeof x === 'string' && x.trim() !== '');
    if (parts.length) return parts.join(' ');
  }
  if (typeof b['displayName'] === 'string' && b['displayName'].trim()) return b['displayName'].trim();
  return undefined;
}

/** One PatchOp operation on active or the name (RFC 7644 §3.5.2), into `change`. */
function applyOp(raw: unknown, change: { name?: string | null; active?: boolean }, current: UserInfo): void {
  if (!raw || typeof raw !== 'object') throw new ScimError(400, 'each operation must be an object', 'invalidSyntax');
  const { op, path, value } = raw as { op?: unknown; path?: unknown; value?: unknown };
  const kind = typeof op === 'string' ? op.toLowerCase() : '';
  if (kind !== 'replace' && kind !== 'add' && kind !== 'remove')
    throw new ScimError(400, 'op must be add, replace or remove', 'invalidSyntax');
  const set = (attr: string, v: unknown) => {
    const a = attr.toLowerCase();
    if (a === 'active') {
      // Some providers send "False" as a string.
      const b = typeof v === 'string' ? v.toLowerCase() : v;
      if (b !== true && b !== false && b !== 'true' && b !== 'false')
        throw new ScimError(400, 'active must be true or false', 'invalidValue');
      change.active = b === true || b === 'true';
    } else if (a === 'name.formatted' || a === 'displayname') {
      if (v !== null && typeof v !== 'string') throw new ScimError(400, `${attr} must be a string`, 'invalidValue');
      change.name = kind === 'remove' ? null : v;
    } else if (a === 'name') {
      change.name = kind === 'remove' ? null : (nameOf({ name: v }) ?? null);
    } else if (a === 'name.givenname' || a === 'name.familyname') {
      if (typeof v !== 'string') throw new ScimError(400, `${attr} must be a string`, 'invalidValue');
      change.name = v;
    } else if (a === 'username' || a === 'emails' || a === 'id') {
      if (typeof v === 'string' && a === 'username' && v.trim().toLowerCase() === current.email) return;
      throw new ScimError(400, `${attr} cannot be changed here`, 'mutability');
    } else throw new ScimError(400, `the attribute ${attr} is not supported`, 'invalidPath');
  };
  if (typeof path === 'string' && path.length > 0) {
    if (path.length > 100) throw new ScimError(400, 'path is too long', 'invalidPath');
    set(path.replace(/^urn:ietf:params:scim:schemas:core:2\.0:User:/i, ''), value);
    return;
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new ScimError(400, 'without a path, value must be an object of attributes', 'invalidValue');
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (k === 'schemas') continue;
    set(k, v);
  }
}
