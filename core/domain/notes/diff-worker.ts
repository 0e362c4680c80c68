// Worker thread of diff-thread.ts: computes bounded unified diffs (revision-diff.ts), one at a time.
import { parentPort } from 'node:worker_threads';
import { unifiedDiff } from './revision-diff.ts';
import type { DiffReply, DiffRequest } from './diff-thread.ts';

if (!parentPort) throw new Error('diff-worker.ts runs as a worker thread');
const port = parentPort;

port.on('message', (msg: DiffRequest) => {
  let reply: DiffReply;
  try {
    reply = { id: msg.id, ...unifiedDiff(msg.from, msg.to, msg.fromLabel, msg.toLabel) };
  } catch (err) {
    reply = { id: msg.id, error: (err as Error).message };
  }
  port.postMessage(reply);
});
