// Users, API tokens and per-user namespace switches. Domain layer: no HTTP here; failures are the
// typed errors of core/contract/errors.ts. Every method forks its own EntityManager.
import { ForeignKeyConstraintViolationException, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Database } from '../../db/database.ts';
import type { ChangeFeed } from '../../db/change-feed.ts';
import { LruMap } from '../lru.ts';
import { BadArguments, Conflict, Forbidden, NotFound } from '../../contract/errors.ts';
import { ApiToken, NamespaceAccess, User, type NamespaceAccessValue } from './entities.ts';
import { generateToken, hashToken, looksLikeOAuthToken, parseToken, tokenPrefixKind } from './tokens.ts';
import { DELETE_ACCOUNT_OAUTH_SQL, OAuthStore } from './oauth-store.ts';
import type { NamespaceAccessSetting, Principal } from './types.ts';
import type { ScopeRules } from '../../contract/domain.ts';
import { PersonalTokens, type TokenSettings } from './personal-tokens.ts';
import { UserDirectory } from './users.ts';
import { Passwords } from './passwords.ts';
import { requireWithinCaller } from './within-caller.ts';
import { recordAudit } from '../audit/record.ts';

/** Without a catalogue (a service made on its own, in tests): '*' grants all, any other scope itself. */
const ONLY_STAR: ScopeRules = {
  list: () => [],
  known: (s) => s === '*',
  allows: (granted, wanted) => granted.includes('*') || granted.includes(wanted),
  expand: (scopes) => [...new Set(scopes)],
};

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Shortest raw token we store or look up (our own format is 48; a bootstrap token is 32+). */
export const MIN_RAW_TOKEN_LENGTH = 32;
const MAX_RAW_TOKEN_LENGTH = 512;
/** last_used_at is written at most this often per token. */
const LAST_USED_GRANULARITY_MS = 60_000;

export interface CreateUserInput {
  email: string;
  name?: string | null | undefined;
  roles?: string[] | undefined;
}

export interface CreateApiTokenInput {
  name?: string | null | undefined;
  scopes: string[];
  expiresAt?: Date | null | undefined;
  /** Store this exact token (e.g. the bootstrap admin token, 32+ chars) instead of generating one. */
  raw?: string | undefined;
}

interface AuthRow {
  id: string;
  kind: 'api' | 'minted';
  scopes: string[];
  expires_ms: number | null;
  last_used_ms: number | null;
  user_id: string;
  email: string;
  name: string | null;
  roles: string[];
}

// One round trip, driven by the unique index on token_hash (plus the users and parent primary keys).
// Every reason to refuse is in the WHERE clause, so "no row" is the only failure.
const AUTH_SQL = `
select t.id, t.kind, t.scopes,
       (extract(epoch from t.expires_at) * 1000)::float8 as expires_ms,
       (extract(epoch from t.last_used_at) * 1000)::float8 as last_used_ms,
       u.id as user_id, u.email, u.name, u.roles
  from api_tokens t
  join users u on u.id = t.user_id
  left join api_tokens parent on parent.id = t.parent_id
 where t.token_hash = ?
   and t.revoked_at is null
   and (t.expires_at is null or t.expires_at > now())
   and not u.disabled
   and (t.kind <> 'minted'
        or (parent.id is not null
            and parent.revoked_at is null
            and (parent.expires_at is null or parent.expires_at > now())))`;

const TOUCH_SQL = `
update api_tokens set last_used_at = now()
 where id = ? and (last_used_at is null or last_used_at < now() - interval '1 minute')`;

interface CachedPrincipal {
  principal: Principal;
  expiresMs: number | null;
  lastUsedMs: number;
  /**
   * The token has Folio's format or an OAuth access token's shape (what the Authenticator checks
   * before it asks here). A token of neither (an old bootstrap token typed in as a password, which
   * comes here without that check) is never handed out by `cached`.
   */
  wellFormed: boolean;
}

const wellFormed = (raw: string): boolean => parseToken(raw) !== null || looksLikeOAuthToken(raw);
const saneLength = (raw: unknown): raw is string =>
  typeof raw === 'string' && raw.length >= MIN_RAW_TOKEN_LENGTH && raw.length <= MAX_RAW_TOKEN_LENGTH;

