#!/usr/bin/env -S sh -c 'exec "$(dirname "$(readlink -f "$0")")/../bin/folio" "$@"'
// The `folio` program. Node 24 runs this TypeScript as it is; bin/folio (package.json "bin") starts
// it on the Node pinned in node_modules, and the line above hands `./cli/folio.ts` to bin/folio, so
// an older node on PATH never tries to read this file.
import { install as handleInterrupts } from './lib/interrupt.ts';
import { run } from './main.ts';

// Ctrl-C: exit 130 with one line, what a command was writing removed (lib/interrupt.ts).
handleInterrupts();

// `folio notes list | head -1` closes the pipe early: that is not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

process.exitCode = await run(process.argv);
