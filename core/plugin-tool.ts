// Operator and author commands for third-party plugins, run as `folio plugin <command>` (the CLI
// hands them to this script) or `npm run plugin -- <command>`:
//
//   new <name> [--dir <parent>]   a new plugin folder: package.json, tsconfig, entry, skill, test, README
//   check <folder|tarball>        loads it in a sandboxed host as the server would and says what it holds
//   add <folder|tarball> [--force] copies it into the plugins folder, checks that copy, swaps it in
//                                 (the server reloads); --force replaces an installed plugin
//   list                          the plugins in the plugins folder, their versions and Folio ranges
//   remove <name>                 deletes a plugin's folder from the plugins folder (the server unloads it)
//
// add and remove work on the plugins folder (PLUGINS_DIR, the first one that is not Folio's own);
// a running server watches it and loads or unloads within a moment, so neither needs the server.
// Exit code 0 when all is well, 1 on any problem (said on stderr), 2 on a usage error.
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import semver from 'semver';
import { loadConfig, PACKAGE_ROOT } from './kernel/config.ts';
import { bundlePlugin, engineRange, FOLIO_VERSION, LoadError } from './kernel/plugin-loader.ts';
import { PluginHost, FIRST_PARTY, isolationSettings, stopSpares } from './kernel/isolation/host.ts';
import { NAMESPACE_RE } from './kernel/manifest.ts';
import { readSkillDir } from './kernel/skills.ts';
import { scaffold } from './plugin-scaffold.ts';

class Problem extends Error {}

const FIRST_PARTY_NAMESPACES = new Set(readdirSync(FIRST_PARTY));

function readPkg(dir: string): Record<string, any> {
  const file = path.join(dir, 'package.json');
  if (!existsSync(file)) throw new Problem(`${dir}: no package.json`);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, any>;
  } catch (err) {
    throw new Problem(`${file}: ${(err as Error).message}`);
  }
}

/**
 * A tarball (npm pack's `package/...` layout or a bare folder) unpacked into a new temporary
 * folder. Refused whole when any entry leaves it (`..`, an absolute path) or is a link or a
 * device: only folders and regular files. Nothing of it runs (no install scripts).
 */
function unpack(tarball: string): { dir: string; cleanup(): void } {
  let listing: string;
  try {
    listing = execFileSync('tar', ['-tvzf', tarball], { encoding: 'utf8' });
  } catch (err) {
    throw new Problem(`${tarball}: not a gzipped tarball (${(err as Error).message.split('\n')[0]})`);
  }
  const names = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n').filter(Boolean);
  for (const line of listing.split('\n').filter(Boolean))
    if (!/^[-d]/.test(line))
      throw new Problem(`${tarball}: holds a link or special file (${line.trim()}); only files and folders are accepted`);
  for (const name of names)
    if (path.isAbsolute(name) || name.split('/').includes('..'))
      throw new Problem(`${tarball}: entry ${name} points outside the plugin folder`);
  const tmp = mkdtempSync(path.join(tmpdir(), 'folio-plugin-add-'));
  const cleanup = () => rmSync(tmp, { recursive: true, force: true });
  try {
    execFileSync('tar', ['-xzf', tarball, '-C', tmp, '--no-same-owner', '--no-same-permissions']);
  } catch (err) {
    cleanup();
    throw new Problem(`${tarball}: ${(err as Error).message}`);
  }
  const top = readdirSync(tmp);
  const dir = top.length === 1 && statSync(path.join(tmp, top[0]!)).isDirectory() ? path.join(tmp, top[0]!) : tmp;
  return { dir, cleanup };
}

/**
 * Refuses a plugin folder holding a link or anything but files and folders, as for a tarball's
 * entries: a link would be installed as is and could point anywhere. node_modules is skipped (it
 * is never copied; an author's own has links, e.g. to Folio).
 */
