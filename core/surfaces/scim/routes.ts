// SCIM 2.0 (RFC 7643, RFC 7644) at /scim/v2, so an identity provider (Okta, Entra ID, ...) can
// provision Folio's users: Users (create, get, list with filters, PUT, PATCH, DELETE), and the
// discovery resources ServiceProviderConfig, Schemas and ResourceTypes.
//
// The protocol is scimmy's: it parses and validates resources against the SCIM User schema,
// parses filters (a grammar, so a filter is data, never SQL: `userName eq "..."` becomes a bound
// parameter, any other filter is matched by scimmy over the directory), applies PatchOp operations
// with their full path syntax, and formats list responses and errors. This file is the Koa surface
// over it and the mapping to the identity domain's user directory (./mapping.ts), whose rules
// (admins only, one account per email, what deactivating does) stay the domain's.
//
// Authentication: a bearer token as everywhere (an API token of an admin with the scope users, or
// an OAuth token issued for Folio as a whole). A SCIM user's userName is the Folio email, or a name
// kept as given when the email comes in emails (./mapping.ts).
import { newErrorId } from '../../contract/observe.ts';
import Router from '@koa/router';
import type { Context } from 'koa';
import SCIMMY from 'scimmy';
import type { Authenticator } from '../../kernel/auth.ts';
import type { ScopeRules } from '../../contract/domain.ts';
import type { IdentityService } from '../../domain/identity/service.ts';
import type { Principal } from '../../domain/identity/types.ts';
import type { UserInfo } from '../../domain/identity/users.ts';
import { BadArguments, Conflict, FolioError, Unauthenticated } from '../../contract/errors.ts';
import type { Logger } from 'pino';
import { readJsonBody, type BodyLimits } from '../http/body.ts';
import { queryTextProblem } from '../http/query-text.ts';
import {
  accountAfter,
  accountOf,
  caseless,
  isEmail,
  nameOf,
  otherEmails,
  profileOf,
  renamed,
  requireValues,
  toScim,
  trimmed,
  type Profile,
  type ScimIn,
} from './mapping.ts';

export const SCIM_PREFIX = '/scim/v2';
const PAGE_MAX = 200;
/** A filter other than `userName eq` is matched in memory over at most this many users. */
const SCAN_MAX = 10_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface ScimDeps {
  identity: IdentityService;
  auth: Authenticator;
  scopes: ScopeRules;
  limits: BodyLimits;
  publicUrl: () => string;
  log: Logger;
}

/** What scimmy hands back to the handlers below on every call: who asks, and which Folio serves. */
interface Call {
  p: Principal;
  users: IdentityService['users'];
  log: Logger;
  /** A PATCH (the resource the ingress handler gets is the current one with its operations applied). */
  patch?: boolean;
}

const ScimError = SCIMMY.Types.Error;
type ScimError = InstanceType<typeof ScimError>;

/** Folio's errors in SCIM's terms (RFC 7644 §3.12); anything unexpected is a 500 with an id in the log. */
function toScimError(err: unknown, log: Logger): ScimError {
  if (err instanceof ScimError) return err;
  if (err instanceof Conflict) return new ScimError(409, 'uniqueness', err.message);
  if (err instanceof BadArguments) return new ScimError(400, 'invalidValue', err.message);
  if (err instanceof FolioError && err.status < 500) return new ScimError(err.status, null as unknown as string, err.message);
  // scimmy reports a handler's TypeError (a value of the wrong type) as such.
  if (err instanceof TypeError) return new ScimError(400, 'invalidValue', err.message);
  const errorId = newErrorId();
  log.error({ errorId, err }, 'unexpected error in the SCIM API');
  return new ScimError(500, null as unknown as string, `internal error ${errorId}; the server log has the details under this id`);
}

/** Runs a handler so that scimmy sees only its own errors (it reports any other one as a 404). */
const guarded =
  <A extends unknown[], R>(fn: (...args: [...A, Call]) => Promise<R>) =>
  async (...args: [...A, Call]): Promise<R> => {
    try {
      return await fn(...args);
    } catch (err) {
      throw toScimError(err, (args.at(-1) as Call).log);
    }
  };

type ScimUser = Parameters<SCIMMY.Types.Resource.IngressHandler<SCIMMY.Resources.User, SCIMMY.Schemas.User>>[1];

