// What the CLI promises without a server: its generated REST types match the server's OpenAPI
// document (a REST change without `npm run cli:generate` fails here, so CI catches the drift), and
// every command's --help ends with examples, and the package's bin is the CLI.
import t from 'tap';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { GENERATED, generatedTypes } from '../../cli/codegen.ts';
import { buildProgram } from '../../cli/main.ts';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';

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

t.test('the package bin `folio` is the bin/folio launcher, and cli/folio.ts hands itself to it', async (t) => {
  // The launcher starts cli/folio.ts on the Node pinned in node_modules whatever node is on PATH
  // (test/unit/launcher.test.ts runs it under the system's).
  const pkg = JSON.parse(await readFile(path.join(PACKAGE_ROOT, 'package.json'), 'utf8'));
  t.same(pkg.bin, { folio: 'bin/folio' });
  const bin = path.join(PACKAGE_ROOT, pkg.bin.folio);
  t.ok((await stat(bin)).mode & 0o111, 'the launcher is executable');
  t.match(await readFile(bin, 'utf8'), /^#!\/bin\/sh\n/);
  const entry = path.join(PACKAGE_ROOT, 'cli/folio.ts');
  t.ok((await stat(entry)).mode & 0o111, 'cli/folio.ts is executable');
  t.match(await readFile(entry, 'utf8'), /^#!.*\.\.\/bin\/folio/, 'and starts through the launcher');
});
