// Resumable response streams in stateless mode, on any node. Each POST's stream has an id of its
// own and every event on it an id `<stream>:<n>`. While the client listens, the events are kept in
// memory only (a call answered to a listening client writes nothing to the database). If the
// client goes away after it was given an event id, the call goes on (the spec: a disconnect is not
// a cancel): the events so far and every later one go to the stream log (core/db/stream-log.ts),
// and the client's `GET /mcp` with `Last-Event-ID` (on this node or any other sharing the
// database) gets those it missed, the answer included, waiting for them if the call is still
// running elsewhere.
import { randomUUID } from 'node:crypto';
import { setTimeout as pause } from 'node:timers/promises';
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { EventStore } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { StreamEvent, StreamLog } from '../../db/stream-log.ts';
import { drained } from './http-adapter.ts';

/** At most this many events are held in memory for a stream whose client listens; the oldest go first. */
const MAX_HELD = 1000;

const EVENT_ID = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}):([1-9][0-9]{0,8})$/;

/** A stream's event id, taken apart; undefined for anything this node could not have given. */
export function parseEventId(id: string): { stream: string; seq: number } | undefined {
  const m = EVENT_ID.exec(id);
  return m ? { stream: m[1]!, seq: Number(m[2]) } : undefined;
}

interface Held {
  seq: number;
  /** The message as sent (made into text only if the stream has to be written). */
  message: JSONRPCMessage | null;
}

/** The event store of one stateless POST's response stream (the SDK's EventStore interface). */
export class DetachableStream implements EventStore {
  readonly id = randomUUID();
  readonly #log: StreamLog;
  readonly #userId: string;
  readonly #logger: Logger;
  #seq = 0;
  #held: Held[] = [];
  #detached = false;
  #ended = false;
  #broken = false;
  #writes: Promise<void> = Promise.resolve();

  constructor(log: StreamLog, userId: string, logger: Logger) {
    this.#log = log;
    this.#userId = userId;
    this.#logger = logger;
  }

  /** Has the client been given an event id to resume from (one was made; whether it arrived, the caller knows)? */
  get resumable(): boolean {
    return this.#seq > 0;
  }

  get detached(): boolean {
    return this.#detached;
  }