// scimmy keeps its configuration and declared resources in module state: declared once per
// process, with handlers that act for whichever Folio and caller the request's `Call` names.
let declared = false;
function declareScim(): void {
  if (declared) return;
  declared = true;
  SCIMMY.Config.set({
    patch: true,
    filter: true,
    bulk: false,
    sort: false,
    etag: false,
    changePassword: false,
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'Bearer token',
        description: 'A Folio API token of an admin with the scope users (or an OAuth token for Folio), as Authorization: Bearer <token>.',
        specUri: 'https://datatracker.ietf.org/doc/html/rfc6750',
        primary: true,
      },
    ],
  });
  SCIMMY.Config.set('filter', { supported: true, maxResults: PAGE_MAX });
  for (const R of [SCIMMY.Resources.Schema, SCIMMY.Resources.ResourceType, SCIMMY.Resources.ServiceProviderConfig]) R.basepath(SCIM_PREFIX);
  SCIMMY.Resources.User.basepath(SCIM_PREFIX);
  // The enterprise extension (employeeNumber, department, manager, ...): declared, so providers
  // that send it (Entra ID, Okta with the extension mapped) are validated and it is kept and echoed.
  SCIMMY.Resources.User.extend(SCIMMY.Schemas.EnterpriseUser, false);
  SCIMMY.Resources.declare(SCIMMY.Resources.User);
  SCIMMY.Resources.User.egress(
    guarded(async (resource: SCIMMY.Resources.User, call: Call) => {
      // Only the one-user form arrives here (lists are served by listUsers, which pages in the
      // database); the PatchOp reads the current user this way too.
      if (!resource.id) throw new ScimError(500, null as unknown as string, 'a list reached the one-user handler');
      const u = await call.users.get(call.p, resource.id);
      return toScim(u, (await call.users.scimProfiles(call.p, [u.id])).get(u.id) ?? null);
    }),
  )
    .ingress(
      guarded(async (resource: SCIMMY.Resources.User, user: ScimUser, call: Call) => {
        const u = JSON.parse(JSON.stringify(user)) as ScimIn & { active?: boolean } & Record<string, unknown>;
        if (!resource.id) {
          const { email, userName } = accountOf(u);
          const profile = profileOf(u, userName);
          if (otherEmails(u, email).length)
            throw new ScimError(400, 'invalidValue', `emails: a Folio account has one email address (${email})`);
          const made = await call.users.create(call.p, { email, name: nameOf(u), ...(profile ? { scim: profile } : {}) });
          const out = u.active === false ? await call.users.update(call.p, made.id, { active: false }) : made;
          return toScim(out, profile);
        }
        // PUT, or a PATCH after scimmy applied its operations. A new email (userName, emails) is
        // applied (409 uniqueness when another user has it); other addresses are refused, not ignored.
        const current = await call.users.get(call.p, resource.id);
        const stored = (await call.users.scimProfiles(call.p, [current.id])).get(current.id) ?? null;
        const before = toScim(current, stored);
        const { email, userName } = accountAfter(u, { email: current.email, userName: before.userName }, call.patch === true);
        const profile = profileOf(u, userName);
        const others = otherEmails(u, email, current.email);
        if (others.length)
          throw new ScimError(
            400,
            'invalidValue',
            `emails: a Folio account has one email address (${email}); ${others.join(', ')} was not applied`,
          );
        const name = renamed(u, before, current.name);
        // displayName and name.formatted are one name here: both changed to different values cannot both apply.
        for (const [path, value, was] of [
          ['displayName', u.displayName, before.displayName],
          ['name.formatted', u.name?.formatted, before.name?.formatted],
        ] as const)
          if (trimmed(value) && trimmed(value) !== trimmed(was) && trimmed(value) !== name)
            throw new ScimError(
              400,
              'invalidValue',
              `${path}: Folio keeps one name (displayName and name.formatted); send them alike or one of them`,
            );
        const change = {
          name,
          scim: profile,
          ...(email === current.email ? {} : { email }),
          ...(u.active === undefined ? {} : { active: u.active }),
        };
        return toScim(await call.users.update(call.p, resource.id, change), profile);
      }),
    )
    .degress(
      guarded(async (resource: SCIMMY.Resources.User, call: Call) => {
        // An identity provider's DELETE means it: the user goes with their data (deactivate to keep it).
        const u = await call.users.get(call.p, resource.id!);
        await call.users.delete(call.p, u.id, u.email);
      }),
    );
}

