// Input rules of the notes domain, in one place. Every failure is BadArguments naming the argument.
import { BadArguments } from '../../contract/errors.ts';
import { textProblem } from '../../contract/text.ts';
import { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, NOTE_SOURCES, type NoteSource } from './types.ts';
import { normalizeTag, TAG_RE, TAG_RULE } from './markdown.ts';

export const TITLE_MAX_CHARS = 500;
/** 1 MiB of UTF-8. */
export const BODY_MAX_BYTES = 1024 * 1024;
export const TAGS_MAX = 32;
export const SEARCH_QUERY_MAX_CHARS = 1000;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function bad(path: string, message: string): BadArguments {
  return new BadArguments(`${path || 'arguments'} ${message}`, [{ path, message }]);
}

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_RE.test(value);
}

/**
 * The ids that start with a prefix (hex digits, dashes where a UUID has them; at least 4 digits), as
 * the inclusive range [lowest, highest] a primary-key index answers. What lists print is the
 * first 8 characters, so a person can type those back.
 */
export function idPrefixRange(value: unknown, path = 'id_prefix'): [string, string] {
  const hex = typeof value === 'string' ? value.toLowerCase().replace(/-/g, '') : '';
  const shapeOk =
    typeof value === 'string' &&
    /^[0-9a-f-]+$/i.test(value) &&
    '00000000-0000-0000-0000-000000000000'.startsWith(value.replace(/[0-9a-f]/gi, '0'));
  if (!shapeOk || hex.length < 4 || hex.length > 32)
    throw bad(path, 'must be the start of an id: 4 to 32 hex digits, dashes where the id has them (e.g. d5a51b13)');
  const uuid = (h: string) => `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  return [uuid(hex.padEnd(32, '0')), uuid(hex.padEnd(32, 'f'))];
}

/** Trimmed; 1..500 characters; one line, no control characters. */
export function title(value: unknown, path = 'title'): string {
  if (typeof value !== 'string') throw bad(path, 'must be a string');
  const t = value.trim();
  const n = Array.from(t).length;
  if (n < 1 || n > TITLE_MAX_CHARS) throw bad(path, `must be 1 to ${TITLE_MAX_CHARS} characters`);
  if (/\p{Cc}/u.test(t)) throw bad(path, 'must be one line without control characters');
  if (!t.isWellFormed()) throw bad(path, 'must be valid Unicode');
  return t;
}

/** Any Markdown up to 1 MiB of UTF-8; no NUL (PostgreSQL text cannot hold it). */
export function text(value: unknown, path: string, opts: { allowEmpty: boolean }): string {
  if (typeof value !== 'string') throw bad(path, 'must be a string');
  if (!opts.allowEmpty && value.trim() === '') throw bad(path, 'must not be empty');
  checkBodySize(value, path);
  const problem = textProblem(value);
  if (problem) throw bad(path, problem);
  return value;
}

export function checkBodySize(body: string, path: string): void {
  // Cheap bound first: a UTF-16 unit is at most 3 UTF-8 bytes.
  if (body.length * 3 > BODY_MAX_BYTES && Buffer.byteLength(body) > BODY_MAX_BYTES) {
    throw bad(path, `would make the body larger than ${BODY_MAX_BYTES} bytes (1 MiB)`);
  }
}

/** Normalized (trimmed, lowercased), de-duplicated (first occurrence kept), at most 32, each matching TAG_RE. */
export function tags(value: unknown, path = 'tags'): string[] {
  if (!Array.isArray(value)) throw bad(path, 'must be a list of tags');
  const out: string[] = [];
  value.forEach((raw, i) => {
    if (typeof raw !== 'string') throw bad(`${path}.${i}`, 'must be a string');
    const tag = normalizeTag(raw);
    if (!TAG_RE.test(tag)) {
      throw bad(`${path}.${i}`, `"${raw}" is not a tag: ${TAG_RULE}`);
    }
    if (!out.includes(tag)) out.push(tag);
  });
  if (out.length > TAGS_MAX) throw bad(path, `must have at most ${TAGS_MAX} tags`);
  return out;
}

export function source(value: unknown): NoteSource {
  if (value === undefined) return 'manual';
  if (typeof value !== 'string' || !(NOTE_SOURCES as readonly string[]).includes(value)) {
    throw bad('source', `must be one of ${NOTE_SOURCES.join(', ')}`);
  }
  return value as NoteSource;
}

export function version(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 2_147_483_647) {
    throw bad(path, 'must be a version number: an integer from 1 to 2147483647');
  }
  return value;
}

export function limit(value: unknown): { limit: number; clampedFrom?: number } {
  if (value === undefined) return { limit: LIST_LIMIT_DEFAULT };
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw bad('limit', 'must be a positive integer');
  return value > LIST_LIMIT_MAX ? { limit: LIST_LIMIT_MAX, clampedFrom: value } : { limit: value };
}

/** An ISO date (YYYY-MM-DD, UTC) or date-time. As an upper bound a date means the whole day. */
export function dateBound(value: unknown, path: string, end: boolean): Date | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw bad(path, 'must be an ISO date or date-time');
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(value);
  if (!dateOnly && !/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(value)) throw bad(path, 'must be an ISO date or date-time');
  // A date-time without an offset is UTC, like a date (never the server's local time).
  const zoned = /(?:Z|[+-]\d{2}:?\d{2})$/i.test(value);
  const d = new Date(dateOnly ? `${value}T00:00:00.000Z` : zoned ? value : `${value.replace(' ', 'T')}Z`);
  if (Number.isNaN(d.getTime())) throw bad(path, 'must be an ISO date or date-time');
  // Inclusive end of a whole day: the last millisecond of it (timestamps are stored to the millisecond).
  return dateOnly && end ? new Date(d.getTime() + 86_400_000 - 1) : d;
}

export function query(value: unknown, path = 'q'): string {
  if (typeof value !== 'string' || value.trim() === '') throw bad(path, 'must be a non-empty search text');
  if (value.length > SEARCH_QUERY_MAX_CHARS) throw bad(path, `must be at most ${SEARCH_QUERY_MAX_CHARS} characters`);
  return value;
}

export function optionalTags(value: unknown, path: string): string[] | undefined {
  return value === undefined ? undefined : tags(value, path);
}

// --- cursors -----------------------------------------------------------------------------------------

/**
 * Opaque to callers: base64url of a small JSON array. `list` names the list it pages (and whose:
 * e.g. `notes:<user id>`), so a cursor works only on the list that handed it out.
 */
export function encodeCursor(parts: Array<string | number>, list?: string): string {
  return Buffer.from(JSON.stringify(list === undefined ? parts : [list, ...parts])).toString('base64url');
}

/**
 * The cursor's parts, checked against `shape`, one letter per part: 's' short string, 'u' uuid,
 * 't' epoch milliseconds, 'v' version, 'r' search rank. Anything else is BadArguments.
 */
export function decodeCursor(value: unknown, shape: string, list?: string): Array<string | number> | undefined {
  if (value === undefined) return undefined;
  const fail = () => bad('cursor', 'is not a cursor this call returned');
  if (typeof value !== 'string' || value.length > 512 || !/^[A-Za-z0-9_-]+$/.test(value)) throw fail();
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    throw fail();
  }
  if (list !== undefined) {
    // Another list's cursor (the trash's, another user's, another note's revisions) is not this one's.
    if (!Array.isArray(parts) || parts[0] !== list) throw fail();
    parts = parts.slice(1);
  }
  if (!Array.isArray(parts) || parts.length !== shape.length) throw fail();
  parts.forEach((p, i) => {
    const kind = shape[i];
    const num = typeof p === 'number' && Number.isFinite(p);
    const ok =
      kind === 't'
        ? num && Number.isInteger(p) && Math.abs(p) <= 8.64e15
        : kind === 'v'
          ? num && Number.isInteger(p) && p >= 1 && p <= 2_147_483_647
          : kind === 'r'
            ? num && p >= 0 && p <= 1e9
            : kind === 'u'
              ? isUuid(p)
              : typeof p === 'string' && p.length <= 200;
    if (!ok) throw fail();
  });
  return parts as Array<string | number>;
}
