// Personal API tokens, shaped like GitLab's personal access tokens: a name, a description, scopes
// and a required expiry (at most `maxLifetimeDays` ahead); the secret is shown once, on create and
// on rotate. Every method acts for a principal and reads only that user's tokens: another user's
// token id is NotFound, like one that never existed.
import { LockMode } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ScopeRules } from '../../contract/domain.ts';
import { BadArguments, Conflict, Forbidden, NotFound, type ArgProblem } from '../../contract/errors.ts';
import { ApiToken, User } from './entities.ts';
import { generateToken, hashToken } from './tokens.ts';
import type { Principal } from './types.ts';
import { requireWithinCaller, scopesBeyondCaller } from './within-caller.ts';
import { recordAudit } from '../audit/record.ts';

export interface TokenSettings {
  /** The latest expiry a personal token may have, in days from its creation (or rotation). */
  tokenMaxLifetimeDays: number;
  /** A registered OAuth client no user has authorised is deleted this many days after registering. */
  oauthClientUnusedDays?: number | undefined;
}

/** A token as its owner sees it. The secret is never part of it. */
export interface TokenInfo {
  id: string;
  kind: 'api' | 'minted';
  name: string | null;
  description: string | null;
  scopes: string[];
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  /** Neither revoked nor expired. */
  active: boolean;
}

/** A token just made: its description and, this once, the secret. */
export type NewToken = TokenInfo & { token: string };

export interface CreateToken {
  name: string;
  description?: string | null | undefined;
  scopes: string[];
  /** One of the two: whole days from now, or an instant. */
  expires_in_days?: number | undefined;
  expires_at?: string | undefined;
}

export interface RotateToken {
  expires_in_days?: number | undefined;
  expires_at?: string | undefined;
}

export interface TokenPage {
  items: TokenInfo[];
  next_cursor: string | null;
  limit: number;
}

export const TOKEN_LIST_LIMIT_DEFAULT = 50;
export const TOKEN_LIST_LIMIT_MAX = 100;
const NAME_MAX = 100;
const DESCRIPTION_MAX = 1000;
const SCOPES_MAX = 32;
const DAY_MS = 86_400_000;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TOKEN_404 = 'no such token';

export function tokenInfo(row: ApiToken, now = Date.now()): TokenInfo {
  const expired = row.expiresAt !== null && row.expiresAt !== undefined && row.expiresAt.getTime() <= now;
  return {
    id: row.id,
    kind: row.kind,
    name: row.name ?? null,
    description: row.description ?? null,
    scopes: [...row.scopes],
    created_at: row.createdAt.toISOString(),
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    expires_at: row.expiresAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
    active: !row.revokedAt && !expired,
  };
}

export class PersonalTokens {
  readonly #orm: MikroORM;
  readonly #scopes: ScopeRules;
  readonly #settings: TokenSettings;
  readonly #changed: (userId: string) => void;

  constructor(orm: MikroORM, scopes: ScopeRules, settings: TokenSettings, changed: (userId: string) => void) {
    this.#orm = orm;
    this.#scopes = scopes;
    this.#settings = settings;
    this.#changed = changed;
  }

  /** The scope catalogue: what a token may carry. */
  catalogue(): ReturnType<ScopeRules['list']> {
    return this.#scopes.list();
  }

