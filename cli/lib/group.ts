// The shape of a command group: one file under cli/commands/ exporting a CommandGroup, listed once
// in cli/commands/index.ts. A group adds its commands to the program and reaches the server only
// through the context it is handed (the target and the typed client), never through globals.
import type { Command } from 'commander';
import { api, profileName, resolveTarget, type Api, type GlobalOptions, type Target } from './client.ts';

export interface Cli {
  /** The global options (--profile). */
  globals(): GlobalOptions;
  /** The server and token this invocation uses. */
  target(): Target;
  /** The typed REST client for that target (fails with "not logged in" when there is no token). */
  client(): { api: Api; target: Target };
  /** The profile name this invocation acts on. */
  profile(): string;
}

export interface CommandGroup {
  /** Adds the group's commands to the program. */
  register(program: Command, cli: Cli): void;
}

export function cliContext(program: Command): Cli {
  const globals = () => program.opts<GlobalOptions>();
  return {
    globals,
    target: () => resolveTarget(globals()),
    client() {
      const target = resolveTarget(globals());
      return { api: api(target), target };
    },
    profile: () => profileName(globals()),
  };
}

/** Appends an Examples section to a command's --help: every command has at least one. */
export function examples(cmd: Command, ...lines: string[]): Command {
  return cmd.addHelpText('after', `\nExamples:\n${lines.map((l) => (l.startsWith('#') ? `  ${l}` : `  $ ${l}`)).join('\n')}\n`);
}