/** How many tokens and users the in-memory caches hold at most. */
const CACHE_ENTRIES = 10_000;

export class IdentityService {
  readonly #orm: MikroORM;
  readonly #feed: ChangeFeed | undefined;
  readonly #scopes: ScopeRules;
  // Every request authenticates and reads the caller's namespace toggles; both are cached here,
  // next to the writes that change them, and dropped on every such write (in any process, through
  // the change feed). A write between a read's query and its caching bumps the generation, and
  // the read is then not cached.
  readonly #principals = new LruMap<string, CachedPrincipal>(CACHE_ENTRIES);
  readonly #access = new LruMap<string, ReadonlyMap<string, NamespaceAccessValue>>(CACHE_ENTRIES);
  #generation = 0;
  /** Personal API tokens: list, create, rotate, revoke (the REST group tokens). */
  readonly tokens: PersonalTokens;
  /** User provisioning (the REST group users). */
  readonly users: UserDirectory;
  /** The OAuth authorization server's storage. */
  readonly oauth: OAuthStore;
  /** Passwords for interactive sign-in, invitation links, and the throttled sign-in itself. */
  readonly passwords: Passwords;

  constructor(
    db: Database | { orm: MikroORM },
    opts: { feed?: ChangeFeed; scopes?: ScopeRules; settings?: TokenSettings; publicUrl?: () => string } = {},
  ) {
    this.#orm = db.orm;
    this.#feed = opts.feed;
    const changed = (userId: string) => this.#changed(userId);
    this.#scopes = opts.scopes ?? ONLY_STAR;
    this.tokens = new PersonalTokens(this.#orm, this.#scopes, opts.settings ?? { tokenMaxLifetimeDays: 365 }, changed);
    this.passwords = new Passwords(this.#orm, {
      changed,
      scopes: this.#scopes,
      publicUrl: opts.publicUrl ?? (() => ''),
      authenticateToken: (raw) => this.authenticate(raw),
    });
    this.users = new UserDirectory(this.#orm, changed, this.passwords);
    this.oauth = new OAuthStore(this.#orm, changed, opts.settings?.oauthClientUnusedDays ?? 7);
    this.#feed?.subscribe((change) => {
      if (change === 'all') this.#forget(undefined);
      else if (change.kind === 'identity') this.#forget(change.userId);
    });
  }

