// Configuration: config/default.json, then config/local.json, then environment variables.
// Validated with TypeBox at start; a bad value stops the start with a message naming it.
import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';

const Int = (min: number, max = Number.MAX_SAFE_INTEGER) => Type.Integer({ minimum: min, maximum: max });
const DirList = Type.Array(Type.String({ minLength: 1 }), { minItems: 1 });

export const ConfigSchema = Type.Object(
  {
    port: Int(0, 65535),
    host: Type.String({ minLength: 1 }),
    publicUrl: Type.Union([Type.String({ pattern: '^https?://' }), Type.Null()]),
    databaseUrl: Type.Union([Type.String({ pattern: '^postgres(ql)?://' }), Type.Null()]),
    dataDir: Type.String({ minLength: 1 }),
    pluginsDir: DirList,
    skillsDir: DirList,
    bootstrapAdminToken: Type.Union([Type.String({ minLength: 32 }), Type.Null()]),
    logLevel: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l))),
    limits: Type.Object(
      {
        responseBytes: Int(64),
        responseHardCapBytes: Int(64),
        requestBytes: Int(64),
        jsonDepth: Int(1, 1000),
        handlerTimeoutMs: Int(1),
        visibleTimeoutMs: Int(1),
      },
      { additionalProperties: false },
    ),
    isolation: Type.Object(
      {
        /** Where plugins run: third-party (a worker each, except Folio's own plugins), worker (all), in-process (none). */
        mode: Type.Union([Type.Literal('third-party'), Type.Literal('worker'), Type.Literal('in-process')]),
        /** Per plugin folder name: 'worker' or 'in-process', over `mode`. */
        plugins: Type.Record(Type.String({ minLength: 1 }), Type.Union([Type.Literal('worker'), Type.Literal('in-process')])),
        /** An isolated plugin's heap limit in MB: past it its worker dies, not Folio. */
        heapMb: Int(16, 65_536),
        /** How long an isolated plugin may compute without a pause before its worker is stopped. */
        cpuTimeoutMs: Int(10),
        /** How long loading a plugin's module may take (every plugin, isolated or not). */
        importTimeoutMs: Int(10),
        /** Crashes of an isolated plugin within a minute after which it is disabled until its files change. */
        maxCrashes: Int(1, 1000),
      },
      { additionalProperties: false },
    ),
    reload: Type.Object({ watch: Type.Boolean(), debounceMs: Int(0, 10_000) }, { additionalProperties: false }),
    tokens: Type.Object({ mintDefaultTtlSeconds: Int(1), mintMaxTtlSeconds: Int(1) }, { additionalProperties: false }),
    notes: Type.Object(
      {
        /** Notes in the trash longer than this are purged for good. */
        trashRetentionDays: Int(1, 3650),
        /** How often the purge of expired trash runs. */
        trashSweepMinutes: Int(1, 10_080),
      },
      { additionalProperties: false },
    ),
    storage: Type.Object(
      {
        /** Bytes one user may store in all (note revisions, files); null: no limit. */
        quotaBytesPerUser: Type.Union([Int(0), Type.Null()]),
      },
      { additionalProperties: false },
    ),
    mcp: Type.Object(
      {
        /** stateful: sessions with live list_changed; stateless: any node answers any request. */
        mode: Type.Union([Type.Literal('stateful'), Type.Literal('stateless')]),
        /** Origins (scheme://host[:port]) browsers may call /mcp from, besides Folio's own. */
        allowedOrigins: Type.Array(Type.String({ pattern: '^https?://[^/]+$' })),
        /** Host header values (host or host:port) accepted besides localhost, 127.0.0.1 and [::1]. */
        allowedHosts: Type.Array(Type.String({ minLength: 1 })),
        /** How long a POST's requests may go unanswered before they are abandoned; null: the handler timeout + 5 s. */
        streamDeadlineMs: Type.Union([Int(1), Type.Null()]),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export type Config = Static<typeof ConfigSchema>;

/** Environment variable -> config path, and how to read its text. */
const ENV: Record<string, { at: string[]; parse: (v: string) => unknown }> = {
  PORT: { at: ['port'], parse: num },
  HOST: { at: ['host'], parse: str },
  PUBLIC_URL: { at: ['publicUrl'], parse: str },
  DATABASE_URL: { at: ['databaseUrl'], parse: str },
  DATA_DIR: { at: ['dataDir'], parse: str },
  PLUGINS_DIR: { at: ['pluginsDir'], parse: list },
  SKILLS_DIR: { at: ['skillsDir'], parse: list },
  BOOTSTRAP_ADMIN_TOKEN: { at: ['bootstrapAdminToken'], parse: str },
  LOG_LEVEL: { at: ['logLevel'], parse: str },
  RESPONSE_MAX_BYTES: { at: ['limits', 'responseBytes'], parse: num },
  RESPONSE_HARD_CAP_BYTES: { at: ['limits', 'responseHardCapBytes'], parse: num },
  REQUEST_MAX_BYTES: { at: ['limits', 'requestBytes'], parse: num },
  HANDLER_TIMEOUT_MS: { at: ['limits', 'handlerTimeoutMs'], parse: num },
  VISIBLE_TIMEOUT_MS: { at: ['limits', 'visibleTimeoutMs'], parse: num },
  PLUGIN_ISOLATION: { at: ['isolation', 'mode'], parse: str },
  PLUGIN_HEAP_MB: { at: ['isolation', 'heapMb'], parse: num },
  PLUGIN_CPU_TIMEOUT_MS: { at: ['isolation', 'cpuTimeoutMs'], parse: num },
  PLUGIN_IMPORT_TIMEOUT_MS: { at: ['isolation', 'importTimeoutMs'], parse: num },
  RELOAD_WATCH: { at: ['reload', 'watch'], parse: bool },
  RELOAD_DEBOUNCE_MS: { at: ['reload', 'debounceMs'], parse: num },
  MCP_MODE: { at: ['mcp', 'mode'], parse: str },
  STORAGE_QUOTA_BYTES: { at: ['storage', 'quotaBytesPerUser'], parse: (v) => (v === '' ? null : num(v)) },
  NOTES_TRASH_RETENTION_DAYS: { at: ['notes', 'trashRetentionDays'], parse: num },
};

function str(v: string): unknown {
  return v === '' ? null : v;
}
function num(v: string): unknown {
  return /^-?\d+$/.test(v.trim()) ? Number(v) : v; // leave bad text for the validator to name
}
function list(v: string): unknown {
  return v.split(':').filter((p) => p !== '');
}
function bool(v: string): unknown {
  return v === 'true' || v === '1' ? true : v === 'false' || v === '0' ? false : v;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export const PACKAGE_ROOT = path.resolve(import.meta.dirname, '../..');
export const PACKAGE = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
};

function readJson(file: string): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new ConfigError(`config: cannot read ${file}: ${(err as Error).message}`);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isObject(b) && isObject(v) ? merge(b, v) : v;
  }
  return out;
}

