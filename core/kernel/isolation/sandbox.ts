// How a plugin's host process is started: Folio's own Node, under bubblewrap where it works (what
// Flatpak uses: namespaces the kernel enforces), and always under Node's permission model. The
// plan says, for plugin_status and the start-up log, exactly which protections hold.
//
// Under bubblewrap the process sees: /usr (the system's libraries), Folio's node_modules and core/
// read-only (its runtime: the host's entry, the SDK), its own folder read-only, a private writable
// scratch folder, a fresh /proc of its own PID namespace and a minimal /dev. Not Folio's data
// directory or configuration, not other plugins, not /etc (no /etc/passwd), no network unless
// granted (a network namespace with nothing in it), no way to see or signal Folio's processes.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildSync } from 'esbuild';
import { PACKAGE_ROOT } from '../config.ts';
import type { Capabilities } from './capabilities.ts';

export type SandboxSetting = 'auto' | 'bubblewrap' | 'none';

export interface Protections {
  /** bubblewrap: the OS sandbox; permission-model: Node's permission model only. */
  kind: 'bubblewrap' | 'permission-model';
  holds: string[];
  /** What this platform does not give: said at start-up and in plugin_status. */
  missing: string[];
}

export interface LaunchPlan {
  command: string;
  args: string[];
  env: Record<string, string>;
  protections: Protections;
}

let entry: string | undefined;

/**
 * The host process's entry, bundled once per Folio process into one JavaScript file in a folder of
 * Folio's own: a process that loads plain JavaScript starts in a fraction of the time and memory
 * that stripping the types of a dozen TypeScript modules takes (Node loads its type stripper only
 * for .ts). Its npm packages (TypeBox) are bundled in too, since the file runs from a temporary folder.
 */
function hostEntry(): string {
  if (entry) return entry;
  const out = path.join(mkdtempSync(path.join(tmpdir(), 'folio-host-')), 'plugin-process.mjs');
  const result = buildSync({
    entryPoints: [path.join(import.meta.dirname, 'plugin-process.ts')],
    bundle: true,
    write: false,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    // Bundled whole, the packages it imports (TypeBox, which the SDK hands plugins) included: it
    // runs from a temporary folder, where no node_modules would resolve them.
    logLevel: 'silent',
    // plugin-eval.ts finds Folio's package.json from its own folder.
    define: { 'import.meta.dirname': JSON.stringify(path.join(PACKAGE_ROOT, 'core', 'kernel')) },
  });
  writeFileSync(out, result.outputFiles[0]!.text, { mode: 0o444 });
  entry = out;
  return out;
}

/** bash, to close descriptors Folio inherited before the sandbox starts (none of them is the plugin's). */
const BASH = ['/bin/bash', '/usr/bin/bash'].find(existsSync);
const CLOSE_FDS = 'for f in /proc/$$/fd/*; do n=${f##*/}; [ "$n" -gt 3 ] && eval "exec $n>&-"; done; exec "$@"';

let bwrapChecked: string | null | undefined;

/** The bubblewrap binary if it can make the namespaces Folio asks for here, else null (checked once). */
export function bubblewrap(): string | null {
  if (bwrapChecked !== undefined) return bwrapChecked;
  bwrapChecked = null;
  if (process.platform !== 'linux') return null;
  for (const bin of ['/usr/bin/bwrap', '/bin/bwrap', '/usr/local/bin/bwrap']) {
    if (!existsSync(bin)) continue;
    const r = spawnSync(bin, ['--unshare-pid', '--unshare-net', '--die-with-parent', '--ro-bind', '/', '/', 'true'], {
      stdio: 'ignore',
      timeout: 5000,
    });
    if (r.status === 0) bwrapChecked = bin;
    break;
  }
  return bwrapChecked;
}

/** Resolves the sandbox setting to what will be used, or throws when bubblewrap is required and unusable. */
export function sandboxKind(setting: SandboxSetting): 'bubblewrap' | 'permission-model' {
  if (setting === 'none') return 'permission-model';
  const bin = bubblewrap();
  if (bin) return 'bubblewrap';
  if (setting === 'bubblewrap')
    throw new Error(
      'isolation.sandbox is "bubblewrap", but bubblewrap is missing or cannot create namespaces here (install the bubblewrap package)',
    );
  return 'permission-model';
}

/** One line for the start-up log: how third-party plugins will be sandboxed here, and what does not hold. */
export function sandboxSummary(setting: SandboxSetting): { level: 'info' | 'warn'; message: string } {
  let kind: 'bubblewrap' | 'permission-model';
  try {
    kind = sandboxKind(setting);
  } catch (err) {
    return { level: 'warn', message: `plugin sandbox: ${(err as Error).message}; isolated plugins will not load` };
  }
  if (kind === 'bubblewrap')
    return {
      level: 'info',
      message: "plugin sandbox: bubblewrap (own PID and network namespaces, read-only view) and Node's permission model",
    };
  const why =
    setting === 'none'
      ? 'isolation.sandbox is "none"'
      : 'bubblewrap is missing or cannot create namespaces here (apt-get install bubblewrap)';
  return {
    level: 'warn',
    message: `plugin sandbox: Node's permission model only (${why}): isolated plugins share Folio's PID namespace and network, and raw sockets are not stopped`,
  };
}

/** Paths Folio's side of the host process reads: its entry, the SDK and the packages they import. */
function runtimePaths(): string[] {
  return ['core', 'node_modules', 'package.json']
    .map((p) => path.join(PACKAGE_ROOT, p))
    .filter(existsSync)
    .map((p) => realpathSync(p));
}

export interface PlanInput {
  dir: string;
  scratch: string;
  heapMb: number;
  granted: Capabilities;
  sandbox: 'bubblewrap' | 'permission-model';
}

