// ETag and If-Match. A note's ETag is its version as a strong entity tag, "<version>": every change
// increments the version, so one version is always one representation. A replacing edit names the
// version it was based on (If-Match or expected_version); a stale one is 412 with the current note.
import { BadArguments, Conflict, PreconditionFailed, PreconditionRequired } from './errors.ts';

export const etag = (version: number) => `"${version}"`;

/**
 * The version an If-Match header names; undefined without the header. `W/"3"` is taken as `"3"`
 * (a proxy may weaken a tag it re-encodes). A well-formed tag that is not a version can never match:
 * `mismatch` tells the caller to answer 412.
 */
export function ifMatchVersion(header: string | undefined): { version: number } | { mismatch: true } | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  const value = header.trim();
  if (value === '*')
    throw new PreconditionRequired(
      'If-Match: * does not say which version the edit is based on. Send the ETag you read, e.g. If-Match: "3".',
    );
  const tags = value.split(',').map((t) => t.trim());
  if (tags.length > 1)
    throw new BadArguments('If-Match must carry one entity tag: the ETag of the version the edit is based on, e.g. "3".');
  const m = /^(?:W\/)?"([^"]*)"$/.exec(tags[0]!);
  if (!m)
    throw new BadArguments(
      `If-Match must be an entity tag in quotes, as the ETag header gives it (e.g. If-Match: "3"); got ${JSON.stringify(value.slice(0, 40))}.`,
    );
  const v = m[1]!;
  if (!/^[1-9]\d{0,14}$/.test(v)) return { mismatch: true };
  return { version: Number(v) };
}

export interface VersionSource {
  header: string | undefined;
  bodyVersion: number | undefined;
}

/**
 * The one expected version of a request, from If-Match and/or expected_version. They must agree.
 * `required`: without either -> 428, saying `missing`. Returns 'mismatch' when If-Match can never match.
 */
export function expectedVersion(
  src: VersionSource,
  required: boolean,
  missing = 'this edit replaces content, so it must say which version it is based on: send If-Match: "<version>" (the ETag of your GET) or expected_version in the body. Appends need neither.',
): number | 'mismatch' | undefined {
  const fromHeader = ifMatchVersion(src.header);
  if (fromHeader && 'mismatch' in fromHeader) return 'mismatch';
  const h = fromHeader?.version;
  const b = src.bodyVersion;
  if (h !== undefined && b !== undefined && h !== b)
    throw new BadArguments(`If-Match names version ${h} but expected_version is ${b}; send one, or the same in both.`);
  const v = h ?? b;
  if (v === undefined && required) throw new PreconditionRequired(missing);
  return v;
}

/**
 * Runs a write based on `expected` (a version, or none). A Conflict whose current note is at another
 * version is the client's stale precondition: 412 with that note. Any other Conflict (the note is in
 * the trash, ...) stays a 409.
 */
export async function conditional<T>(expected: number | undefined, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (expected === undefined || !(err instanceof Conflict)) throw err;
    const current = err.current as { version?: unknown } | undefined;
    if (typeof current?.version !== 'number' || current.version === expected) throw err;
    throw new PreconditionFailed(
      `${err.message.replace(/\.$/, '')}. \`current\` is the note as it is now: merge your change into it and retry with its version.`,
      current,
      etag(current.version),
    );
  }
}
