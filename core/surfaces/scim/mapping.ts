// How a SCIM User maps onto a Folio account and back (README, "SCIM for identity providers"):
// userName and emails are the account's email (a userName that is not an email address is kept as
// given, the email then coming from emails), displayName and name.formatted its name, active its
// state; every other attribute the provider sends is its profile, kept as sent and echoed. Also
// the filter rewrites the mapping needs (userName and emails compared without case).
import SCIMMY from 'scimmy';
import type { UserInfo } from '../../domain/identity/users.ts';

const ScimError = SCIMMY.Types.Error;

/**
 * A user's SCIM profile: what the provider sent that Folio has no column for (externalId, the name's
 * parts, nickName, title, locale, the enterprise extension, ...), kept as sent and echoed back.
 * The account's own fields (userName/emails = email, displayName/name.formatted = name, active)
 * and what Folio never keeps (password, groups) are not in it.
 */
const NOT_PROFILE = new Set(['schemas', 'id', 'meta', 'userName', 'emails', 'active', 'password', 'groups', 'displayName']);

export type Profile = Record<string, unknown>;

/** What a profile may hold: its JSON at most this many bytes, each multi-valued attribute this many values. */
export const PROFILE_MAX_BYTES = 16 * 1024;
export const PROFILE_MAX_VALUES = 20;

/** The first array in `v` (at any depth) with more than PROFILE_MAX_VALUES values, by its path. */
function overfull(v: unknown, path: string): string | null {
  if (Array.isArray(v)) {
    if (v.length > PROFILE_MAX_VALUES) return path;
    for (const x of v) {
      const found = overfull(x, path);
      if (found) return found;
    }
  } else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      const found = overfull(x, path ? `${path}.${k}` : k);
      if (found) return found;
    }
  }
  return null;
}

/**
 * The profile in what a provider sent; 400 invalidValue when it is more than a profile may hold.
 * `userName`: one that is not the account's email, kept in the profile and echoed as given.
 */
export function profileOf(u: Record<string, unknown>, userName: string | null = null): Profile | null {
  const out: Profile = userName ? { userName } : {};
  for (const [k, v] of Object.entries(u)) {
    if (NOT_PROFILE.has(k) || v === undefined || v === null) continue;
    if (k === 'name' && v && typeof v === 'object') {
      const { formatted: _formatted, ...parts } = v as Record<string, unknown>;
      if (Object.values(parts).some((x) => x !== undefined && x !== null)) out[k] = parts;
      continue;
    }
    out[k] = v;
  }
  if (!Object.keys(out).length) return null;
  const json = JSON.stringify(out);
  const full = overfull(out, '');
  if (full) throw new ScimError(400, 'invalidValue', `${full}: at most ${PROFILE_MAX_VALUES} values are kept`);
  if (Buffer.byteLength(json) > PROFILE_MAX_BYTES)
    throw new ScimError(
      400,
      'invalidValue',
      `the attributes Folio keeps as sent (all but userName, emails, displayName and active) take more than ${PROFILE_MAX_BYTES / 1024} KB`,
    );
  return JSON.parse(json) as Profile;
}

/** A Folio user as a SCIM User resource (before scimmy adds schemas and meta.location). */
export function toScim(u: UserInfo, profile: Profile | null = null) {
  const { name: parts, userName, ...rest } = (profile ?? {}) as { name?: Record<string, unknown>; userName?: unknown };
  const name = { ...(parts ?? {}), ...(u.name ? { formatted: u.name } : {}) };
  return {
    ...rest,
    id: u.id,
    userName: typeof userName === 'string' ? userName : u.email,
    ...(Object.keys(name).length ? { name } : {}),
    ...(u.name ? { displayName: u.name } : {}),
    emails: [{ value: u.email, primary: true, type: 'work' }],
    active: u.active,
    meta: { created: new Date(u.created_at), lastModified: new Date(u.updated_at) },
  };
}

