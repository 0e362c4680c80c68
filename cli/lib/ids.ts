// Short ids: lists print the first 8 characters of an id, so every command that takes a note's or a
// file's id also takes an unambiguous start of one (at least 4 hex digits), as git takes short
// hashes. The server finds the ids with that start (id_prefix on the list routes, an index range).
import { failure, raw, type Target } from './client.ts';
import { CliError, EXIT } from './errors.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PREFIX = /^[0-9a-f][0-9a-f-]{3,34}$/i;

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
  if (UUID.test(typed) || !PREFIX.test(typed)) return typed; // anything else: the server's own answer (a 404) says it
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
