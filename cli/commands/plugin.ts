// `folio plugin new|check|add|list|remove`: a plugin author's and operator's commands. They work
// on folders on this machine (the plugins folder a server watches), not over the REST API, so
// they run Folio's own tool script (core/plugin-tool.ts, also `npm run plugin`) in a child
// process: the CLI itself still imports nothing of the server.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import type { Command } from 'commander';
import { examples, type CommandGroup } from '../lib/group.ts';

const TOOL = path.resolve(import.meta.dirname, '../../core/plugin-tool.ts');

function runTool(args: string[]): void {
  const r = spawnSync(process.execPath, [TOOL, ...args], { stdio: 'inherit' });
  process.exitCode = r.status ?? 1;
}

export const plugin: CommandGroup = {
  register(program: Command) {
    const group = program.command('plugin').description('make, check and install plugins (on this machine, no server needed)');
    examples(group, 'folio plugin new reading_list', 'folio plugin check ./reading_list', 'folio plugin add ./reading_list');
    group
      .command('new')
      .description('a new plugin folder: package.json, tsconfig, entry, skill, test, README')
      .argument('<name>', 'its namespace: lowercase letters, digits, single underscores')
      .option('--dir <parent>', 'where to make it (default: here)')
      .action((name: string, o: { dir?: string }) => runTool(['new', name, ...(o.dir ? ['--dir', o.dir] : [])]));
    examples(group.commands.at(-1)!, 'folio plugin new reading_list', 'folio plugin new reading_list --dir ~/src');
    group
      .command('check')
      .description('load a plugin in a sandboxed host and list its functions, prompts, skills, capabilities and Folio range')
      .argument('<source>', 'a plugin folder or a .tgz (npm pack)')
      .action((src: string) => runTool(['check', src]));
    examples(group.commands.at(-1)!, 'folio plugin check .', 'folio plugin check reading-list-0.1.0.tgz');
    group
      .command('add')
      .description('copy a plugin into the plugins folder, check the copy, swap it in (a running server loads it)')
      .argument('<source>', 'a plugin folder or a .tgz (npm pack)')
      .option('--force', 'replace a plugin already serving that namespace, even with an older version')
      .action((src: string, o: { force?: boolean }) => runTool(['add', src, ...(o.force ? ['--force'] : [])]));
    examples(
      group.commands.at(-1)!,
      'folio plugin add ./reading_list',
      'PLUGINS_DIR=/srv/folio/plugins folio plugin add reading-list-0.1.0.tgz',
      'folio plugin add reading-list-0.2.0.tgz --force',
    );
    group
      .command('list')
      .description('the plugins in the plugins folder')
      .action(() => runTool(['list']));
    examples(group.commands.at(-1)!, 'folio plugin list');
    group
      .command('remove')
      .description('delete a plugin from the plugins folder (a running server unloads it)')
      .argument('<name>')
      .action((name: string) => runTool(['remove', name]));
    examples(group.commands.at(-1)!, 'folio plugin remove reading_list');
  },
};
