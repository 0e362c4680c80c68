// Argument schemas shared by the files functions.
import { Type } from 'typebox';

export const READ = { scopes: ['files:read'] };
export const WRITE = { scopes: ['files:write'] };

export const FileId = Type.String({ format: 'uuid', description: 'The file id (from files.list or files.write).' });
export const NoteId = Type.String({ format: 'uuid', description: 'A note id (from notetaker.list or notetaker.search).' });
export const Version = Type.Integer({ minimum: 1, description: 'A version of the file (files.info lists them).' });
export const Name = Type.String({
  minLength: 1,
  maxLength: 255,
  description: "The file's name: one name (no '/' or '..'), at most 255 bytes, e.g. notes.md.",
});
export const Folder = Type.String({ maxLength: 1024, description: "A folder path, e.g. projects/2026 ('' for none)." });