  #forget(userId: string | undefined): void {
    this.#generation++;
    if (userId === undefined) {
      this.#principals.clear();
      this.#access.clear();
      return;
    }
    this.#access.delete(userId);
    this.#principals.deleteWhere((c) => c.principal.user.id === userId);
  }

  /** After a committed change to a user's identity data: drop what any process cached of it. */
  #changed(userId: string): void {
    if (this.#feed) this.#feed.publish({ kind: 'identity', userId });
    else this.#forget(userId);
  }

  #em() {
    return this.#orm.em.fork();
  }

  async countUsers(): Promise<number> {
    return this.#em().count(User);
  }

  /** The user with this email (any case), or null. */
  async findUserByEmail(email: string): Promise<User | null> {
    return this.#em().findOne(User, { email: normalizeEmail(email) });
  }

  /**
   * The stored hash of the first admin's `bootstrap` API token while it is active: the one
   * BOOTSTRAP_ADMIN_TOKEN chose at first start (or the generated one, which has Folio's format
   * anyway). The Authenticator takes a token of this hash though it has no Folio prefix, so a chosen
   * token keeps working once the variable is unset, until it is rotated or revoked.
   */
  async bootstrapTokenHash(): Promise<string | null> {
    // By the token's name, not the admin's address (which may have changed since).
    const rows = await this.#em().execute<Array<{ token_hash: string }>>(
      `select token_hash from api_tokens
        where kind = 'api' and name = 'bootstrap' and revoked_at is null
        order by created_at limit 1`,
    );
    return rows[0]?.token_hash ?? null;
  }

  /** How many API tokens (live or not) a user has ever been given. */
  async countApiTokens(userId: string): Promise<number> {
    return this.#em().count(ApiToken, { user: userId, kind: 'api' });
  }

  async createUser(input: CreateUserInput): Promise<User> {
    const email = normalizeEmail(input.email);
    const name = optionalText(input.name, 'name');
    const roles = stringList(input.roles ?? [], 'roles');
    const em = this.#em();
    const user = em.create(User, { email, name, roles });
    try {
      await em.flush();
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) {
        throw new Conflict(`a user with email ${email} already exists`);
      }
      throw err;
    }
    return user;
  }

  /** Null when there is no such user, including when `id` is not a uuid at all. */
  async getUser(id: string): Promise<User | null> {
    if (!isUuid(id)) return null;
    return this.#em().findOne(User, { id });
  }

  async setDisabled(userId: string, disabled: boolean): Promise<void> {
    if (typeof disabled !== 'boolean')
      throw new BadArguments('disabled must be a boolean', [{ path: 'disabled', message: 'must be a boolean' }]);
    if (!isUuid(userId)) throw new NotFound('no such user');
    const n = await this.#em().transactional(async (em) => {
      // As UserDirectory.update: deactivating ends the user's OAuth grants for good.
      if (disabled) await em.execute(DELETE_ACCOUNT_OAUTH_SQL, [userId]);
      return em.nativeUpdate(User, { id: userId }, { disabled, updatedAt: new Date() });
    });
    if (n === 0) throw new NotFound('no such user');
    this.#changed(userId);
  }

  async createApiToken(userId: string, input: CreateApiTokenInput): Promise<{ token: string; id: string; expiresAt: Date | null }> {
    if (!isUuid(userId)) throw new NotFound('no such user');
    const scopes = stringList(input.scopes, 'scopes');
    const name = optionalText(input.name, 'name');
    const expiresAt = optionalDate(input.expiresAt, '/expiresAt');
    const token = input.raw !== undefined ? givenToken(input.raw) : generateToken('api');
    const em = this.#em();
    const row = em.create(ApiToken, {
      user: em.getReference(User, userId),
      kind: 'api',
      name,
      tokenHash: hashToken(token),
      scopes,
      expiresAt,
      lastUsedAt: null,
      revokedAt: null,
      parent: null,
    });
    await flushMapped(em, 'no such user', 'that token is already stored');
    return { token, id: row.id, expiresAt };
  }

  /**
   * A short-lived child of the caller's API token: same user, same scopes, expiring at
   * now + ttl or when the parent expires, whichever is first; revoking the parent kills it.
   * Only an API token can mint (a minted token cannot mint again).
   */
  async mintToken(parent: Principal, ttlSeconds: number, scopes?: string[]): Promise<{ token: string; id: string; expiresAt: Date }> {
    if (parent.tokenKind !== 'api') throw new Forbidden('only an API token can mint tokens');
    if (typeof ttlSeconds !== 'number' || !Number.isFinite(ttlSeconds) || ttlSeconds <= 0) {
      throw new BadArguments('ttlSeconds must be a positive number', [{ path: '/ttlSeconds', message: 'must be a positive number' }]);
    }
    const em = this.#em();
    const source = await em.findOne(ApiToken, { id: parent.tokenId, user: parent.user.id, kind: 'api' });
    const now = Date.now();
    if (!source || source.revokedAt || (source.expiresAt && source.expiresAt.getTime() <= now)) {
      throw new Forbidden('the parent token is no longer valid');
    }
    // Narrowing is the caller's choice; never wider than the calling token.
    const granted = scopes ? stringList(scopes, 'scopes') : [...source.scopes];
    requireWithinCaller(this.#scopes, parent, granted, 'minting this token');
    let expires = now + Math.round(ttlSeconds * 1000);
    if (source.expiresAt) expires = Math.min(expires, source.expiresAt.getTime());
    const expiresAt = new Date(expires);
    const token = generateToken('minted');
    const row = em.create(ApiToken, {
      user: em.getReference(User, parent.user.id),
      kind: 'minted',
      name: null,
      tokenHash: hashToken(token),
      scopes: granted,
      expiresAt,
      lastUsedAt: null,
      revokedAt: null,
      parent: source,
    });
    await em.transactional(async (tx) => {
      await flushMapped(tx, 'no such user', 'token collision, try again');
      await recordAudit(tx, {
        action: 'token.created',
        actor: parent,
        target: { type: 'token', id: row.id },
        detail: { kind: 'minted', parent_token_id: source.id, scopes: granted, expires_at: expiresAt.toISOString() },
      });
    });
    return { token, id: row.id, expiresAt };
  }

  /**
   * The principal of a well-formed token (Folio's format, or an OAuth access token's shape) this
   * process authenticated lately and still holds (the common case: every request of a client
   * carries the same token), without any I/O and without checking its format again; undefined
   * otherwise (then `authenticate` decides). An expired one is dropped here.
   */
  cached(raw: string): Principal | undefined {
    return saneLength(raw) ? this.#hit(hashToken(raw), true) : undefined;
  }

  /** The cached principal of the token with this hash (see cached). */
  #hit(hash: string, onlyWellFormed: boolean): Principal | undefined {
    const hit = this.#principals.get(hash);
    if (!hit || (onlyWellFormed && !hit.wellFormed)) return undefined;
    const now = Date.now();
    if (hit.expiresMs !== null && hit.expiresMs <= now) {
      this.#principals.delete(hash);
      return undefined;
    }
    // An OAuth access token has no api_tokens row to mark (its id is not one).
    if (hit.principal.tokenKind !== 'oauth' && now - hit.lastUsedMs >= LAST_USED_GRANULARITY_MS) {
      hit.lastUsedMs = now;
      // Bookkeeping only, off the request's path: a failure must not turn a valid token away.
      this.#em()
        .execute(TOUCH_SQL, [hit.principal.tokenId])
        .catch(() => {});
    }
    return hit.principal;
  }

  /**
   * The principal behind a raw token, or null: unknown, malformed, revoked, expired, user disabled,
   * or (minted) parent revoked/expired/gone. One indexed query; last_used_at is written at most
   * once a minute per token.
   */
  async authenticate(raw: string): Promise<Principal | null> {
    if (!saneLength(raw)) return null;
    const hash = hashToken(raw);
    const cached = this.#hit(hash, false);
    if (cached) return cached;
    if (tokenPrefixKind(raw)) {
      // Our format: a typo or bad checksum is rejected without a query. OAuth tokens are not stored here.
      const parsed = parseToken(raw);
      if (!parsed || parsed.kind === 'oauth') return null;
    }
    const now = Date.now();
    const generation = this.#generation;
    // An OAuth access token; if not one, it may still be a configured bootstrap token of that shape.
    const oauth = looksLikeOAuthToken(raw) ? await this.#oauthPrincipal(raw) : null;
    if (oauth) {
      if (generation === this.#generation)
        this.#principals.set(hash, { principal: oauth.principal, expiresMs: oauth.expiresMs, lastUsedMs: now, wellFormed: true });
      return oauth.principal;
    }
    const em = this.#em();
    const rows = await em.execute<AuthRow[]>(AUTH_SQL, [hash]);
    const row = rows[0];
    if (!row) return null;
    let lastUsedMs = row.last_used_ms ?? 0;
    if (now - lastUsedMs >= LAST_USED_GRANULARITY_MS) {
      await em.execute(TOUCH_SQL, [row.id]).catch(() => {});
      lastUsedMs = now;
    }
    const principal: Principal = Object.freeze({
      user: Object.freeze({ id: row.user_id, email: row.email, name: row.name, roles: Object.freeze([...row.roles]) as string[] }),
      scopes: Object.freeze([...row.scopes]) as string[],
      tokenKind: row.kind,
      tokenId: row.id,
      tokenExpiresAt: row.expires_ms === null ? null : new Date(row.expires_ms),
    });
    if (generation === this.#generation)
      this.#principals.set(hash, { principal, expiresMs: row.expires_ms, lastUsedMs, wellFormed: wellFormed(raw) });
    return principal;
  }

  async #oauthPrincipal(raw: string): Promise<{ principal: Principal; expiresMs: number } | null> {
    const access = await this.oauth.access(raw);
    if (!access) return null;
    const user = await this.#em().findOne(User, { id: access.userId, disabled: false });
    if (!user) return null;
    const principal: Principal = Object.freeze({
      user: Object.freeze({ id: user.id, email: user.email, name: user.name ?? null, roles: Object.freeze([...user.roles]) as string[] }),
      scopes: Object.freeze([...access.scopes]) as string[],
      tokenKind: 'oauth',
      tokenId: access.tokenId,
      tokenExpiresAt: new Date(access.expiresMs),
      audience: access.audience,
    });
    return { principal, expiresMs: access.expiresMs };
  }

  /**
   * Why `authenticate` refused a token it once knew: 'expired', 'revoked' or 'user disabled';
   * null when it never knew it. Only on the refusal path, so a caller can say what to do.
   */
  async refusal(raw: string): Promise<'expired' | 'revoked' | 'user disabled' | null> {
    if (!saneLength(raw)) return null;
    const em = this.#em();
    if (looksLikeOAuthToken(raw)) {
      const why = await this.oauth.refusal(raw);
      if (why) return why;
    }
    const rows = await em.execute<Array<{ revoked: boolean; expired: boolean; disabled: boolean }>>(
      `select t.revoked_at is not null as revoked, coalesce(t.expires_at <= now(), false) as expired, u.disabled
         from api_tokens t join users u on u.id = t.user_id where t.token_hash = ?`,
      [hashToken(raw)],
    );
    const row = rows[0];
    if (!row) return null;
    return row.disabled ? 'user disabled' : row.revoked ? 'revoked' : row.expired ? 'expired' : null;
  }

  /** Revokes one of the user's tokens (minted children die with it). Idempotent. */
  async revokeToken(userId: string, tokenId: string): Promise<void> {
    if (!isUuid(userId) || !isUuid(tokenId)) throw new NotFound('no such token');
    const em = this.#em();
    const n = await em.nativeUpdate(ApiToken, { id: tokenId, user: userId, revokedAt: null }, { revokedAt: new Date() });
    if (n === 0 && (await em.count(ApiToken, { id: tokenId, user: userId })) === 0) {
      throw new NotFound('no such token');
    }
    this.#changed(userId);
  }

  /** Turns a namespace on or off for a user; 'default' forgets the override. */
  async setNamespaceAccess(
    userId: string,
    namespace: string,
    access: NamespaceAccessSetting,
    actor: Principal | null = null,
  ): Promise<void> {
    if (access !== 'enabled' && access !== 'disabled' && access !== 'default') {
      throw new BadArguments("access must be 'enabled', 'disabled' or 'default'", [
        { path: 'access', message: "must be 'enabled', 'disabled' or 'default'" },
      ]);
    }
    if (typeof namespace !== 'string' || namespace.length === 0 || namespace.length > 200) {
      throw new BadArguments('namespace must be a non-empty string', [{ path: 'namespace', message: 'must be 1 to 200 characters' }]);
    }
    if (!isUuid(userId)) throw new NotFound('no such user');
    const audit = {
      action: 'namespace.switched',
      actor,
      subject: userId,
      target: { type: 'namespace', id: namespace },
      detail: { access },
    } as const;
    if (access === 'default') {
      await this.#em().transactional(async (em) => {
        const n = await em.nativeDelete(NamespaceAccess, { user: userId, namespace });
        if (n === 0 && (await em.count(User, { id: userId })) === 0) throw new NotFound('no such user');
        await recordAudit(em, audit);
      });
      this.#changed(userId);
      return;
    }
    try {
      await this.#em().transactional(async (em) => {
        await em.execute(
          `insert into namespace_access (user_id, namespace, access, updated_at) values (?, ?, ?, now())
           on conflict (user_id, namespace) do update set access = excluded.access, updated_at = excluded.updated_at`,
          [userId, namespace, access],
        );
        await recordAudit(em, audit);
      });
    } catch (err) {
      if (err instanceof ForeignKeyConstraintViolationException) throw new NotFound('no such user');
      throw err;
    }
    this.#changed(userId);
  }

  /**
   * The user's overrides; namespaces not in the map are at their default. Read-only: the map is the
   * cached one (asked on every call), never copied.
   */
  async namespaceAccess(userId: string): Promise<ReadonlyMap<string, NamespaceAccessValue>> {
    const cached = this.#access.get(userId);
    if (cached) return cached;
    const out = new Map<string, NamespaceAccessValue>();
    if (!isUuid(userId)) return out;
    const generation = this.#generation;
    const rows = await this.#em().find(NamespaceAccess, { user: userId }, { orderBy: { namespace: 'asc' } });
    for (const row of rows) out.set(row.namespace, row.access);
    if (generation === this.#generation) this.#access.set(userId, out);
    return out;
  }

  /** The namespaces the user pinned, in name order. */
  async pins(userId: string): Promise<string[]> {
    if (!isUuid(userId)) return [];
    const rows = await this.#em().execute<Array<{ namespace: string }>>(
      `select namespace from namespace_pins where user_id = ? order by namespace`,
      [userId],
    );
    return rows.map((r) => r.namespace);
  }

  /** Replaces the user's pins (an empty list: none, every tool is listed again). */
  async setPins(userId: string, namespaces: string[]): Promise<string[]> {
    if (!isUuid(userId)) throw new NotFound('no such user');
    const wanted = [...new Set(namespaces)].sort();
    await this.#em().transactional(async (em) => {
      await em.execute(`delete from namespace_pins where user_id = ?`, [userId]);
      if (wanted.length > 0)
        await em.execute(`insert into namespace_pins (user_id, namespace) select ?, n from jsonb_array_elements_text(?::jsonb) n`, [
          userId,
          JSON.stringify(wanted),
        ]);
    });
    // Sessions of this user list their tools again (MCP list_changed), on every node.
    this.#changed(userId);
    return wanted;
  }
}