/** Some providers (Entra ID) send booleans as "True"/"False" in PATCH values: read them as booleans. */
function normalisePatch(body: unknown): unknown {
  if (!body || typeof body !== 'object' || !Array.isArray((body as { Operations?: unknown }).Operations)) return body;
  const bool = (v: unknown) => (typeof v === 'string' && /^(true|false)$/i.test(v) ? v.toLowerCase() === 'true' : v);
  const ops = (body as { Operations: unknown[] }).Operations.map((op) => {
    if (!op || typeof op !== 'object') return op;
    const o = op as { op?: unknown; path?: unknown; value?: unknown };
    const out: Record<string, unknown> = { ...o, ...(typeof o.op === 'string' ? { op: o.op.toLowerCase() } : {}) };
    if (typeof o.path === 'string' && /(^|:)active$/i.test(o.path)) out['value'] = bool(o.value);
    else if (o.path === undefined && o.value && typeof o.value === 'object' && !Array.isArray(o.value)) {
      const v = { ...(o.value as Record<string, unknown>) };
      for (const k of Object.keys(v)) if (/(^|:)active$/i.test(k)) v[k] = bool(v[k]);
      out['value'] = v;
    }
    return out;
  });
  return { ...body, Operations: ops };
}

/** A PATCH of what Folio never keeps (a password: users set theirs with an invitation link) is refused, not ignored. */
function refuseUnstored(message: unknown): void {
  const ops = (message as { Operations?: unknown } | null)?.Operations;
  if (!Array.isArray(ops)) return;
  for (const op of ops) {
    const o = (op ?? {}) as { path?: unknown; value?: unknown };
    const paths = typeof o.path === 'string' ? [o.path] : o.value && typeof o.value === 'object' ? Object.keys(o.value) : [];
    if (paths.some((x) => /(^|:)password$/i.test(x)))
      throw new ScimError(400, 'invalidPath', 'password: Folio takes no passwords over SCIM (a user sets theirs with an invitation link)');
  }
}

