// The plugin authors' kit as an author uses it: `folio plugin new` makes a package that installs
// offline and whose own test passes against folio/sdk/testing; `check` lists what a plugin holds
// and refuses what the server would not load; a range that excludes this Folio keeps the plugin
// out with the reason; tarballs that reach out of their folder are refused.
import t from 'tap';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';
import { startTestFolio, PluginLoadFailed } from '../../core/plugin-testing.ts';

// An author's whole round (npm install, a plugin's own test run, sandboxed checks): slower than most.
t.setTimeout(400_000);

const TOOL = path.join(PACKAGE_ROOT, 'core/plugin-tool.ts');
const NODE_BIN = path.dirname(process.execPath);
const work = mkdtempSync(path.join(tmpdir(), 'folio-kit-'));
t.teardown(() => rmSync(work, { recursive: true, force: true }));

function tool(...args: string[]) {
  const r = spawnSync(process.execPath, [TOOL, ...args], {
    encoding: 'utf8',
    cwd: work,
    env: { ...process.env, PLUGINS_DIR: path.join(work, 'installed') },
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const plugin = path.join(work, 'reading_list');

t.test('new, npm install offline, npm test, check', async (t) => {
  t.equal(tool('new', 'reading_list').code, 0);
  const pkg = JSON.parse(readFileSync(path.join(plugin, 'package.json'), 'utf8'));
  t.match(pkg.folio.engines, /^\^\d+\.\d+\.0$/, 'a range of Folio versions');
  t.equal(pkg.devDependencies.folio, `file:${PACKAGE_ROOT}`);
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund'], { cwd: plugin, stdio: 'pipe' });
  const test = spawnSync('npm', ['test'], {
    cwd: plugin,
    encoding: 'utf8',
    env: { ...process.env, PATH: `${NODE_BIN}:${process.env['PATH']}` },
  });
  t.equal(test.status, 0, test.stdout + test.stderr);
  t.match(test.stdout, /pass 3\n/);
  const checked = tool('check', plugin);
  t.equal(checked.code, 0, checked.err);
  t.match(checked.out, /function reading_list\.greet\(name: string\) -> \{ greeting: string \}/);
  t.match(checked.out, /prompt reading_list\.welcome/);
  t.match(checked.out, /skill how_it_works/);
  t.match(checked.out, /fits/);
});

t.test('check and new refuse what the server would not take', async (t) => {
  t.match(tool('new', 'admin'), { code: 1, err: /one of Folio's own/ });
  t.match(tool('new', '../x'), { code: 1 });
  const pkgFile = path.join(plugin, 'package.json');
  const good = readFileSync(pkgFile, 'utf8');
  t.teardown(() => writeFileSync(pkgFile, good));
  for (const [range, said] of [
    ['*', /admits every version/],
    ['not a range', /must be a semver range/],
    ['^0.1.0', /this is Folio .*would not load it/],
  ] as const) {
    writeFileSync(pkgFile, JSON.stringify({ ...JSON.parse(good), folio: { engines: range } }));
    t.match(tool('check', plugin), { code: 1, err: said }, range);
  }
  // The server keeps a plugin out of range unloaded, and plugin_status says why.
  writeFileSync(pkgFile, JSON.stringify({ ...JSON.parse(good), folio: { engines: '^0.1.0' } }));
  const refused = await startTestFolio(plugin).then(
    async (f) => (await f.close(), undefined),
    (err: unknown) => err,
  );
  t.ok(refused instanceof PluginLoadFailed, 'not loaded');
  t.match((refused as Error).message, /written for Folio \^0\.1\.0 .*this is Folio/);
});

t.test('a tarball reaching out of its folder is refused, nothing written', async (t) => {
  const evil = path.join(work, 'evil');
  mkdirSync(path.join(evil, 'package'), { recursive: true });
  writeFileSync(path.join(evil, 'outside.txt'), 'x');
  const tgz = path.join(work, 'evil.tgz');
  // -P keeps the `../` that tar would otherwise strip when it writes the archive.
  execFileSync('tar', ['-czPf', tgz, '-C', path.join(evil, 'package'), '../outside.txt']);
  t.match(tool('add', tgz), { code: 1, err: /points outside the plugin folder/ });
  t.match(tool('list'), { code: 0, out: /no plugins/ });
});

/** A copy of the scaffolded plugin (without its node_modules) at `dir`, its package.json changed by `edit`. */
function copyOf(dir: string, edit: (pkg: Record<string, any>) => void = () => {}): string {
  cpSync(plugin, dir, { recursive: true, filter: (f) => !path.relative(plugin, f).includes('node_modules') });
  const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
  edit(pkg);
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify(pkg));
  return dir;
}

t.test('add, replace and remove a plugin in the plugins folder', async (t) => {
  const installed = path.join(work, 'installed');
  const tgz = path.join(work, 'rl.tgz');
  execFileSync('tar', ['-czf', tgz, '--exclude', 'node_modules', '-C', work, 'reading_list']);
  const added = tool('add', tgz);
  t.equal(added.code, 0, added.err);
  t.match(tool('list').out, /reading_list\t0\.1\.0/);

  // Already installed: refused without --force, saying both versions; a downgrade too.
  t.match(tool('add', plugin), {
    code: 1,
    err: /reading_list 0\.1\.0 is already installed .*this is 0\.1\.0 \(the same version\).*--force/,
  });
  // A source inside a node_modules folder (after an npm install) is copied whole.
  const newer = copyOf(path.join(work, 'nm/node_modules/reading_list'), (p) => (p.version = '0.2.0'));
  const upgraded = tool('add', newer, '--force');
  t.equal(upgraded.code, 0, upgraded.err);
  t.match(upgraded.out, /replacing reading_list 0\.1\.0 .* with 0\.2\.0 \(an upgrade\)/);
  t.match(tool('add', plugin), { code: 1, err: /this is 0\.1\.0 \(a downgrade\)/ });

  // A plugin that fails its check leaves the installed one as it was.
  const broken = copyOf(path.join(work, 'broken'), (p) => (p.version = '0.3.0'));
  writeFileSync(path.join(broken, 'index.ts'), 'export default {{{');
  t.match(tool('add', broken, '--force'), { code: 1 });
  // Links (and other non-files) are refused in a folder as in a tarball; so are npm dependencies add would not copy.
  const linked = copyOf(path.join(work, 'linked'), (p) => (p.version = '0.4.0'));
  symlinkSync('/etc', path.join(linked, 'etc'));
  t.match(tool('add', linked, '--force'), { code: 1, err: /etc: a link; only files and folders/ });
  t.match(tool('check', linked), { code: 1, err: /a link/ });
  const withDeps = copyOf(path.join(work, 'deps'), (p) => (p.dependencies = { 'left-pad': '^1.3.0' }));
  t.match(tool('add', withDeps, '--force'), { code: 1, err: /dependencies \(left-pad\): add does not copy/ });

  t.match(tool('list').out, /reading_list\t0\.2\.0/, 'the installed plugin is untouched');
  t.same(readdirSync(installed), ['reading_list'], 'no staging or set-aside folder left behind');
  t.match(readFileSync(path.join(installed, 'reading_list/index.ts'), 'utf8'), /greet/);

  t.equal(tool('remove', 'reading_list').code, 0);
  t.match(tool('list').out, /no plugins/);
});
