// Share links: a file (its current version) or one version, reachable without an account through
// an unguessable token (256 random bits). Only the token's sha256 is stored; the token is shown
// once, when the link is made. Optional expiry, password (argon2id), download limit and label. An
// expired or exhausted link answers exactly like an unknown one. Wrong passwords are throttled per
// link and per (link, client), never per client across links: one address hammering a link must
// not close other links, and a link with no password is never throttled. The counts are this
// process's: behind a load balancer of N nodes a link allows N times the wrong passwords.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { hash as argonHash, verify as argonVerify } from '@node-rs/argon2';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { BadArguments, NotFound, PasswordRequired, TooManyRequests } from '../../contract/errors.ts';
import * as v from '../notes/validate.ts';
import { SHARE_COLUMNS, toShare, type ShareDbRow } from './rows.ts';
import type { ContentRef, CreatedShare, CreateShare, ShareLink } from './types.ts';
import { recordAudit } from '../audit/record.ts';

export const SHARE_404 = 'no such share link. It may never have existed, have been revoked, have expired or reached its download limit.';
const notFound = () => new NotFound(SHARE_404);

/** @node-rs/argon2's Algorithm.Argon2id (a const enum, which this build cannot import). */
const ARGON2ID = 2;

const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');
const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

export const LABEL_MAX = 200;
export const PASSWORD_MAX = 1024;
const EXPIRY_MAX_SECONDS = 10 * 365 * 86_400;

/**
 * Wrong passwords allowed in a window, per link (from anyone) and per link and client, before
 * refusing for the rest of it. A client alone cannot use up the link's allowance and lock others out.
 */
const WINDOW_MS = 15 * 60_000;
const PER_LINK = 10;
const PER_LINK_AND_CLIENT = 5;

class Throttle {
  readonly #hits = new Map<string, { count: number; until: number }>();

  /**
   * Counts one attempt against every key, or, when one has reached its limit, none: the seconds to
   * wait (0: counted, go on). Synchronous, so attempts that arrive together are counted one by one.
   */
  take(keys: Array<[key: string, max: number]>, now: number): number {
    let wait = 0;
    for (const [key, max] of keys) {
      const h = this.#hits.get(key);
      if (h && h.until > now && h.count >= max) wait = Math.max(wait, Math.ceil((h.until - now) / 1000));
    }
    if (wait > 0) return wait;
    for (const [key] of keys) {
      const h = this.#hits.get(key);
      if (!h || h.until <= now) this.#hits.set(key, { count: 1, until: now + WINDOW_MS });
      else h.count++;
    }
    if (this.#hits.size > 100_000) for (const [k, e] of this.#hits) if (e.until <= now) this.#hits.delete(k);
    return 0;
  }

  /** An attempt that was right is given back. */
  giveBack(keys: string[]): void {
    for (const key of keys) {
      const h = this.#hits.get(key);
      if (h && h.count > 0) h.count--;
    }
  }
}

/** What a valid link opens. */
export interface OpenedShare {
  share_id: string;
  /** It has a max_downloads: every answer with content counts, ranges included. */
  limited: boolean;
  /** Pinned to a version, or the file's current content. */
  ref: ContentRef;
}

export class Shares {
  readonly #em: () => EntityManager;
  readonly #wrongPasswords = new Throttle();

  constructor(em: () => EntityManager, _log?: Logger) {
    this.#em = em;
  }

  async create(owner: string, fileId: string, input: CreateShare): Promise<CreatedShare> {
    const problems: Array<{ path: string; message: string }> = [];
    const { expires_in_seconds: ttl, max_downloads: max, password, label = '' } = input;
    if (ttl !== undefined && (!Number.isInteger(ttl) || ttl < 1 || ttl > EXPIRY_MAX_SECONDS))
      problems.push({ path: 'expires_in_seconds', message: `must be an integer from 1 to ${EXPIRY_MAX_SECONDS}` });
    if (max !== undefined && (!Number.isInteger(max) || max < 1 || max > 1_000_000_000))
      problems.push({ path: 'max_downloads', message: 'must be a positive integer' });
    if (password !== undefined && (typeof password !== 'string' || password.length < 1 || password.length > PASSWORD_MAX))
      problems.push({ path: 'password', message: `must be 1 to ${PASSWORD_MAX} characters` });
    // eslint-disable-next-line no-control-regex
    if (typeof label !== 'string' || label.length > LABEL_MAX || /[\u0000-\u001f]/.test(label))
      problems.push({ path: 'label', message: `must be at most ${LABEL_MAX} characters, one line` });
    if (problems.length) throw new BadArguments(`the share link cannot be made: ${problems.map((p) => p.path).join(', ')}`, problems);
    const token = randomBytes(32).toString('base64url');
    const id = randomUUID();
    const passwordHash = password === undefined ? null : await argonHash(password, { algorithm: ARGON2ID });
    const em = this.#em();
    await em.transactional(async (tx) => {
      await tx.execute(
        `insert into file_shares (id, owner_id, file_id, version, token_hash, label, password_hash, expires_at, max_downloads)
         values (?, ?, ?, ?, ?, ?, ?, case when ?::int is null then null else now() + make_interval(secs => ?::int) end, ?)`,
        [id, owner, fileId, input.version ?? null, tokenHash(token), label, passwordHash, ttl ?? null, ttl ?? null, max ?? null],
      );
      await recordAudit(tx, {
        action: 'share.created',
        actor: { id: owner },
        target: { type: 'share', id },
        detail: { file_id: fileId, password: passwordHash !== null, expires_in_seconds: ttl ?? null, max_downloads: max ?? null },
      });
    });
    const [row] = await em.execute<ShareDbRow[]>(
      `select ${SHARE_COLUMNS} from file_shares s join files f on f.id = s.file_id where s.id = ?`,
      [id],
    );
    return { ...toShare(row!), token };
  }

