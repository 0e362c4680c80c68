// What a file may be called. A name is one path segment (no '/', no '..'), printable, at most 255
// bytes of UTF-8: the limit of common file systems, so a downloaded file can always be saved under
// its name. A folder is a path of such segments joined by '/'.
import { BadArguments } from '../../contract/errors.ts';

export const NAME_MAX_BYTES = 255;
export const FOLDER_MAX_BYTES = 1024;

const bad = (path: string, message: string) => new BadArguments(`${path} ${message}`, [{ path, message }]);

// C0 and C1 controls, DEL, and the Unicode line/paragraph separators and bidi overrides that make a
// name display as something else.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

export function fileName(value: unknown, path = 'name'): string {
  if (typeof value !== 'string') throw bad(path, 'must be a string');
  const name = value.normalize('NFC');
  if (name.trim() === '') throw bad(path, 'must not be empty');
  if (name.includes('\u0000')) throw bad(path, 'must not contain NUL');
  if (CONTROL.test(name)) throw bad(path, 'must not contain control characters (line breaks, tabs, ...)');
  if (name.includes('/') || name.includes('\\')) throw bad(path, "must not contain '/' or '\\': it is one name; put folders in `folder`");
  if (name === '.' || name === '..') throw bad(path, "must not be '.' or '..'");
  if (name !== name.trim()) throw bad(path, 'must not start or end with spaces');
  if (Buffer.byteLength(name, 'utf8') > NAME_MAX_BYTES) throw bad(path, `must be at most ${NAME_MAX_BYTES} bytes of UTF-8`);
  return name;
}

export function folderPath(value: unknown, path = 'folder'): string {
  if (value === undefined || value === '') return '';
  if (typeof value !== 'string') throw bad(path, 'must be a string');
  const trimmed = value.replace(/^\/+|\/+$/g, '');
  if (trimmed === '') return '';
  if (Buffer.byteLength(trimmed, 'utf8') > FOLDER_MAX_BYTES) throw bad(path, `must be at most ${FOLDER_MAX_BYTES} bytes`);
  return trimmed
    .split('/')
    .map((segment) => fileName(segment, path))
    .join('/');
}
