// The unified diff between two versions of a note, bounded: a line-by-line diff (jsdiff's Myers)
// costs (lines of both texts) x (lines changed), so two 10,000-line versions that differ on every
// line cost seconds of CPU. Past a number of changed lines, or a time, the exact diff is given up
// for a coarse one: the common first and last lines are kept and everything between is one
// replaced block. A coarse diff is still a valid patch (applying it gives the new text); it is only
// not the smallest one, and the answer says so (`coarse: true`).
//
// A pure function: diff-thread.ts runs it off the event loop.
import { createTwoFilesPatch } from 'diff';

/** Changed lines past which the exact diff is given up. */
export const DIFF_MAX_EDIT_LINES = 2000;
/** Time past which the exact diff is given up. */
export const DIFF_TIMEOUT_MS = 1000;
/** Lines of context around a change, as `diff -u`. */
const CONTEXT = 3;

export interface UnifiedDiff {
  diff: string;
  /** True when the exact diff was given up for one replaced block (see above). */
  coarse: boolean;
}

export interface DiffBounds {
  maxEditLines?: number;
  timeoutMs?: number;
}

export function unifiedDiff(from: string, to: string, fromLabel: string, toLabel: string, bounds: DiffBounds = {}): UnifiedDiff {
  const exact = createTwoFilesPatch(fromLabel, toLabel, from, to, undefined, undefined, {
    context: CONTEXT,
    maxEditLength: bounds.maxEditLines ?? DIFF_MAX_EDIT_LINES,
    timeout: bounds.timeoutMs ?? DIFF_TIMEOUT_MS,
  });
  if (exact !== undefined) return { diff: exact, coarse: false };
  return { diff: coarseDiff(from, to, fromLabel, toLabel), coarse: true };
}

/** Lines with their endings, as a patch shows them ('' has none). */
function lines(text: string): string[] {
  return text === '' ? [] : (text.match(/[^\n]*\n|[^\n]+$/g) ?? []);
}

/**
 * One hunk replacing everything between the common first and last lines (one pass over each text).
 * Only called when the texts differ a lot, so the hunk is never empty.
 */
export function coarseDiff(from: string, to: string, fromLabel: string, toLabel: string): string {
  const a = lines(from);
  const b = lines(to);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const start = Math.max(0, head - CONTEXT);
  const before = a.slice(start, head);
  const after = a.slice(a.length - tail, Math.min(a.length, a.length - tail + CONTEXT));
  const removed = a.slice(head, a.length - tail);
  const added = b.slice(head, b.length - tail);
  const oldCount = before.length + removed.length + after.length;
  const newCount = before.length + added.length + after.length;
  const out = [`===================================================================\n`, `--- ${fromLabel}\n`, `+++ ${toLabel}\n`];
  out.push(`@@ -${range(start, oldCount)} +${range(start, newCount)} @@\n`);
  const line = (mark: string, l: string) => out.push(mark + l + (l.endsWith('\n') ? '' : '\n\\ No newline at end of file\n'));
  for (const l of before) line(' ', l);
  for (const l of removed) line('-', l);
  for (const l of added) line('+', l);
  for (const l of after) line(' ', l);
  return out.join('');
}

/** A hunk range: 1-based start and count; an empty range starts at the line before it (diff -u). */
function range(start: number, count: number): string {
  return `${count === 0 ? start : start + 1},${count}`;
}
