// Reading the audit log, and its retention. Every read is bounded: a page holds at most MAX_LIMIT
// records and looks at most SCAN_WINDOW records of the log (by id) for them, whatever the filters
// and the time range, so a query over ten years or with a filter that matches nothing answers as
// fast as one over a day; a page that stopped at the window says so and gives the cursor to go on.
// Only retention deletes (purge); nothing updates a record.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { BadArguments } from '../../contract/errors.ts';
import type { Principal } from '../identity/types.ts';
import { auditParams, AUDIT_ACTIONS, SECURITY_ACTIONS } from './record.ts';

export interface AuditSettings {
  /** Days a record is kept; older ones are deleted by upkeep. */
  retentionDays: number;
  /** Also record every tool call (caller, token, surface, function, outcome, status, duration, bytes). */
  toolCalls: boolean;
}

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 500;
/** Records of the log one page looks at, at most. */
export const SCAN_WINDOW = 50_000;
/** Records one JSON Lines export streams, at most. */
export const EXPORT_MAX = 100_000;
const PURGE_BATCH = 5_000;

export interface AuditFilters {
  actor?: string | undefined;
  action?: string | undefined;
  target?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
  cursor?: string | undefined;
  limit?: number | undefined;
}

export interface AuditRecord {
  id: string;
  at: string;
  actor: { id: string | null; email: string | null };
  subject: string | null;
  action: string;
  outcome: string;
  target: { type: string; id: string } | null;
  address: string | null;
  user_agent: string | null;
  request_id: string | null;
  detail: Record<string, unknown>;
}

export interface AuditPage {
  items: AuditRecord[];
  limit: number;
  limit_clamped_from?: number;
  /** Pass as `cursor` for the next (older) page; null: nothing older matches. */
  next_cursor: string | null;
  /** The page stopped at the bound of records one page looks at, before filling up. */
  window_exhausted: boolean;
}

/** A call as the log of tool calls keeps it: never its arguments, only their size. */
export interface ToolCall {
  principal: Principal;
  surface: 'curl' | 'mcp';
  namespace: string;
  fn: string;
  outcome: string;
  status: number;
  durationMs: number;
  argumentBytes: number;
  resultBytes: number;
}

interface Row {
  id: string;
  at: Date | string;
  actor_id: string | null;
  actor_email: string | null;
  subject_id: string | null;
  action: string;
  outcome: string;
  target_type: string | null;
  target_id: string | null;
  address: string | null;
  user_agent: string | null;
  request_id: string | null;
  detail: Record<string, unknown> | string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const CURSOR = /^[1-9][0-9]{0,17}$/;
const ACTION = /^[a-z_]+(\.[a-z_]+|\.\*)?$/;

const INSERT_CALLS = `insert into audit_events (actor_id, actor_email, subject_id, action, outcome, target_type, target_id, address, user_agent, request_id, detail)`;
const CALL_BATCH = 200;
const CALL_FLUSH_MS = 250;
/** Tool calls kept waiting for their write, at most; more are dropped and counted (droppedCalls). */
export const CALL_BUFFER_MAX = 50 * CALL_BATCH;

export class AuditService {
  readonly #orm: MikroORM;
  readonly settings: AuditSettings;
  readonly #log: Logger | undefined;
  #calls: unknown[][] = [];
  #timer: NodeJS.Timeout | undefined;
  /** The writes of tool calls, one after the other: flush() and close() wait for all of them. */
  #writing: Promise<void> = Promise.resolve();
  #closed = false;
  #dropped = 0;
  #droppedLogged = 0;

  constructor(orm: MikroORM, settings: AuditSettings, log?: Logger) {
    this.#orm = orm;
    this.settings = settings;
    this.#log = log;
  }

  /** The whole log, for an admin (the REST route requires the role). */
  async list(filters: AuditFilters): Promise<AuditPage> {
    return this.#page(filters, null);
  }

  /** The caller's own security events: those about their account, whoever did them. */
  async mine(p: Principal, filters: AuditFilters): Promise<AuditPage> {
    return this.#page({ ...filters, actor: undefined, target: undefined }, p.user.id);
  }

  /** The log as JSON Lines, page after page, up to EXPORT_MAX records; the last line says when more remain. */
  async *export(filters: AuditFilters, signal: AbortSignal): AsyncGenerator<Uint8Array> {
    let cursor = filters.cursor;
    let sent = 0;
    const q = await this.#query(filters, null); // validates before the first byte
    for (;;) {
      if (signal.aborted) return;
      const page = await this.#run(q, cursor, Math.min(MAX_LIMIT * 2, EXPORT_MAX - sent));
      if (page.items.length > 0) yield Buffer.from(page.items.map((r) => JSON.stringify(r) + '\n').join(''));
      sent += page.items.length;
      cursor = page.next_cursor ?? undefined;
      if (cursor === undefined) return;
      if (sent >= EXPORT_MAX) {
        yield Buffer.from(JSON.stringify({ truncated: true, next_cursor: cursor, limit: EXPORT_MAX }) + '\n');
        return;
      }
    }
  }

