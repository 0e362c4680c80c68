// Query strings under the text rule (core/contract/text.ts): a parameter whose name or value is not
// text Folio can keep is refused by the surface that reads it (the REST router, SCIM), in its format.
import { textProblem } from '../../contract/text.ts';

/**
 * A query parameter (name or value) that is not text Folio can keep: percent-encoded bytes that are
 * not UTF-8 (Node's parser would quietly make them U+FFFD), a NUL, a lone surrogate.
 */
export function queryTextProblem(querystring: string): { name: string; message: string } | undefined {
  if (querystring === '') return undefined;
  for (const pair of querystring.split('&')) {
    const eq = pair.indexOf('=');
    const rawName = eq < 0 ? pair : pair.slice(0, eq);
    let name: string;
    let value: string;
    try {
      name = strictDecode(rawName);
      value = eq < 0 ? '' : strictDecode(pair.slice(eq + 1));
    } catch {
      return { name: rawName.slice(0, 40), message: 'must be percent-encoded UTF-8' };
    }
    const problem = textProblem(name) ?? textProblem(value);
    if (problem) return { name: JSON.stringify(name).slice(1, -1).slice(0, 40), message: problem };
  }
  return undefined;
}

/**
 * A query component decoded as Node's parser does (`+` is a space; a `%` not followed by two hex
 * digits is itself, `?q=100%` stays `100%`), except that escaped bytes must be UTF-8: URIError
 * where Node would quietly put U+FFFD.
 */
function strictDecode(raw: string): string {
  const spaced = raw.replaceAll('+', ' ');
  return spaced.includes('%') ? decodeURIComponent(spaced.replace(/%(?![0-9a-fA-F]{2})/g, '%25')) : spaced;
}
