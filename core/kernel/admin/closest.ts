// "Did you mean": the known names nearest to one that is not known, for an answer that helps.

/** Edit distance (insertions, deletions, substitutions), bounded: past `max` it answers max + 1. */
export function editDistance(a: string, b: string, max = 8): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      cur.push(v);
      best = Math.min(best, v);
    }
    if (best > max) return max + 1;
    prev = cur;
  }
  return prev[b.length]!;
}

/** Up to `n` of `known` nearest to `name` (a prefix or substring counts as near), nearest first. */
export function closestNames(name: string, known: Iterable<string>, n = 3): string[] {
  const wanted = name.toLowerCase();
  return [...known]
    .map((k) => ({ k, d: k.startsWith(wanted) || (wanted.length >= 3 && k.includes(wanted)) ? 0 : editDistance(wanted, k) }))
    .filter((x) => x.d <= Math.max(2, Math.floor(x.k.length / 2)))
    .sort((a, b) => a.d - b.d || a.k.localeCompare(b.k))
    .slice(0, n)
    .map((x) => x.k);
}
