// `folio notes ...`: the notetaker REST group (/api/v1/notetaker), through the typed client.
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { rename, rm as remove } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { components } from '../generated/openapi.d.ts';
import { failure, ok } from '../lib/client.ts';
import { CliError, EXIT, type Problem } from '../lib/errors.ts';
import { fullId } from '../lib/ids.ts';
import { examples, type Cli, type CommandGroup } from '../lib/group.ts';
import { removeOnInterrupt } from '../lib/interrupt.ts';
import { forTerminal } from '../lib/markdown.ts';
import { emit, isTerminal, readStdin, table, when, withOutput, type OutputOptions } from '../lib/output.ts';

type Note = components['schemas']['Note'];
type Page<T> = { items: T[]; next_cursor: string | null };

const collect = (value: string, previous: string[]) => [...previous, value];
const positive = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number of 1 or more');
  return n;
};
const info = (line: string) => process.stderr.write(line + '\n');
const etag = (version: number) => `"${version}"`;

/** Follows next_cursor until `want` items (or the end); pages of at most 100. */
async function collectPages<T>(want: number, page: (limit: number, cursor: string | undefined) => Promise<Page<T>>): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const p = await page(Math.min(100, want - items.length), cursor);
    items.push(...p.items);
    cursor = p.next_cursor ?? undefined;
  } while (cursor && items.length < want);
  return items.slice(0, want);
}

/** The body for create: --file (a path, or - for stdin), else stdin when it is not a terminal. */
async function bodyFrom(file: string | undefined): Promise<string> {
  if (file === '-') return readStdin();
  if (file !== undefined) {
    try {
      return readFileSync(file, 'utf8');
    } catch (err) {
      throw new CliError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, EXIT.usage);
    }
  }
  return process.stdin.isTTY ? '' : readStdin();
}

/** Opens `text` in $VISUAL / $EDITOR (default vi) and returns the file it is in, once the editor exits. */
function openInEditor(text: string, name: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'folio-edit-'));
  const file = path.join(dir, `${name}.md`);
  writeFileSync(file, text, { mode: 0o600 });
  const editor = process.env['VISUAL'] || process.env['EDITOR'] || 'vi';
  // Through the shell, as git does: $EDITOR may carry arguments ("code --wait").
  const r = spawnSync('/bin/sh', ['-c', `${editor} "$1"`, 'folio-editor', file], { stdio: 'inherit' });
  if (r.error) throw new CliError(`cannot start the editor ${editor}: ${r.error.message}`, EXIT.failed);
  if (r.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new CliError(`the editor ${editor} exited with ${r.status ?? r.signal}; the note was not changed`, EXIT.failed);
  }
  return file;
}

function conflictLine(id: string, from: number, problem: Problem | undefined, kept: string): CliError {
  const now = (problem?.current as Note | undefined)?.version;
  const state = now ? `you started from version ${from}; it is now version ${now}` : `you started from version ${from}`;
  return new CliError(
    `note ${id} changed on the server while you edited it (${state}). Nothing was overwritten; your text is in ${kept}. ` +
      `Run folio notes edit ${id} again and merge it in.`,
    EXIT.conflict,
  );
}

