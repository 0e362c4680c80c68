// Passwords for interactive sign-in (the authorization server's sign-in page): argon2id hashes, set
// by the user themselves or through a one-time invitation link an admin makes (a secret shown once,
// stored as its sha-256, good until it expires or is used, whichever is first).
//
// Sign-in is throttled per account and per client: after too many wrong attempts in a window the
// next one is refused with a wait (TooManyRequests, Retry-After) before any check. Each attempt is
// counted as a failure before its password is verified (argon2 takes a while: attempts checked
// first and counted after all got through at once), under a row lock, and given back when it
// succeeds; so at most the limit is ever verified, however many arrive together. The counts are
// kept in the database (as sha-256 of the key), so every node enforces the same limit. The limit per
// client address is much higher than per account: an address is often shared (an office, a mobile
// carrier, a VPN), and others' failures there must not lock out an account owner signing in right.
// Nothing tells an unknown email from a wrong password: the same answer, the same throttle (keyed
// by the email as typed, known or not) and an argon2 verification on every attempt.
import { createHash, randomBytes } from 'node:crypto';
import { hash as argonHash, verify as argonVerify } from '@node-rs/argon2';
import type { MikroORM } from '@mikro-orm/postgresql';
import { BadArguments, Forbidden, NotFound, TooManyRequests } from '../../contract/errors.ts';
import { User, UserInvitation } from './entities.ts';
import type { Principal } from './types.ts';
import type { ScopeRules } from '../../contract/domain.ts';
import { requireWithinCaller } from './within-caller.ts';
import { recordAudit } from '../audit/record.ts';

/** @node-rs/argon2's Algorithm.Argon2id (a const enum, which this build cannot import). */
const ARGON2ID = 2;
export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 1024;
export const INVITATION_HOURS_DEFAULT = 72;
export const INVITATION_HOURS_MAX = 30 * 24;
/** Where an invitation link points, under the server's public URL. */
export const INVITATION_PATH = '/invite/';

/** Wrong sign-ins allowed in a window, per account and per client, before refusing for the rest of it. */
const WINDOW_MS = 15 * 60_000;
export const SIGN_IN_FAILURES_PER_ACCOUNT = 5;
export const SIGN_IN_FAILURES_PER_CLIENT = 100;

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const INVITATION_RE = /^[A-Za-z0-9_-]{43}$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Checks a new password; throws BadArguments naming `at`. */
export function checkPassword(password: unknown, email: string, at = '/password'): string {
  if (typeof password !== 'string' || password.length < PASSWORD_MIN || password.length > PASSWORD_MAX)
    throw new BadArguments(`a password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`, [
      { path: at, message: `must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters` },
    ]);
  if (password.trim().toLowerCase() === email.toLowerCase())
    throw new BadArguments('a password must not be the email address', [{ path: at, message: 'must not be the email address' }]);
  return password;
}

export function hashPassword(password: string): Promise<string> {
  return argonHash(password, { algorithm: ARGON2ID });
}

/** Who signed in, and what they may grant: everything their roles allow, or at most a token's scopes. */
export interface SignedIn {
  user: Principal['user'];
  scopes: string[];
  /** 'password', or 'token' when an API token was typed as the password. */
  by: 'password' | 'token';
}

export interface Invitation {
  url: string;
  expires_at: string;
}

export class Passwords {
  readonly #orm: MikroORM;
  readonly #changed: (userId: string) => void;
  readonly #scopes: ScopeRules;
  readonly #publicUrl: () => string;
  readonly #authenticateToken: (raw: string) => Promise<Principal | null>;
  /** Verified against when the email is unknown, so both cost the same. */
  #dummy: Promise<string> | undefined;

  constructor(
    orm: MikroORM,
    deps: {
      changed: (userId: string) => void;
      scopes: ScopeRules;
      publicUrl: () => string;
      authenticateToken: (raw: string) => Promise<Principal | null>;
    },
  ) {
    this.#orm = orm;
    this.#changed = deps.changed;
    this.#scopes = deps.scopes;
    this.#publicUrl = deps.publicUrl;
    this.#authenticateToken = deps.authenticateToken;
  }

