// What the CLI promises without a server: its generated REST types match the server's OpenAPI
// document (a REST change without `npm run cli:generate` fails here, so CI catches the drift), and
// every command's --help ends with examples.
import t from 'tap';
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { GENERATED, generatedTypes } from '../../cli/codegen.ts';
import { buildProgram } from '../../cli/main.ts';

t.test('cli/generated/openapi.d.ts is what the current REST API generates', async (t) => {
  const checkedIn = await readFile(GENERATED, 'utf8');
  t.ok(checkedIn === (await generatedTypes()), 'out of date: run npm run cli:generate and commit cli/generated/openapi.d.ts');
  t.match(checkedIn, '"/notetaker/notes/{id}"', 'it is the REST API (a path of the notetaker group)');
});

t.test('every command has a --help with an example', async (t) => {
  const all: Command[] = [];
  const walk = (c: Command) => {
    all.push(c);
    c.commands.forEach(walk);
  };
  walk(buildProgram());
  t.ok(all.length > 15, `${all.length} commands`);
  for (const cmd of all) {
    if (cmd.name() === 'help') continue;
    let help = '';
    cmd.configureOutput({ writeOut: (s) => (help += s) });
    cmd.outputHelp();
    t.match(help, /\nExamples:\n {2}\$ .*\bfolio /, `folio ... ${cmd.name()} --help has examples`);
  }
});
