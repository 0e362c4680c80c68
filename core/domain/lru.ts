// A small least-recently-used map: bounded memory for caches keyed by tokens or users.
export class LruMap<K, V> {
  readonly #max: number;
  readonly #map = new Map<K, V>();
  // The most recently used key: a hit on it moves nothing (the common case, one client's token on
  // every request; a delete and a set per hit also make the map rebuild its table every few hits).
  #newest: K | undefined;

  constructor(max: number) {
    this.#max = max;
  }

  get(key: K): V | undefined {
    const v = this.#map.get(key);
    if (v !== undefined && key !== this.#newest) {
      this.#map.delete(key);
      this.#map.set(key, v);
      this.#newest = key;
    }
    return v;
  }

  set(key: K, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    this.#newest = key;
    if (this.#map.size > this.#max) this.#map.delete(this.#map.keys().next().value as K);
  }

  delete(key: K): void {
    this.#map.delete(key);
    if (key === this.#newest) this.#newest = undefined;
  }

  /** Drops every entry the predicate picks. */
  deleteWhere(pick: (value: V, key: K) => boolean): void {
    for (const [k, v] of this.#map) if (pick(v, k)) this.delete(k);
  }

  clear(): void {
    this.#map.clear();
    this.#newest = undefined;
  }

  get size(): number {
    return this.#map.size;
  }
}