/** The command that starts one plugin's host process, its environment, and what holds. */
export function launchPlan(p: PlanInput): LaunchPlan {
  const node = realpathSync(process.execPath);
  const dir = realpathSync(p.dir);
  const host = hostEntry();
  const reads = [...runtimePaths(), host, dir, p.scratch];
  const nodeArgs = [
    `--max-old-space-size=${p.heapMb}`,
    // A small young generation: a host's memory after a burst of calls stays near its idle size.
    '--max-semi-space-size=1',
    '--permission',
    ...reads.map((r) => `--allow-fs-read=${r}`),
    `--allow-fs-write=${p.scratch}`,
    ...(p.granted.processes ? ['--allow-child-process'] : []),
    ...(p.granted.workers ? ['--allow-worker'] : []),
    host,
  ];
  // Nothing of Folio's environment but what was granted by name.
  const env: Record<string, string> = { TMPDIR: p.scratch, HOME: p.scratch };
  for (const name of p.granted.env) {
    const v = process.env[name];
    if (v !== undefined) env[name] = v;
  }
  const network = p.granted.network.length > 0;
  const holds = [
    'own process: a crash, a heap overflow or a spin ends it, not Folio',
    `heap limit ${p.heapMb} MB and a resident-memory ceiling (external memory included)`,
    'an empty environment (only granted variables)',
    "file reads limited to its folder, its scratch folder and Folio's runtime (Node permission model)",
    'file writes limited to its scratch folder',
    p.granted.processes ? 'child processes: granted' : 'no child processes',
    p.granted.workers ? 'worker threads: granted' : 'no worker threads',
    'no native addons, no WASI',
    ...(BASH ? ["no descriptor of Folio's but its channel"] : []),
  ];
  const missing: string[] = [];
  if (p.sandbox === 'bubblewrap') {
    holds.push(
      'bubblewrap: its own PID namespace (it cannot see or signal Folio or other plugins)',
      'bubblewrap: its own user namespace, as nobody, with no capabilities',
      "bubblewrap: a read-only view of its folder and Folio's packages only (no data directory, no configuration, no /etc, no other plugin)",
      network
        ? `network: granted for ${p.granted.network.join(', ')}: ctx.fetch checks the hosts; the process shares the host's network, so a raw socket reaches any address, Folio's own port and link-local ones included`
        : 'no network (an empty network namespace)',
    );
    const bwrap = bubblewrap()!;
    const ro = (x: string): string[] => (existsSync(x) ? ['--ro-bind', x, x] : []);
    const args = [
      // As root, bubblewrap would leave the process every capability (a remount, open_by_handle_at):
      // a user namespace, as nobody, with none.
      '--unshare-user',
      '--uid',
      '65534',
      '--gid',
      '65534',
      '--cap-drop',
      'ALL',
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-uts',
      '--unshare-cgroup-try',
      ...(network ? [] : ['--unshare-net']),
      '--die-with-parent',
      '--new-session',
      '--ro-bind',
      '/usr',
      '/usr',
      ...['lib', 'lib64', 'bin', 'sbin'].flatMap((d) => linkOrBind(`/${d}`)),
      '--proc',
      '/proc',
      '--dev',
      '/dev',
      '--tmpfs',
      '/tmp',
      ...runtimePaths().flatMap(ro),
      ...ro(path.dirname(node)),
      ...ro(path.dirname(host)),
      '--ro-bind',
      dir,
      dir,
      '--bind',
      p.scratch,
      p.scratch,
      ...(network ? ['/etc/resolv.conf', '/etc/hosts', '/etc/nsswitch.conf', '/etc/ssl'].flatMap(ro) : []),
      '--chdir',
      dir,
      // The environment is set here, after anything between Folio and bwrap added to it (a test
      // runner's NODE_OPTIONS hooks, say).
      '--clearenv',
      ...Object.entries(env).flatMap(([k, v]) => ['--setenv', k, v]),
      '--',
      node,
      ...nodeArgs,
    ];
    return { ...closingFds(bwrap, args), env, protections: { kind: 'bubblewrap', holds, missing } };
  }
  holds.push(network ? `network: ctx.fetch reaches only ${p.granted.network.join(', ')}` : 'ctx.fetch refuses every host');
  missing.push(
    "no bubblewrap: the process shares Folio's PID namespace (it can signal processes of the same user) and network",
    'raw sockets (node:net, node:http) are not stopped: Node 24 has no --allow-net; only ctx.fetch checks hosts',
    "symbolic links are followed: a link shipped in the plugin's folder reads any file Folio's user can (Folio's configuration, /proc/<pid>/environ)",
    ...(BASH ? [] : ["descriptors Folio inherited are inherited by the plugin's process (no bash to close them)"]),
  );
  // env -i: the environment is exactly this, whatever was added to spawn's on the way (a test
  // runner's NODE_OPTIONS hooks, which the permission model would refuse).
  const envArgs = ['-i', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), node, ...nodeArgs];
  return { ...closingFds('/usr/bin/env', envArgs), env, protections: { kind: 'permission-model', holds, missing } };
}

/** The command run through bash, which closes every descriptor above the channel (fd 3) first. */
function closingFds(command: string, args: string[]): { command: string; args: string[] } {
  return BASH ? { command: BASH, args: ['-c', CLOSE_FDS, 'folio-plugin', command, ...args] } : { command, args };
}

/** /lib and friends: a symlink into /usr on merged-/usr systems, else a read-only bind. */
function linkOrBind(p: string): string[] {
  if (!existsSync(p)) return [];
  try {
    const real = realpathSync(p);
    if (real !== p && real.startsWith('/usr/')) return ['--symlink', path.relative('/', real), p];
  } catch {
    return [];
  }
  return ['--ro-bind', p, p];
}