function refuseLinks(dir: string, rel = ''): void {
  for (const name of readdirSync(path.join(dir, rel))) {
    const at = path.join(rel, name);
    if (name === 'node_modules') continue;
    const st = lstatSync(path.join(dir, at));
    if (st.isDirectory()) refuseLinks(dir, at);
    else if (!st.isFile())
      throw new Problem(`${path.join(dir, at)}: a ${st.isSymbolicLink() ? 'link' : 'special file'}; only files and folders are accepted`);
  }
}

function source(spec: string): { dir: string; cleanup(): void } {
  const at = path.resolve(spec);
  if (!existsSync(at)) throw new Problem(`${spec}: no such folder or file`);
  if (statSync(at).isDirectory()) {
    refuseLinks(at);
    return { dir: at, cleanup: () => {} };
  }
  return unpack(at);
}

interface Checked {
  namespace: string;
  version: string;
  range: string | undefined;
  warnings: string[];
}

/** Loads the plugin in a sandboxed host (as the server would) and prints what it holds; throws on any problem. */
async function check(dir: string, out: (line: string) => void): Promise<Checked> {
  const pkg = readPkg(dir);
  const warnings: string[] = [];
  let range: string | undefined;
  try {
    range = engineRange(pkg);
  } catch (err) {
    throw new Problem((err as Error).message);
  }
  if (range === undefined)
    throw new Problem('package.json has no folio.engines: say which Folio versions the plugin works with, e.g. "^1.2.0"');
  const fits = semver.satisfies(FOLIO_VERSION, range, { includePrerelease: true });
  const scripts = Object.keys((pkg['scripts'] as Record<string, unknown> | undefined) ?? {}).filter((s) =>
    /^(pre|post)?install$|^prepare$/.test(s),
  );
  if (scripts.length) warnings.push(`package.json scripts ${scripts.join(', ')}: never run by Folio`);
  const deps = Object.keys((pkg['dependencies'] as Record<string, unknown> | undefined) ?? {});
  if (deps.length) warnings.push(`package.json dependencies ${deps.join(', ')}: not copied by add, which refuses the plugin`);
  const config = loadConfig({ overrides: { logLevel: 'silent' } });
  const iso = isolationSettings(config);
  let host: PluginHost | undefined;
  try {
    const bundle = await bundlePlugin(dir).catch((err: unknown) => {
      // The range is reported below with the rest; anything else the bundler says stops here.
      if (err instanceof LoadError && err.message.startsWith('written for Folio')) return undefined;
      throw err;
    });
    if (!bundle) throw new Problem(`written for Folio ${range}; this is Folio ${FOLIO_VERSION}: the server would not load it`);
    host = await PluginHost.start(bundle, iso, pino({ level: 'silent' }));
    const entry = host.entry();
    const skills = readSkillDir(entry.namespace, path.join(dir, 'skills'));
    const caps = host.sandbox.capabilities;
    out(`${entry.namespace} ${entry.version}: ${entry.description}`);
    out(`folio range: ${range} (this is Folio ${FOLIO_VERSION}: ${fits ? 'fits' : 'does NOT fit'})`);
    out(`sandbox: ${host.sandbox.kind}`);
    for (const fn of entry.functions.values()) out(`function ${fn.signature}`);
    for (const p of entry.prompts.values()) out(`prompt ${entry.namespace}.${p.name}: ${p.description}`);
    for (const s of skills.values()) out(`skill ${s.name}`);
    out(
      `capabilities asked for: network [${caps.requested.network.join(', ')}] env [${caps.requested.env.join(', ')}] processes ${caps.requested.processes} workers ${caps.requested.workers}`,
    );
    for (const w of warnings) out(`warning: ${w}`);
    if (FIRST_PARTY_NAMESPACES.has(entry.namespace)) throw new Problem(`namespace '${entry.namespace}' is one of Folio's own`);
    return { namespace: entry.namespace, version: entry.version, range, warnings };
  } catch (err) {
    if (err instanceof Problem) throw err;
    throw new Problem((err as Error).message);
  } finally {
    host?.close();
    await stopSpares();
  }
}