export const notes: CommandGroup = {
  register(program: Command, cli: Cli) {
    const group = program.command('notes').description('Markdown notes: list, read, write, search, trash, history, reports');
    examples(group, 'folio notes list', 'folio notes create --title "Standup" < standup.md', 'folio notes get $ID');

    const list = withOutput(group.command('list').alias('ls').description('list notes, most recently updated first'))
      .option('--tag <tag>', 'only notes with this tag (repeat for several: all must match)', collect, [])
      .option('-L, --limit <n>', 'how many notes at most', positive, 20)
      .option('--all', 'every note (follows all pages)')
      .option('--trash', 'the notes in the trash instead')
      .action(async (o: OutputOptions & { tag: string[]; limit: number; all?: boolean; trash?: boolean }) => {
        const { api, target } = cli.client();
        const want = o.all ? Infinity : o.limit;
        const items = await collectPages(want, async (limit, cursor) =>
          o.trash
            ? ok(target, await api.GET('/notetaker/trash', { params: { query: { limit, ...(cursor ? { cursor } : {}) } } }))
            : ok(target, await api.GET('/notetaker/notes', { params: { query: { limit, tag: o.tag, ...(cursor ? { cursor } : {}) } } })),
        );
        await emit(items, o, () =>
          table(
            items,
            [
              { header: 'ID', get: (n) => n.id },
              { header: 'TITLE', get: (n) => n.title, flexible: true },
              { header: 'TAGS', get: (n) => n.tags.join(','), flexible: true },
              { header: o.trash ? 'TRASHED' : 'UPDATED', get: (n) => when(o.trash ? (n.deleted_at ?? n.updated_at) : n.updated_at) },
            ],
            o.trash ? 'the trash is empty' : 'no notes',
          ),
        );
      });
    examples(
      list,
      'folio notes list --tag work --limit 50',
      'folio notes list --json id,title',
      'folio notes list --template "{id}\\t{title}"',
    );

    const get = withOutput(
      group
        .command('get')
        .alias('view')
        .description("print a note's Markdown body (drawn for the terminal at a terminal, as stored in a pipe)"),
    )
      .argument('<id>', 'the note id')
      .option('--version <n>', 'an earlier version of the note', positive)
      .option('--raw', 'print the Markdown as stored, even at a terminal')
      .action(async (typed: string, o: OutputOptions & { version?: number; raw?: boolean }) => {
        const { api, target } = cli.client();
        const id = await fullId(target, 'note', typed);
        const note = o.version
          ? await ok(target, await api.GET('/notetaker/notes/{id}/revisions/{version}', { params: { path: { id, version: o.version } } }))
          : await ok(target, await api.GET('/notetaker/notes/{id}', { params: { path: { id } } }));
        await emit(note, o, async () => {
          if (isTerminal() && !o.raw && note.body !== '') process.stdout.write(await forTerminal(note.body));
          else process.stdout.write(note.body.endsWith('\n') || note.body === '' ? note.body : note.body + '\n');
        });
      });
    examples(
      get,
      'folio notes get $ID',
      'folio notes get $ID > standup.md',
      'folio notes get $ID --raw',
      'folio notes get $ID --json title,version,tags',
      'folio notes get $ID --version 2',
    );

    const create = withOutput(group.command('create').alias('new').description('create a note and print its id'))
      .requiredOption('-t, --title <title>', 'the title (one line)')
      .option('-f, --file <path>', 'read the body from this file (- for stdin); by default stdin when it is not a terminal')
      .option('--tag <tag>', 'a tag (repeat for several)', collect, [])
      .addOption(
        new Option('--source <source>', 'where the note comes from').choices(['manual', 'agent', 'transcript', 'import']).default('manual'),
      )
      .action(async (o: OutputOptions & { title: string; file?: string; tag: string[]; source: string }) => {
        const { api, target } = cli.client();
        const body = await bodyFrom(o.file);
        const source = o.source as Note['source'];
        const note = await ok(target, await api.POST('/notetaker/notes', { body: { title: o.title, body, tags: o.tag, source } }));
        await emit(note, o, () => process.stdout.write(note.id + '\n'));
      });
    examples(
      create,
      'echo "- buy milk" | folio notes create --title "Errands" --tag home',
      'folio notes create --title "Standup" --file standup.md',
      'ID=$(folio notes create --title "Log" < /dev/null)',
    );

    const edit = group
      .command('edit')
      .description('edit a note in $EDITOR; refused, with nothing lost, if it changed meanwhile')
      .argument('<id>', 'the note id')
      .option('-t, --title <title>', 'also set a new title')
      .action(async (typed: string, o: { title?: string }) => {
        const { api, target } = cli.client();
        const id = await fullId(target, 'note', typed);
        const note = await ok(target, await api.GET('/notetaker/notes/{id}', { params: { path: { id } } }));
        const file = openInEditor(note.body, id);
        const edited = readFileSync(file, 'utf8');
        const done = () => rmSync(path.dirname(file), { recursive: true, force: true });
        if (edited === note.body && (o.title === undefined || o.title === note.title)) {
          done();
          info(`no changes to ${id}`);
          return;
        }
        // Whatever goes wrong from here (unreachable, refused, changed meanwhile), the edit stays in its file.
        let saved: Note;
        try {
          const r = await api.PATCH('/notetaker/notes/{id}', {
            params: { path: { id }, header: { 'If-Match': etag(note.version) } },
            body: { body: edited, ...(o.title !== undefined ? { title: o.title } : {}) },
          });
          // A 412 is a problem document (other refusals, such as a plain-text 408, are not).
          if (r.response.status === 412) throw conflictLine(id, note.version, r.error as Problem | undefined, file);
          saved = await ok(target, r);
        } catch (err) {
          if (!(err instanceof CliError) || err.message.includes(file)) throw err;
          throw new CliError(`${err.message}; your text is kept in ${file}`, err.exitCode);
        }
        done();
        info(`saved ${id} as version ${saved.version}`);
      });
    examples(edit, 'folio notes edit $ID', 'EDITOR="code --wait" folio notes edit $ID --title "New title"');

    const append = withOutput(
      group.command('append').description("add text at the end of a note (or of one heading's section); never overwrites"),
    )
      .argument('<id>', 'the note id')
      .argument('[text...]', 'the text; read from stdin when not given')
      .option('--heading <heading>', "add to the end of this heading's section")
      .option('--prepend', 'add at the start instead (of the note, or just under the heading)')
      .action(async (typed: string, words: string[], o: OutputOptions & { heading?: string; prepend?: boolean }) => {
        const { api, target } = cli.client();
        const id = await fullId(target, 'note', typed);
        const text = words.length ? words.join(' ') : await readStdin();
        if (!text.trim()) throw new CliError('nothing to add: give the text as arguments or on stdin', EXIT.usage);
        const part = { text: text.replace(/\n$/, ''), ...(o.heading !== undefined ? { heading: o.heading } : {}) };
        const note = await ok(
          target,
          await api.PATCH('/notetaker/notes/{id}', { params: { path: { id } }, body: o.prepend ? { prepend: part } : { append: part } }),
        );
        await emit(note, o, () => info(`${o.prepend ? 'prepended to' : 'appended to'} ${id}: now version ${note.version}`));
      });
    examples(append, 'folio notes append $ID --heading Decisions -- "- ship on Friday"', 'date | folio notes append $ID');

    const search = withOutput(group.command('search').description('full-text search: "phrases", -exclusions, OR; best first'))
      .argument('<query...>', 'what to look for')
      .option('--tag <tag>', 'only notes with this tag (repeat for several)', collect, [])
      .option('--from <date>', 'updated on or after (ISO date)')
      .option('--to <date>', 'updated on or before (ISO date)')
      .option('-L, --limit <n>', 'how many hits at most', positive, 20)
      .action(async (words: string[], o: OutputOptions & { tag: string[]; from?: string; to?: string; limit: number }) => {
        const { api, target } = cli.client();
        const q = words.join(' ');
        const hits = await collectPages(o.limit, async (limit, cursor) =>
          ok(
            target,
            await api.GET('/notetaker/search', {
              params: {
                query: {
                  q,
                  limit,
                  tag: o.tag,
                  ...(o.from ? { from: o.from } : {}),
                  ...(o.to ? { to: o.to } : {}),
                  ...(cursor ? { cursor } : {}),
                },
              },
            }),
          ),
        );
        await emit(hits, o, () =>
          table(
            hits,
            [
              { header: 'ID', get: (h) => h.id },
              { header: 'TITLE', get: (h) => h.title, flexible: true },
              { header: 'SNIPPET', get: (h) => h.snippet, flexible: true },
            ],
            'no matches',
          ),
        );
      });
    examples(
      search,
      'folio notes search marketing budget',
      'folio notes search \'"quarterly plan" -draft\' --tag work --json id,title,snippet',
    );

    const rm = group
      .command('rm')
      .alias('delete')
      .description('move a note to the trash (or, with --purge, delete a trashed one for good)')
      .argument('<id>', 'the note id')
      .option('--purge', 'delete it for good (it must be in the trash already; there is no undo)')
      .action(async (typed: string, o: { purge?: boolean }) => {
        const { api, target } = cli.client();
        const id = await fullId(target, 'note', typed);
        if (o.purge) {
          await ok(target, await api.DELETE('/notetaker/trash/{id}', { params: { path: { id } } }));
          info(`purged ${id}`);
        } else {
          await ok(target, await api.DELETE('/notetaker/notes/{id}', { params: { path: { id } } }));
          info(`moved ${id} to the trash (undo: folio notes restore ${id})`);
        }
      });
    examples(rm, 'folio notes rm $ID', 'folio notes rm $ID --purge');

    const restore = group
      .command('restore')
      .description('bring a note back from the trash, or make an earlier version current again')
      .argument('<id>', 'the note id')
      .option('--version <n>', 'restore this earlier version (as a new version; nothing is lost)', positive)
      .action(async (typed: string, o: { version?: number }) => {
        const { api, target } = cli.client();
        const id = await fullId(target, 'note', typed);
        const note = o.version
          ? await ok(
              target,
              await api.POST('/notetaker/notes/{id}/revisions/{version}/restore', { params: { path: { id, version: o.version } } }),
            )
          : await ok(target, await api.POST('/notetaker/notes/{id}/restore', { params: { path: { id } } }));
        info(`restored ${id}: now version ${note.version}`);
      });
    examples(restore, 'folio notes restore $ID', 'folio notes restore $ID --version 3');

    const history = withOutput(group.command('history').description("a note's versions, newest first"))
      .argument('<id>', 'the note id')
      .option('-L, --limit <n>', 'how many versions at most', positive, 20)
      .option('--diff <version>', 'instead, the unified diff from that version to now', positive)
      .action(async (typed: string, o: OutputOptions & { limit: number; diff?: number }) => {
        const { api, target } = cli.client();
        const id = await fullId(target, 'note', typed);
        if (o.diff) {
          const d = await ok(
            target,
            await api.GET('/notetaker/notes/{id}/revisions/{version}/diff', { params: { path: { id, version: o.diff } } }),
          );
          return await emit(d, o, () => process.stdout.write(d.diff.endsWith('\n') || !d.diff ? d.diff : d.diff + '\n'));
        }
        const revs = await collectPages(o.limit, async (limit, cursor) =>
          ok(
            target,
            await api.GET('/notetaker/notes/{id}/revisions', { params: { path: { id }, query: { limit, ...(cursor ? { cursor } : {}) } } }),
          ),
        );
        await emit(revs, o, () =>
          table(revs, [
            { header: 'VERSION', get: (r) => String(r.version) },
            { header: 'CHANGE', get: (r) => r.change },
            { header: 'WHEN', get: (r) => r.created_at.slice(0, 19).replace('T', ' ') },
            { header: 'BYTES', get: (r) => String(r.body_bytes) },
            { header: 'TITLE', get: (r) => r.title, flexible: true },
          ]),
        );
      });
    examples(history, 'folio notes history $ID', 'folio notes history $ID --diff 2', 'folio notes get $ID --version 2');

    const tags = withOutput(group.command('tags').description('your tags, with how many notes carry each')).action(
      async (o: OutputOptions) => {
        const { api, target } = cli.client();
        const list = await ok(target, await api.GET('/notetaker/tags'));
        await emit(list.items, o, () =>
          table(
            list.items,
            [
              { header: 'TAG', get: (t) => t.tag },
              { header: 'NOTES', get: (t) => String(t.count) },
            ],
            'no tags',
          ),
        );
      },
    );
    examples(tags, 'folio notes tags', 'folio notes tags --json');

    const report = group
      .command('report')
      .description('a report of the selected notes, grouped by day, week or tag, as Markdown, HTML or PDF')
      .option('-q, --query <q>', 'only notes matching this search')
      .option('--tag <tag>', 'only notes with this tag (repeat for several)', collect, [])
      .option('--from <date>', 'updated on or after (ISO date)')
      .option('--to <date>', 'updated on or before (ISO date)')
      .addOption(new Option('--group-by <by>', 'how to group the notes').choices(['day', 'week', 'tag']).default('day'))
      .addOption(new Option('--format <format>', 'the document to make').choices(['markdown', 'html', 'pdf']).default('markdown'))
      .option('--title <title>', "the report's title")
      .option('-o, --output <file>', 'write it to this file (default: stdout)')
      .option('--save', 'also keep the report as a note and print its id on stderr')
      .action(
        async (o: {
          query?: string;
          tag: string[];
          from?: string;
          to?: string;
          groupBy: string;
          format: string;
          title?: string;
          output?: string;
          save?: boolean;
        }) => {
          if (o.format === 'pdf' && !o.output && isTerminal())
            throw new CliError('a PDF would garble the terminal: give -o FILE (or pipe it)', EXIT.usage);
          const { api, target } = cli.client();
          type Report = components['schemas']['ReportRequest'];
          const body: Report = {
            format: o.format as Report['format'],
            group_by: o.groupBy as Report['group_by'],
            save_as_note: o.save === true,
            ...(o.query ? { q: o.query } : {}),
            ...(o.tag.length ? { tags: o.tag } : {}),
            ...(o.from ? { from: o.from } : {}),
            ...(o.to ? { to: o.to } : {}),
            ...(o.title ? { title: o.title } : {}),
          };
          const r = await api.POST('/notetaker/reports', { body, parseAs: 'stream' });
          if (!r.response.ok || !r.response.body) throw await failure(target, r.response);
          const stream = Readable.fromWeb(r.response.body);
          if (o.output) {
            // Into a .part file beside it, renamed at the end: a cut-off report never looks complete.
            const part = `${o.output}.part`;
            const forget = removeOnInterrupt(part);
            try {
              await pipeline(stream, createWriteStream(part));
              await rename(part, o.output);
            } catch (err) {
              await remove(part, { force: true });
              throw new CliError(
                `the report was not written: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
                EXIT.failed,
              );
            } finally {
              forget();
            }
          } else await pipeline(stream, process.stdout);
          const saved = r.response.headers.get('folio-saved-note-id');
          if (o.output) info(`wrote ${o.output}`);
          if (saved) info(`saved as note ${saved}`);
        },
      );
    examples(
      report,
      'folio notes report --tag standup --group-by week --format pdf -o standups.pdf',
      'folio notes report -q budget --format html > budget.html',
    );
  },
};
