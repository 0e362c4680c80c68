// `folio search ...`: the search REST group (/api/v1/search): one ranked list over your notes,
// files and transcripts. Prints a table (kind, id, where, title, snippet) in a terminal, tab-
// separated lines in a pipe, or JSON with --json.
import { InvalidArgumentError, type Command } from 'commander';
import type { components } from '../generated/openapi.d.ts';
import { ok } from '../lib/client.ts';
import { examples, type Cli, type CommandGroup } from '../lib/group.ts';
import { emit, table, when, withOutput, type OutputOptions } from '../lib/output.ts';

type Hit = components['schemas']['SearchHit'];

const collect = (value: string, previous: string[]) => [...previous, value];
const positive = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number of 1 or more');
  return n;
};

/** Where a hit's match is, in a few characters: p.3, 12:05, § Budget. */
export function whereOf(h: Hit): string {
  const w = h.where;
  if (!w) return '';
  if (w.page !== undefined) return `p.${w.page}`;
  if (w.start_seconds !== undefined) {
    const s = Math.floor(w.start_seconds);
    const hms = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60];
    return (hms[0] ? `${hms[0]}:${String(hms[1]).padStart(2, '0')}` : String(hms[1])) + `:${String(hms[2]).padStart(2, '0')}`;
  }
  return w.heading !== undefined ? `§ ${w.heading}` : '';
}

export const search: CommandGroup = {
  register(program: Command, cli: Cli) {
    const cmd = withOutput(program.command('search').description('search everything: notes, files and transcripts in one ranked list'))
      .argument('<query...>', 'what to look for: words, "a phrase", -excluded, a OR b')
      .option('-k, --kind <kind>', 'only this kind: note, file, transcript (repeat for several)', collect, [])
      .option('--tag <tag>', 'only with this tag (repeat for several)', collect, [])
      .option('--type <type>', 'only files of this content type (application/pdf) or family (audio/*)')
      .option('--from <date>', 'updated on or after (ISO date)')
      .option('--to <date>', 'updated on or before (ISO date)')
      .option('-L, --limit <n>', 'how many hits at most', positive, 20)
      .action(
        async (
          words: string[],
          o: OutputOptions & { kind: string[]; tag: string[]; type?: string; from?: string; to?: string; limit: number },
        ) => {
          const { api, target } = cli.client();
          const q = words.join(' ');
          const hits: Hit[] = [];
          let cursor: string | undefined;
          do {
            const page = await ok(
              target,
              await api.GET('/search', {
                params: {
                  query: {
                    q,
                    limit: Math.min(100, o.limit - hits.length),
                    ...(o.kind.length ? { kind: o.kind } : {}),
                    ...(o.tag.length ? { tag: o.tag } : {}),
                    ...(o.type ? { type: o.type } : {}),
                    ...(o.from ? { from: o.from } : {}),
                    ...(o.to ? { to: o.to } : {}),
                    ...(cursor ? { cursor } : {}),
                  },
                },
              }),
            );
            hits.push(...page.hits);
            cursor = page.next_cursor ?? undefined;
          } while (cursor && hits.length < o.limit);
          await emit(hits, o, () =>
            table(
              hits,
              [
                { header: 'KIND', get: (h) => h.kind },
                { header: 'ID', get: (h) => h.id },
                { header: 'WHERE', get: whereOf },
                { header: 'UPDATED', get: (h) => when(h.updated_at) },
                { header: 'TITLE', get: (h) => h.title, flexible: true },
                { header: 'SNIPPET', get: (h) => h.snippet, flexible: true },
              ],
              'no matches',
            ),
          );
        },
      );
    examples(
      cmd,
      'folio search budget 2027',
      'folio search \'"action items"\' --kind transcript --from 2026-11-01',
      'folio search invoice --type application/pdf --json kind,id,where,snippet',
    );
  },
};
