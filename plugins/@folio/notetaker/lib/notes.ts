// How notes are shown after a write, and how a lost race is answered: the service's Conflict,
// retold for an agent with the current version and the head of the current text.
import { charLength, Conflict, type Context, type Note } from 'folio/sdk';
import { clip } from './text.ts';

export interface NoteMeta {
  id: string;
  version: number;
  title: string;
  tags: string[];
  source: string;
  updated_at: string;
  deleted_at: string | null;
  body_chars: number;
}

export function meta(n: Note): NoteMeta {
  return {
    id: n.id,
    version: n.version,
    title: n.title,
    tags: n.tags,
    source: n.source,
    updated_at: n.updated_at,
    deleted_at: n.deleted_at,
    body_chars: charLength(n.body),
  };
}

const HEAD_CHARS = 600;

function isNote(v: unknown): v is Note {
  const n = v as Partial<Note> | null;
  return typeof n === 'object' && n !== null && typeof n.version === 'number' && typeof n.body === 'string' && typeof n.id === 'string';
}

/** The current state a 409 carries: enough to decide what to do, never the whole note. */
export function currentState(n: Note): Record<string, unknown> {
  return {
    id: n.id,
    version: n.version,
    title: n.title,
    tags: n.tags,
    updated_at: n.updated_at,
    deleted_at: n.deleted_at,
    body_chars: charLength(n.body),
    body_head: clip(n.body, HEAD_CHARS),
  };
}

/** `ref`: ctx.ref, so the advice names functions as the caller calls them. */
export function staleConflict(n: Note, expected: number | undefined, retry: string, ref: Context['ref']): Conflict {
  const was = expected === undefined ? '' : `, not version ${expected}`;
  return new Conflict(
    `note ${n.id} is now at version ${n.version}${was}: it changed after you read it, and nothing was written. ` +
      `Read it again (${ref('notetaker.get')}), redo your change on the current text, then ${retry} with expected_version ${n.version}. ` +
      `To add text without a version, use ${ref('notetaker.append')}.`,
    currentState(n),
  );
}

/**
 * Runs a write. A Conflict from the service comes back compact (the current version and the head
 * of the current text, never the whole note); a stale expected_version also says what to do next.
 */
export async function versioned<T>(
  ctx: Context,
  id: string,
  expected: number | undefined,
  retry: string,
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (!(err instanceof Conflict)) throw err;
    let current: Note | undefined = isNote(err.current) ? err.current : undefined;
    if (!current) {
      try {
        current = await ctx.services.notes.get(id);
      } catch {
        throw err;
      }
    }
    if (expected !== undefined && current.version !== expected) throw staleConflict(current, expected, retry, ctx.ref);
    // Not about the version (e.g. the note is in the trash): the service's words, the compact state.
    throw new Conflict(err.message, currentState(current));
  }
}