// --- input checks --------------------------------------------------------------------------------

function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_RE.test(value);
}

/** Loose on purpose: one @, something on both sides, no whitespace. Stored lowercased. */
function normalizeEmail(value: unknown): string {
  const email = typeof value === 'string' ? value.trim().toLowerCase() : '';
  const at = email.indexOf('@');
  const ok = email.length <= 320 && at > 0 && at === email.lastIndexOf('@') && at < email.length - 1 && !/\s/.test(email);
  if (!ok) throw new BadArguments('invalid email address', [{ path: 'email', message: 'must look like name@domain' }]);
  return email;
}

function optionalText(value: unknown, at: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new BadArguments(`${at.slice(1)} must be a string`, [{ path: at, message: 'must be a string' }]);
  return value;
}

function optionalDate(value: unknown, at: string): Date | null {
  if (value === undefined || value === null) return null;
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    throw new BadArguments(`${at.slice(1)} must be a valid date`, [{ path: at, message: 'must be a valid date' }]);
  }
  return value;
}

function stringList(value: unknown, at: string): string[] {
  if (!Array.isArray(value) || !value.every((s) => typeof s === 'string' && s.length > 0)) {
    throw new BadArguments(`${at.slice(1)} must be a list of non-empty strings`, [
      { path: at, message: 'must be a list of non-empty strings' },
    ]);
  }
  return [...new Set(value as string[])];
}