/** The plugins folder add and remove work on: the first PLUGINS_DIR that is not Folio's own. */
function pluginsFolder(): string {
  const dirs = loadConfig({ overrides: { logLevel: 'silent' } }).pluginsDir.filter((d) => path.resolve(d) !== FIRST_PARTY);
  if (dirs.length === 0) throw new Problem('no plugins folder is configured (PLUGINS_DIR)');
  return path.resolve(dirs[0]!);
}

/** Every configured plugins folder (Folio's own included): where a namespace may already be served. */
function allPluginsFolders(): string[] {
  return loadConfig({ overrides: { logLevel: 'silent' } }).pluginsDir.map((d) => path.resolve(d));
}

/** The namespace a plugin folder serves: its folder name for Folio's own, else what it declares. */
async function servedNamespace(dir: string): Promise<string | undefined> {
  if (path.dirname(dir) === FIRST_PARTY) return path.basename(dir);
  let host: PluginHost | undefined;
  try {
    host = await PluginHost.start(
      await bundlePlugin(dir),
      isolationSettings(loadConfig({ overrides: { logLevel: 'silent' } })),
      pino({ level: 'silent' }),
    );
    return host.entry().namespace;
  } catch {
    return undefined; // does not load: serves nothing
  } finally {
    host?.close();
  }
}

/** The installed folder serving `namespace` (or named after it), with its version. */
async function installed(namespace: string): Promise<{ dir: string; version: string } | undefined> {
  for (const root of allPluginsFolders()) {
    if (!existsSync(root)) continue;
    for (const name of readdirSync(root).sort()) {
      const dir = path.join(root, name);
      if (name.startsWith('.') || !statSync(dir).isDirectory()) continue;
      if (name !== namespace && (await servedNamespace(dir)) !== namespace) continue;
      let version = '(no version)';
      try {
        version = String(readPkg(dir)['version'] ?? version);
      } catch {
        // no readable package.json
      }
      return { dir, version };
    }
  }
  return undefined;
}

/**
 * Copies the plugin into a hidden folder of the plugins folder (the server's watcher ignores
 * dot-folders), checks that copy as the server would load it, then swaps it in: the old folder is
 * renamed aside, the new one renamed into place (put back on failure), the old one deleted. The
 * server sees the whole plugin at once; a failure leaves what was installed as it was.
 */
async function add(spec: string, force: boolean, out: (line: string) => void): Promise<void> {
  const src = source(spec);
  const folder = pluginsFolder();
  mkdirSync(folder, { recursive: true });
  const staging = mkdtempSync(path.join(folder, '.adding-'));
  try {
    const deps = Object.keys((readPkg(src.dir)['dependencies'] as Record<string, unknown> | undefined) ?? {});
    if (deps.length)
      throw new Problem(
        `package.json dependencies (${deps.join(', ')}): add does not copy or install npm packages, so the server could not load them. Bundle them into the plugin's own files (e.g. with esbuild), or move packages Folio provides (folio) to devDependencies`,
      );
    try {
      cpSync(src.dir, staging, {
        recursive: true,
        filter: (f) => !path.relative(src.dir, f).split(path.sep).includes('node_modules'),
      });
    } catch (err) {
      throw new Problem(`could not copy ${spec} into ${folder}: ${(err as Error).message}`);
    }
    if (!existsSync(path.join(staging, 'package.json'))) throw new Problem(`${spec}: nothing was copied (no package.json)`);
    const { namespace, version } = await check(staging, out);
    const old = await installed(namespace);
    const target = old?.dir ?? path.join(folder, namespace);
    if (old && path.dirname(old.dir) === FIRST_PARTY) throw new Problem(`namespace '${namespace}' is one of Folio's own`);
    if (old) {
      const change =
        semver.valid(version) && semver.valid(old.version)
          ? semver.lt(version, old.version)
            ? 'a downgrade'
            : semver.eq(version, old.version)
              ? 'the same version'
              : 'an upgrade'
          : 'versions not comparable';
      if (!force)
        throw new Problem(
          `${namespace} ${old.version} is already installed at ${old.dir}; this is ${version} (${change}). Add --force to replace it`,
        );
      out(`replacing ${namespace} ${old.version} at ${old.dir} with ${version} (${change})`);
    } else if (existsSync(target)) {
      if (!force) throw new Problem(`${target} already exists (it serves no plugin now). Add --force to replace it`);
    }
    const aside = existsSync(target) ? path.join(path.dirname(target), `.${path.basename(target)}.old-${process.pid}`) : undefined;
    if (aside) renameSync(target, aside);
    try {
      renameSync(staging, target);
    } catch (err) {
      if (aside) renameSync(aside, target);
      throw new Problem(`could not move the plugin into ${target}: ${(err as Error).message}; nothing changed`);
    }
    if (aside) rmSync(aside, { recursive: true, force: true });
    out(`added ${namespace} ${version} at ${target}; a running server loads it within a moment (admin.plugin_status says how it went)`);
  } finally {
    rmSync(staging, { recursive: true, force: true });
    src.cleanup();
    await stopSpares();
  }
}

