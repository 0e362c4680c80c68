// What a plugin asks for (package.json "folio": { "capabilities": ... }) and what the operator
// grants it (isolation.grants.<folder name>). A plugin runs with the intersection: asking is not
// having, and a grant for what was not asked is not given either (the plugin's author did not
// plan for it). Anchors: Directus sandboxed extensions' requestedScopes, Deno's permissions.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Grant } from '../config.ts';
import { LoadError } from '../plugin-eval.ts';

/** The capabilities a plugin can ask for; each is denied unless asked and granted. */
export interface Capabilities {
  /** Hosts ctx.fetch may reach ('*' for any). Empty: no network. */
  network: string[];
  /** Names of Folio's environment variables the plugin's process gets. */
  env: string[];
  processes: boolean;
  workers: boolean;
}

export interface CapabilityReport {
  requested: Capabilities;
  granted: Capabilities;
  /** Asked for and not granted: what the plugin will find missing. */
  missing: Capabilities;
}

export const NONE: Capabilities = Object.freeze({ network: [], env: [], processes: false, workers: false });

const HOST_RE = /^(\*\.)?[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$|^\*$/i;
const ENV_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

function hosts(v: unknown, where: string): string[] {
  if (v === undefined || v === false) return [];
  if (v === true) return ['*'];
  if (!Array.isArray(v) || !v.every((h) => typeof h === 'string' && HOST_RE.test(h)))
    throw new LoadError(`${where}.network must be true, false or a list of host names without ports (api.example.com, *.example.com)`);
  return [...new Set(v.map((h: string) => h.toLowerCase()))];
}

/** What the plugin in `dir` asks for; a malformed declaration fails the load, saying where. */
export function requestedCapabilities(dir: string): Capabilities {
  const file = path.join(dir, 'package.json');
  if (!existsSync(file)) return NONE;
  let pkg: unknown;
  try {
    pkg = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new LoadError(`package.json: ${(err as Error).message}`);
  }
  const folio = (pkg as { folio?: unknown } | null)?.folio;
  const caps = typeof folio === 'object' && folio !== null ? (folio as { capabilities?: unknown }).capabilities : undefined;
  if (caps === undefined) return NONE;
  const where = 'package.json folio.capabilities';
  if (typeof caps !== 'object' || caps === null || Array.isArray(caps)) throw new LoadError(`${where} must be an object`);
  const c = caps as Record<string, unknown>;
  const unknown = Object.keys(c).filter((k) => !['network', 'env', 'processes', 'workers'].includes(k));
  if (unknown.length) throw new LoadError(`${where}: unknown capability ${unknown.join(', ')} (network, env, processes, workers)`);
  if (c.env !== undefined && (!Array.isArray(c.env) || !c.env.every((e) => typeof e === 'string' && ENV_RE.test(e))))
    throw new LoadError(`${where}.env must be a list of environment variable names`);
  for (const k of ['processes', 'workers'] as const)
    if (c[k] !== undefined && typeof c[k] !== 'boolean') throw new LoadError(`${where}.${k} must be true or false`);
  return {
    network: hosts(c.network, where),
    env: [...new Set((c.env as string[] | undefined) ?? [])],
    processes: c.processes === true,
    workers: c.workers === true,
  };
}

/** A host name matches a pattern: the same name, `*.d` for d and any name under it, or `*`. */
export function hostAllowed(allowed: readonly string[], hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  return allowed.some((p) => p === '*' || p === h || (p.startsWith('*.') && (h === p.slice(2) || h.endsWith(p.slice(1)))));
}

/** What both a request and a grant cover: each pattern of one kept where the other covers it. */
function commonHosts(requested: readonly string[], granted: readonly string[]): string[] {
  const covers = (list: readonly string[], p: string): boolean =>
    list.includes('*') || (p.startsWith('*.') ? list.includes(p) : hostAllowed(list, p));
  const out = new Set<string>();
  for (const r of requested) if (covers(granted, r)) out.add(r);
  for (const g of granted) if (g !== '*' && covers(requested, g)) out.add(g);
  return [...out];
}

/** The intersection of what was asked and what the operator granted, and what is missing. */
export function grantCapabilities(requested: Capabilities, grant: Grant | undefined): CapabilityReport {
  const grantHosts = grant?.network === true ? ['*'] : !grant?.network ? [] : grant.network.map((h) => h.toLowerCase());
  const network = commonHosts(requested.network, grantHosts);
  const env = requested.env.filter((e) => grant?.env?.includes(e));
  const granted: Capabilities = {
    network,
    env,
    processes: requested.processes && grant?.processes === true,
    workers: requested.workers && grant?.workers === true,
  };
  return {
    requested,
    granted,
    missing: {
      network: requested.network.filter((h) => !network.includes(h) && !(h.startsWith('*') && network.length > 0)),
      env: requested.env.filter((e) => !env.includes(e)),
      processes: requested.processes && !granted.processes,
      workers: requested.workers && !granted.workers,
    },
  };
}