async function flushMapped(em: { flush(): Promise<void> }, fkMessage: string, uniqueMessage: string): Promise<void> {
  try {
    await em.flush();
  } catch (err) {
    if (err instanceof ForeignKeyConstraintViolationException) throw new NotFound(fkMessage);
    if (err instanceof UniqueConstraintViolationException) throw new Conflict(uniqueMessage);
    throw err;
  }
}

/**
 * A token chosen by the operator (BOOTSTRAP_ADMIN_TOKEN), checked as createApiToken would store it:
 * the right length, and a folio_ prefix only on a valid folio_api_ token (authenticate() refuses
 * our prefixes unless they parse as ours, so any other would never open anything).
 */
export function givenToken(raw: unknown): string {
  if (typeof raw !== 'string' || raw.length < MIN_RAW_TOKEN_LENGTH || raw.length > MAX_RAW_TOKEN_LENGTH) {
    throw new BadArguments(`a given token must be ${MIN_RAW_TOKEN_LENGTH} to ${MAX_RAW_TOKEN_LENGTH} characters`, [
      { path: 'raw', message: `must be ${MIN_RAW_TOKEN_LENGTH} to ${MAX_RAW_TOKEN_LENGTH} characters` },
    ]);
  }
  if (tokenPrefixKind(raw) && parseToken(raw)?.kind !== 'api') {
    throw new BadArguments('a given token with a folio_ prefix must be a valid folio_api_ token', [
      { path: 'raw', message: 'starts with a reserved prefix but is not a valid folio_api_ token' },
    ]);
  }
  return raw;
}
