// Bundles one plugin package so that it loads into memory that can be collected again.
//
// Node never unloads an ES module, and `import('./x.ts?v=2')` re-evaluates only the entry, not
// the files it imports. So a plugin's own files are bundled by esbuild into one CommonJS string
// and evaluated as a function (vm.compileFunction, core/kernel/plugin-eval.ts): a new version re-reads every file, and the old
// version is garbage once the registry drops it. Bare imports (npm packages, Node built-ins) stay
// external and go through Node's own cache once, so they are shared across versions and bounded.
import { readFileSync, existsSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import v8 from 'node:v8';
import { build } from 'esbuild';
import semver from 'semver';
import { LoadError, SDK_SPECIFIERS, type Bundle } from './plugin-eval.ts';

export { LoadError, type Bundle } from './plugin-eval.ts';

// V8's compilation cache keeps the source of every script it compiled, keyed by that source, for
// the life of the process: each plugin version would stay in memory after its functions are
// gone (measured: +400 KB per reload of a plugin with a 200 KB constant; bench/memory.ts). The
// cache only saves re-compiling identical source, which a reloader never does twice.
v8.setFlagsFromString('--no-compilation-cache');

const ENTRY_CANDIDATES = ['index.ts', 'index.js', 'index.mjs'];

interface PackageJson {
  version?: string;
  main?: string;
  exports?: unknown;
  folio?: { engines?: unknown };
}

/** The running Folio's version (its package.json), which a plugin's `folio.engines` range must admit. */
export const FOLIO_VERSION = (
  JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string }
).version;

/**
 * The Folio versions a plugin says it works with (package.json `folio.engines`, a semver range
 * such as `^1.2.0`): undefined when it names none. A range that admits any version (`*`, `x`,
 * `>=0`) says nothing and is refused like one that does not parse.
 */
export function engineRange(pkg: { folio?: { engines?: unknown } } | undefined): string | undefined {
  const range = pkg?.folio?.engines;
  if (range === undefined) return undefined;
  if (typeof range !== 'string' || semver.validRange(range) === null)
    throw new LoadError(`package.json folio.engines must be a semver range of Folio versions, e.g. "^1.2.0"; got ${JSON.stringify(range)}`);
  if (semver.satisfies('0.0.0', range) && semver.satisfies('999999.0.0', range))
    throw new LoadError(
      `package.json folio.engines ${JSON.stringify(range)} admits every version: name the ones the plugin was written for, e.g. "^${semver.major(FOLIO_VERSION)}.${semver.minor(FOLIO_VERSION)}.0"`,
    );
  return range;
}

/** Refuses a plugin whose `folio.engines` range excludes the running Folio, saying both. */
export function checkEngines(pkg: { folio?: { engines?: unknown } } | undefined): void {
  const range = engineRange(pkg);
  if (range !== undefined && !semver.satisfies(FOLIO_VERSION, range, { includePrerelease: true }))
    throw new LoadError(`written for Folio ${range} (package.json folio.engines); this is Folio ${FOLIO_VERSION}: not loaded`);
}

function readPackageJson(dir: string): PackageJson | undefined {
  const file = path.join(dir, 'package.json');
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as PackageJson;
  } catch (err) {
    throw new LoadError(`package.json: ${(err as Error).message}`);
  }
}

function exportsEntry(exp: unknown): string | undefined {
  if (typeof exp === 'string') return exp;
  if (typeof exp !== 'object' || exp === null) return undefined;
  const e = exp as Record<string, unknown>;
  const dot = '.' in e ? e['.'] : e;
  if (typeof dot === 'string') return dot;
  if (typeof dot === 'object' && dot !== null) {
    const d = dot as Record<string, unknown>;
    for (const cond of ['folio', 'import', 'node', 'default', 'require']) if (d[cond] !== undefined) return exportsEntry(d[cond]);
  }
  return undefined;
}

/** The package's `exports`/`main`, else index.ts, index.js, index.mjs. */
export function resolveEntry(dir: string, pkg: PackageJson | undefined): string {
  const declared = pkg ? (exportsEntry(pkg.exports) ?? pkg.main) : undefined;
  if (declared !== undefined) {
    const file = path.resolve(dir, declared);
    if (!file.startsWith(dir + path.sep)) throw new LoadError(`entry ${declared} points outside the plugin folder`);
    if (!existsSync(file) || !statSync(file).isFile()) throw new LoadError(`entry ${declared} (from package.json) does not exist`);
    return file;
  }
  for (const name of ENTRY_CANDIDATES) {
    const file = path.join(dir, name);
    if (existsSync(file)) return file;
  }
  throw new LoadError(`no entry: add package.json "exports"/"main", or one of ${ENTRY_CANDIDATES.join(', ')}`);
}

/** Bundles a plugin's own files into one CommonJS string (nothing of the plugin runs yet). */
export async function bundlePlugin(dir: string): Promise<Bundle> {
  const pkg = readPackageJson(dir);
  checkEngines(pkg);
  const entry = resolveEntry(dir, pkg);
  let result;
  try {
    result = await build({
      entryPoints: [entry],
      bundle: true,
      write: false,
      metafile: true,
      platform: 'node',
      format: 'cjs',
      target: 'node24',
      packages: 'external',
      // The SDK is handed over at run time, never bundled: a repo tsconfig `paths` entry would
      // otherwise inline a private copy into every in-tree plugin.
      external: [...SDK_SPECIFIERS],
      logLevel: 'silent',
      absWorkingDir: dir,
      define: {
        'import.meta.dirname': JSON.stringify(dir),
        'import.meta.filename': JSON.stringify(entry),
        'import.meta.url': JSON.stringify(`file://${entry}`),
      },
    });
  } catch (err) {
    const e = err as { errors?: Array<{ text: string; location?: { file: string; line: number; column: number } | null }> };
    const first = e.errors?.[0];
    if (first) {
      const at = first.location ? `${first.location.file}:${first.location.line}:${first.location.column}: ` : '';
      throw new LoadError(`${at}${first.text}`);
    }
    throw new LoadError((err as Error).message);
  }
  const code = result.outputFiles[0]?.text ?? '';
  const files = Object.keys(result.metafile.inputs).map((f) => path.resolve(dir, f));
  const version = pkg?.version ?? createHash('sha256').update(code).digest('hex').slice(0, 12);
  return { code, files, entry, dir, version };
}