  /**
   * Records one tool call (when audit.toolCalls is on). Not in the call's path: records are kept
   * and written together, CALL_BATCH at a time or CALL_FLUSH_MS after the first, in one insert (a
   * call changes nothing of its own to be in a transaction with). One write at a time: while the
   * database is slower than the calls, they wait in the buffer, up to CALL_BUFFER_MAX; beyond that,
   * and once close has begun, a call is dropped and counted (droppedCalls, and a warning in the log).
   */
  recordCall(call: ToolCall): void {
    if (this.#closed || this.#calls.length >= CALL_BUFFER_MAX) {
      this.#dropped++;
      return;
    }
    this.#calls.push(this.#callParams(call));
    if (this.#calls.length === CALL_BATCH) void this.flush();
    else this.#timer ??= setTimeout(() => void this.flush(), CALL_FLUSH_MS).unref();
  }

  /** Tool calls dropped so far (the buffer was full, or the service was closing). */
  get droppedCalls(): number {
    return this.#dropped;
  }

  /** Writes the tool calls kept so far, after the writes already under way; resolves when all are written. */
  flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#writing = this.#writing.then(() => this.#drain());
    return this.#writing;
  }

  /** Stops taking tool calls and writes every one kept. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.flush();
  }

  async #drain(): Promise<void> {
    const row = `(${'?, '.repeat(10)}?::jsonb)`;
    while (this.#calls.length > 0) {
      const batch = this.#calls.splice(0, CALL_BATCH);
      await this.#orm.em
        .fork()
        .execute(`${INSERT_CALLS} values ${batch.map(() => row).join(', ')}`, batch.flat())
        .catch((err: unknown) => this.#log?.error({ err, lost: batch.length }, 'could not write tool calls to the audit log'));
    }
    if (this.#dropped > this.#droppedLogged) {
      this.#log?.warn({ dropped: this.#dropped - this.#droppedLogged, total: this.#dropped }, 'tool calls dropped from the audit log');
      this.#droppedLogged = this.#dropped;
    }
  }

  #callParams(call: ToolCall): unknown[] {
    return auditParams({
      action: 'tool.called',
      actor: call.principal,
      outcome: call.status < 400 ? 'success' : 'failure',
      target: { type: 'function', id: `${call.namespace}.${call.fn}` },
      detail: {
        token_id: call.principal.tokenId,
        token_kind: call.principal.tokenKind,
        surface: call.surface,
        result: call.outcome,
        status: call.status,
        duration_ms: Math.round(call.durationMs * 10) / 10,
        argument_bytes: call.argumentBytes,
        result_bytes: call.resultBytes,
      },
    });
  }

  /** Deletes records older than the retention, in batches; returns how many. */
  async purge(now = new Date()): Promise<number> {
    const before = new Date(now.getTime() - this.settings.retentionDays * 86_400_000);
    const em = this.#orm.em.fork();
    let total = 0;
    for (;;) {
      const rows = await em.execute<Array<{ id: string }>>(
        `delete from audit_events where id in (select id from audit_events where at < ? order by id limit ${PURGE_BATCH}) returning id`,
        [before],
      );
      total += rows.length;
      if (rows.length < PURGE_BATCH) return total;
    }
  }

  async #page(filters: AuditFilters, subject: string | null): Promise<AuditPage> {
    const q = await this.#query(filters, subject);
    const requested = filters.limit ?? DEFAULT_LIMIT;
    const limit = Math.min(requested, MAX_LIMIT);
    const page = await this.#run(q, filters.cursor, limit);
    return { ...page, limit, ...(requested > limit ? { limit_clamped_from: requested } : {}) };
  }