type NameParts = { formatted?: string; givenName?: string; familyName?: string; middleName?: string };
export type ScimIn = {
  name?: NameParts;
  displayName?: string;
  userName?: string;
  emails?: Array<{ value?: string; primary?: boolean; type?: string }>;
};

export const trimmed = (x: unknown) => (typeof x === 'string' && x.trim() ? x.trim() : undefined);
const joined = (n: NameParts | undefined) =>
  [n?.givenName, n?.middleName, n?.familyName]
    .map(trimmed)
    .filter((x): x is string => !!x)
    .join(' ') || undefined;

/**
 * The name Folio keeps (one string) for a new user: displayName, else name.formatted, else the
 * given, middle and family names.
 */
export function nameOf(u: ScimIn): string | null {
  return trimmed(u.displayName) ?? trimmed(u.name?.formatted) ?? joined(u.name) ?? null;
}

/**
 * The name after a PUT or PATCH of a user shown as `before`: what changed wins (displayName, then
 * name.formatted, then the name's parts, which make the name when they change alone), else it stays.
 */
export function renamed(u: ScimIn, before: ScimIn, current: string | null): string | null {
  const changed = (a: unknown, b: unknown) => trimmed(a) !== trimmed(b);
  if (changed(u.displayName, before.displayName) && trimmed(u.displayName)) return trimmed(u.displayName)!;
  if (changed(u.name?.formatted, before.name?.formatted) && trimmed(u.name?.formatted)) return trimmed(u.name?.formatted)!;
  const parts = ['givenName', 'middleName', 'familyName'] as const;
  if (parts.some((k) => changed(u.name?.[k], before.name?.[k])) && joined(u.name)) return joined(u.name)!;
  // Everything about the name removed (a PUT without one): none.
  if (!trimmed(u.displayName) && !trimmed(u.name?.formatted) && !joined(u.name)) return null;
  return current;
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** Is this userName an email address (the account's), rather than a name the provider keeps? */
export const isEmail = (x: string) => EMAIL.test(x.trim());

/** The address `emails` names for the account (trimmed): the primary one, else the work one, else the first. */
function listedEmail(u: ScimIn): string | undefined {
  const e = u.emails?.find((x) => x.primary) ?? u.emails?.find((x) => x.type === 'work') ?? u.emails?.[0];
  return e?.value?.trim() || undefined;
}

/** What a SCIM User names of the account: its email, and the userName to keep when that is not the email. */
export interface Account {
  email: string;
  /** A userName that is not an email address, kept and echoed as given; null: userName is the email. */
  userName: string | null;
}

/** The longest userName kept as given (an email userName is bounded as an email). */
export const USERNAME_MAX = 256;

/** A userName that is not an email address, to keep as given: 400 invalidValue when too long. */
function kept(userName: string): string {
  if (userName.length > USERNAME_MAX) throw new ScimError(400, 'invalidValue', `userName: at most ${USERNAME_MAX} characters`);
  return userName;
}

/** The address `emails` names, lowercased: 400 invalidValue when it names none (`why`) or one that is not an address. */
function usable(listed: string | undefined, why: string): string {
  if (listed && isEmail(listed)) return listed.toLowerCase();
  throw new ScimError(
    400,
    'invalidValue',
    listed
      ? `emails: ${JSON.stringify(listed)} is not an email address`
      : `${why}: a Folio account is its email address, so send it as userName or in emails (primary or type "work")`,
  );
}

/**
 * The account a new SCIM User names. A userName that is an email address is the account's email;
 * one that is not (Entra ID's userPrincipalName or mailNickname, a generated sample) is kept as
 * given when `emails` brings a usable address, which is then the account's email.
 */
export function accountOf(u: ScimIn): Account {
  const userName = u.userName?.trim();
  if (userName && isEmail(userName)) return { email: userName.toLowerCase(), userName: null };
  if (userName) kept(userName);
  const email = usable(
    listedEmail(u),
    userName
      ? `userName ${JSON.stringify(userName)} is not an email address and emails names none`
      : 'userName (the email address) is required',
  );
  return { email, userName: userName || null };
}

/**
 * The account after a PUT or a PATCH (scimmy applied it: `u` is the whole new resource) of one that
 * is `current`. What changed wins: a new userName that is an email address is the new email (its
 * emails may still name the old one), else a new address in emails is. userName and emails naming
 * two different new addresses cannot both apply. The account keeps one address, so emails left with
 * none is refused, not ignored: by a PATCH (which removed or emptied them), or by a PUT whose
 * userName is not an email address either.
 */
export function accountAfter(u: ScimIn, current: { email: string; userName: string }, patch: boolean): Account {
  const userName = u.userName?.trim() || current.userName;
  const listed = listedEmail(u);
  if (listed === undefined && (patch || !isEmail(userName)))
    throw new ScimError(
      400,
      'invalidValue',
      `emails: a Folio account keeps one email address (${current.email}); replace it with another, do not remove it`,
    );
  const byEmails = listed !== undefined && listed.toLowerCase() !== current.email ? usable(listed, 'emails') : undefined;
  if (isEmail(userName)) {
    const byName = userName.toLowerCase();
    if (byName === current.userName.toLowerCase()) return { email: byEmails ?? current.email, userName: null };
    if (byEmails && byEmails !== byName)
      throw new ScimError(
        400,
        'invalidValue',
        `userName (${byName}) and emails (${byEmails}) name two new addresses; a Folio account has one`,
      );
    return { email: byName, userName: null };
  }
  return { email: byEmails ?? current.email, userName: kept(userName) };
}

/**
 * The email addresses a resource names that are not the account's: Folio keeps one. `stale`, the
 * account's former address, is not one of them while emails still names it (a PATCH of userName alone).
 */
export function otherEmails(u: ScimIn, email: string, stale?: string): string[] {
  return (u.emails ?? []).map((e) => e.value?.trim().toLowerCase() ?? '').filter((v) => v && v !== email && v !== stale);
}

/** scimmy reads `userName eq` (no value) as a comparison with nothing; SCIM says it is not a filter. */
export function requireValues(expressions: unknown[]): void {
  const walk = (e: unknown): void => {
    if (Array.isArray(e)) {
      const [op] = e as [unknown];
      if (typeof op === 'string' && op !== 'pr' && op !== 'np' && e.length < 2)
        throw new ScimError(400, 'invalidFilter', `the comparison ${op} needs a value`);
      for (const x of e.slice(1)) if (x && typeof x === 'object') walk(x);
    } else if (e && typeof e === 'object') for (const v of Object.values(e)) walk(v);
  };
  for (const e of expressions) walk(e);
}

/**
 * userName is caseExact false (RFC 7643 §4.1.1), and so are emails' values; Folio keeps both
 * lowercased, so comparing with the value lowercased is comparing without case (co, sw, ew, eq).
 * Answers the filter's expressions so rewritten (scimmy's own are frozen).
 */
export function caseless(expressions: unknown): unknown {
  const copy = JSON.parse(JSON.stringify(expressions)) as unknown;
  const lower = (c: unknown) => {
    if (Array.isArray(c)) for (let i = 1; i < c.length; i++) if (typeof c[i] === 'string') c[i] = (c[i] as string).toLowerCase();
  };
  const walk = (e: unknown): void => {
    if (Array.isArray(e)) return e.forEach(walk);
    if (!e || typeof e !== 'object') return;
    for (const [k, v] of Object.entries(e as Record<string, unknown>)) {
      if (k.toLowerCase() === 'username') lower(v);
      else if (k.toLowerCase() === 'emails' && v && typeof v === 'object' && !Array.isArray(v)) {
        for (const [sub, c] of Object.entries(v as Record<string, unknown>)) if (sub.toLowerCase() === 'value') lower(c);
      } else if (Array.isArray(v) && v.some((x) => x && typeof x === 'object')) walk(v);
    }
  };
  walk(copy);
  return copy;
}
