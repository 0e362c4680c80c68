// Storage of the OAuth authorization server in Folio's database: the adapter interface of
// oidc-provider (upsert, find, findByUid, findByUserCode, consume, destroy, revokeByGrantId) over
// one table, on PostgreSQL and PGlite alike. Ids are stored as their sha-256, and a record whose id
// is the secret itself holds it nowhere else (see SECRET_ID_MODELS), so the table holds no usable
// token. Revoking a grant or a token tells every node (the change feed) to drop what it
// cached of that user. Also the lookup of an OAuth access token for authentication.
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import { BadArguments, NotFound } from '../../contract/errors.ts';

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/**
 * Everything the authorization server holds for one account: grants, access and refresh tokens,
 * codes and sign-in sessions (they are tied to the user by accountId, not by a key). Run when a
 * user is deactivated, not only deleted: reactivating must not bring back what was issued before.
 */
export const DELETE_ACCOUNT_OAUTH_SQL = `delete from oauth_records where payload->>'accountId' = ?`;

/**
 * The models whose id is the secret a client presents (a token, a code, a registration access
 * token, a request_uri) and which oidc-provider finds only by that id. oidc-provider puts the id in
 * the payload as `jti`; it is stored without it, and `find` puts it back from the value it was
 * asked for. Not Session (also found by its uid, whose answer must carry the id), DeviceCode (by its
 * user code), Grant, Client or Interaction (an id that is no credential on its own), nor ReplayDetection
 * (its id is already a hash).
 */
const SECRET_ID_MODELS: readonly string[] = [
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'ClientCredentials',
  'RegistrationAccessToken',
  'InitialAccessToken',
  'PushedAuthorizationRequest',
  'BackchannelAuthenticationRequest',
  'PreAuthorizedCode',
];
const secretId = new Set(SECRET_ID_MODELS);

/** An OAuth access token as authentication needs it. */
export interface OAuthAccess {
  tokenId: string;
  userId: string;
  scopes: string[];
  expiresMs: number;
  audience: string | null;
}

interface Row {
  payload: Record<string, unknown>;
  consumed_ms: number | null;
}

export class OAuthStore {
  readonly #orm: MikroORM;
  readonly #changed: (userId: string) => void;

  readonly #unusedClientDays: number;

  constructor(orm: MikroORM, changed: (userId: string) => void, unusedClientDays = 7) {
    this.#orm = orm;
    this.#changed = changed;
    this.#unusedClientDays = unusedClientDays;
  }

