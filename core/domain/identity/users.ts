// User provisioning: admins create, list, update, deactivate and delete users; everyone reads
// themselves. Deactivating stops every token of the user at once on every node (authentication
// refuses a disabled user, and the change feed drops what any node cached); their data stays.
// Deleting removes the user with their data (the tables cascade), after a confirmation.
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import { BadArguments, Conflict, Forbidden, NotFound, type ArgProblem } from '../../contract/errors.ts';
import { User } from './entities.ts';
import type { Principal } from './types.ts';
import { checkPassword, type Passwords } from './passwords.ts';
import { DELETE_ACCOUNT_OAUTH_SQL } from './oauth-store.ts';
import { recordAudit } from '../audit/record.ts';

export interface UserInfo {
  id: string;
  email: string;
  name: string | null;
  roles: string[];
  active: boolean;
  /** Whether the user has a password to sign in with (never the password itself). */
  has_password: boolean;
  created_at: string;
  updated_at: string;
}

export interface UserPage {
  items: UserInfo[];
  next_cursor: string | null;
  limit: number;
}

export interface ListUsers {
  limit?: number | undefined;
  cursor?: string | undefined;
  email?: string | undefined;
  role?: string | undefined;
  active?: boolean | undefined;
}

/** What a SCIM client sent about a user that has no column of its own (see the SCIM surface). */
export type ScimProfile = Record<string, unknown>;

export interface UpdateUser {
  /** A new email address (lowercased; unique: 409 when another user has it). Tokens and sessions stay valid. */
  email?: string | undefined;
  name?: string | null | undefined;
  /** Replaces the SCIM profile (null: none). */
  scim?: ScimProfile | null | undefined;
  roles?: string[] | undefined;
  active?: boolean | undefined;
}

export const USER_LIST_LIMIT_DEFAULT = 50;
export const USER_LIST_LIMIT_MAX = 200;
export const ROLE_RE = /^[a-z][a-z0-9_-]{0,31}$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const USER_404 = 'no such user';

export function userInfo(u: User): UserInfo {
  return {
    id: u.id,
    email: u.email,
    name: u.name ?? null,
    roles: [...u.roles],
    active: !u.disabled,
    has_password: Boolean(u.passwordSetAt),
    created_at: u.createdAt.toISOString(),
    updated_at: u.updatedAt.toISOString(),
  };
}

function requireAdmin(p: Principal, what: string): void {
  if (!p.user.roles.includes('admin')) throw new Forbidden(`${what} needs role admin, which your user does not have.`);
}

export class UserDirectory {
  readonly #orm: MikroORM;
  readonly #changed: (userId: string) => void;
  readonly #passwords: Passwords;

  constructor(orm: MikroORM, changed: (userId: string) => void, passwords: Passwords) {
    this.#orm = orm;
    this.#changed = changed;
    this.#passwords = passwords;
  }

  /** The caller's own account. */
  async me(p: Principal): Promise<UserInfo> {
    const u = await this.#orm.em.fork().findOne(User, { id: p.user.id });
    if (!u) throw new NotFound(USER_404);
    return userInfo(u);
  }

  async list(p: Principal, opts: ListUsers = {}): Promise<UserPage> {
    requireAdmin(p, 'listing users');
    const limit = Math.min(opts.limit ?? USER_LIST_LIMIT_DEFAULT, USER_LIST_LIMIT_MAX);
    const conds: Array<Record<string, unknown>> = [];
    if (opts.cursor !== undefined) conds.push({ email: { $gt: decodeCursor(opts.cursor) } });
    if (opts.email !== undefined) conds.push({ email: opts.email.trim().toLowerCase() });
    if (opts.role !== undefined) conds.push({ roles: { $contains: [opts.role] } });
    if (opts.active !== undefined) conds.push({ disabled: !opts.active });
    const where = conds.length > 0 ? { $and: conds } : {};
    const rows = await this.#orm.em.fork().find(User, where, { orderBy: { email: 'asc' }, limit: limit + 1 });
    const more = rows.length > limit;
    const items = rows.slice(0, limit).map(userInfo);
    const last = items[items.length - 1];
    return { items, next_cursor: more && last ? Buffer.from(last.email).toString('base64url') : null, limit };
  }

