// `folio completion bash|zsh|fish`: shell completion of commands and flags, made from the command
// tree itself, so a command added in any group file is completed with no change here.
import { Argument, type Command } from 'commander';
import { examples, type CommandGroup } from '../lib/group.ts';

interface Node {
  path: string[];
  commands: Array<{ name: string; aliases: string[]; description: string }>;
  options: Array<{ flag: string; description: string }>;
}

function walk(cmd: Command, path: string[], out: Node[]): Node[] {
  const visible = cmd.commands.filter((c) => !(c as Command & { _hidden?: boolean })._hidden);
  out.push({
    path,
    commands: visible.map((c) => ({ name: c.name(), aliases: c.aliases(), description: c.description() })),
    options: [
      ...cmd.options.filter((o) => o.long && !o.hidden).map((o) => ({ flag: o.long!, description: o.description })),
      { flag: '--help', description: 'show help' },
    ],
  });
  for (const c of visible) walk(c, [...path, c.name()], out);
  return out;
}

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function bash(nodes: Node[]): string {
  // "folio notes ls" leads where "folio notes list" does.
  const transitions = nodes.flatMap((n) =>
    n.commands.flatMap((c) => [c.name, ...c.aliases].map((word) => ({ seen: ['folio', ...n.path, word].join(' '), name: c.name }))),
  );
  const cases = nodes
    .map(
      (n) =>
        `    ${q(['folio', ...n.path].join(' '))}) words=${q([...n.commands.map((c) => c.name), ...n.options.map((o) => o.flag)].join(' '))} ;;`,
    )
    .join('\n');
  return `# folio completion for bash: eval "$(folio completion bash)" (e.g. in ~/.bashrc)
_folio() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" key="folio" words="" i w
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    case "$key $w" in
${transitions.map((t) => `      ${q(t.seen)}) key="$key ${t.name}" ;;`).join('\n')}
    esac
  done
  case "$key" in
${cases}
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _folio folio
`;
}

function zsh(nodes: Node[]): string {
  return `#compdef folio
# folio completion for zsh: folio completion zsh > "\${fpath[1]}/_folio" (or eval "$(folio completion zsh)")
autoload -U +X bashcompinit && bashcompinit
${bash(nodes).replace(/^# .*\n/, '')}`;
}

function fish(nodes: Node[]): string {
  const lines = ['# folio completion for fish: folio completion fish > ~/.config/fish/completions/folio.fish', 'complete -c folio -f'];
  const all = nodes.filter((n) => n.commands.length).map((n) => n.commands.map((c) => c.name));
  for (const n of nodes) {
    // At this node: every word of its path seen, and none of its children yet.
    const seen = n.path.map((p) => `__fish_seen_subcommand_from ${p}`);
    const children = n.commands.map((c) => c.name).join(' ');
    const cond = [...seen, ...(children ? [`not __fish_seen_subcommand_from ${children}`] : [])];
    const condition = n.path.length === 0 ? `not __fish_seen_subcommand_from ${[...new Set(all.flat())].join(' ')}` : cond.join('; and ');
    for (const c of n.commands) lines.push(`complete -c folio -n ${q(condition)} -a ${q(c.name)} -d ${q(c.description)}`);
    for (const o of n.options) lines.push(`complete -c folio -n ${q(condition)} -l ${q(o.flag.slice(2))} -d ${q(o.description)}`);
  }
  return lines.join('\n') + '\n';
}

export const completion: CommandGroup = {
  register(program: Command) {
    const cmd = program
      .command('completion')
      .description('print the shell completion script for bash, zsh or fish')
      .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish']))
      .action((shell: 'bash' | 'zsh' | 'fish') => {
        const nodes = walk(program, [], []);
        process.stdout.write({ bash, zsh, fish }[shell](nodes));
      });
    examples(
      cmd,
      'eval "$(folio completion bash)"          # in ~/.bashrc',
      'folio completion zsh > "${fpath[1]}/_folio"',
      'folio completion fish > ~/.config/fish/completions/folio.fish',
    );
  },
};