  /** The caller's personal tokens, newest first, revoked and expired ones included. */
  async list(
    p: Principal,
    opts: { limit?: number | undefined; cursor?: string | undefined; active?: boolean | undefined } = {},
  ): Promise<TokenPage> {
    const limit = Math.min(opts.limit ?? TOKEN_LIST_LIMIT_DEFAULT, TOKEN_LIST_LIMIT_MAX);
    const where: Record<string, unknown> = { user: p.user.id, kind: 'api' };
    if (opts.cursor !== undefined) {
      const after = decodeCursor(opts.cursor);
      where['$or'] = [{ createdAt: { $lt: after.createdAt } }, { createdAt: after.createdAt, id: { $lt: after.id } }];
    }
    const now = new Date();
    if (opts.active === true)
      Object.assign(where, { revokedAt: null, $and: [{ $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }] }] });
    if (opts.active === false) Object.assign(where, { $and: [{ $or: [{ revokedAt: { $ne: null } }, { expiresAt: { $lte: now } }] }] });
    const rows = await this.#orm.em.fork().find(ApiToken, where, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: limit + 1 });
    const more = rows.length > limit;
    const items = rows.slice(0, limit).map((r) => tokenInfo(r));
    const last = rows[limit - 1];
    return { items, next_cursor: more && last ? encodeCursor(last) : null, limit };
  }

  async get(p: Principal, id: string): Promise<TokenInfo> {
    return tokenInfo(await this.#own(p, id));
  }

  /** The token the caller is using right now (any kind). */
  async self(p: Principal): Promise<TokenInfo> {
    if (p.tokenKind === 'oauth')
      throw new NotFound('an OAuth access token is not a personal token; GET /api/v1/users/me shows your account');
    const row = await this.#orm.em.fork().findOne(ApiToken, { id: p.tokenId, user: p.user.id });
    if (!row) throw new NotFound(TOKEN_404);
    return tokenInfo(row);
  }

  async create(p: Principal, input: CreateToken): Promise<NewToken> {
    this.#mayIssue(p);
    const problems: ArgProblem[] = [];
    const name = typeof input.name === 'string' ? input.name.trim() : '';
    if (name.length === 0 || name.length > NAME_MAX) problems.push({ path: '/name', message: `must be 1 to ${NAME_MAX} characters` });
    const description = input.description ?? null;
    if (description !== null && (typeof description !== 'string' || description.length > DESCRIPTION_MAX))
      problems.push({ path: '/description', message: `must be at most ${DESCRIPTION_MAX} characters` });
    const scopes = this.#checkScopes(p, input.scopes, problems);
    const expiresAt = this.#expiry(input, problems, true);
    if (problems.length > 0) throw invalid(problems);
    const em = this.#orm.em.fork();
    const token = generateToken('api');
    const row = em.create(ApiToken, {
      user: em.getReference(User, p.user.id),
      kind: 'api',
      name,
      description,
      tokenHash: hashToken(token),
      scopes,
      expiresAt,
      lastUsedAt: null,
      revokedAt: null,
      parent: null,
    });
    await em.transactional(async (tx) => {
      await tx.flush();
      await recordAudit(tx, { action: 'token.created', actor: p, target: { type: 'token', id: row.id }, detail: { name, scopes } });
    });
    return { ...tokenInfo(row), token };
  }

  /**
   * Revokes the token and issues a new one with the same name, description and scopes, in one
   * transaction. The new expiry is the one given, else the old token's lifetime again (capped at
   * the maximum). A revoked token cannot be rotated; an expired one can.
   */
  async rotate(p: Principal, id: string, input: RotateToken = {}): Promise<NewToken> {
    this.#mayIssue(p);
    const problems: ArgProblem[] = [];
    const given = this.#expiry(input, problems, false);
    if (problems.length > 0) throw invalid(problems);
    const result = await this.#orm.em.fork().transactional(async (em) => {
      const old = await em.findOne(
        ApiToken,
        { id: isUuid(id) ? id : '00000000-0000-0000-0000-000000000000', user: p.user.id, kind: 'api' },
        { lockMode: LockMode.PESSIMISTIC_WRITE },
      );
      if (!old) throw new NotFound(TOKEN_404);
      if (old.revokedAt) throw new Conflict('this token is revoked; a revoked token cannot be rotated. Create a new one.');
      // The new secret carries the old token's scopes: refused, not narrowed, when the caller
      // holds less (a narrowed token would break whatever the owner uses it for, silently).
      requireWithinCaller(this.#scopes, p, old.scopes, 'rotating this token');
      const now = Date.now();
      const maxMs = this.#settings.tokenMaxLifetimeDays * DAY_MS;
      const lifetime = old.expiresAt ? old.expiresAt.getTime() - old.createdAt.getTime() : maxMs;
      const expiresAt = given ?? new Date(now + Math.min(Math.max(lifetime, DAY_MS), maxMs));
      old.revokedAt = new Date(now);
      const token = generateToken('api');
      const row = em.create(ApiToken, {
        user: em.getReference(User, p.user.id),
        kind: 'api',
        name: old.name ?? null,
        description: old.description ?? null,
        tokenHash: hashToken(token),
        scopes: [...old.scopes],
        expiresAt,
        lastUsedAt: null,
        revokedAt: null,
        parent: null,
      });
      await em.flush();
      await recordAudit(em, { action: 'token.rotated', actor: p, target: { type: 'token', id: old.id }, detail: { new_token_id: row.id } });
      return { ...tokenInfo(row), token };
    });
    this.#changed(p.user.id);
    return result;
  }

  /** Revokes one of the caller's personal tokens, at once on every node. Idempotent. */
  async revoke(p: Principal, id: string): Promise<TokenInfo> {
    const em = this.#orm.em.fork();
    const row = await this.#own(p, id, em);
    if (!row.revokedAt) {
      await em.transactional(async (tx) => {
        const n = await tx.nativeUpdate(ApiToken, { id: row.id, revokedAt: null }, { revokedAt: new Date() });
        if (n > 0) await recordAudit(tx, { action: 'token.revoked', actor: p, target: { type: 'token', id: row.id } });
      });
      this.#changed(p.user.id);
    }
    await em.refresh(row);
    return tokenInfo(row);
  }

  async #own(p: Principal, id: string, em = this.#orm.em.fork()): Promise<ApiToken> {
    if (!isUuid(id)) throw new NotFound(TOKEN_404);
    const row = await em.findOne(ApiToken, { id, user: p.user.id, kind: 'api' });
    if (!row) throw new NotFound(TOKEN_404);
    return row;
  }

  /** A minted token is short-lived on purpose: it may not turn itself into long-lived ones. */
  #mayIssue(p: Principal): void {
    if (p.tokenKind === 'minted') throw new Forbidden('a minted token cannot create or rotate personal tokens; use your API token.');
  }

  /** Known, within the caller's own token (and the user's roles), stored as granted. */
  #checkScopes(p: Principal, value: unknown, problems: ArgProblem[]): string[] {
    if (!Array.isArray(value) || value.length === 0 || value.length > SCOPES_MAX) {
      problems.push({ path: '/scopes', message: `must list 1 to ${SCOPES_MAX} scopes` });
      return [];
    }
    const out: string[] = [];
    value.forEach((s: unknown, i) => {
      if (typeof s !== 'string' || !this.#scopes.known(s)) {
        problems.push({ path: `/scopes/${i}`, message: `unknown scope ${JSON.stringify(s)}; GET /api/v1/tokens/scopes lists them` });
        return;
      }
      const roles = this.#scopes.list().find((d) => d.scope === s)?.roles ?? [];
      const lacking = roles.filter((r) => !p.user.roles.includes(r));
      if (lacking.length > 0) {
        problems.push({ path: `/scopes/${i}`, message: `${s} needs role ${lacking.join(', ')}, which your user does not have` });
        return;
      }
      if (scopesBeyondCaller(this.#scopes, p, [s]).length > 0) {
        problems.push({
          path: `/scopes/${i}`,
          message: `${s} is beyond the token you are using (it has: ${p.scopes.join(' ') || 'none'})`,
        });
        return;
      }
      out.push(s);
    });
    return this.#scopes.expand(out);
  }

  /** The expiry asked for: required on create, optional on rotate; in the future and within the maximum. */
  #expiry(
    input: { expires_in_days?: number | undefined; expires_at?: string | undefined },
    problems: ArgProblem[],
    required: boolean,
  ): Date | null {
    const maxDays = this.#settings.tokenMaxLifetimeDays;
    const now = Date.now();
    const { expires_in_days: days, expires_at: at } = input;
    if (days !== undefined && at !== undefined) {
      problems.push({ path: '/expires_at', message: 'give expires_in_days or expires_at, not both' });
      return null;
    }
    if (days !== undefined) {
      if (!Number.isInteger(days) || days < 1 || days > maxDays) {
        problems.push({ path: '/expires_in_days', message: `must be a whole number of days from 1 to ${maxDays}` });
        return null;
      }
      return new Date(now + days * DAY_MS);
    }
    if (at !== undefined) {
      const when = typeof at === 'string' ? new Date(at) : new Date(NaN);
      if (Number.isNaN(when.getTime())) problems.push({ path: '/expires_at', message: 'must be a date-time such as 2027-01-31T00:00:00Z' });
      else if (when.getTime() <= now) problems.push({ path: '/expires_at', message: 'must be in the future' });
      else if (when.getTime() > now + maxDays * DAY_MS)
        problems.push({ path: '/expires_at', message: `must be at most ${maxDays} days ahead` });
      else return when;
      return null;
    }
    if (required)
      problems.push({ path: '/expires_in_days', message: `a token must expire: give expires_in_days (1 to ${maxDays}) or expires_at` });
    return null;
  }
}

function invalid(problems: ArgProblem[]): BadArguments {
  return new BadArguments(`the token cannot be made as asked: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`, problems);
}

function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_RE.test(value);
}

function encodeCursor(row: ApiToken): string {
  return Buffer.from(JSON.stringify([row.createdAt.toISOString(), row.id])).toString('base64url');
}

function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    const createdAt = new Date(String(at));
    if (typeof at === 'string' && !Number.isNaN(createdAt.getTime()) && isUuid(id)) return { createdAt, id };
  } catch {
    // falls through to the refusal
  }
  throw new BadArguments('cursor is not one this API gave out', [{ path: '/cursor', message: 'pass back next_cursor unchanged' }]);
}
