// The OS keyring as a credential store: the Secret Service on Linux (GNOME Keyring, KWallet), the
// macOS Keychain, the Windows Credential Manager, through @napi-rs/keyring (an N-API binding with
// prebuilt binaries: nothing to compile). One entry per profile, service "folio", holding what the
// credentials file would (an API token, or a browser sign-in's tokens as JSON).
//
// Servers and CI machines usually have no keyring running: the store is used only when a write and
// a delete of a probe entry both work, else the private file is (lib/credentials.ts).
import { createRequire } from 'node:module';
import type { CredentialStore, Stored } from './credentials.ts';

const SERVICE = 'folio';

interface EntryLike {
  getPassword(): string | null | undefined;
  setPassword(secret: string): void;
  deletePassword(): boolean;
}
type EntryClass = new (service: string, account: string) => EntryLike;

/** The binding, or undefined when it cannot load on this platform. */
function binding(): EntryClass | undefined {
  try {
    return (createRequire(import.meta.url)('@napi-rs/keyring') as { Entry: EntryClass }).Entry;
  } catch {
    return undefined;
  }
}

/** A store over the OS keyring, or undefined with the reason when there is none that works. */
export function keyringStore(): { store: CredentialStore } | { store: undefined; reason: string } {
  const Entry = binding();
  if (!Entry) return { store: undefined, reason: 'no keyring binding for this platform' };
  try {
    const probe = new Entry(SERVICE, '.probe');
    probe.setPassword('probe');
    probe.deletePassword();
  } catch (err) {
    return { store: undefined, reason: `the keyring is not available (${(err as Error).message})` };
  }
  const entry = (profile: string) => new Entry(SERVICE, profile);
  const record = (profile: string): Stored | undefined => {
    const v = entry(profile).getPassword();
    if (!v) return undefined;
    try {
      return JSON.parse(v) as Stored;
    } catch {
      return undefined;
    }
  };
  return {
    store: {
      describe: () => 'the OS keyring',
      record,
      get(profile) {
        const v = record(profile);
        return typeof v === 'string' ? v : v?.access_token;
      },
      set: (profile, token) => entry(profile).setPassword(JSON.stringify(token)),
      delete(profile) {
        try {
          return entry(profile).deletePassword();
        } catch {
          return false;
        }
      },
    },
  };
}
