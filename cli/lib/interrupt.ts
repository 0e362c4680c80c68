// Ctrl-C (SIGINT, or SIGTERM from a supervisor): the command stops at once, what it was making is
// removed (a half-written download, an editor's temp folder), a progress bar is cleared, and folio
// exits 130 (128 + SIGINT) with one line, never a stack trace. Commands register what to undo while
// it is theirs to undo, and drop it once the work is done.
import { rmSync } from 'node:fs';

/** A cleanup may return a line to add to the message (e.g. how to resume). */
const cleanups = new Set<() => string | void>();
let installed = false;

/** Runs `undo` if folio is interrupted before the returned function is called. */
export function onInterrupt(undo: () => string | void): () => void {
  install();
  cleanups.add(undo);
  return () => void cleanups.delete(undo);
}

/** Removes `path` (a file or folder) if folio is interrupted before the returned function is called. */
export function removeOnInterrupt(path: string): () => void {
  return onInterrupt(() => rmSync(path, { recursive: true, force: true }));
}

/** Installs the handler (cli/folio.ts does, at start; registering a cleanup does too). */
export function install(): void {
  if (installed) return;
  installed = true;
  const stop = (signal: 'SIGINT' | 'SIGTERM') => {
    const hints: string[] = [];
    for (const undo of [...cleanups].reverse()) {
      try {
        const hint = undo();
        if (hint) hints.push(hint);
      } catch {
        // best effort: the next cleanup still runs
      }
    }
    cleanups.clear();
    // The line a progress bar was drawing on is cleared, so the shell prompt starts clean.
    if (process.stderr.isTTY) process.stderr.write('\r\x1b[2K');
    process.stderr.write(`folio: interrupted${hints.map((h) => `; ${h}`).join('')}\n`);
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}