  /** The filters as SQL, and the ids the log's matching records lie between (from the time range). */
  async #query(f: AuditFilters, subject: string | null): Promise<Query> {
    const problems: Array<{ path: string; message: string }> = [];
    const where: string[] = [];
    const params: unknown[] = [];
    if (subject !== null) {
      where.push(`subject_id = ?`, `action = any(?::text[])`);
      params.push(subject, `{${SECURITY_ACTIONS.join(',')}}`);
    }
    if (f.actor !== undefined) {
      if (UUID.test(f.actor)) {
        where.push('actor_id = ?');
        params.push(f.actor);
      } else if (f.actor.includes('@') && f.actor.length <= 320) {
        where.push('lower(actor_email) = lower(?)');
        params.push(f.actor);
      } else problems.push({ path: '/actor', message: 'must be a user id (UUID) or an email address' });
    }
    if (f.action !== undefined) {
      const known = f.action.endsWith('.*')
        ? AUDIT_ACTIONS.some((a) => a.startsWith(f.action!.slice(0, -1)))
        : (AUDIT_ACTIONS as readonly string[]).includes(f.action);
      if (!ACTION.test(f.action) || !known)
        problems.push({ path: '/action', message: `must be one of ${AUDIT_ACTIONS.join(', ')}, or a prefix such as token.*` });
      else if (f.action.endsWith('.*')) {
        where.push('action like ?');
        params.push(f.action.slice(0, -1) + '%');
      } else {
        where.push('action = ?');
        params.push(f.action);
      }
    }
    if (f.target !== undefined) {
      where.push('target_id = ?');
      params.push(f.target);
    }
    const since = time(f.since, '/since', problems);
    const until = time(f.until, '/until', problems);
    if (since && until && since > until) problems.push({ path: '/until', message: 'must not be before since' });
    if (f.cursor !== undefined && !CURSOR.test(f.cursor)) problems.push({ path: '/cursor', message: 'is not a cursor this list gave' });
    if (problems.length > 0) throw new BadArguments(`${problems[0]!.path.slice(1)} ${problems[0]!.message}`, problems);
    if (since) {
      where.push('at >= ?');
      params.push(since);
    }
    if (until) {
      where.push('at <= ?');
      params.push(until);
    }
    // Every record at or after `since` has an id at or above the first such record's (ids grow with
    // time), and every one at or before `until` one at or below the last's: the ids to look between.
    const em = this.#orm.em.fork();
    const [floor] = since
      ? await em.execute<Array<{ id: string | null }>>(`select min(id)::text as id from audit_events where at >= ?`, [since])
      : [{ id: '1' }];
    const [ceiling] = await em.execute<Array<{ id: string | null }>>(
      until ? `select max(id)::text as id from audit_events where at <= ?` : `select max(id)::text as id from audit_events`,
      until ? [until] : [],
    );
    return {
      where,
      params,
      floor: BigInt(floor?.id ?? '0'),
      ceiling: BigInt(ceiling?.id ?? '0'),
      empty: !floor?.id || !ceiling?.id,
    };
  }

  async #run(q: Query, cursor: string | undefined, limit: number): Promise<Omit<AuditPage, 'limit'>> {
    const top = cursor === undefined ? q.ceiling : min(BigInt(cursor) - 1n, q.ceiling);
    if (q.empty || top < q.floor || limit <= 0) return { items: [], next_cursor: null, window_exhausted: false };
    const bottom = top - BigInt(SCAN_WINDOW) + 1n > q.floor ? top - BigInt(SCAN_WINDOW) + 1n : q.floor;
    const rows = await this.#orm.em.fork().execute<Row[]>(
      `select id::text as id, at, actor_id, actor_email, subject_id, action, outcome, target_type, target_id, address, user_agent, request_id, detail
         from audit_events where id between ? and ?${q.where.map((w) => ` and ${w}`).join('')} order by id desc limit ${limit + 1}`,
      [bottom.toString(), top.toString(), ...q.params],
    );
    const items = rows.slice(0, limit).map(toRecord);
    if (rows.length > limit) return { items, next_cursor: items[items.length - 1]!.id, window_exhausted: false };
    // The window held fewer: go on below it, unless it reached the first record that can match.
    if (bottom > q.floor) return { items, next_cursor: bottom.toString(), window_exhausted: true };
    return { items, next_cursor: null, window_exhausted: false };
  }
}

interface Query {
  where: string[];
  params: unknown[];
  floor: bigint;
  ceiling: bigint;
  empty: boolean;
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);

function time(v: string | undefined, path: string, problems: Array<{ path: string; message: string }>): Date | undefined {
  if (v === undefined) return undefined;
  const d = new Date(v);
  if (!/^\d{4}-\d{2}-\d{2}/.test(v) || Number.isNaN(d.getTime())) {
    problems.push({ path, message: 'must be an RFC 3339 date-time, e.g. 2026-11-27T00:00:00Z' });
    return undefined;
  }
  return d;
}

function toRecord(r: Row): AuditRecord {
  return {
    id: r.id,
    at: (r.at instanceof Date ? r.at : new Date(r.at)).toISOString(),
    actor: { id: r.actor_id, email: r.actor_email },
    subject: r.subject_id,
    action: r.action,
    outcome: r.outcome,
    target: r.target_type !== null && r.target_id !== null ? { type: r.target_type, id: r.target_id } : null,
    address: r.address,
    user_agent: r.user_agent,
    request_id: r.request_id,
    detail: typeof r.detail === 'string' ? (JSON.parse(r.detail) as Record<string, unknown>) : r.detail,
  };
}