function setAt(obj: Record<string, unknown>, at: string[], value: unknown): void {
  let cur = obj;
  for (const key of at.slice(0, -1)) {
    if (!isObject(cur[key])) cur[key] = {};
    cur = cur[key] as Record<string, unknown>;
  }
  cur[at[at.length - 1]!] = value;
}

/**
 * Loads and validates the configuration. `overrides` (deep-merged last) is for tests and
 * embedding; `env` defaults to process.env. Relative directories resolve against the working
 * directory, as a user typing `DATA_DIR=./x npm start` expects.
 */
export function loadConfig(opts: { env?: NodeJS.ProcessEnv; overrides?: Record<string, unknown>; configDir?: string } = {}): Config {
  const env = opts.env ?? process.env;
  const dir = opts.configDir ?? path.join(PACKAGE_ROOT, 'config');
  let raw = readJson(path.join(dir, 'default.json'));
  const local = path.join(dir, 'local.json');
  if (existsSync(local)) raw = merge(raw, readJson(local));
  const envNames: Record<string, string> = {};
  for (const [name, { at, parse }] of Object.entries(ENV)) {
    const v = env[name];
    if (v === undefined) continue;
    setAt(raw, at, parse(v));
    envNames[at.join('.')] = name;
  }
  if (opts.overrides) raw = merge(raw, opts.overrides);

  const errors = [...Value.Errors(ConfigSchema, raw)];
  if (errors.length > 0) {
    const lines = errors.slice(0, 10).map((e) => {
      const key = e.instancePath.replace(/^\//, '').replaceAll('/', '.') || '(root)';
      const source = envNames[key] ? ` (from ${envNames[key]})` : '';
      const extra = e.keyword === 'additionalProperties' ? ` ${JSON.stringify(e.params)}` : '';
      return `  ${key}${source}: ${e.message}${extra}; got ${JSON.stringify(valueAt(raw, key))}`;
    });
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const cfg = raw as Config;
  if (cfg.limits.responseBytes > cfg.limits.responseHardCapBytes) {
    throw new ConfigError('invalid configuration:\n  limits.responseBytes: must not exceed limits.responseHardCapBytes');
  }
  if (cfg.tokens.mintDefaultTtlSeconds > cfg.tokens.mintMaxTtlSeconds) {
    throw new ConfigError('invalid configuration:\n  tokens.mintDefaultTtlSeconds: must not exceed tokens.mintMaxTtlSeconds');
  }
  return {
    ...cfg,
    dataDir: path.resolve(cfg.dataDir),
    pluginsDir: cfg.pluginsDir.map((d) => path.resolve(d)),
    skillsDir: cfg.skillsDir.map((d) => path.resolve(d)),
  };
}

function valueAt(obj: unknown, key: string): unknown {
  if (key === '(root)') return undefined;
  let cur = obj;
  for (const k of key.split('.')) cur = isObject(cur) ? cur[k] : undefined;
  return cur;
}