  /**
   * By position rather than cursor (SCIM's startIndex and count): `offset` users skipped in email
   * order, at most `limit`, and how many match in all. Admins only.
   */
  async listByOffset(
    p: Principal,
    opts: { email?: string | undefined; offset: number; limit: number },
  ): Promise<{ items: UserInfo[]; total: number }> {
    requireAdmin(p, 'listing users');
    const where = opts.email !== undefined ? { email: opts.email.trim().toLowerCase() } : {};
    const limit = Math.max(0, Math.min(opts.limit, USER_LIST_LIMIT_MAX));
    const em = this.#orm.em.fork();
    if (limit === 0) return { items: [], total: await em.count(User, where) };
    const [rows, total] = await em.findAndCount(User, where, { orderBy: { email: 'asc' }, offset: Math.max(0, opts.offset), limit });
    return { items: rows.map(userInfo), total };
  }

  /** The SCIM profiles of these users (those that have one). Admins only. */
  async scimProfiles(p: Principal, ids: string[]): Promise<Map<string, ScimProfile>> {
    requireAdmin(p, 'reading users');
    if (ids.length === 0) return new Map();
    const rows = await this.#orm.em
      .fork()
      .find(User, { id: { $in: ids }, scim: { $ne: null } }, { fields: ['id', 'scim'], populate: ['scim'] as never });
    return new Map(rows.map((r) => [r.id, r.scim as ScimProfile]));
  }

  async get(p: Principal, id: string): Promise<UserInfo> {
    requireAdmin(p, 'reading a user');
    return userInfo(await this.#find(id));
  }

  /** With an optional first password (else they set one through an invitation link). */
  async create(
    p: Principal,
    input: {
      email: string;
      name?: string | null | undefined;
      roles?: string[] | undefined;
      password?: string | undefined;
      scim?: ScimProfile | undefined;
    },
  ): Promise<UserInfo> {
    requireAdmin(p, 'creating users');
    const problems: ArgProblem[] = [];
    const email = normalizeEmail(input.email, problems);
    const name = checkName(input.name, problems);
    const roles = checkRoles(input.roles ?? [], problems);
    if (problems.length > 0) throw invalid(problems);
    if (input.password !== undefined) checkPassword(input.password, email);
    const em = this.#orm.em.fork();
    const user = em.create(User, { email, name, roles, ...(input.scim ? { scim: input.scim } : {}) });
    try {
      await em.transactional(async (tx) => {
        await tx.flush();
        await recordAudit(tx, {
          action: 'user.created',
          actor: p,
          subject: user.id,
          target: { type: 'user', id: user.id },
          detail: { email, roles },
        });
      });
    } catch (err) {
      throw conflictOf(err, email, input.scim);
    }
    if (input.password !== undefined) {
      await this.#passwords.setInitial(user.id, email, input.password);
      user.passwordSetAt = new Date();
    }
    return userInfo(user);
  }

  /**
   * Email, name, roles, active. `active: false` deactivates: every token of theirs stops at once. A
   * new email changes only the address: everything of theirs is keyed by their id, so their tokens,
   * sessions and OAuth grants stay valid, and they sign in with the new address from now on.
   */
  async update(p: Principal, id: string, input: UpdateUser): Promise<UserInfo> {
    requireAdmin(p, 'updating users');
    const problems: ArgProblem[] = [];
    const email = input.email === undefined ? undefined : normalizeEmail(input.email, problems);
    const name = input.name === undefined ? undefined : checkName(input.name, problems);
    const roles = input.roles === undefined ? undefined : checkRoles(input.roles, problems);
    if (input.active !== undefined && typeof input.active !== 'boolean')
      problems.push({ path: '/active', message: 'must be true or false' });
    if (problems.length > 0) throw invalid(problems);
    const em = this.#orm.em.fork();
    const u = await this.#find(id, em);
    if (u.id === p.user.id) {
      // An admin locking themselves out is almost always a mistake another admin must then undo.
      if (input.active === false) throw new Conflict('you cannot deactivate yourself; another admin can.');
      if (roles && !roles.includes('admin')) throw new Conflict('you cannot remove your own admin role; another admin can.');
    }
    if (email !== undefined) u.email = email;
    if (name !== undefined) u.name = name;
    if (roles !== undefined) u.roles = roles;
    if (input.scim !== undefined) u.scim = input.scim;
    const deactivating = input.active === false && !u.disabled;
    const reactivating = input.active === true && u.disabled;
    if (input.active !== undefined) u.disabled = !input.active;
    try {
      await em.transactional(async (tx) => {
        // OAuth grants end for good (the client signs in again after a reactivation); the API
        // tokens, the account's keys, are only refused while the user is inactive.
        if (deactivating) await tx.execute(DELETE_ACCOUNT_OAUTH_SQL, [u.id]);
        await tx.flush();
        await recordAudit(tx, {
          action: deactivating ? 'user.deactivated' : reactivating ? 'user.reactivated' : 'user.updated',
          actor: p,
          subject: u.id,
          target: { type: 'user', id: u.id },
          detail: { changed: Object.keys(input).filter((k) => (input as Record<string, unknown>)[k] !== undefined && k !== 'scim') },
        });
      });
    } catch (err) {
      throw conflictOf(err, email ?? u.email, u.scim);
    }
    this.#changed(u.id);
    return userInfo(u);
  }

  /**
   * Deletes the user and everything they own (notes, revisions, tokens, ...). `confirm` must be the
   * user's email address: a mistyped id cannot delete someone.
   */
  async delete(p: Principal, id: string, confirm: string | undefined): Promise<void> {
    requireAdmin(p, 'deleting users');
    const em = this.#orm.em.fork();
    const u = await this.#find(id, em);
    if (u.id === p.user.id) throw new Conflict('you cannot delete yourself; another admin can.');
    if (typeof confirm !== 'string' || confirm.trim().toLowerCase() !== u.email)
      throw new BadArguments("deleting a user removes all their data: confirm with the user's email address as confirm", [
        { path: '/confirm', message: "must be the user's email address" },
      ]);
    await em.transactional(async (tx) => {
      // The OAuth server's records of theirs (grants, tokens, sessions) are not tied by a key.
      await tx.execute(DELETE_ACCOUNT_OAUTH_SQL, [u.id]);
      await tx.nativeDelete(User, { id: u.id });
      await recordAudit(tx, {
        action: 'user.deleted',
        actor: p,
        subject: u.id,
        target: { type: 'user', id: u.id },
        detail: { email: u.email },
      });
    });
    this.#changed(u.id);
  }

  async #find(id: string, em = this.#orm.em.fork()): Promise<User> {
    if (!UUID_RE.test(id)) throw new NotFound(USER_404);
    const u = await em.findOne(User, { id });
    if (!u) throw new NotFound(USER_404);
    return u;
  }
}

