// The registry: an immutable snapshot of every namespace, swapped whole on each reload. A call
// holds the entry it started with, so it finishes on that version whatever happens meanwhile.
import { readdirSync, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { Logger } from 'pino';
import type { PluginStatus } from '../sdk/index.ts';
import { buildPlugin, NAMESPACE_RE, type FunctionEntry, type PluginEntry, type PromptEntry } from './manifest.ts';
import { bundlePlugin } from './plugin-loader.ts';
import { evaluateBundle } from './plugin-eval.ts';
import { PluginHost, stopSpares, trialLoad, type IsolationLimits, type IsolationMode } from './isolation/host.ts';
import { readSkillDir, type SkillEntry } from './skills.ts';

export interface NamespaceEntry {
  name: string;
  description: string;
  catalogue: 'public' | 'unlisted';
  version: string;
  visible: PluginEntry['visible'];
  functions: ReadonlyMap<string, FunctionEntry>;
  prompts: ReadonlyMap<string, PromptEntry>;
  skills: ReadonlyMap<string, SkillEntry>;
}

export interface Snapshot {
  generation: number;
  namespaces: ReadonlyMap<string, NamespaceEntry>;
}

type UnitKind = 'plugin' | 'skills';

interface Good {
  namespace: string;
  plugin: PluginEntry | undefined;
  skills: Map<string, SkillEntry>;
  files: string[];
  version: string;
  loadedAt: Date;
  /** The worker an isolated plugin runs in; none for an in-process plugin or a skills folder. */
  host: PluginHost | undefined;
}

interface Unit {
  key: string;
  kind: UnitKind;
  dir: string;
  order: number;
  good: Good | undefined;
  error: string | undefined;
  /** Taken out of service for crashing (until its files change). */
  disabled?: boolean;
  lastAttempt: Date;
}

function sandboxOf(host: PluginHost | undefined): PluginStatus['sandbox'] {
  if (!host) return null;
  const { kind, running, holds, missing, capabilities } = host.sandbox;
  return { kind, running, holds, missing, capabilities };
}

export interface RegistryOptions {
  pluginsDirs: string[];
  skillsDirs: string[];
  log: Logger;
  debounceMs: number;
  isolation: IsolationLimits & {
    /** Where this plugin folder runs: in a worker of its own, or on Folio's thread. */
    modeFor(dir: string): IsolationMode;
  };
}

export type ChangeListener = (snapshot: Snapshot, changed: ReadonlySet<string>) => void;

const IGNORED = /(^|[/\\])(node_modules|\.[^/\\]+)([/\\]|$)/;

export class Registry {
  #snapshot: Snapshot = { generation: 0, namespaces: new Map() };
  readonly #units = new Map<string, Unit>();
  readonly #opts: RegistryOptions;
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly #listeners = new Set<ChangeListener>();
  #queue: Promise<void> = Promise.resolve();
  #watcher: FSWatcher | undefined;
  #order = 0;
  /** Restarts of isolated plugins' processes after a crash, since start (for /metrics). */
  #restarts = 0;

  constructor(opts: RegistryOptions) {
    this.#opts = opts;
  }

  get snapshot(): Snapshot {
    return this.#snapshot;
  }

  /** Scans every plugins and skills folder and loads what it finds, one unit after another. */
  async loadAll(): Promise<void> {
    await this.#enqueue(async () => {
      const changed = new Set<string>();
      for (const { kind, dir } of this.#scan()) {
        for (const ns of await this.#reloadUnit(kind, dir)) changed.add(ns);
      }
      this.#publish(changed);
    });
  }

  /** Starts watching; every add, edit or removal reloads the unit it belongs to. */
  async watch(): Promise<void> {
    const roots = [...this.#opts.pluginsDirs, ...this.#opts.skillsDirs];
    // Ignore node_modules and dot-entries *inside* a root; the root itself may live anywhere
    // (a plugins folder under ~/.config must still reload).
    const ignored = (p: string) => {
      const root = roots.find((r) => p === r || p.startsWith(r + path.sep));
      return root !== undefined && IGNORED.test(path.relative(root, p));
    };
    const watcher = watch(roots, { ignoreInitial: true, ignored });
    watcher.on('all', (_event, file) => this.#onFsEvent(file));
    watcher.on('error', (err) => this.#opts.log.error({ err }, 'plugin watcher error'));
    await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
    this.#watcher = watcher;
  }

  async close(): Promise<void> {
    for (const t of this.#timers.values()) clearTimeout(t);
    this.#timers.clear();
    await this.#watcher?.close();
    await this.#queue;
    for (const u of this.#units.values()) u.good?.host?.close();
    await stopSpares();
  }

  onChange(listener: ChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Reloads the unit at `dir` now (serialized with every other reload). For tools and tests. */
  reload(dir: string): Promise<void> {
    const unit = this.#unitFor(path.resolve(dir));
    if (!unit) return Promise.resolve();
    return this.#enqueue(async () => this.#publish(await this.#reloadUnit(unit.kind, unit.dir)));
  }

  status(): PluginStatus[] {
    return [...this.#units.values()]
      .filter((u) => u.kind === 'plugin')
      .sort((a, b) => a.order - b.order)
      .map((u) => {
        const health = u.good?.host?.health;
        return {
          namespace: u.good?.namespace ?? null,
          dir: u.dir,
          version: u.good?.version ?? null,
          state: u.error ? (u.good ? 'stale' : 'failed') : health?.degraded ? 'degraded' : 'loaded',
          isolation: this.#opts.isolation.modeFor(u.dir),
          sandbox: sandboxOf(u.good?.host),
          loaded_at: u.good?.loadedAt.toISOString() ?? null,
          last_attempt_at: u.lastAttempt.toISOString(),
          last_error: u.error ?? health?.lastCrash ?? null,
        };
      });
  }

  /** The isolated plugins' processes: running now, restarted after a crash since start, disabled now. */
  hosts(): { running: number; restarts: number; disabled: number } {
    let running = 0;
    let disabled = 0;
    for (const u of this.#units.values()) {
      if (u.good?.host?.running) running++;
      if (u.disabled) disabled++;
    }
    return { running, restarts: this.#restarts, disabled };
  }

  /** Errors of units that are failing now, for admins. */
  errors(): Array<{ dir: string; error: string }> {
    return [...this.#units.values()].filter((u) => u.error).map((u) => ({ dir: u.dir, error: u.error! }));
  }

  #scan(): Array<{ kind: UnitKind; dir: string }> {
    const out: Array<{ kind: UnitKind; dir: string }> = [];
    const roots: Array<[UnitKind, string[]]> = [
      ['plugin', this.#opts.pluginsDirs],
      ['skills', this.#opts.skillsDirs],
    ];
    // A root inside another (plugins/@folio inside plugins) is scanned as a root, not loaded as a plugin.
    const rootSet = new Set(roots.flatMap(([, dirs]) => dirs));
    for (const [kind, dirs] of roots)
      for (const root of dirs) {
        if (!existsSync(root)) continue;
        for (const name of readdirSync(root).sort()) {
          const dir = path.join(root, name);
          if (!IGNORED.test(name) && !rootSet.has(dir) && statSync(dir).isDirectory()) out.push({ kind, dir });
        }
      }
    return out;
  }

  #unitFor(file: string): { kind: UnitKind; dir: string } | undefined {
    // The deepest root holding the file names its unit (plugins/@folio/admin, not plugins/@folio).
    const roots = [
      ...this.#opts.pluginsDirs.map((root) => ['plugin', root] as const),
      ...this.#opts.skillsDirs.map((root) => ['skills', root] as const),
    ].sort((a, b) => b[1].length - a[1].length);
    for (const [kind, root] of roots) {
      const rel = path.relative(root, file);
      if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) continue;
      const first = rel.split(path.sep)[0]!;
      return { kind, dir: path.join(root, first) };
    }
    for (const unit of this.#units.values()) if (unit.good?.files.includes(file)) return { kind: unit.kind, dir: unit.dir };
    return undefined;
  }

  #onFsEvent(file: string): void {
    const target = this.#unitFor(path.resolve(file));
    if (!target) return;
    const key = `${target.kind}:${target.dir}`;
    const known = this.#units.has(key);
    // A loose file in a plugins folder is not a plugin; a folder (or a file in one) is.
    if (!known && (!existsSync(target.dir) || !statSync(target.dir).isDirectory())) return;
    clearTimeout(this.#timers.get(key));
    this.#timers.set(
      key,
      setTimeout(() => {
        this.#timers.delete(key);
        void this.#enqueue(async () => this.#publish(await this.#reloadUnit(target.kind, target.dir)));
      }, this.#opts.debounceMs),
    );
  }

  #enqueue(job: () => Promise<void>): Promise<void> {
    const next = this.#queue.then(job).catch((err: unknown) => this.#opts.log.error({ err }, 'registry job failed'));
    this.#queue = next;
    return next;
  }

  /** Loads one unit; returns the namespaces whose content changed. Never throws. */
  async #reloadUnit(kind: UnitKind, dir: string): Promise<Set<string>> {
    const key = `${kind}:${dir}`;
    let unit = this.#units.get(key);
    const before = unit?.good?.namespace;
    if (!existsSync(dir)) {
      if (unit) {
        this.#units.delete(key);
        unit.good?.host?.retire();
        this.#opts.log.info({ dir, namespace: before }, `${kind} removed`);
      }
      const changed = new Set(before ? [before] : []);
      // A folder that lost a clash for this namespace may take it now.
      for (const loser of [...this.#units.values()].filter(
        (u) => u.kind === kind && !u.good && u.error?.startsWith(`duplicate namespace '${before}'`),
      ))
        for (const ns of await this.#reloadUnit(loser.kind, loser.dir)) changed.add(ns);
      return changed;
    }
    if (!unit) {
      unit = { key, kind, dir, order: this.#order++, good: undefined, error: undefined, lastAttempt: new Date() };
      this.#units.set(key, unit);
    }
    unit.lastAttempt = new Date();
    let good: Good | undefined;
    try {
      good = kind === 'plugin' ? await this.#loadPlugin(dir) : this.#loadSkills(dir);
      const ns = good.namespace;
      const taken = [...this.#units.values()].find((u) => u !== unit && u.kind === kind && u.good?.namespace === ns);
      if (taken) throw new Error(`duplicate namespace '${ns}': already served by ${taken.dir}`);
      // Calls in flight on the previous version finish there; its worker stops after them.
      unit.good?.host?.retire();
      unit.good = good;
      unit.error = undefined;
      unit.disabled = false;
      this.#watchHost(unit, good);
      this.#opts.log.info({ dir, namespace: good.namespace, version: good.version }, `${kind} loaded`);
      return new Set([good.namespace, ...(before && before !== good.namespace ? [before] : [])]);
    } catch (err) {
      good?.host?.close();
      unit.error = (err as Error).message;
      this.#opts.log.error(
        { dir, err: (err as Error).message, keeping: unit.good?.version ?? null },
        `${kind} failed to load; ${unit.good ? 'its last good version keeps serving' : 'not served'}`,
      );
      return new Set();
    }
  }

  /**
   * Every plugin is first evaluated in a worker, within the import deadline: a module that never
   * finishes loading stops that worker, not Folio. An isolated plugin stays in its worker; an
   * in-process one is evaluated in the trial worker, then again on Folio's thread.
   */
  async #loadPlugin(dir: string): Promise<Good> {
    const iso = this.#opts.isolation;
    const bundle = await bundlePlugin(dir);
    let host: PluginHost | undefined;
    let plugin: PluginEntry;
    if (iso.modeFor(dir) === 'process') {
      host = await PluginHost.start(bundle, iso, this.#opts.log.child({ plugin: path.basename(dir) }));
    } else await trialLoad(bundle, iso);
    try {
      plugin = host ? host.entry() : buildPlugin(evaluateBundle(bundle), bundle.version);
      const skills = readSkillDir(plugin.namespace, path.join(dir, 'skills'));
      return { namespace: plugin.namespace, plugin, skills, files: bundle.files, version: plugin.version, loadedAt: new Date(), host };
    } catch (err) {
      host?.close();
      throw err;
    }
  }

  /** An isolated plugin that keeps crashing is taken out of service, with the reason, until its files change. */
  #watchHost(unit: Unit, good: Good): void {
    const host = good.host;
    if (!host) return;
    host.listen({
      restarting: () => {
        this.#restarts++;
      },
      disabled: (reason) =>
        void this.#enqueue(() => {
          if (unit.good !== good) return Promise.resolve();
          unit.good = undefined;
          unit.error = reason;
          unit.disabled = true;
          this.#opts.log.error({ dir: unit.dir, namespace: good.namespace }, `plugin ${reason}`);
          this.#publish(new Set([good.namespace]));
          return Promise.resolve();
        }),
    });
  }

  #loadSkills(dir: string): Good {
    const namespace = path.basename(dir);
    if (!NAMESPACE_RE.test(namespace)) throw new Error(`skill folder name must be a namespace name (${NAMESPACE_RE.source})`);
    const skills = readSkillDir(namespace, dir);
    return { namespace, plugin: undefined, skills, files: [], version: String(skills.size), loadedAt: new Date(), host: undefined };
  }

  #publish(changed: Set<string>): void {
    if (changed.size === 0) return;
    const namespaces = new Map<string, NamespaceEntry>();
    const units = [...this.#units.values()].sort((a, b) => a.order - b.order);
    for (const u of units) {
      const p = u.good?.plugin;
      if (!u.good || !p) continue;
      namespaces.set(p.namespace, {
        name: p.namespace,
        description: p.description,
        catalogue: p.catalogue,
        version: p.version,
        visible: p.visible,
        functions: p.functions,
        prompts: p.prompts,
        skills: u.good.skills,
      });
    }
    for (const u of units) {
      if (u.kind !== 'skills' || !u.good) continue;
      const ns = u.good.namespace;
      const existing = namespaces.get(ns);
      if (existing) {
        // Standalone guides join the plugin's namespace; the plugin's own skill wins a name clash.
        namespaces.set(ns, { ...existing, skills: new Map([...u.good.skills, ...existing.skills]) });
      } else {
        namespaces.set(ns, {
          name: ns,
          description: `Guides for ${ns}.`,
          catalogue: 'unlisted',
          version: u.good.version,
          visible: undefined,
          functions: new Map(),
          prompts: new Map(),
          skills: u.good.skills,
        });
      }
    }
    this.#snapshot = { generation: this.#snapshot.generation + 1, namespaces };
    for (const l of this.#listeners) {
      try {
        l(this.#snapshot, changed);
      } catch (err) {
        this.#opts.log.error({ err }, 'registry listener failed');
      }
    }
  }
}
