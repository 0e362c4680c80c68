// The events of MCP response streams whose client went away mid-call, kept in the database so the
// client can pick the stream up again with Last-Event-ID on any node (stateless mode, where any
// node answers any request). A stream is written here only once its client is gone: a call whose
// answer reaches its client costs no write at all. Rows are scoped by user: another user's stream
// reads as no stream. Readable for RETENTION_MS; each node sweeps what is older (core/surfaces/mcp/routes.ts).
import { defineEntity, p } from '@mikro-orm/core';
import { Migration } from '@mikro-orm/migrations';
import type { Database } from './database.ts';

/** One event of a stream: `json` is the JSON-RPC message, null for an event that carries none (the priming event, the end). */
export interface StreamEvent {
  seq: number;
  json: string | null;
  /** The stream's last row: every answer it was to carry has been written (or the stream was abandoned). */
  end: boolean;
  /** How long ago the row was written (as read; unused when writing). */
  ageMs?: number;
}

/** How long a stream's events are kept after they are written. */
export const RETENTION_MS = 10 * 60_000;

export class StreamLog {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /** Appends events to a stream, in one statement (in seq order; a seq already there is left as it is). */
  async append(userId: string, streamId: string, events: readonly StreamEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.#db.orm.em.fork().execute(
      `insert into mcp_stream_events (stream_id, seq, user_id, message, is_end)
       select ?::uuid, e.seq, ?::uuid, e.json, e.is_end
         from jsonb_to_recordset(?::jsonb) as e(seq int, json text, is_end boolean)
       on conflict (stream_id, seq) do nothing`,
      [streamId, userId, JSON.stringify(events.map((e) => ({ seq: e.seq, json: e.json, is_end: e.end })))],
    );
  }

  /**
   * The user's events of a stream from `fromSeq` on (inclusive), in order; [] for a stream that is
   * not theirs, not (yet) here, or older than the retention (whether swept yet or not).
   */
  async read(userId: string, streamId: string, fromSeq: number, limit = 500): Promise<StreamEvent[]> {
    const rows = await this.#db.orm.em.fork().execute<Array<{ seq: number; message: string | null; is_end: boolean; age_ms: number }>>(
      `select seq, message, is_end, (extract(epoch from now() - created_at) * 1000)::float8 as age_ms from mcp_stream_events
        where stream_id = ?::uuid and user_id = ?::uuid and seq >= ? and created_at > now() - make_interval(secs => ?)
        order by seq limit ?`,
      [streamId, userId, fromSeq, RETENTION_MS / 1000, limit],
    );
    return rows.map((r) => ({ seq: Number(r.seq), json: r.message, end: r.is_end, ageMs: Number(r.age_ms) }));
  }

  /** Removes events older than the retention; the number removed. */
  async sweep(olderThanMs = RETENTION_MS): Promise<number> {
    const rows = await this.#db.orm.em
      .fork()
      .execute<Array<{ n: string }>>(
        `with gone as (delete from mcp_stream_events where created_at < now() - make_interval(secs => ?) returning 1) select count(*)::text as n from gone`,
        [olderThanMs / 1000],
      );
    return Number(rows[0]?.n ?? 0);
  }
}

/**
 * The table as the ORM knows it (the migration below owns it; the two must agree). No foreign key
 * to users: this layer knows no domain, and a deleted user's rows go with the retention.
 */
export const McpStreamEvent = defineEntity({
  name: 'McpStreamEvent',
  tableName: 'mcp_stream_events',
  properties: {
    streamId: p.uuid().primary(),
    seq: p.integer().primary(),
    userId: p.uuid(),
    message: p.text().nullable(),
    isEnd: p.boolean().default(false),
    createdAt: p.datetime().columnType('timestamptz').defaultRaw('now()').index('mcp_stream_events_created_at_index'),
  },
  primaryKeys: ['streamId', 'seq'],
});

export class Migration20261202000000_mcp_stream_events extends Migration {
  override up(): void {
    this.addSql(`
      create table mcp_stream_events (
        stream_id uuid not null,
        seq integer not null,
        user_id uuid not null,
        message text,
        is_end boolean not null default false,
        created_at timestamptz not null default now(),
        constraint mcp_stream_events_pkey primary key (stream_id, seq)
      );`);
    this.addSql(`create index mcp_stream_events_created_at_index on mcp_stream_events (created_at);`);
  }

  override down(): void {
    this.addSql(`drop table if exists mcp_stream_events;`);
  }
}

export const STREAM_LOG_MIGRATION = { name: 'Migration20261202000000_mcp_stream_events', class: Migration20261202000000_mcp_stream_events };
