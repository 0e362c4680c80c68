// Pages that always fit the byte ceiling. The notes service pages by count; an answer must also
// fit a byte budget, so a page may end early. Our cursor therefore wraps the service's cursor
// with how many items of that service page were already handed out.
import { BadArguments, type Page } from 'folio/sdk';
import { jsonBytes } from './text.ts';

/** Bytes the rows of one answer may take: well under the default 64 KiB ceiling. */
export const ROWS_BUDGET = 40_000;

/** The bytes a page of rows may use in this call: the default, or less when the call's ceiling is lower. */
export function rowsBudget(callBudget: number): number {
  return Math.max(1_000, Math.min(ROWS_BUDGET, Math.floor(callBudget * 0.6)));
}
const MARK = 'nt1.';

export function encodeCursor(serviceCursor: string | null, skip: number): string {
  return MARK + Buffer.from(JSON.stringify({ c: serviceCursor, k: skip })).toString('base64url');
}

export function decodeCursor(cursor: string | undefined, path = 'cursor'): { c: string | undefined; k: number } {
  if (cursor === undefined || cursor === '') return { c: undefined, k: 0 };
  const bad = () =>
    new BadArguments(`${path} is not a cursor this function gave out`, [
      { path, message: 'pass next_cursor exactly as the previous answer gave it, with the same other arguments' },
    ]);
  if (!cursor.startsWith(MARK)) throw bad();
  try {
    const v = JSON.parse(Buffer.from(cursor.slice(MARK.length), 'base64url').toString('utf8')) as { c?: unknown; k?: unknown };
    if ((v.c !== null && typeof v.c !== 'string') || typeof v.k !== 'number' || !Number.isInteger(v.k) || v.k < 0 || v.k > 10_000)
      throw bad();
    return { c: v.c ?? undefined, k: v.k };
  } catch {
    throw bad();
  }
}

export interface Fitted<R> {
  rows: R[];
  next_cursor: string | null;
}

/**
 * One page of at most `limit` rows that together take at most `budget` bytes as JSON (the first
 * row always goes in: rows are clipped by `row`, so one row is small).
 */
export async function fitPage<T, R>(opts: {
  cursor: string | undefined;
  limit: number;
  /** The service's largest page. */
  max: number;
  budget?: number;
  fetch: (cursor: string | undefined, limit: number) => Promise<Page<T>>;
  row: (item: T) => R;
}): Promise<Fitted<R>> {
  const { c, k } = decodeCursor(opts.cursor);
  const budget = opts.budget ?? ROWS_BUDGET;
  const page = await opts.fetch(c, Math.min(opts.max, k + opts.limit));
  const items = page.items.slice(k, k + opts.limit);
  const rows: R[] = [];
  let size = 2;
  for (const item of items) {
    const r = opts.row(item);
    const b = jsonBytes(r) + 1;
    if (rows.length > 0 && size + b > budget) break;
    rows.push(r);
    size += b;
  }
  const handed = k + rows.length;
  const next_cursor =
    handed < page.items.length ? encodeCursor(c ?? null, handed) : page.next_cursor ? encodeCursor(page.next_cursor, 0) : null;
  return { rows, next_cursor };
}

/** The "there is more" sentence for an answer, or nothing at the end. `fn`: ctx.ref of the function. */
export function moreHint(next: string | null, what: string, fn: string): { more?: string } {
  return next ? { more: `There are more ${what}: call ${fn} again with the same arguments and cursor set to next_cursor.` } : {};
}
