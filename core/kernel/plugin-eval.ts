// Runs a bundled plugin (core/kernel/plugin-loader.ts makes the bundle): in Folio's own thread for
// an in-process plugin, or inside the plugin's worker (core/kernel/isolation/worker.ts). Kept apart
// from the bundler so that a worker loads neither esbuild nor anything else it does not need.
import { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';
import * as sdk from '../sdk/index.ts';

export const SDK_SPECIFIERS = new Set(['folio/sdk', '@folio/sdk', 'folio']);
// Folio's own package root (core/kernel/../..), without importing the configuration module.
const folioRequire = createRequire(path.resolve(import.meta.dirname, '../../package.json'));

export class LoadError extends Error {}

/** One version of a plugin: its code, bundled, and what went into it. Plain data: it can cross to a worker. */
export interface Bundle {
  code: string;
  /** Every file of the plugin that went into this version. */
  files: string[];
  entry: string;
  dir: string;
  /** package.json version, or a short hash of the bundled code. */
  version: string;
}

/** Evaluates the bundle as a function and returns the plugin's default export. */
export function evaluateBundle(bundle: Bundle): unknown {
  const { code, entry, dir } = bundle;
  const pluginRequire = createRequire(entry);
  const requireShim = (spec: string): unknown => {
    if (SDK_SPECIFIERS.has(spec)) return sdk;
    try {
      return pluginRequire(spec);
    } catch (err) {
      // A plugin outside this tree may lean on Folio's own packages (typebox, ...).
      if ((err as { code?: string }).code === 'MODULE_NOT_FOUND' && !spec.startsWith('.')) return folioRequire(spec);
      throw err;
    }
  };
  const module = { exports: {} as Record<string, unknown> };
  try {
    const fn = vm.compileFunction(code, ['exports', 'require', 'module', '__filename', '__dirname'], {
      filename: entry,
      // `await import('pkg')` inside a handler resolves like any import of the main program.
      importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    }) as (exports: unknown, require: typeof requireShim, module: { exports: unknown }, filename: string, dirname: string) => void;
    fn(module.exports, requireShim, module, entry, dir);
  } catch (err) {
    throw new LoadError(`evaluating ${path.basename(entry)}: ${(err as Error).message}`);
  }
  const exp = module.exports;
  return exp && typeof exp === 'object' && 'default' in exp ? exp.default : exp;
}
