#!/usr/bin/env node
// The `folio` command (package.json "bin"). Node 24 runs this TypeScript as it is.
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
