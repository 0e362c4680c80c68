// Factories for notes tests: users as principals, notes with sensible defaults, a service on a
// fresh database (PGlite, or the server in DATABASE_URL).
import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import { IdentityService } from '../../core/domain/identity/service.ts';
import type { Principal } from '../../core/domain/identity/types.ts';
import { NotesServiceImpl, type NotesServiceOptions } from '../../core/domain/notes/service.ts';
import type { CreateNote } from '../../core/domain/notes/types.ts';
import { openTestDatabase, type TestDatabase } from './db.ts';

export interface NotesFixture {
  db: TestDatabase;
  notes: NotesServiceImpl;
  identity: IdentityService;
  /** A new user, as the principal of one of its API tokens. */
  newPrincipal(name?: string): Promise<Principal>;
}

export async function openNotesFixture(t: Test, opts: NotesServiceOptions = {}): Promise<NotesFixture> {
  const db = await openTestDatabase();
  t.teardown(() => db.cleanup());
  const identity = new IdentityService(db);
  const notes = new NotesServiceImpl(db, opts);
  return { db, notes, identity, newPrincipal: (name) => newPrincipal(identity, name) };
}

export async function newPrincipal(identity: IdentityService, name = 'user'): Promise<Principal> {
  const user = await identity.createUser({ email: `${name}-${randomUUID().slice(0, 8)}@example.com`, name });
  return {
    user: { id: user.id, email: user.email, name: user.name ?? null, roles: user.roles },
    scopes: ['*'],
    tokenKind: 'api',
    tokenId: randomUUID(),
    tokenExpiresAt: null,
  };
}

let seq = 0;
/** A note to create; every field can be overridden. */
export function buildNote(overrides: Partial<CreateNote> = {}): CreateNote {
  seq++;
  return { title: `Note ${seq}`, body: `Body of note ${seq}.\n`, tags: [], source: 'manual', ...overrides };
}

/** Reads a whole async byte stream into one Buffer. */
export async function readAll(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const c of stream) parts.push(c);
  return Buffer.concat(parts);
}