/**
 * A unique violation as the Conflict it is: another user has this email, or the userName kept in
 * this SCIM profile (users_scim_username_unique, without case); any other error as it is.
 */
function conflictOf(err: unknown, email: string, scim: ScimProfile | null | undefined): unknown {
  if (!(err instanceof UniqueConstraintViolationException)) return err;
  if ((err as { constraint?: unknown }).constraint === 'users_scim_username_unique')
    return new Conflict(`another user has the SCIM userName ${JSON.stringify(scim?.['userName'])} (compared without case)`);
  return new Conflict(`a user with email ${email} already exists`);
}

function invalid(problems: ArgProblem[]): BadArguments {
  return new BadArguments(`the user cannot be saved as asked: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`, problems);
}

function normalizeEmail(value: unknown, problems: ArgProblem[]): string {
  const email = typeof value === 'string' ? value.trim().toLowerCase() : '';
  const at = email.indexOf('@');
  const ok = email.length <= 320 && at > 0 && at === email.lastIndexOf('@') && at < email.length - 1 && !/\s/.test(email);
  if (!ok) problems.push({ path: '/email', message: 'must look like name@domain' });
  return email;
}

function checkName(value: unknown, problems: ArgProblem[]): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string' || value.length > 200)
    problems.push({ path: '/name', message: 'must be a string of at most 200 characters' });
  return typeof value === 'string' ? value : null;
}

function checkRoles(value: unknown, problems: ArgProblem[]): string[] {
  if (!Array.isArray(value) || value.length > 16) {
    problems.push({ path: '/roles', message: 'must be a list of at most 16 roles' });
    return [];
  }
  value.forEach((r: unknown, i) => {
    if (typeof r !== 'string' || !ROLE_RE.test(r)) problems.push({ path: `/roles/${i}`, message: `must match ${ROLE_RE.source}` });
  });
  return [...new Set(value as string[])];
}

function decodeCursor(cursor: string): string {
  const email = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!email.includes('@'))
    throw new BadArguments('cursor is not one this API gave out', [{ path: '/cursor', message: 'pass back next_cursor unchanged' }]);
  return email;
}
