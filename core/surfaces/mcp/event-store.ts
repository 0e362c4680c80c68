// Resumability (stateful mode): every SSE event a session sends gets an id and is kept here for a
// while, so a client that lost its connection reconnects with Last-Event-ID and gets what it
// missed (the SDK's EventStore interface; the SDK replays through it). One store per session, in
// the memory of the node that holds the session: sessions are already node-local (sticky routing),
// so a store another node could read would buy nothing until sessions themselves move.
// Bounded: the oldest events go first once a session keeps more than `maxEvents` or `maxBytes`.
import type { EventStore } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export interface EventStoreLimits {
  maxEvents: number;
  maxBytes: number;
}

export const EVENT_STORE_LIMITS: EventStoreLimits = { maxEvents: 1000, maxBytes: 4 * 1024 * 1024 };

/**
 * Event ids are the decimal numbers 1, 2, 3, ... in the order events were stored; event n is kept
 * in slot (n - 1) % maxEvents of two parallel arrays while it is among the newest (from #first to
 * #seq). Storing one is two array writes: no map to hash into, no entry object, no index to keep
 * in order. The message is kept as its JSON (undefined for the SDK's priming event, an empty
 * message): every event outlives many young-generation collections here, and a string is copied
 * once and never scanned, where the message's object tree would be traced in every major
 * collection. Replays, which are rare, parse it back.
 */
export class SessionEventStore implements EventStore {
  readonly #streams: string[] = [];
  readonly #json: Array<string | undefined> = [];
  readonly #limits: EventStoreLimits;
  /** The oldest event kept; the store is empty when #first > #seq. */
  #first = 1;
  #seq = 0;
  #bytes = 0;

  constructor(limits: EventStoreLimits = EVENT_STORE_LIMITS) {
    this.#limits = limits;
  }

  get size(): number {
    return this.#seq - this.#first + 1;
  }

  #slot(n: number): number {
    return (n - 1) % this.#limits.maxEvents;
  }

  /** The number of a kept event's id; undefined for an id this session never gave (or forgot). */
  #kept(eventId: string): number | undefined {
    const n = Number(eventId);
    return Number.isSafeInteger(n) && n >= this.#first && n <= this.#seq && String(n) === eventId ? n : undefined;
  }

  #evictOldest(): void {
    this.#bytes -= this.#json[this.#slot(this.#first)]?.length ?? 0;
    this.#json[this.#slot(this.#first)] = undefined;
    this.#first++;
  }

  storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const n = ++this.#seq;
    // The SDK's priming event is an empty message: nothing to replay, only an id to resume from.
    const json = 'jsonrpc' in message ? JSON.stringify(message) : undefined;
    // The slot's previous event (n - maxEvents) goes first: at most maxEvents are kept.
    if (n - this.#first >= this.#limits.maxEvents) this.#evictOldest();
    const slot = this.#slot(n);
    this.#streams[slot] = streamId;
    this.#json[slot] = json;
    this.#bytes += json?.length ?? 0;
    // Within maxBytes, but the newest event is always kept.
    while (this.#bytes > this.#limits.maxBytes && this.#first < n) this.#evictOldest();
    return Promise.resolve(String(n));
  }

  /** The stream an event was sent on; undefined for an id this session never gave (or forgot). */
  getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    const n = this.#kept(eventId);
    return Promise.resolve(n === undefined ? undefined : this.#streams[this.#slot(n)]);
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const last = this.#kept(lastEventId);
    if (last === undefined) throw new Error(`unknown event id ${lastEventId}`);
    const streamId = this.#streams[this.#slot(last)]!;
    // The events kept when the replay began (later ones go to the stream as they come); one evicted
    // while an earlier one was being sent is gone.
    const end = this.#seq;
    for (let n = last + 1; n <= end; n++) {
      if (n < this.#first) continue;
      const slot = this.#slot(n);
      const json = this.#json[slot];
      if (this.#streams[slot] === streamId && json !== undefined) await send(String(n), JSON.parse(json) as JSONRPCMessage);
    }
    return streamId;
  }
}
