// What one revision diff of a note rewritten line by line costs the server (security issue: a
// 30 KB note of 10,000 lines froze every request for seconds). In one run, on this machine:
//   unbounded   jsdiff's exact diff, as it ran before, on this thread
//   bounded     revision-diff.ts (exact up to its bounds, then one replaced block), on this thread
//   off-thread  the same through diff-thread.ts, as the server runs it
// For each: the time to the answer, and the longest stall of this thread's event loop meanwhile
// (a timer every 5 ms; the stall is what every other request would have waited).
//   npx node bench/diff.ts [--lines=10000]
import { createTwoFilesPatch } from 'diff';
import { unifiedDiff } from '../core/domain/notes/revision-diff.ts';
import { DiffThread } from '../core/domain/notes/diff-thread.ts';
import { assertNode24 } from './util.ts';

assertNode24();
const lines = Number(process.argv.find((a) => a.startsWith('--lines='))?.slice(8) ?? 10_000);
const text = (prefix: string) => Array.from({ length: lines }, (_, i) => `${prefix}${i}`).join('\n') + '\n';
const from = text('a');
const to = text('b');

async function measure(name: string, run: () => unknown): Promise<{ name: string; ms: number; stallMs: number }> {
  let last = performance.now();
  let stall = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last - 5);
    last = now;
  }, 5);
  await new Promise((r) => setTimeout(r, 20));
  const start = performance.now();
  last = start;
  await run();
  const ms = performance.now() - start;
  await new Promise((r) => setTimeout(r, 10));
  clearInterval(timer);
  return { name, ms, stallMs: Math.max(stall, 0) };
}

const thread = new DiffThread();
await thread.diff('a\n', 'b\n', 'v1', 'v2'); // the thread started, as on a server that diffed before
const results = [
  await measure('unbounded', () => createTwoFilesPatch('v1', 'v2', from, to, undefined, undefined, { context: 3 })),
  await measure('bounded', () => unifiedDiff(from, to, 'v1', 'v2')),
  await measure('off-thread', () => thread.diff(from, to, 'v1', 'v2')),
];
const base = results[0]!;
console.log(`${lines} lines, every one rewritten (${from.length} characters a side)`);
for (const r of results)
  console.log(
    `${r.name.padEnd(11)} answer ${r.ms.toFixed(0).padStart(6)} ms (${(r.ms / base.ms).toFixed(3)} of unbounded)   longest stall ${r.stallMs.toFixed(0).padStart(6)} ms (${(r.stallMs / base.stallMs).toFixed(3)})`,
  );
