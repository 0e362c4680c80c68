// The plugin test harness, `folio/sdk/testing`: loads one plugin folder the way the server does
// (the same registry, bundler and sandboxed host) over Folio's real services and an embedded
// database of its own, and calls its functions, prompts and visibility rule as a given user on a
// given surface, through the same dispatcher the curl and MCP surfaces use. No HTTP server.
import { mkdtemp, mkdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { startCore, type FolioCore } from './app.ts';
import { loadConfig } from './kernel/config.ts';
import { Dispatcher } from './kernel/dispatch.ts';
import { servicesFor } from './kernel/services.ts';
import { callRef, type Surface } from './kernel/describe.ts';
import { FIRST_PARTY } from './kernel/isolation/host.ts';
import type { Principal } from './domain/identity/types.ts';
import type { PluginStatus } from './sdk/index.ts';

export interface TestFolioOptions {
  /** Load Folio's own plugins too (admin, notetaker, ...). Default false: only yours. */
  firstParty?: boolean;
  /**
   * A PostgreSQL database to use instead of an embedded one, as is: its data stays after close()
   * (users are found again by email), so point it at a database kept for tests only.
   */
  databaseUrl?: string;
  /** Configuration as in config/default.json (e.g. `{ isolation: { plugins: { ... } } }`). */
  config?: Record<string, unknown>;
  /** Log level of Folio's own log (default `silent`; `info` shows plugin loads, `error` its errors). */
  logLevel?: string;
}

export interface AsUser {
  /** Who to act as: a user made on first use of this email. Default `tester@example.com`. */
  email?: string;
  roles?: string[];
  /** The token's scopes. Default: every scope Folio knows (a full API token). */
  scopes?: string[];
  /** How `ctx.ref` names functions in answers: 'curl' (default) or 'mcp'. */
  surface?: Surface;
}

/** An answer that is not JSON or text: what `bytes(...)` returned, as the server would send it. */
export interface BytesAnswer {
  contentType: string;
  filename: string | undefined;
  data: Buffer;
}

export interface TestCaller {
  readonly user: { id: string; email: string; roles: string[] };
  /** Calls `namespace.fn` (or `fn` of the plugin under test); throws the server's typed error (NotFound, BadArguments, ...). */
  call<T = unknown>(fn: string, args?: Record<string, unknown>): Promise<T>;
  /** Renders a prompt's user message, as MCP prompts/get does. */
  prompt(name: string, args?: Record<string, string>): Promise<string>;
  /** Is the namespace shown to this caller (the plugin's `visible` rule and the operator's switches)? */
  visible(namespace?: string): Promise<boolean>;
}

export interface TestFolio {
  /** The plugin's namespace, once loaded. */
  readonly namespace: string;
  /** The loaded plugin's status, as `admin.plugin_status` reports it. */
  status(): PluginStatus;
  as(user?: AsUser): Promise<TestCaller>;
  close(): Promise<void>;
}

export class PluginLoadFailed extends Error {}

/**
 * Loads the plugin in `dir` (default: the current folder) into a Folio of its own. Fails with
 * PluginLoadFailed and the loader's reason (the one plugin_status gives) when it does not load.
 */
export async function startTestFolio(dir: string = process.cwd(), opts: TestFolioOptions = {}): Promise<TestFolio> {
  const pluginDir = path.resolve(dir);
  const scratch = await mkdtemp(path.join(tmpdir(), 'folio-plugin-test-'));
  const plugins = path.join(scratch, 'plugins');
  await mkdir(plugins);
  await mkdir(path.join(scratch, 'skills'));
  // The registry loads each folder of a plugins folder: this one holds only the plugin under test.
  const linked = path.join(plugins, path.basename(pluginDir));
  await symlink(pluginDir, linked, 'dir');
  const config = loadConfig({
    env: {},
    overrides: {
      dataDir: path.join(scratch, 'data'),
      databaseUrl: opts.databaseUrl ?? null,
      pluginsDir: [...(opts.firstParty ? [FIRST_PARTY] : []), plugins],
      skillsDir: [path.join(scratch, 'skills')],
      logLevel: opts.logLevel ?? 'silent',
      reload: { watch: false, debounceMs: 50 },
      isolation: { importTimeoutMs: 30_000 },
      ...opts.config,
    },
  });
  const log = pino({ level: config.logLevel });
  let core: FolioCore | undefined;
  const close = async () => {
    if (core) {
      await core.registry.close();
      await core.jobs.stop();
      await core.feed.close();
      await core.db.close();
      core = undefined;
    }
    await rm(scratch, { recursive: true, force: true });
  };
  try {
    core = await startCore(config, log, () => 'http://folio.test');
  } catch (err) {
    await close();
    throw err;
  }
  const { registry, policy, identity, scopes } = core;
  const status = () => registry.status().find((s) => s.dir === linked)!;
  const loaded = status();
  if (!loaded || !loaded.namespace || loaded.state !== 'loaded') {
    await close();
    throw new PluginLoadFailed(`${pluginDir} did not load: ${loaded?.last_error ?? 'no plugin found'}`);
  }
  const namespace = loaded.namespace;
  const theCore = core;
  const dispatcher = new Dispatcher({
    policy,
    limits: config.limits,
    services: (principal, l) =>
      servicesFor(
        { identity, domains: theCore.domains, registry, policy, jobs: theCore.jobs, admin: theCore.admin, tokens: config.tokens },
        principal,
        l,
      ),
  });
  const users = new Map<string, { id: string; email: string; name: string | null; roles: string[] }>();

  return {
    namespace,
    status,
    close,
    async as(who = {}) {
      const email = who.email ?? 'tester@example.com';
      const roles = who.roles ?? [];
      let user = users.get(email);
      if (!user) {
        // Found again in a database kept between runs (databaseUrl), else made.
        const made = (await identity.findUserByEmail(email)) ?? (await identity.createUser({ email, roles }));
        user = { id: made.id, email: made.email, name: made.name ?? null, roles };
        users.set(email, user);
      }
      const principal: Principal = {
        user: { ...user, roles },
        scopes: who.scopes ?? scopes.list().map((s) => s.scope),
        tokenKind: 'api',
        tokenId: `test-${user.id}`,
        tokenExpiresAt: null,
      };
      const surface = who.surface ?? 'curl';
      const qualified = (name: string): [string, string] => {
        const dot = name.indexOf('.');
        return dot < 0 ? [namespace, name] : [name.slice(0, dot), name.slice(dot + 1)];
      };
      return {
        user: { id: user.id, email: user.email, roles },
        async call<T>(fn: string, args: Record<string, unknown> = {}) {
          const [ns, name] = qualified(fn);
          const { encoded } = await dispatcher.call({
            principal,
            namespace: ns,
            fn: name,
            body: args,
            signal: new AbortController().signal,
            log,
            surface,
          });
          if (encoded.kind === 'bytes')
            return { contentType: encoded.contentType, filename: encoded.filename, data: encoded.body } satisfies BytesAnswer as T;
          return encoded.value as T;
        },
        async prompt(name: string, args: Record<string, string> = {}) {
          const [ns, pname] = qualified(name);
          const viewer = await dispatcher.viewer(principal, log);
          const prompt = (await dispatcher.namespace(viewer, ns)).prompts.get(pname);
          if (!prompt) throw new Error(`no prompt ${ns}.${pname}`);
          const missing = prompt.arguments.filter((a) => a.required && !(a.name in args)).map((a) => a.name);
          if (missing.length) throw new Error(`prompt ${ns}.${pname} needs ${missing.join(', ')}`);
          const ctx = { caller: viewer.caller, ref: (f: string, a?: Record<string, unknown>) => callRef(surface, f, a) };
          const text = await policy.run(`prompt ${ns}.${pname}`, new AbortController().signal, log, () => prompt.render({ ...args }, ctx));
          if (typeof text !== 'string') throw new Error(`prompt ${ns}.${pname} rendered ${typeof text}, not a string`);
          return text;
        },
        async visible(ns = namespace) {
          const viewer = await dispatcher.viewer(principal, log);
          return (await dispatcher.namespaces(viewer)).some((n) => n.name === ns);
        },
      };
    },
  };
}
