// The trial worker: a plugin that will run in-process (Folio's own, or one an operator trusts) is
// first evaluated here, within the import deadline, so that a module that never finishes loading
// stops this thread and not Folio. Nothing of the module is kept; isolated plugins run in a
// process of their own (plugin-process.ts), not here.
import { parentPort } from 'node:worker_threads';
import { evaluateBundle } from '../plugin-eval.ts';
import type { FromWorker, ToWorker } from './protocol.ts';
import { toWire } from './wire-error.ts';

const port = parentPort!;

port.on('message', (m: ToWorker) => {
  if (m.type !== 'trial') return;
  let answer: FromWorker;
  try {
    evaluateBundle(m.bundle);
    answer = { type: 'trial-result', id: m.id, ok: true };
  } catch (err) {
    answer = { type: 'trial-result', id: m.id, ok: false, error: toWire(err) };
  }
  port.postMessage(answer);
});
