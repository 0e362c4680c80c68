// A part loaded on first use, not at start (a module a server that never needs it should not hold:
// every module held makes each garbage collection longer, bench/README (f)): `load` runs once, by
// the first call, and every call shares its result. A load that fails fails those calls, and the
// next call tries again.
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () =>
    (loaded ??= load().catch((err: unknown) => {
      loaded = undefined;
      throw err;
    }));
}