  /**
   * Counts one dynamic registration from `client` (its address) and answers how many seconds it
   * must wait when that is over the limit (0: go on). Counted before the registration, in one
   * statement, so parallel requests are all counted. The counts share the sign-in throttle's table.
   */
  async registrationWait(client: string): Promise<number> {
    const rows = await this.#em().execute<Array<{ n: number; wait: number }>>(
      `insert into sign_in_failures (key, failures, window_ends) values (?, 1, now() + ? * interval '1 millisecond')
       on conflict (key) do update set
         failures = case when sign_in_failures.window_ends <= now() then 1 else sign_in_failures.failures + 1 end,
         window_ends = case when sign_in_failures.window_ends <= now() then excluded.window_ends else sign_in_failures.window_ends end
       returning failures as n, ceil(extract(epoch from window_ends - now()))::int as wait`,
      [sha(`oauth-registration:${client}`), REGISTRATION_WINDOW_MS],
    );
    const row = rows[0];
    return row && Number(row.n) > REGISTRATIONS_PER_CLIENT ? Math.max(1, Number(row.wait)) : 0;
  }

  /**
   * Deletes clients registered more than the configured days ago that no user ever authorised (no
   * grant of theirs is held): what a registration flood leaves behind. Answers how many went.
   */
  async purgeUnusedClients(): Promise<number> {
    const rows = await this.#em().execute<Array<{ n: number }>>(
      `with gone as (
         delete from oauth_records c
          where c.model = 'Client' and c.created_at < now() - make_interval(days => ?)
            and not exists (select 1 from oauth_records g where g.model = 'Grant' and g.payload->>'clientId' = c.payload->>'client_id')
          returning 1)
       select count(*)::int as n from gone`,
      [this.#unusedClientDays],
    );
    return rows[0]?.n ?? 0;
  }

  #em() {
    return this.#orm.em.fork();
  }

  /** The adapter oidc-provider asks for, one per model name. */
  adapter(model: string) {
    const secret = secretId.has(model);
    return {
      upsert: async (id: string, given: Record<string, unknown>, expiresIn?: number) => {
        const { jti: _id, ...rest } = given;
        const payload = secret ? rest : given;
        const expires = typeof expiresIn === 'number' ? new Date(Date.now() + expiresIn * 1000) : null;
        await this.#em().execute(
          `insert into oauth_records (model, id, payload, grant_id, uid, user_code, expires_at)
           values (?, ?, ?::jsonb, ?, ?, ?, ?)
           on conflict (model, id) do update set payload = excluded.payload, grant_id = excluded.grant_id,
             uid = excluded.uid, user_code = excluded.user_code, expires_at = excluded.expires_at`,
          [model, sha(id), JSON.stringify(payload), str(payload['grantId']), str(payload['uid']), str(payload['userCode']), expires],
        );
      },
      find: async (id: string) => {
        const found = await this.#find('id = ?', [model, sha(id)]);
        // The id was asked for, so it is known: oidc-provider reads the token's value from `jti`.
        return found && secret ? { ...found, jti: id } : found;
      },
      findByUid: (uid: string) => this.#find('uid = ?', [model, uid]),
      findByUserCode: (code: string) => this.#find('user_code = ?', [model, code]),
      consume: async (id: string) => {
        await this.#em().execute(`update oauth_records set consumed_at = now() where model = ? and id = ?`, [model, sha(id)]);
      },
      destroy: async (id: string) => {
        const rows = await this.#em().execute<Array<{ account: string | null }>>(
          `delete from oauth_records where model = ? and id = ? returning payload->>'accountId' as account`,
          [model, sha(id)],
        );
        for (const r of rows) if (r.account) this.#changed(r.account);
      },
      revokeByGrantId: async (grantId: string) => {
        const rows = await this.#em().execute<Array<{ account: string | null }>>(
          `delete from oauth_records where grant_id = ? returning payload->>'accountId' as account`,
          [grantId],
        );
        for (const account of new Set(rows.map((r) => r.account))) if (account) this.#changed(account);
      },
    };
  }

  async #find(where: string, params: unknown[]): Promise<Record<string, unknown> | undefined> {
    const rows = await this.#em().execute<Row[]>(
      `select payload, (extract(epoch from consumed_at))::float8 as consumed_ms from oauth_records
        where model = ? and ${where} and (expires_at is null or expires_at > now())`,
      params,
    );
    const row = rows[0];
    if (!row) return undefined;
    return row.consumed_ms === null ? row.payload : { ...row.payload, consumed: Math.floor(row.consumed_ms) };
  }

  /**
   * Removes records past their expiry by more than `graceMs` (codes, tokens, sessions, grants and
   * interactions oidc-provider no longer finds), so the table holds what is alive and not every
   * token ever issued. The grace keeps a just-expired record for a late reuse check or a support
   * question. Answers how many went.
   */
  async purgeExpired(graceMs = 24 * 3600 * 1000): Promise<number> {
    const rows = await this.#em().execute<Array<{ n: number }>>(
      `with gone as (delete from oauth_records where expires_at < now() - make_interval(secs => ?) returning 1)
       select count(*)::int as n from gone`,
      [graceMs / 1000],
    );
    return rows[0]?.n ?? 0;
  }

  /** The clients a user has authorised: one grant each, newest first. */
  async grants(userId: string): Promise<OAuthGrant[]> {
    const rows = await this.#em().execute<Array<{ g: Record<string, unknown>; c: Record<string, unknown> | null }>>(
      `select g.payload as g, c.payload as c from oauth_records g
         left join oauth_records c on c.model = 'Client' and c.id = encode(sha256(convert_to(g.payload->>'clientId', 'UTF8')), 'hex')
        where g.model = 'Grant' and g.payload->>'accountId' = ? and (g.expires_at is null or g.expires_at > now())
        order by (g.payload->>'iat')::bigint desc, g.created_at desc`,
      [userId],
    );
    return rows.map(({ g, c }) => grantOf(g, c));
  }

  /** Revokes one of the user's grants: every token of it stops at once. Another user's is NotFound. */
  async revokeGrant(userId: string, grantId: string): Promise<void> {
    const rows = await this.#em().execute<Array<{ id: string }>>(
      `delete from oauth_records where model = 'Grant' and id = ? and payload->>'accountId' = ? returning id`,
      [sha(grantId), userId],
    );
    if (rows.length === 0) throw new NotFound('no such grant');
    await this.adapter('Grant').revokeByGrantId(grantId);
    this.#changed(userId);
  }

  /** The registered clients (for admins), newest first, a page at a time (as the other lists: limit and cursor). */
  async clients(opts: { limit?: number | undefined; cursor?: string | undefined } = {}): Promise<OAuthClientPage> {
    const limit = Math.min(opts.limit ?? CLIENT_LIST_LIMIT_DEFAULT, CLIENT_LIST_LIMIT_MAX);
    const after = opts.cursor === undefined ? null : decodeClientCursor(opts.cursor);
    const rows = await this.#em().execute<Array<{ id: string; created: string; payload: Record<string, unknown> }>>(
      `select id, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as created, payload from oauth_records
        where model = 'Client' ${after ? `and (created_at, id) < (?::timestamptz, ?)` : ''}
        order by created_at desc, id desc limit ?`,
      after ? [after.created, after.id, limit + 1] : [limit + 1],
    );
    const items = rows.slice(0, limit).map(({ payload: p }) => ({
      client_id: str(p['client_id']) ?? '',
      client_name: str(p['client_name']),
      redirect_uris: Array.isArray(p['redirect_uris']) ? (p['redirect_uris'] as string[]) : [],
      registered_at: typeof p['client_id_issued_at'] === 'number' ? new Date(p['client_id_issued_at'] * 1000).toISOString() : null,
    }));
    const last = rows[limit - 1];
    const next_cursor = rows.length > limit && last ? Buffer.from(JSON.stringify([last.created, last.id])).toString('base64url') : null;
    return { items, next_cursor, limit };
  }

  /** Deletes a registered client and every grant made to it. */
  async deleteClient(clientId: string): Promise<void> {
    const em = this.#em();
    const rows = await em.execute<Array<{ id: string }>>(`delete from oauth_records where model = 'Client' and id = ? returning id`, [
      sha(clientId),
    ]);
    if (rows.length === 0) throw new NotFound('no such client');
    const grants = await em.execute<Array<{ jti: string }>>(
      `select payload->>'jti' as jti from oauth_records where model = 'Grant' and payload->>'clientId' = ?`,
      [clientId],
    );
    for (const { jti } of grants) {
      await this.adapter('Grant').destroy(jti);
      await this.adapter('Grant').revokeByGrantId(jti);
    }
  }

  /** The signing key and cookie keys: made on the first start, then kept in the database. */
  async keys(): Promise<{ jwks: { keys: object[] }; cookieKeys: string[] }> {
    const em = this.#em();
    const made = {
      jwks: {
        keys: [{ ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }), use: 'sig', alg: 'ES256' }],
      },
      cookieKeys: [randomBytes(32).toString('base64url')],
    };
    // Two nodes starting at once both insert; the first one wins and both read it back.
    await em.execute(`insert into oauth_records (model, id, payload) values ('FolioKeys', 'keys', ?::jsonb) on conflict do nothing`, [
      JSON.stringify(made),
    ]);
    const rows = await em.execute<Array<{ payload: typeof made }>>(
      `select payload from oauth_records where model = 'FolioKeys' and id = 'keys'`,
    );
    return rows[0]!.payload;
  }

  /** Why an access token is refused, when it is one this server issued and still holds. */
  async refusal(raw: string): Promise<'expired' | null> {
    const rows = await this.#em().execute<Array<{ expired: boolean }>>(
      `select expires_at <= now() as expired from oauth_records where model = 'AccessToken' and id = ?`,
      [sha(raw)],
    );
    return rows[0]?.expired ? 'expired' : null;
  }

  /**
   * A live access token, or null: unknown, expired, or its grant revoked. Its `tokenId` is the row
   * id (the hash), never the token: it travels to the other nodes (MCP cancellations).
   */
  async access(raw: string): Promise<OAuthAccess | null> {
    const em = this.#em();
    const rows = await em.execute<Array<{ payload: Record<string, unknown>; grant_live: boolean }>>(
      `select t.payload, exists (select 1 from oauth_records g where g.model = 'Grant' and g.id = encode(sha256(convert_to(t.grant_id, 'UTF8')), 'hex')
                                   and (g.expires_at is null or g.expires_at > now())) as grant_live
         from oauth_records t
        where t.model = 'AccessToken' and t.id = ? and t.expires_at > now()`,
      [sha(raw)],
    );
    const row = rows[0];
    if (!row || !row.grant_live) return null;
    const p = row.payload;
    const userId = str(p['accountId']);
    const exp = typeof p['exp'] === 'number' ? p['exp'] * 1000 : null;
    if (!userId || exp === null) return null;
    return {
      tokenId: sha(raw),
      userId,
      scopes: (str(p['scope']) ?? '').split(' ').filter((s) => s && s !== 'openid' && s !== 'offline_access'),
      expiresMs: exp,
      audience: str(p['aud']),
    };
  }
}

