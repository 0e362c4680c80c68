// What plugins get as ctx.services.notes: the notes service acting as the caller, with the scope
// each operation needs. Adding a method to NotesService without listing it here is a type error.
import type { DomainCaller } from '../../contract/domain.ts';
import type { NotesService } from './types.ts';

const NOTES_SCOPES: Record<keyof NotesService, 'notes:read' | 'notes:write'> = {
  list: 'notes:read',
  get: 'notes:read',
  revisions: 'notes:read',
  revision: 'notes:read',
  diff: 'notes:read',
  tags: 'notes:read',
  search: 'notes:read',
  summary: 'notes:read',
  storageUse: 'notes:read',
  report: 'notes:read', // and notes:write when it saves the report as a note
  create: 'notes:write',
  update: 'notes:write',
  append: 'notes:write',
  prepend: 'notes:write',
  replaceSection: 'notes:write',
  trash: 'notes:write',
  untrash: 'notes:write',
  purge: 'notes:write',
  restoreRevision: 'notes:write',
};

/**
 * The notes service bound to one caller for plugins (ctx.services.notes, typed NotesApi in the
 * SDK), each method asking the policy for its scope first.
 */
export function bindNotes(notes: NotesService, caller: DomainCaller): Record<string, (...args: unknown[]) => unknown> {
  const { principal } = caller;
  const bound: Record<string, (...args: unknown[]) => unknown> = {};
  for (const [name, scope] of Object.entries(NOTES_SCOPES) as Array<[keyof NotesService, string]>) {
    bound[name] = async (...args: unknown[]) => {
      const saves = name === 'report' && (args[0] as { save_as_note?: boolean } | undefined)?.save_as_note === true;
      caller.entitle(saves ? [scope, 'notes:write'] : [scope], `notes.${name}`);
      if (name === 'summary') return notes.summary(principal.user.id);
      return (notes[name] as (...a: unknown[]) => unknown).call(notes, principal, ...args);
    };
  }
  return bound;
}
