// docs/cli.md's file tree against the files: every path it names exists, and every source file of
// cli/commands and cli/lib (and the launcher) is named, so the page cannot drift from the code.
import t from 'tap';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';

const page = await readFile(path.join(PACKAGE_ROOT, 'docs/cli.md'), 'utf8');
const tree = /```\n(bin\/folio[\s\S]*?)```/.exec(page)?.[1] ?? '';

/** The tree's paths: top-level lines as they are, indented ones under cli/. */
const named = tree
  .split('\n')
  .map((line) => /^(\s*)(\S+)/.exec(line))
  .filter((m): m is RegExpExecArray => m !== null)
  .map((m) => (m[1] ? `cli/${m[2]}` : m[2]!))
  .filter((p) => p !== 'cli/');

t.ok(named.length > 10, 'docs/cli.md has its file tree');

t.test('every path in the tree exists', async (t) => {
  for (const p of named)
    t.ok(
      await stat(path.join(PACKAGE_ROOT, p)).then(
        () => true,
        () => false,
      ),
      p,
    );
});

t.test('every source file of the CLI is in the tree', async (t) => {
  for (const dir of ['cli/commands', 'cli/lib']) {
    for (const f of await readdir(path.join(PACKAGE_ROOT, dir))) if (f.endsWith('.ts')) t.ok(named.includes(`${dir}/${f}`), `${dir}/${f}`);
  }
  for (const p of ['bin/folio', 'cli/folio.ts', 'cli/main.ts']) t.ok(named.includes(p), p);
});
