// Failures per key in a fixed window: after `max` of them, the key is refused until the window
// ends. In memory, per process; bounded (expired keys are dropped when the map grows large).
export class Throttle {
  readonly #hits = new Map<string, { count: number; until: number }>();
  readonly max: number;
  readonly windowMs: number;

  constructor(max: number, windowMs: number) {
    this.max = max;
    this.windowMs = windowMs;
  }

  /** Seconds until `key` may try again; 0 when it may now. */
  blockedFor(key: string, now: number): number {
    const h = this.#hits.get(key);
    if (!h || h.until <= now) return 0;
    return h.count >= this.max ? Math.ceil((h.until - now) / 1000) : 0;
  }

  fail(key: string, now: number): void {
    const h = this.#hits.get(key);
    if (!h || h.until <= now) this.#hits.set(key, { count: 1, until: now + this.windowMs });
    else h.count++;
    if (this.#hits.size > 100_000) for (const [k, e] of this.#hits) if (e.until <= now) this.#hits.delete(k);
  }
}