  storeEvent(_streamId: string, message: JSONRPCMessage): Promise<string> {
    const seq = ++this.#seq;
    // The SDK's priming event is an empty message: only an id to resume from.
    const held: Held = { seq, message: 'jsonrpc' in message ? message : null };
    if (this.#detached) this.#write([held]);
    else {
      this.#held.push(held);
      if (this.#held.length > MAX_HELD) this.#held.shift();
    }
    return Promise.resolve(`${this.id}:${seq}`);
  }

  replayEventsAfter(): Promise<string> {
    // A stateless transport never replays: GET /mcp with Last-Event-ID is served by resumeStream.
    return Promise.reject(new Error('stateless streams are resumed from the stream log'));
  }

  /**
   * The client went away, or reconnected elsewhere, before its answer reached it: what it may have
   * missed, and all that follows, goes to the log (with the end row, if the stream is over already).
   */
  detach(): void {
    if (this.#detached) return;
    this.#detached = true;
    const rows = this.#held;
    this.#held = [];
    if (this.#ended) rows.push({ seq: ++this.#seq, message: null });
    this.#write(rows, this.#ended);
  }

  /**
   * The stream is over (answered, cancelled or abandoned): a detached one gets its end row. The
   * events stay held while the response is not known to be out, in case it never gets out.
   */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#detached) this.#write([{ seq: ++this.#seq, message: null }], true);
  }

  /** Resolves once everything written so far is in the log (for a clean shutdown). */
  settled(): Promise<void> {
    return this.#writes;
  }

  /** `endLast`: the last of these rows is the stream's end. */
  #write(events: Held[], endLast = false): void {
    if (events.length === 0) return;
    const rows: StreamEvent[] = events.map((e, i) => ({
      seq: e.seq,
      json: e.message ? JSON.stringify(e.message) : null,
      end: endLast && i === events.length - 1,
    }));
    // In order: one statement at a time per stream. After a failed write the stream has a gap: it
    // is ended there (if that can still be written), so a resumer gets what is there and stops
    // rather than wait for what will never come.
    this.#writes = this.#writes.then(async () => {
      if (this.#broken) return;
      try {
        await this.#log.append(this.#userId, this.id, rows);
      } catch (err) {
        this.#broken = true;
        this.#logger.warn({ err, stream: this.id.slice(0, 8) }, 'mcp stream events could not be kept for resumption');
        await this.#log.append(this.#userId, this.id, [{ seq: ++this.#seq, json: null, end: true }]).catch(() => {});
      }
    });
  }
}

export interface ResumeOptions {
  log: StreamLog;
  userId: string;
  stream: string;
  seq: number;
  /** The client's own id, sent back first (protocol 2025-11-25 on), so it always has one to resume from. */
  echo: boolean;
  /** How long the resumed stream may wait for the call's remaining events. */
  deadlineMs: number;
  /** How long to wait for a stream that is not in the log yet (its node may still be writing it). */
  graceMs?: number;
  /** Called once if the stream is not in the log at first: its node may still hold it (and not know the client left). */
  missing?: () => void;
  /** Is the stream known here to have been answered whole (its client read to its end)? Then there is nothing to resume. */
  finished?: () => boolean;
  headers: Record<string, string>;
  logger: Logger;
}

/** A pause that keeps no process alive on its own. */
const sleep = (ms: number) => pause(ms, undefined, { ref: false });

/**
 * A stream whose first row is older than the call deadline and this margin has no call behind it
 * any more, end row or not (its node stopped without writing one): what is there is all there is.
 */
const STALE_MARGIN_MS = 10_000;

/** Polling the log: often at first (a call's answer is usually near), then less. */
const pollAfter = (waitedMs: number) => (waitedMs < 1000 ? 100 : waitedMs < 5000 ? 250 : 500);
const KEEPALIVE_MS = 15_000;

/**
 * Serves `GET /mcp` with `Last-Event-ID` from the stream log: the events after that id, then
 * those still to come, until the stream's end (or the deadline, or the client leaving).
 * A stream with nothing left to send after the client's id (it ended with an error or a cancel,
 * which the official client does not count as its answer, or it was read whole) is a 204: no
 * stream, and the client stops asking. Resolves 'unknown', having written nothing, when the user
 * has no such event (unknown, expired, another user's): the caller answers 400; 'failed' when the
 * log could not be read before anything was written: the caller answers 503.
 */
export async function resumeStream(res: ServerResponse, o: ResumeOptions): Promise<'served' | 'unknown' | 'failed'> {
  const graceMs = o.graceMs ?? 1000;
  const started = Date.now();
  const gone = () => res.destroyed || res.writableEnded;
  try {
    // The event the client saw must be there: proof the stream is theirs and still kept.
    let rows = await o.log.read(o.userId, o.stream, o.seq);
    if (rows[0]?.seq !== o.seq) {
      if (o.finished?.()) return nothingLeft(res, o.headers);
      o.missing?.();
    }
    while (rows[0]?.seq !== o.seq) {
      if (gone() || Date.now() - started >= graceMs) return 'unknown';
      await sleep(100);
      rows = await o.log.read(o.userId, o.stream, o.seq);
    }
    // Waiting ends with the resumption's own deadline, or when no call can be behind the stream any more.
    const staleAt = Date.now() + o.deadlineMs + STALE_MARGIN_MS - (rows[0].ageMs ?? 0);
    const until = Math.min(started + o.deadlineMs, staleAt);
    const after = rows.filter((e) => e.seq > o.seq);
    if (!after.some((e) => e.json !== null) && (after.some((e) => e.end) || Date.now() >= staleAt)) return nothingLeft(res, o.headers);
    res.writeHead(200, {
      ...o.headers,
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
    });
    // The client's own id first: a client that loses this stream before anything new arrives
    // still has it to come back with (the official client forgets it otherwise).
    if (o.echo) res.write(`id: ${o.stream}:${o.seq}\ndata: \n\n`);
    else res.flushHeaders();
    let last = o.seq;
    let waitedSince = Date.now();
    let spoke = Date.now();
    for (;;) {
      let text = '';
      let ended = false;
      for (const e of rows) {
        if (e.seq <= last) continue;
        last = e.seq;
        if (e.end) ended = true;
        else if (e.json !== null) text += `event: message\nid: ${o.stream}:${e.seq}\ndata: ${e.json}\n\n`;
      }
      if (gone()) break;
      if (text) {
        // A slow reader: nothing more is read from the log until it has taken what was written.
        if (!res.write(text)) await drained(res);
        waitedSince = spoke = Date.now();
      } else if (Date.now() - spoke >= KEEPALIVE_MS) {
        res.write(': keep-alive\n\n');
        spoke = Date.now();
      }
      if (ended || Date.now() >= until) break;
      await sleep(pollAfter(Date.now() - waitedSince));
      if (gone()) break;
      rows = await o.log.read(o.userId, o.stream, last + 1);
    }
    if (!gone()) res.end();
    return 'served';
  } catch (err) {
    o.logger.warn({ err, stream: o.stream.slice(0, 8) }, 'mcp stream could not be resumed from the log');
    if (!res.headersSent) return 'failed';
    // The client reconnects with the last id it got.
    res.destroy();
    return 'served';
  }
}

function nothingLeft(res: ServerResponse, headers: Record<string, string>): 'served' {
  res.writeHead(204, headers);
  res.end();
  return 'served';
}
