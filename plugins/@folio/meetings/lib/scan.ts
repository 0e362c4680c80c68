// Walks the caller's meeting notes (tag 'meeting'), most recently updated first, a bounded number
// per call, and resumes where the last call stopped. The cursor names a position, not an index:
// the last note handled (its updated_at and id) and, for a note left half-way, the last line
// handed out. Marking items done moves a note to the front of the list; a position keeps paging
// right where an index would skip a note.
import { BadArguments, NotFound, type Context, type Note, type NoteSummary } from 'folio/sdk';

export const MEETING_TAG = 'meeting';
/** Notes read (with their bodies) per call at most: keeps one call quick however many meetings there are. */
export const SCAN_MAX = 100;
const PAGE = 25;
const MARK = 'mt1.';

export interface Position {
  /** The service's cursor for the list page the position is on (null: the first page). */
  c: string | null;
  /** updated_at and id of the note the position is at; null before the first note. */
  u: string | null;
  n: string | null;
  /** The last line handed out from note n, or -1 when note n is done. */
  l: number;
}

export function encode(p: Position): string {
  return MARK + Buffer.from(JSON.stringify(p)).toString('base64url');
}

export function decode(cursor: string | undefined): Position {
  const start: Position = { c: null, u: null, n: null, l: -1 };
  if (cursor === undefined || cursor === '') return start;
  const bad = new BadArguments('cursor is not a cursor this function gave out', [
    { path: 'cursor', message: 'pass next_cursor exactly as the previous answer gave it, with the same other arguments' },
  ]);
  if (!cursor.startsWith(MARK)) throw bad;
  try {
    const p = JSON.parse(Buffer.from(cursor.slice(MARK.length), 'base64url').toString('utf8')) as Partial<Position>;
    const str = (v: unknown) => v === null || typeof v === 'string';
    if (!str(p.c) || !str(p.u) || !str(p.n) || typeof p.l !== 'number' || !Number.isInteger(p.l) || p.l < -1) throw bad;
    return { c: p.c ?? null, u: p.u ?? null, n: p.n ?? null, l: p.l };
  } catch {
    throw bad;
  }
}

/** Is `row` at or before position `p` in the list order (updated_at desc, id desc)? */
function handled(row: NoteSummary, p: Position): boolean {
  if (p.u === null || p.n === null) return false;
  return row.updated_at > p.u || (row.updated_at === p.u && row.id >= p.n);
}

export interface Visit {
  note: Note;
  /** For a note left half-way: only lines after this one are new. -1 otherwise. */
  afterLine: number;
}

type Step = 'next' | 'stop' | 'stop_before' | Position;

/**
 * Calls `visit` for each meeting note after the position, in list order, until it returns
 * 'stop' (after this note), 'stop_before' (resume with this note) or the position to resume from
 * (half-way through this note), or SCAN_MAX notes were read. Notes last updated before
 * `stopBefore` end the walk. Answers the position to resume from, or null when every note was seen.
 */
export async function scan(
  ctx: Context,
  from: Position,
  visit: (v: Visit, here: (lastLine: number) => Position) => Step | Promise<Step>,
  opts: { stopBefore?: string } = {},
): Promise<{ next: Position | null; scanned: number }> {
  const notes = ctx.services.notes;
  let pos = from;
  let scanned = 0;
  const at = (note: Note | NoteSummary, c: string | null, l: number): Position => ({ c, u: note.updated_at, n: note.id, l });

  // A note left half-way goes first, wherever it is now (an edit moves it to the front).
  if (pos.n !== null && pos.l >= 0) {
    let note: Note | undefined;
    try {
      note = await notes.get(pos.n);
    } catch (err) {
      if (!(err instanceof NotFound)) throw err;
    }
    if (note && !note.deleted_at && note.tags.includes(MEETING_TAG)) {
      scanned++;
      const c = pos.c;
      const r = await visit({ note, afterLine: pos.l }, (l) => ({ ...pos, c, l }));
      if (r === 'stop_before') return { next: pos, scanned };
      if (r !== 'next') return { next: r === 'stop' ? { ...pos, l: -1 } : r, scanned };
    }
    pos = { ...pos, l: -1 };
  }

  for (;;) {
    if (ctx.signal.aborted) return { next: pos, scanned };
    const page = await notes.list({ tags: [MEETING_TAG], limit: PAGE, ...(pos.c !== null ? { cursor: pos.c } : {}) });
    for (const [i, row] of page.items.entries()) {
      if (handled(row, pos) || row.id === from.n) continue;
      if (opts.stopBefore !== undefined && row.updated_at < opts.stopBefore) return { next: null, scanned };
      if (scanned >= SCAN_MAX) return { next: pos, scanned };
      let note: Note;
      try {
        note = await notes.get(row.id);
      } catch (err) {
        if (err instanceof NotFound) continue;
        throw err;
      }
      scanned++;
      const c = pos.c;
      const r = await visit({ note, afterLine: -1 }, (l) => at(row, c, l));
      if (r === 'stop_before') return { next: pos, scanned };
      pos = at(row, pos.c, -1);
      if (r === 'stop') return { next: i === page.items.length - 1 && !page.next_cursor ? null : pos, scanned };
      if (r !== 'next') return { next: r, scanned };
    }
    if (!page.next_cursor) return { next: null, scanned };
    pos = { ...pos, c: page.next_cursor };
  }
}
