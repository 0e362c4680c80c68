// Every `folio ...` command that README.md and docs/cli.md show (in shell blocks and inline code)
// is a real command of the CLI, and every --option it is given is one that command (or the program)
// takes: the docs are checked against commander's own program tree, so a renamed or removed command
// cannot linger in them.
import t from 'tap';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';
import { buildProgram } from '../../cli/main.ts';

const program = buildProgram();

/** The shell text of a page: its sh/bash/console/plain fenced blocks, line by line, and its inline code. */
function shellText(page: string): string[] {
  const out: string[] = [];
  const prose = page.replace(/^```(\w*)\n([\s\S]*?)^```\n?/gm, (_, lang: string, body: string) => {
    // (docs/cli.md's plain block that starts with bin/folio is its file tree, checked by docs-cli-tree)
    if (['', 'sh', 'bash', 'console', 'shell'].includes(lang) && !body.startsWith('bin/folio')) out.push(...body.split('\n'));
    return '\n';
  });
  for (const m of prose.matchAll(/`([^`\n]+)`/g)) out.push(m[1]!);
  return out;
}

/**
 * Each `folio word...` in a piece of shell, as words, up to where the command ends (a pipe, ;, &&,
 * ), >, a comment, or a `...` that stands for the rest); a quoted word stays one word.
 */
function mentions(text: string): string[][] {
  const found: string[][] = [];
  for (const m of text.matchAll(/(?:^|[\s($])folio(?=[ \t])/g)) {
    const words: string[] = [];
    for (const w of text.slice(m.index + m[0].length).matchAll(/[ \t]+('[^']*'|"[^"]*"|[^\s|;&)>#`]+)|([\s\S])/gy)) {
      if (!w[1] || w[1] === '...') break;
      words.push(w[1]);
    }
    if (words.length) found.push(words);
  }
  return found;
}

const sub = (cmd: Command, word: string) => cmd.commands.find((c) => c.name() === word || c.aliases().includes(word));
const takes = (chain: Command[], flag: string) => chain.some((c) => c.options.some((o) => o.long === flag || o.short === flag));

/** What is wrong with one mention, or undefined when the CLI has that command and those options. */
function check(words: string[]): string | undefined {
  const chain: Command[] = [program];
  let i = 0;
  for (; i < words.length; i++) {
    const w = words[i]!;
    const option = chain.length === 1 ? program.options.find((o) => o.long === w || o.short === w) : undefined;
    if (option) {
      if (option.required) i++; // the program's own option and its value, before the command
      continue;
    }
    if (w.startsWith('-')) break;
    const next = sub(chain.at(-1)!, w);
    if (!next) {
      if (chain.at(-1)!.commands.length) return `no command "${[...chain.slice(1).map((c) => c.name()), w].join(' ')}"`;
      break; // an argument of the command
    }
    chain.push(next);
  }
  for (const w of words.slice(i)) {
    if (w === '--') break; // what follows is text, not options
    const flag = w.split('=')[0]!;
    if (flag === '--help' || flag === '-h' || (flag === '--version' && chain.length === 1)) continue; // commander's own, and run()'s
    if (/^--?[a-zA-Z]/.test(flag) && !takes(chain, flag)) return `"${chain.map((c) => c.name()).join(' ')}" takes no ${flag}`;
  }
  return undefined;
}

for (const doc of ['README.md', 'docs/cli.md']) {
  t.test(doc, async (t) => {
    const all = shellText(await readFile(path.join(PACKAGE_ROOT, doc), 'utf8')).flatMap(mentions);
    t.ok(all.length > 10, `${doc} shows folio commands (${all.length})`);
    for (const words of all) t.equal(check(words), undefined, `folio ${words.join(' ')}`);
  });
}

t.test('the check itself refuses what the CLI does not have', async (t) => {
  t.match(check(['notes', 'frobnicate']), /no command "notes frobnicate"/);
  t.match(check(['bookmarks', 'list']), /no command "bookmarks"/);
  t.match(check(['notes', 'list', '--colour']), /takes no --colour/);
  t.equal(check(['notes', 'get', 'ID', '--raw']), undefined);
  t.equal(check(['-p', 'work', '--version']), undefined, 'program options before the command');
  t.match(check(['-p', 'work', 'notez', 'list']), /no command "notez"/);
  t.same(mentions(`x=$(folio notes search '"a b" -draft' --tag w | jq .); folio users me # who`), [
    ['notes', 'search', `'"a b" -draft'`, '--tag', 'w'],
    ['users', 'me'],
  ]);
});