export function scimRouter(deps: ScimDeps): Router {
  declareScim();
  const router = new Router({ prefix: SCIM_PREFIX });
  const base = () => `${deps.publicUrl()}${SCIM_PREFIX}`;

  /** scimmy writes locations under SCIM_PREFIX; the public ones are absolute (RFC 7643 §3.1). */
  const absolute = (value: unknown): unknown => {
    const prefix = `${SCIM_PREFIX}/`;
    return JSON.parse(JSON.stringify(value), (k, v: unknown) =>
      k === 'location' && typeof v === 'string' && v.startsWith(prefix) ? `${base()}${v.slice(SCIM_PREFIX.length)}` : v,
    );
  };

  const send = (ctx: Context, status: number, body?: unknown) => {
    ctx.status = status;
    if (body === undefined) return;
    ctx.type = 'application/scim+json; charset=utf-8';
    ctx.body = JSON.stringify(absolute(body));
  };

  /** An admin with the scope users (the same rule as the REST group users). */
  const admin = async (ctx: Context): Promise<Call> => {
    const p = await deps.auth.authenticate(ctx.get('authorization') || undefined, new URLSearchParams(ctx.querystring));
    if (!p.user.roles.includes('admin'))
      throw new ScimError(403, null as unknown as string, 'SCIM provisioning needs role admin, which your user does not have.');
    if (!deps.scopes.allows(p.scopes, 'users', p.user.roles))
      throw new ScimError(403, null as unknown as string, 'this token lacks the scope users.');
    return { p, users: deps.identity.users, log: deps.log };
  };

  const body = async (ctx: Context): Promise<unknown> => {
    try {
      return await readJsonBody(ctx, deps.limits);
    } catch (err) {
      if (err instanceof FolioError && err.status === 400) throw new ScimError(400, 'invalidSyntax', err.message);
      throw err;
    }
  };

  /** The user named in the path: only a Folio id (a UUID) reaches scimmy, which writes it into a filter. */
  const userId = (ctx: Context): string => {
    const id = String((ctx as { params?: Record<string, string> }).params?.['id'] ?? '');
    if (!UUID.test(id)) throw new ScimError(404, null as unknown as string, `Resource ${id} not found`);
    return id.toLowerCase();
  };

  /**
   * Query parameters as scimmy reads them. startIndex and count are integers of at most 15 digits,
   * which a number holds exactly and the database takes as an offset (99999999999999999999 is
   * neither). Below 1 and below 0 they mean 1 and 0 (RFC 7644 §3.4.2.4).
   */
  const params = (ctx: Context): Record<string, unknown> => {
    const unstorable = queryTextProblem(ctx.querystring);
    if (unstorable) throw new ScimError(400, 'invalidValue', `query parameter ${unstorable.name} ${unstorable.message}`);
    const q = new URLSearchParams(ctx.querystring);
    const out: Record<string, unknown> = {};
    for (const k of ['filter', 'attributes', 'excludedAttributes']) {
      const v = q.get(k);
      if (v !== null) out[k] = v;
    }
    for (const k of ['startIndex', 'count']) {
      const v = q.get(k);
      if (v === null || v === '') continue;
      if (!/^[+-]?\d{1,15}$/.test(v)) throw new ScimError(400, 'invalidValue', `${k} must be an integer of at most 15 digits`);
      out[k] = Number(v);
    }
    return out;
  };

  const handle = (fn: (ctx: Context) => Promise<void>) => async (ctx: Context) => {
    try {
      await fn(ctx);
    } catch (raw) {
      if (raw instanceof Unauthenticated) for (const [k, v] of Object.entries(raw.headers)) ctx.set(k, v);
      const err = raw instanceof Unauthenticated ? new ScimError(401, null as unknown as string, raw.message) : toScimError(raw, deps.log);
      send(ctx, err.status, new SCIMMY.Messages.Error(err));
    }
  };

  /**
   * GET /Users: `userName eq "..."` (and `id eq`) are looked up in the database; any other filter
   * scimmy parsed is matched by scimmy over the directory (up to SCAN_MAX users). Paged by startIndex
   * and count with the total.
   */
  const listUsers = async (call: Call, q: Record<string, unknown>) => {
    const resource = new SCIMMY.Resources.User(undefined, q);
    if (resource.filter) requireValues(resource.filter);
    const matcher = resource.filter
      ? new SCIMMY.Types.Filter(caseless(resource.filter) as ConstructorParameters<typeof SCIMMY.Types.Filter>[0])
      : undefined;
    const startIndex = Math.max(1, (q['startIndex'] as number | undefined) ?? 1);
    const count = Math.min(PAGE_MAX, Math.max(0, (q['count'] as number | undefined) ?? 100));
    const filter = matcher as unknown as Array<Record<string, unknown[]>> | undefined;
    const only = filter?.length === 1 ? Object.entries(filter[0]!) : [];
    // One comparison of a top-level attribute ({ userName: ['eq', 'x'] }); a sub-attribute's
    // ({ name: { givenName: [...] } }) is not an array, and goes to the scan like any other.
    const [attr, comparison] = only.length === 1 ? only[0]! : [];
    const [op, value] = Array.isArray(comparison) ? comparison : [];
    let items: UserInfo[];
    let total: number;
    let profiles: Map<string, Profile>;
    if (!filter) {
      ({ items, total } = await call.users.listByOffset(call.p, { offset: startIndex - 1, limit: count }));
      profiles = await call.users.scimProfiles(
        call.p,
        items.map((u) => u.id),
      );
    } else if (attr?.toLowerCase() === 'username' && op === 'eq' && typeof value === 'string' && isEmail(value)) {
      ({ items, total } = await call.users.listByOffset(call.p, { email: value, offset: startIndex - 1, limit: count }));
      profiles = await call.users.scimProfiles(
        call.p,
        items.map((u) => u.id),
      );
      // The one user with that email, unless its userName is another one it was given.
      const named = items.filter((u) => typeof profiles.get(u.id)?.['userName'] !== 'string');
      total -= items.length - named.length;
      items = named;
    } else {
      const all: UserInfo[] = [];
      // Paged by whatever the users service gives at most (it caps a page): advanced by what came,
      // ended by the total or an empty page, never by a page shorter than what was asked.
      for (let offset = 0; ;) {
        const page = await call.users.listByOffset(call.p, { offset, limit: PAGE_MAX });
        if (page.total > SCAN_MAX)
          throw new ScimError(400, 'tooMany', `the directory has more than ${SCAN_MAX} users: filter with userName eq "<email>"`);
        all.push(...page.items);
        offset += page.items.length;
        if (page.items.length === 0 || offset >= page.total) break;
      }
      profiles = await call.users.scimProfiles(
        call.p,
        all.map((u) => u.id),
      );
      const byId = new Map(all.map((u) => [u.id, u]));
      // Matched as the resources they are (scimmy's own schema instances), so that a filter on a
      // multi-valued attribute (emails[type eq "work"].value) sees an array.
      // userName lowercased, as the filter's values are (caseless): a kept userName keeps its case.
      const candidates = all.map((u) => {
        const r = toScim(u, profiles.get(u.id) ?? null);
        return new SCIMMY.Schemas.User({ ...r, userName: r.userName.toLowerCase() }, 'out');
      });
      const matched = (matcher!.match(candidates) as Array<{ id: string }>).map((x) => byId.get(x.id)!);
      total = matched.length;
      items = matched.slice(startIndex - 1, startIndex - 1 + count);
    }
    const resources = items.map(
      (u) =>
        new SCIMMY.Schemas.User(
          toScim(u, profiles.get(u.id) ?? null),
          'out',
          SCIMMY.Resources.User.basepath() as unknown as string,
          resource.attributes,
        ),
    );
    // The page is cut already: built from startIndex 1 so scimmy does not cut it again, then told
    // where it starts.
    const list = new SCIMMY.Messages.ListResponse(resources, { totalResults: total, startIndex: 1, itemsPerPage: resources.length });
    list.startIndex = startIndex;
    return list;
  };

  router.get(
    '/ServiceProviderConfig',
    handle(async (ctx) => send(ctx, 200, await new SCIMMY.Resources.ServiceProviderConfig(undefined, params(ctx)).read())),
  );
  router.get(
    '/ResourceTypes',
    handle(async (ctx) => send(ctx, 200, await new SCIMMY.Resources.ResourceType(undefined, params(ctx)).read())),
  );
  router.get(
    '/ResourceTypes/:id',
    handle(async (ctx) =>
      send(ctx, 200, await new SCIMMY.Resources.ResourceType(String((ctx.params as Record<string, string>)['id']), params(ctx)).read()),
    ),
  );
  router.get(
    '/Schemas',
    handle(async (ctx) => send(ctx, 200, await new SCIMMY.Resources.Schema(undefined, params(ctx)).read())),
  );
  router.get(
    '/Schemas/:id',
    handle(async (ctx) =>
      send(ctx, 200, await new SCIMMY.Resources.Schema(String((ctx.params as Record<string, string>)['id']), params(ctx)).read()),
    ),
  );

  router.get(
    '/Users',
    handle(async (ctx) => {
      const call = await admin(ctx);
      send(ctx, 200, await listUsers(call, params(ctx)));
    }),
  );
  router.post(
    '/Users',
    handle(async (ctx) => {
      const call = await admin(ctx);
      const made = await new SCIMMY.Resources.User(undefined, params(ctx)).write(await body(ctx), call);
      ctx.set('Location', `${base()}/Users/${made.id}`);
      send(ctx, 201, made);
    }),
  );
  router.get(
    '/Users/:id',
    handle(async (ctx) => {
      const call = await admin(ctx);
      send(ctx, 200, await new SCIMMY.Resources.User(userId(ctx), params(ctx)).read(call));
    }),
  );
  router.put(
    '/Users/:id',
    handle(async (ctx) => {
      const call = await admin(ctx);
      send(ctx, 200, await new SCIMMY.Resources.User(userId(ctx), params(ctx)).write(await body(ctx), call));
    }),
  );
  router.patch(
    '/Users/:id',
    handle(async (ctx) => {
      const call = await admin(ctx);
      const message = normalisePatch(await body(ctx)) as Parameters<SCIMMY.Resources.User['patch']>[0];
      refuseUnstored(message);
      const patched = await new SCIMMY.Resources.User(userId(ctx), params(ctx)).patch(message, { ...call, patch: true });
      // Nothing changed: scimmy answers nothing, and RFC 7644 §3.5.2 allows 204.
      if (patched) send(ctx, 200, patched);
      else send(ctx, 204);
    }),
  );
  router.delete(
    '/Users/:id',
    handle(async (ctx) => {
      const call = await admin(ctx);
      await new SCIMMY.Resources.User(userId(ctx)).dispose(call);
      send(ctx, 204);
    }),
  );

  router.all(
    '/*rest',
    handle((ctx) =>
      Promise.reject(
        new ScimError(404, null as unknown as string, `no SCIM resource ${ctx.method} ${ctx.path} here; see ${SCIM_PREFIX}/ResourceTypes`),
      ),
    ),
  );
  return router;
}
