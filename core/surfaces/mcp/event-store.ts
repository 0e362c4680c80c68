// Resumability (stateful mode): every SSE event a session sends gets an id and is kept here for a
// while, so a client that lost its connection reconnects with Last-Event-ID and gets what it
// missed (the SDK's EventStore interface; the SDK replays through it). One store per session, in
// the memory of the node that holds the session: sessions are already node-local (sticky routing),
// so a store another node could read would buy nothing until sessions themselves move.
// Bounded: the oldest events go first once a session keeps more than `maxEvents` or `maxBytes`.
import type { EventStore } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

interface Stored {
  streamId: string;
  /**
   * The message as JSON (undefined for the SDK's priming event, an empty message). Kept as one
   * string rather than the message's objects: every event outlives many young-generation
   * collections here, and a string is copied once and never scanned, where the message's object
   * tree would be traced in every major collection. Replays, which are rare, parse it back.
   */
  json: string | undefined;
}

export interface EventStoreLimits {
  maxEvents: number;
  maxBytes: number;
}

export const EVENT_STORE_LIMITS: EventStoreLimits = { maxEvents: 1000, maxBytes: 4 * 1024 * 1024 };

export class SessionEventStore implements EventStore {
  readonly #events = new Map<string, Stored>();
  // The ids in the order they were given, from #head on: the oldest is evicted without walking the
  // map (a Map iterated from its start after many deletes at its front walks their holes too).
  #order: string[] = [];
  #head = 0;
  readonly #limits: EventStoreLimits;
  #seq = 0;
  #bytes = 0;

  constructor(limits: EventStoreLimits = EVENT_STORE_LIMITS) {
    this.#limits = limits;
  }

  get size(): number {
    return this.#events.size;
  }

  storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = String(++this.#seq);
    // The SDK's priming event is an empty message: nothing to replay, only an id to resume from.
    const json = 'jsonrpc' in message ? JSON.stringify(message) : undefined;
    this.#events.set(id, { streamId, json });
    this.#order.push(id);
    this.#bytes += json?.length ?? 0;
    while (this.#events.size > 1 && (this.#events.size > this.#limits.maxEvents || this.#bytes > this.#limits.maxBytes)) {
      const old = this.#order[this.#head++]!;
      this.#bytes -= this.#events.get(old)!.json?.length ?? 0;
      this.#events.delete(old);
    }
    if (this.#head > 1024 && this.#head * 2 > this.#order.length) {
      this.#order = this.#order.slice(this.#head);
      this.#head = 0;
    }
    return Promise.resolve(id);
  }

  /** The stream an event was sent on; undefined for an id this session never gave (or forgot). */
  getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return Promise.resolve(this.#events.get(eventId)?.streamId);
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const last = this.#events.get(lastEventId);
    if (!last) throw new Error(`unknown event id ${lastEventId}`);
    let after = false;
    for (const [id, e] of [...this.#events]) {
      if (id === lastEventId) {
        after = true;
        continue;
      }
      if (after && e.streamId === last.streamId && e.json !== undefined) await send(id, JSON.parse(e.json) as JSONRPCMessage);
    }
    return last.streamId;
  }
}
