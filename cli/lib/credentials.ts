// Where tokens live: the OS keyring where one works (lib/keyring.ts), else a file only its owner
// can read, $XDG_CONFIG_HOME/folio/credentials.json (mode 0600, in a 0700 folder), one token per
// profile. The tokens never go into config.json, so
// that file can be shown or shared without leaking one.
import { chmodSync, statSync } from 'node:fs';
import path from 'node:path';
import { configDir, readJsonFile, writePrivate } from './config.ts';
import { CliError, EXIT } from './errors.ts';
import { keyringStore } from './keyring.ts';
import type { OAuthCredential } from './oauth.ts';

/** What a profile holds: an API token, or what a browser sign-in gave (lib/oauth.ts). */
export type Stored = string | OAuthCredential;

export interface CredentialStore {
  /** Where the tokens are, for `auth status`. */
  describe(): string;
  /** The bearer token to send. */
  get(profile: string): string | undefined;
  /** All that is stored for the profile. */
  record(profile: string): Stored | undefined;
  set(profile: string, token: Stored): void;
  delete(profile: string): boolean;
}

export function fileStore(file = path.join(configDir(), 'credentials.json')): CredentialStore {
  const read = () => {
    // A file someone else can read is tightened, not trusted as it is.
    try {
      if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
    } catch {
      /* absent: nothing stored yet */
    }
    return readJsonFile<Record<string, Stored>>(file, {});
  };
  const record = (profile: string): Stored | undefined => (Object.hasOwn(read(), profile) ? read()[profile] : undefined);
  return {
    describe: () => file,
    get(profile) {
      const v = record(profile);
      return typeof v === 'string' ? v : v?.access_token;
    },
    record,
    set(profile, token) {
      const all = read();
      all[profile] = token;
      writePrivate(file, JSON.stringify(all, null, 2) + '\n');
    },
    delete(profile) {
      const all = read();
      if (!(profile in all)) return false;
      delete all[profile];
      writePrivate(file, JSON.stringify(all, null, 2) + '\n');
      return true;
    },
  };
}

/**
 * The OS keyring where one works, with the file as the fallback (also for reading what an earlier
 * login stored there: a profile moves to the keyring at its next login). FOLIO_CREDENTIAL_STORE=file
 * or =keyring chooses; `keyring` with none working is an error rather than a silent file.
 */
export function defaultStore(choose = process.env['FOLIO_CREDENTIAL_STORE']): CredentialStore {
  const file = fileStore();
  if (choose === 'file') return file;
  const found = keyringStore();
  if (!found.store) {
    if (choose === 'keyring') throw new CliError(`FOLIO_CREDENTIAL_STORE=keyring, but ${found.reason}`, EXIT.usage);
    return { ...file, describe: () => `${file.describe()} (${found.reason})` };
  }
  const keyring = found.store;
  return {
    describe: () => keyring.describe(),
    record: (profile) => keyring.record(profile) ?? file.record(profile),
    get: (profile) => keyring.get(profile) ?? file.get(profile),
    set(profile, token) {
      keyring.set(profile, token);
      file.delete(profile);
    },
    delete(profile) {
      const a = keyring.delete(profile);
      const b = file.delete(profile);
      return a || b;
    },
  };
}
