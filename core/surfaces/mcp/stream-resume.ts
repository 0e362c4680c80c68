// Resumable response streams in stateless mode, on any node. Each POST's stream has an id of its
// own and every event on it an id `<stream>:<n>`. While the client listens, the events are kept in
// memory only (a call answered to a listening client writes nothing to the database). If the
// client goes away after it was given an event id, the call goes on (the spec: a disconnect is not
// a cancel): the events so far and every later one go to the stream log (core/db/stream-log.ts),
// and the client's `GET /mcp` with `Last-Event-ID` (on this node or any other sharing the
// database) gets those it missed, the answer included, waiting for them if the call is still
// running elsewhere.
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { EventStore } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { StreamEvent, StreamLog } from '../../db/stream-log.ts';

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

  /** The client went away mid-stream: what it may have missed, and all that follows, goes to the log. */
  detach(): void {
    if (this.#detached || this.#ended) return;
    this.#detached = true;
    this.#write(this.#held);
    this.#held = [];
  }

  /** The stream is over (answered, cancelled or abandoned): a detached one gets its end row. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#held = [];
    if (this.#detached) this.#write([{ seq: ++this.#seq, message: null }], true);
  }

  /** Resolves once everything written so far is in the log (for a clean shutdown). */
  settled(): Promise<void> {
    return this.#writes;
  }

  #write(events: Held[], end = false): void {
    const rows: StreamEvent[] = events.map((e) => ({ seq: e.seq, json: e.message ? JSON.stringify(e.message) : null, end }));
    // In order: one statement at a time per stream.
    this.#writes = this.#writes
      .then(() => this.#log.append(this.#userId, this.id, rows))
      .catch((err: unknown) =>
        this.#logger.warn({ err, stream: this.id.slice(0, 8) }, 'mcp stream events could not be kept for resumption'),
      );
  }
}

export interface ResumeOptions {
  log: StreamLog;
  userId: string;
  stream: string;
  seq: number;
  /** How long the resumed stream may wait for the call's remaining events. */
  deadlineMs: number;
  /** How long to wait for a stream that is not in the log yet (its node may still be writing it). */
  graceMs?: number;
  pollMs?: number;
  headers: Record<string, string>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

/**
 * Serves `GET /mcp` with `Last-Event-ID` from the stream log: the events after that id, then
 * those still to come, until the stream's end (or the deadline; the client may reconnect again).
 * Resolves false, having written nothing, when the user has no such event (unknown, expired,
 * another user's): the caller answers 400.
 */
export async function resumeStream(res: ServerResponse, o: ResumeOptions): Promise<boolean> {
  const graceMs = o.graceMs ?? 1000;
  const pollMs = o.pollMs ?? 100;
  const started = Date.now();
  let gone = false;
  res.once('close', () => {
    gone = true;
  });
  // The event the client saw must be there: proof the stream is theirs and still kept.
  let rows = await o.log.read(o.userId, o.stream, o.seq);
  while (rows[0]?.seq !== o.seq) {
    if (gone || Date.now() - started >= graceMs) return false;
    await sleep(pollMs);
    rows = await o.log.read(o.userId, o.stream, o.seq);
  }
  res.writeHead(200, {
    ...o.headers,
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache, no-transform',
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();
  let last = o.seq;
  for (;;) {
    let text = '';
    let ended = false;
    for (const e of rows) {
      if (e.seq <= last) continue;
      last = e.seq;
      if (e.end) ended = true;
      else if (e.json !== null) text += `event: message\nid: ${o.stream}:${e.seq}\ndata: ${e.json}\n\n`;
    }
    if (text && !gone) res.write(text);
    if (ended || gone || Date.now() - started >= o.deadlineMs) break;
    await sleep(pollMs);
    if (gone) break;
    rows = await o.log.read(o.userId, o.stream, last + 1);
  }
  if (!gone) res.end();
  return true;
}