async function main(argv: string[]): Promise<number> {
  const [cmd, arg, ...rest] = argv;
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const usage = () => {
    process.stderr.write(
      'usage: folio plugin new <name> [--dir <parent>] | check <folder|tarball> | add <folder|tarball> [--force] | list | remove <name>\n',
    );
    return 2;
  };
  try {
    switch (cmd) {
      case 'new': {
        if (!arg) return usage();
        if (!NAMESPACE_RE.test(arg)) throw new Problem(`${arg}: a plugin's name is its namespace: ${NAMESPACE_RE.source}`);
        if (FIRST_PARTY_NAMESPACES.has(arg)) throw new Problem(`${arg} is the namespace of one of Folio's own plugins`);
        const parent = rest[0] === '--dir' && rest[1] ? path.resolve(rest[1]) : process.cwd();
        const dir = path.join(parent, arg);
        if (existsSync(dir)) throw new Problem(`${dir} already exists`);
        scaffold(dir, arg, { folioRoot: PACKAGE_ROOT, folioVersion: FOLIO_VERSION });
        out(`created ${dir}`);
        out(`next: cd ${path.relative(process.cwd(), dir) || '.'} && npm install && npm test`);
        return 0;
      }
      case 'check': {
        if (!arg) return usage();
        const src = source(arg);
        try {
          await check(src.dir, out);
        } finally {
          src.cleanup();
        }
        out('ok');
        return 0;
      }
      case 'add': {
        if (!arg) return usage();
        await add(arg, rest.includes('--force'), out);
        return 0;
      }
      case 'list': {
        const root = pluginsFolder();
        const names = existsSync(root)
          ? readdirSync(root).filter((n) => !n.startsWith('.') && statSync(path.join(root, n)).isDirectory())
          : [];
        for (const n of names.sort()) {
          let pkg: Record<string, any> = {};
          try {
            pkg = readPkg(path.join(root, n));
          } catch {
            // listed without a version
          }
          out(
            `${n}\t${String(pkg['version'] ?? '-')}\tfolio ${JSON.stringify((pkg['folio'] as { engines?: unknown } | undefined)?.engines ?? 'no Folio range (loads on any version)')}`,
          );
        }
        if (names.length === 0) out(`no plugins in ${root}`);
        return 0;
      }
      case 'remove': {
        if (!arg) return usage();
        if (!NAMESPACE_RE.test(arg)) throw new Problem(`${arg}: not a plugin name`);
        const target = path.join(pluginsFolder(), arg);
        if (!existsSync(target)) throw new Problem(`no plugin ${arg} in ${path.dirname(target)}`);
        rmSync(target, { recursive: true, force: true });
        out(`removed ${arg}; a running server unloads it within a moment`);
        return 0;
      }
      default:
        return usage();
    }
  } catch (err) {
    if (!(err instanceof Problem)) throw err;
    process.stderr.write(`folio plugin ${cmd}: ${err.message}\n`);
    return 1;
  }
}

if (import.meta.main) process.exitCode = await main(process.argv.slice(2));