/** Dynamic registrations one client address may make per window; past it: 429 until the window ends. */
export const REGISTRATIONS_PER_CLIENT = 20;
const REGISTRATION_WINDOW_MS = 3_600_000;
export const CLIENT_LIST_LIMIT_DEFAULT = 50;
export const CLIENT_LIST_LIMIT_MAX = 100;

export interface OAuthClientPage {
  items: OAuthClient[];
  next_cursor: string | null;
  limit: number;
}

function decodeClientCursor(cursor: string): { created: string; id: string } {
  try {
    const [created, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof created === 'string' && !Number.isNaN(Date.parse(created)) && typeof id === 'string' && /^[0-9a-f]{64}$/.test(id))
      return { created, id };
  } catch {
    // falls through to the refusal
  }
  throw new BadArguments('cursor is not one this API gave out', [{ path: '/cursor', message: 'pass back next_cursor unchanged' }]);
}

/** A client the user authorised, as they see it. */
export interface OAuthGrant {
  id: string;
  client_id: string;
  client_name: string | null;
  redirect_uris: string[];
  scopes: string[];
  created_at: string | null;
}

export interface OAuthClient {
  client_id: string;
  client_name: string | null;
  redirect_uris: string[];
  registered_at: string | null;
}

function grantOf(g: Record<string, unknown>, c: Record<string, unknown> | null): OAuthGrant {
  const resources = (g['resources'] ?? {}) as Record<string, string>;
  const scopes = [...new Set(Object.values(resources).flatMap((s) => s.split(' ').filter(Boolean)))].sort();
  return {
    id: str(g['jti']) ?? '',
    client_id: str(g['clientId']) ?? '',
    client_name: c ? str(c['client_name']) : null,
    redirect_uris: c && Array.isArray(c['redirect_uris']) ? (c['redirect_uris'] as string[]) : [],
    scopes,
    created_at: typeof g['iat'] === 'number' ? new Date(g['iat'] * 1000).toISOString() : null,
  };
}

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}
