// Short ids: lists print the first 8 characters of an id, so every command that takes a note's or a
// file's id also takes an unambiguous start of one (at least 4 hex digits), as git takes short
// hashes. The server finds the ids with that start (id_prefix on the list routes, an index range).
import { failure, raw, type Target } from './client.ts';
import { CliError, EXIT } from './errors.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HEXISH = /^[0-9a-f-]{4,35}$/i;
/** The start of an id as the server takes it: dashes only where a UUID has them, 4 to 31 hex digits. */
const isPrefix = (s: string) =>
  HEXISH.test(s) && '00000000-0000-0000-0000-000000000000'.startsWith(s.replace(/[0-9a-f]/gi, '0')) && s.replace(/-/g, '').length >= 4;

const WHERE = {
  note: { live: '/notetaker/notes', trash: '/notetaker/trash' },
  file: { live: '/filedb/files', trash: '/filedb/trash' },
} as const;

async function idsStartingWith(target: Target, route: string, prefix: string): Promise<string[]> {
  const res = await raw(target, 'GET', `${route}?id_prefix=${encodeURIComponent(prefix)}&limit=5`, {});
  if (!res.ok) throw await failure(target, res);
  const page = (await res.json()) as { items: Array<{ id: string }> };
  return page.items.map((i) => i.id);
}

/** The full id for what was typed: a whole id as it is; a start of one looked up among the live ones and the trash. */
export async function fullId(target: Target, kind: keyof typeof WHERE, typed: string): Promise<string> {
  if (UUID.test(typed)) return typed;
  if (!isPrefix(typed)) {
    if (HEXISH.test(typed))
      throw new CliError(
        `${typed} is not the start of an id: at least 4 hex digits, with dashes only where the id has them (as in d5a51b13-...)`,
        EXIT.usage,
      );
    return typed; // not id-like at all: the server's own answer (a 404) says it
  }
  const [live, trashed] = await Promise.all([
    idsStartingWith(target, WHERE[kind].live, typed),
    idsStartingWith(target, WHERE[kind].trash, typed),
  ]);
  const found = [...new Set([...live, ...trashed])];
  if (found.length === 1) return found[0]!;
  if (found.length === 0) throw new CliError(`no ${kind} has an id starting with ${typed} [not_found, 404]`, EXIT.notFound);
  throw new CliError(
    `${typed} is the start of more than one ${kind}'s id (${found.map((id) => id.slice(0, 13)).join(', ')}${found.length >= 5 ? ', ...' : ''}); type more of it`,
    EXIT.usage,
  );
}
