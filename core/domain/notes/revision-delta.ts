// How a revision's body is stored: a full snapshot, or a delta against the body of the version just
// before it. A delta is a JSON array of operations on the previous body, in UTF-16 code units:
//   n > 0     keep the next n units
//   n < 0     drop the next -n units
//   "text"    insert text
// and whatever is left of the previous body after the last operation is kept. So `[]` is "no
// change", `[1048576,"x"]` appends one character to a 1 MiB body, `["x"]` prepends one.
//
// This format is stored: a change to it must keep reading what was written before.
//
// A reader starts from the nearest snapshot at or before the version and applies the deltas after it
// in order. It works on a piece table (slices of the snapshot and of inserted texts) rather than
// on strings, so a delta costs in proportion to its pieces, not to the body's size, and the body is
// put together once at the end.

export type DeltaOp = number | string;

/**
 * The operations that turn `from` into `to`: the common start and end are kept, what differs in
 * between is dropped and inserted. One pass over the texts; a surrogate pair is never split.
 */
export function diffBodies(from: string, to: string): DeltaOp[] {
  if (from === to) return [];
  const max = Math.min(from.length, to.length);
  let prefix = 0;
  while (prefix < max && from.charCodeAt(prefix) === to.charCodeAt(prefix)) prefix++;
  if (prefix > 0 && isHighSurrogate(from.charCodeAt(prefix - 1))) prefix--;
  let suffix = 0;
  const room = max - prefix;
  while (suffix < room && from.charCodeAt(from.length - 1 - suffix) === to.charCodeAt(to.length - 1 - suffix)) suffix++;
  if (suffix > 0 && isLowSurrogate(from.charCodeAt(from.length - suffix))) suffix--;
  const dropped = from.length - prefix - suffix;
  const inserted = to.slice(prefix, to.length - suffix);
  const ops: DeltaOp[] = [];
  if (prefix > 0) ops.push(prefix);
  if (dropped > 0) ops.push(-dropped);
  if (inserted !== '') ops.push(inserted);
  return ops;
}

export function encodeDelta(ops: DeltaOp[]): string {
  return JSON.stringify(ops);
}

function decodeDelta(text: string): DeltaOp[] {
  const ops: unknown = JSON.parse(text);
  if (!Array.isArray(ops) || !ops.every((op) => typeof op === 'string' || (Number.isSafeInteger(op) && op !== 0)))
    throw new Error('a stored revision delta is malformed');
  return ops as DeltaOp[];
}

/** A slice [from, to) of a source string. */
type Piece = [source: string, from: number, to: number];

/** The body of the last version of a chain: its snapshot, then each delta (stored text) in order. */
export function applyDeltas(snapshot: string, deltas: readonly string[]): string {
  let pieces: Piece[] = snapshot === '' ? [] : [[snapshot, 0, snapshot.length]];
  for (const delta of deltas) pieces = applyOps(pieces, decodeDelta(delta));
  let out = '';
  for (const [s, from, to] of pieces) out += from === 0 && to === s.length ? s : s.slice(from, to);
  return out;
}

function applyOps(pieces: Piece[], ops: DeltaOp[]): Piece[] {
  const out: Piece[] = [];
  let i = 0; // the piece being consumed
  let at = pieces[0]?.[1] ?? 0; // where in it
  const take = (units: number, keep: boolean) => {
    let left = units;
    while (left > 0) {
      const piece = pieces[i];
      if (!piece) throw new Error('a stored revision delta goes past the end of the body it applies to');
      const n = Math.min(left, piece[2] - at);
      if (keep) out.push([piece[0], at, at + n]);
      left -= n;
      at += n;
      if (at === piece[2]) {
        i++;
        at = pieces[i]?.[1] ?? 0;
      }
    }
  };
  for (const op of ops) {
    if (typeof op === 'string') out.push([op, 0, op.length]);
    else take(Math.abs(op), op > 0);
  }
  // The rest of the previous body is kept.
  if (i < pieces.length) {
    const piece = pieces[i]!;
    if (at < piece[2]) out.push([piece[0], at, piece[2]]);
    for (let k = i + 1; k < pieces.length; k++) out.push(pieces[k]!);
  }
  return out;
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}
function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}