  async list(owner: string, fileId?: string): Promise<ShareLink[]> {
    const found = await this.#em().execute<ShareDbRow[]>(
      `select ${SHARE_COLUMNS} from file_shares s join files f on f.id = s.file_id
        where s.owner_id = ? ${fileId ? 'and s.file_id = ?' : ''} order by s.created_at desc, s.id desc limit 1000`,
      fileId ? [owner, fileId] : [owner],
    );
    return found.map(toShare);
  }

  async revoke(owner: string, shareId: string): Promise<void> {
    if (!v.isUuid(shareId)) throw notFound();
    await this.#em().transactional(async (tx) => {
      const gone = await tx.execute<{ id: string }[]>(`delete from file_shares where id = ? and owner_id = ? returning id`, [
        shareId,
        owner,
      ]);
      if (gone.length === 0) throw notFound();
      await recordAudit(tx, { action: 'share.revoked', actor: { id: owner }, target: { type: 'share', id: shareId } });
    });
  }

  /**
   * The content a public link serves, after its password. `client` (the client's address) keys the
   * wrong-password throttle with the link. Unknown, revoked, expired and exhausted links, and links
   * to trashed files: NotFound.
   */
  async open(token: string, password: string | undefined, client: string): Promise<OpenedShare & { protected: boolean }> {
    if (!TOKEN_RE.test(token)) throw notFound();
    const key = tokenHash(token);
    const [row] = await this.#em().execute<
      Array<{
        id: string;
        password_hash: string | null;
        file_id: string;
        version: number | null;
        name: string;
        content_type: string;
        size: string;
        sha256: string;
        cur_version: number;
        limited: boolean;
      }>
    >(
      `select s.id, s.password_hash, s.file_id, s.version,
              coalesce(fv.name, f.name) as name, coalesce(fv.content_type, f.content_type) as content_type,
              coalesce(fv.size, f.size) as size, coalesce(fv.sha256, f.sha256) as sha256, f.version as cur_version,
              s.max_downloads is not null as limited
         from file_shares s join files f on f.id = s.file_id
         left join file_versions fv on fv.file_id = s.file_id and fv.version = s.version
        where s.token_hash = ? and f.deleted_at is null
          and (s.expires_at is null or s.expires_at > now())
          and (s.max_downloads is null or s.downloads < s.max_downloads)`,
      [key],
    );
    if (!row) throw notFound();
    if (row.password_hash !== null) {
      if (password === undefined) throw new PasswordRequired('this link needs its password: send it as the X-Share-Password header.');
      // Counted before the (slow) verification, with nothing awaited in between.
      const keys = [`link:${key}`, `client:${key}:${client}`];
      const wait = this.#wrongPasswords.take(
        [
          [keys[0]!, PER_LINK],
          [keys[1]!, PER_LINK_AND_CLIENT],
        ],
        Date.now(),
      );
      if (wait > 0) throw new TooManyRequests(`too many wrong passwords for this link; try again in ${wait} seconds.`, wait);
      const ok = password.length <= PASSWORD_MAX && (await argonVerify(row.password_hash, password).catch(() => false));
      if (!ok) throw new PasswordRequired('wrong password for this link.');
      this.#wrongPasswords.giveBack(keys);
    }
    return {
      share_id: row.id,
      limited: row.limited,
      protected: row.password_hash !== null,
      ref: {
        file_id: row.file_id,
        version: row.version ?? row.cur_version,
        name: row.name,
        content_type: row.content_type,
        size: Number(row.size),
        sha256: row.sha256,
      },
    };
  }

  /** Counts one download; NotFound when the link ran out (or expired) meanwhile. */
  async recordDownload(shareId: string): Promise<void> {
    await this.#em().transactional(async (tx) => {
      const hit = await tx.execute<{ owner_id: string; file_id: string }[]>(
        `update file_shares set downloads = downloads + 1, last_access_at = now()
          where id = ? and (max_downloads is null or downloads < max_downloads) and (expires_at is null or expires_at > now())
          returning owner_id, file_id`,
        [shareId],
      );
      if (hit.length === 0) throw notFound();
      // By whoever holds the link: no actor; the owner sees it among their events.
      await recordAudit(tx, {
        action: 'share.accessed',
        actor: null,
        subject: hit[0]!.owner_id,
        target: { type: 'share', id: shareId },
        detail: { file_id: hit[0]!.file_id },
      });
    });
  }

  /** Notes an access that is not a whole download (HEAD, a resumed range). */
  async touch(shareId: string): Promise<void> {
    await this.#em().execute(`update file_shares set last_access_at = now() where id = ?`, [shareId]);
  }
}
