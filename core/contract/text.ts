// What a string must be for Folio to keep it as text: PostgreSQL's text type cannot hold NUL, and
// a lone surrogate has no UTF-8 form (the driver would store U+FFFD in its place: changed, not
// refused). One rule for every string a request brings: the JSON body reader and the REST query
// apply it to everything, so no surface passes such a string on to a service (where it was a 500).

/** Why `s` cannot be kept as text, or undefined when it can. */
export function textProblem(s: string): string | undefined {
  if (s.includes('\u0000')) return 'must not contain NUL characters (\\u0000)';
  if (!s.isWellFormed()) return 'must be valid Unicode (no lone surrogates)';
  return undefined;
}

/**
 * The first string (value or object key) in a parsed JSON value that cannot be kept as text, with
 * its JSON Pointer; undefined when there is none. Iterative: a hostile body must not blow the stack.
 */
export function findTextProblem(value: unknown): { path: string; message: string } | undefined {
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length > 0) {
    const [v, at] = stack.pop()!;
    if (typeof v === 'string') {
      const message = textProblem(v);
      if (message) return { path: at, message };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${at}/${i}`]);
    } else if (typeof v === 'object' && v !== null) {
      for (const [k, child] of Object.entries(v)) {
        const key = textProblem(k);
        if (key) return { path: `${at}/${pointerToken(k)}`, message: `(a name) ${key}` };
        stack.push([child, `${at}/${pointerToken(k)}`]);
      }
    }
  }
  return undefined;
}

/** A JSON Pointer reference token (RFC 6901), shown with its bad characters escaped. */
function pointerToken(k: string): string {
  return JSON.stringify(k.replaceAll('~', '~0').replaceAll('/', '~1')).slice(1, -1);
}
