// Where the CLI keeps what `folio auth login` was given: the servers (profiles) in
// $XDG_CONFIG_HOME/folio/config.json, and each profile's token in the credential store
// (lib/credentials.ts). FOLIO_URL and FOLIO_TOKEN override both, for scripts and CI.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { CliError, EXIT } from './errors.ts';

export const DEFAULT_URL = 'http://127.0.0.1:3000';

export interface Profile {
  url: string;
}

export interface ConfigFile {
  /** The profile used when neither --profile nor FOLIO_PROFILE names one. */
  current?: string;
  profiles: Record<string, Profile>;
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env['XDG_CONFIG_HOME'] || path.join(homedir(), '.config');
  return path.join(base, 'folio');
}

/** Writes a file only its owner can read, atomically (a crash leaves the old one whole). */
export function writePrivate(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  renameSync(tmp, file);
}

export function readJsonFile<T>(file: string, empty: T): T {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return empty;
    throw err;
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new CliError(`${file} is not valid JSON; fix or delete it`, EXIT.failed);
  }
}

export function configFile(): string {
  return path.join(configDir(), 'config.json');
}

export function loadConfig(): ConfigFile {
  const c = readJsonFile<ConfigFile>(configFile(), { profiles: {} });
  c.profiles ??= {};
  return c;
}

export function saveConfig(c: ConfigFile): void {
  writePrivate(configFile(), JSON.stringify(c, null, 2) + '\n');
}

/** A server URL as the CLI stores it: scheme and host, no trailing slash, no /api/v1. */
export function normalizeUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`);
  } catch {
    throw new CliError(`${raw} is not a URL (expected e.g. ${DEFAULT_URL})`, EXIT.usage);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new CliError(`${raw}: only http and https URLs`, EXIT.usage);
  return `${u.origin}${u.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '')}`;
}
