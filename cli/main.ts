// The program: global options, the command groups of commands/index.ts, and one place that turns
// every failure into one line on stderr and an exit code (lib/errors.ts lists them).
import { Command, CommanderError } from 'commander';
import pkg from '../package.json' with { type: 'json' };
import { GROUPS } from './commands/index.ts';
import { renewSignIn } from './lib/client.ts';
import { CliError, EXIT } from './lib/errors.ts';
import { cliContext, examples } from './lib/group.ts';

const EXIT_CODES = `
Exit codes:
  0 ok   1 failed   2 usage error   3 not found   4 auth (not logged in, token refused, missing scope)
  5 conflict (changed meanwhile, in the trash)   6 server error   7 server unreachable

Environment:
  FOLIO_URL, FOLIO_TOKEN   the server and token to use (override the logged-in profile)
  FOLIO_PROFILE            the profile to use (like --profile)
  VISUAL, EDITOR           the editor for folio notes edit`;

export function buildProgram(): Command {
  const program = new Command('folio')
    .description('Folio from the terminal: notes and everything else over the REST API')
    // -V only: commander takes a program option wherever it appears, and `--version <n>` belongs to
    // commands (notes get, files download...). `folio --version` alone is answered by run().
    .version(pkg.version, '-V', 'output the version number (also: folio --version)')
    .option('-p, --profile <name>', 'the logged-in server to use (see folio auth status)')
    .exitOverride()
    .showSuggestionAfterError()
    .configureOutput({ outputError: (text, write) => write(`folio: ${text.replace(/^error: /, '')}`) });
  program.addHelpText('after', EXIT_CODES);
  examples(
    program,
    'folio auth login --url http://127.0.0.1:3000',
    'folio notes list',
    'echo "hello" | folio notes create --title Hello',
    'folio api GET /notetaker/tags',
  );
  const cli = cliContext(program);
  // `auth` manages sign-ins itself and `plugin` works on local folders; every other command starts with a token that works.
  program.hook('preAction', async (_program, action) => {
    const group = action.parent?.name();
    if (group !== 'auth' && group !== 'plugin') await renewSignIn(cli.globals());
  });
  for (const group of GROUPS) group.register(program, cli);
  return program;
}

/** `folio --version`, alone or with the program's own options (`folio -p work --version`): no command. */
function asksVersion(args: string[]): boolean {
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-p' || a === '--profile') i++;
    else if (!a.startsWith('--profile=') && !/^-p./.test(a)) rest.push(a);
  }
  return rest.length === 1 && rest[0] === '--version';
}

/** Runs the CLI on `argv` (as process.argv) and returns the exit code. */
export async function run(argv: string[]): Promise<number> {
  if (asksVersion(argv.slice(2))) {
    process.stdout.write(`${pkg.version}\n`);
    return EXIT.ok;
  }
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return EXIT.ok;
      // Anything else (including `folio` or `folio notes` alone, which prints the help) is a usage error.
      return EXIT.usage;
    }
    if (err instanceof CliError) {
      process.stderr.write(`folio: ${err.message}\n`);
      return err.exitCode;
    }
    process.stderr.write(`folio: ${(err as Error).message ?? String(err)}\n`);
    if (process.env['FOLIO_DEBUG']) process.stderr.write(`${(err as Error).stack}\n`);
    return EXIT.failed;
  }
}
