// What a file may be called. A name is one path segment (no '/', no '..'), printable, at most 255
// bytes of UTF-8: the limit of common file systems, so a downloaded file can always be saved under
// its name. A folder is a path of such segments joined by '/'.
import { BadArguments } from '../../contract/errors.ts';

export const NAME_MAX_BYTES = 255;
export const FOLDER_MAX_BYTES = 1024;

const bad = (path: string, message: string) => new BadArguments(`${path} ${message}`, [{ path, message }]);

// C0 and C1 controls, DEL, and the Unicode line/paragraph separators.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

// Characters that are invisible or reorder the text around them, so that a name displays as another
// one ("invoice\u202Efdp.exe" shows as "invoiceexe.pdf"; a zero-width space makes two names that
// look the same): the bidi marks, embeddings, overrides and isolates, the zero-width characters,
// the word joiner and invisible operators, and the byte order mark.
const INVISIBLE: Record<string, string> = {
  '\u061c': 'arabic letter mark',
  '\u180e': 'mongolian vowel separator',
  '\u200b': 'zero width space',
  '\u200c': 'zero width non-joiner',
  '\u200d': 'zero width joiner',
  '\u200e': 'left-to-right mark',
  '\u200f': 'right-to-left mark',
  '\u202a': 'left-to-right embedding',
  '\u202b': 'right-to-left embedding',
  '\u202c': 'pop directional formatting',
  '\u202d': 'left-to-right override',
  '\u202e': 'right-to-left override',
  '\u2060': 'word joiner',
  '\u2061': 'function application',
  '\u2062': 'invisible times',
  '\u2063': 'invisible separator',
  '\u2064': 'invisible plus',
  '\u2066': 'left-to-right isolate',
  '\u2067': 'right-to-left isolate',
  '\u2068': 'first strong isolate',
  '\u2069': 'pop directional isolate',
  '\ufeff': 'zero width no-break space, a byte order mark',
};
// As regex escapes: the characters themselves would join their neighbours inside the class.
const INVISIBLES = Object.keys(INVISIBLE)
  .map((c) => `\\u{${c.codePointAt(0)!.toString(16)}}`)
  .join('');
const INVISIBLE_RE = new RegExp(`[${INVISIBLES}]`, 'u');
// A zero-width (non-)joiner between two non-ASCII letters or symbols is how some writing is spelled:
// Persian and Indic words, emoji sequences (a family, the rainbow flag). There it is kept; anywhere else
// (around ASCII, at the ends) it only hides something.
const VISIBLE_NON_ASCII = `[^\\u0000-\\u007f\\s${INVISIBLES}]`;
const JOINING = new RegExp(`(?<=${VISIBLE_NON_ASCII})(?:\\u{200c}|\\u{200d})(?=${VISIBLE_NON_ASCII})`, 'gu');

/** The first invisible or direction-changing character in `name`, as "U+200B (zero width space)", or undefined. */
function invisibleIn(name: string): string | undefined {
  const found = name.replace(JOINING, '').match(INVISIBLE_RE)?.[0];
  if (found === undefined) return undefined;
  const code = found.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
  return `U+${code} (${INVISIBLE[found]})`;
}

export function fileName(value: unknown, path = 'name'): string {
  if (typeof value !== 'string') throw bad(path, 'must be a string');
  const name = value.normalize('NFC');
  if (name.trim() === '') throw bad(path, 'must not be empty');
  if (name.includes('\u0000')) throw bad(path, 'must not contain NUL');
  if (CONTROL.test(name)) throw bad(path, 'must not contain control characters (line breaks, tabs, ...)');
  const invisible = invisibleIn(name);
  if (invisible !== undefined)
    throw bad(path, `must not contain ${invisible}: invisible and text-direction characters make a name display as another one`);
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