  #em() {
    return this.#orm.em.fork();
  }

  /**
   * Sets the caller's own password. With a password already set, `current` must be it. Only an
   * API token may do this: an OAuth client or a minted token acting for the user may not. A
   * password signs in to everything the user may do, so the token must hold '*'.
   */
  async setOwn(p: Principal, input: { password: unknown; current_password?: unknown }): Promise<void> {
    if (p.tokenKind !== 'api') throw new Forbidden('only a personal API token (not an OAuth or minted token) can set your password.');
    requireWithinCaller(this.#scopes, p, ['*'], 'setting your password (it signs in to everything your user may do)');
    const em = this.#em();
    const user = await em.findOne(User, { id: p.user.id }, { populate: ['passwordHash'] });
    if (!user) throw new NotFound('no such user');
    const password = checkPassword(input.password, user.email);
    if (user.passwordHash) {
      const current = input.current_password;
      const ok =
        typeof current === 'string' && current.length <= PASSWORD_MAX && (await argonVerify(user.passwordHash, current).catch(() => false));
      if (!ok)
        throw new Forbidden('current_password is missing or wrong: to change your password, send your current one as current_password.');
    }
    await this.#store(user.id, password, p);
  }

  /** A new user's first password, set by the admin who creates them. */
  async setInitial(userId: string, email: string, password: unknown): Promise<void> {
    await this.#store(userId, checkPassword(password, email));
  }

  async #store(userId: string, password: string, actor: Principal | null = null): Promise<void> {
    const passwordHash = await hashPassword(password);
    await this.#em().transactional(async (em) => {
      await em.nativeUpdate(User, { id: userId }, { passwordHash, passwordSetAt: new Date(), updatedAt: new Date() });
      await recordAudit(em, { action: 'password.changed', actor, subject: userId, target: { type: 'user', id: userId } });
    });
    this.#changed(userId);
  }

  /** A one-time link for the user to set their password; the secret is in the URL, shown this once. */
  async invite(p: Principal, userId: string, hours: number = INVITATION_HOURS_DEFAULT): Promise<Invitation> {
    if (!p.user.roles.includes('admin')) throw new Forbidden('inviting a user needs role admin, which your user does not have.');
    if (!Number.isInteger(hours) || hours < 1 || hours > INVITATION_HOURS_MAX)
      throw new BadArguments(`expires_in_hours must be 1 to ${INVITATION_HOURS_MAX}`, [
        { path: '/expires_in_hours', message: `must be an integer from 1 to ${INVITATION_HOURS_MAX}` },
      ]);
    const em = this.#em();
    const user = UUID_RE.test(userId) ? await em.findOne(User, { id: userId }) : null;
    if (!user) throw new NotFound('no such user');
    // A link for your own account sets your password: it must not be a narrow token's way to '*'.
    if (user.id === p.user.id)
      requireWithinCaller(
        this.#scopes,
        p,
        ['*'],
        'an invitation for your own account (it sets your password, which signs in to everything)',
      );
    const secret = randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + hours * 3_600_000);
    em.create(UserInvitation, {
      user,
      tokenHash: sha(secret),
      createdBy: em.getReference(User, p.user.id),
      expiresAt,
      usedAt: null,
    });
    await em.transactional(async (tx) => {
      await tx.flush();
      await recordAudit(tx, {
        action: 'user.invited',
        actor: p,
        subject: user.id,
        target: { type: 'user', id: user.id },
        detail: { hours },
      });
    });
    return { url: `${this.#publicUrl()}${INVITATION_PATH}${secret}`, expires_at: expiresAt.toISOString() };
  }

  /** The email an unused, unexpired invitation is for; NotFound for any other link. */
  async invitation(secret: string): Promise<{ email: string }> {
    if (!INVITATION_RE.test(secret)) throw new NotFound('this invitation link is unknown, used or expired');
    const rows = await this.#em().execute<Array<{ email: string }>>(
      `select u.email from user_invitations i join users u on u.id = i.user_id
        where i.token_hash = ? and i.used_at is null and i.expires_at > now() and not u.disabled`,
      [sha(secret)],
    );
    if (!rows[0]) throw new NotFound('this invitation link is unknown, used or expired');
    return rows[0];
  }

  /**
   * Sets the password through an invitation, which is then used up (as are the user's other
   * open invitations). Two at once: one wins, the other is NotFound.
   */
  async accept(secret: string, password: unknown): Promise<{ email: string }> {
    const { email } = await this.invitation(secret);
    const checked = checkPassword(password, email);
    const passwordHash = await hashPassword(checked);
    const userId = await this.#em().transactional(async (em) => {
      const used = await em.execute<Array<{ user_id: string }>>(
        `update user_invitations set used_at = now()
          where token_hash = ? and used_at is null and expires_at > now() returning user_id`,
        [sha(secret)],
      );
      const id = used[0]?.user_id;
      if (!id) throw new NotFound('this invitation link is unknown, used or expired');
      await em.execute(`update user_invitations set used_at = now() where user_id = ? and used_at is null`, [id]);
      await em.execute(`update users set password_hash = ?, password_set_at = now(), updated_at = now() where id = ?`, [passwordHash, id]);
      await recordAudit(em, {
        action: 'password.changed',
        actor: { id, email },
        target: { type: 'user', id },
        detail: { by: 'invitation' },
      });
      return id;
    });
    this.#changed(userId);
    return { email };
  }

  /**
   * Email and password (or one of the user's API tokens typed as the password) to an active
   * user, or null. Throws TooManyRequests while the account or the client is throttled.
   */
  async signIn(emailIn: string, secret: string, client: string): Promise<SignedIn | null> {
    const email = emailIn.trim().toLowerCase().slice(0, 320);
    const keys = { account: sha(`account:${email}`), client: sha(`client:${client}`) };
    const { wait, firstRefusal } = await this.#take(keys);
    if (wait > 0) {
      if (firstRefusal) await this.#recordSignIn(email, null, 'throttled');
      throw new TooManyRequests(`too many failed sign-ins; try again in ${wait} seconds.`, wait);
    }
    const signedIn = await this.#check(email, secret);
    if (signedIn) await this.#giveBack(keys);
    await this.#recordSignIn(email, signedIn, signedIn ? undefined : 'wrong email or password');
    return signedIn;
  }

  /**
   * The audit log's record of a sign-in: a failed one concerns the account its email names, if any.
   * What was typed as the email is kept only when it is an account's email: otherwise it may be a
   * password typed in the wrong field, so only its length is kept.
   */
  async #recordSignIn(email: string, signedIn: SignedIn | null, reason: string | undefined): Promise<void> {
    const em = this.#em();
    const subject = signedIn
      ? signedIn.user.id
      : ((await em.execute<Array<{ id: string }>>(`select id from users where email = ?`, [email]))[0]?.id ?? null);
    await recordAudit(em, {
      action: signedIn ? 'signin.succeeded' : 'signin.failed',
      actor: signedIn ? signedIn.user : null,
      subject,
      outcome: signedIn ? 'success' : 'failure',
      target: subject ? { type: 'user', id: subject } : null,
      detail: signedIn ? { email, by: signedIn.by } : subject ? { email, reason } : { email_length: email.length, reason },
    });
  }

  /**
   * Counts this attempt as a failure of both keys, unless one has reached its limit in its window:
   * then nothing is counted and the answer is the seconds until both may try again (0: counted, go
   * on). In one transaction holding both rows locked (taken in one order, so two attempts never
   * wait on each other), so attempts that arrive together are counted one after the other. The
   * counts are in the database: every node sees them. The first refusal of a key in its window
   * takes its count one past the limit and is `firstRefusal` (the one the audit log records);
   * later refusals in that window change nothing, so a flood of them writes nothing.
   */
  async #take(keys: { account: string; client: string }): Promise<{ wait: number; firstRefusal: boolean }> {
    const limits = new Map([
      [keys.account, SIGN_IN_FAILURES_PER_ACCOUNT],
      [keys.client, SIGN_IN_FAILURES_PER_CLIENT],
    ]);
    const [first, second] = [...limits.keys()].sort();
    const wait = await this.#em().transactional(async (em) => {
      // Makes both rows (a window that ended starts again at 0) and locks them.
      const rows = await em.execute<Array<{ key: string; failures: number; wait: number }>>(
        `insert into sign_in_failures (key, failures, window_ends)
         values (?, 0, now() + ? * interval '1 millisecond'), (?, 0, now() + ? * interval '1 millisecond')
         on conflict (key) do update set
           failures = case when sign_in_failures.window_ends <= now() then 0 else sign_in_failures.failures end,
           window_ends = case when sign_in_failures.window_ends <= now() then excluded.window_ends else sign_in_failures.window_ends end
         returning key, failures, ceil(extract(epoch from window_ends - now()))::int as wait`,
        [first, WINDOW_MS, second, WINDOW_MS],
      );
      const over = rows.filter((r) => Number(r.failures) >= limits.get(r.key)!);
      if (over.length > 0) {
        const atLimit = over.filter((r) => Number(r.failures) === limits.get(r.key)!).map((r) => r.key);
        if (atLimit.length > 0)
          await em.execute(
            `update sign_in_failures set failures = failures + 1 where key in (${atLimit.map(() => '?').join(', ')})`,
            atLimit,
          );
        return { wait: Math.max(1, ...over.map((r) => Number(r.wait))), firstRefusal: atLimit.length > 0 };
      }
      await em.execute(`update sign_in_failures set failures = failures + 1 where key in (?, ?)`, [first, second]);
      return { wait: 0, firstRefusal: false };
    });
    // Now and then, forget the windows that ended.
    if (Math.random() < 0.05)
      await this.#em()
        .execute(`delete from sign_in_failures where window_ends <= now()`)
        .catch(() => {});
    return wait;
  }

  /** A sign-in that succeeded was no failure: its count is given back. */
  async #giveBack(keys: { account: string; client: string }): Promise<void> {
    await this.#em().execute(
      `update sign_in_failures set failures = greatest(failures - 1, 0) where key in (?, ?) and window_ends > now()`,
      [keys.account, keys.client],
    );
  }

  async #check(email: string, secret: string): Promise<SignedIn | null> {
    const user = email ? await this.#em().findOne(User, { email, disabled: false }, { populate: ['passwordHash'] }) : null;
    const stored = user?.passwordHash ?? (await (this.#dummy ??= hashPassword(randomBytes(16).toString('hex'))));
    const ok = secret.length > 0 && secret.length <= PASSWORD_MAX && (await argonVerify(stored, secret).catch(() => false));
    if (user && user.passwordHash && ok)
      return { user: { id: user.id, email: user.email, name: user.name ?? null, roles: [...user.roles] }, scopes: ['*'], by: 'password' };
    // An API token of this very user, typed as the password (the way in before passwords).
    const principal = user ? await this.#authenticateToken(secret) : null;
    // Not a minted token: the grant it would start outlives it (and its parent) by far.
    if (user && principal && principal.tokenKind === 'api' && principal.user.id === user.id)
      return { user: principal.user, scopes: [...principal.scopes], by: 'token' };
    return null;
  }
}
