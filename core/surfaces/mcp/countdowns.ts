// Many countdowns of one fixed length on one Node timer. Every MCP POST starts two (its answer may
// be held back a few milliseconds to go out in one write; its requests have a deadline) and almost
// always stops both long before they run out: a Node timer each (a Timeout object, a list insert
// and removal) was a measurable share of a call. Here a countdown is an entry in the set of the
// ones due in the same slice of time (`granularityMs`), one timer waits for the oldest slice, and
// stopping is a set delete. A countdown runs out between `ms` and `ms + granularityMs` after it
// started.

export interface Countdown {
  /** The slice it is in while it runs; undefined once it ran out or was stopped. */
  slice: Set<Countdown> | undefined;
  readonly fire: () => void;
}

export class Countdowns {
  readonly #ms: number;
  readonly #granularityMs: number;
  readonly #onError: (err: unknown) => void;
  // Slices by the time they are due (performance.now() ms, a multiple of the granularity). Made in
  // the order they fall due (the clock only moves on, the length is fixed), which is the Map's order.
  readonly #slices = new Map<number, Set<Countdown>>();
  #timer: NodeJS.Timeout | undefined;

  /**
   * `ms`: how long each countdown runs; `granularityMs` (default a tenth of it, at most a second):
   * how late it may fire. `onError`: what a firing callback throws (the others still fire).
   */
  constructor(ms: number, onError: (err: unknown) => void, granularityMs = Math.min(1000, Math.max(1, Math.floor(ms / 10)))) {
    this.#ms = ms;
    this.#granularityMs = granularityMs;
    this.#onError = onError;
  }

  /** How long each countdown runs. */
  get ms(): number {
    return this.#ms;
  }

  /** Starts a countdown: `fire` runs once it runs out, unless it is stopped first. */
  start(fire: () => void): Countdown {
    const g = this.#granularityMs;
    const due = Math.ceil((performance.now() + this.#ms) / g) * g;
    let slice = this.#slices.get(due);
    if (!slice) {
      slice = new Set();
      this.#slices.set(due, slice);
      if (!this.#timer) this.#arm(due);
    }
    const countdown: Countdown = { slice, fire };
    slice.add(countdown);
    return countdown;
  }

  /** Stops it (nothing happens if it ran out or was stopped already). */
  stop(countdown: Countdown | undefined): void {
    if (!countdown?.slice) return;
    countdown.slice.delete(countdown);
    countdown.slice = undefined;
  }

  /** How many countdowns run now (tests). */
  get running(): number {
    let n = 0;
    for (const slice of this.#slices.values()) n += slice.size;
    return n;
  }

  #arm(due: number): void {
    // A countdown keeps nothing alive by itself: what waits on it (a response, a request) does.
    this.#timer = setTimeout(() => this.#tick(), Math.max(0, due - performance.now()));
    this.#timer.unref();
  }

  #tick(): void {
    this.#timer = undefined;
    const now = performance.now();
    for (const [due, slice] of this.#slices) {
      if (due > now) {
        this.#arm(due);
        return;
      }
      this.#slices.delete(due);
      for (const countdown of slice) {
        countdown.slice = undefined;
        try {
          countdown.fire();
        } catch (err) {
          this.#onError(err);
        }
      }
    }
  }
}
