// `folio tokens ...`: personal API tokens (/api/v1/tokens). The secret is printed once, on its own
// line on stdout, when a token is made or rotated: store it then, Folio keeps only its hash.
import { InvalidArgumentError, type Command } from 'commander';
import type { components } from '../generated/openapi.d.ts';
import { ok } from '../lib/client.ts';
import { examples, type Cli, type CommandGroup } from '../lib/group.ts';
import { emit, table, when, withOutput, type OutputOptions } from '../lib/output.ts';

type Token = components['schemas']['Token'];

const collect = (value: string, previous: string[]) => [...previous, value];
const positive = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number of 1 or more');
  return n;
};
const info = (line: string) => process.stderr.write(line + '\n');

function describe(tk: Token): void {
  const rows: Array<[string, string]> = [
    ['id', tk.id],
    ['name', tk.name ?? '-'],
    ['kind', tk.kind],
    ['scopes', tk.scopes.join(' ')],
    ['active', tk.active ? 'yes' : 'no'],
    ['expires', tk.expires_at ?? 'never'],
    ['last used', tk.last_used_at ?? 'never'],
    ['created', tk.created_at],
  ];
  if (tk.revoked_at) rows.push(['revoked', tk.revoked_at]);
  for (const [k, v] of rows) process.stdout.write(`${k.padEnd(9)} ${v}\n`);
}

export const tokens: CommandGroup = {
  register(program: Command, cli: Cli) {
    const group = program.command('tokens').description('personal API tokens: create, list, rotate, revoke');
    examples(group, 'folio tokens list', 'folio tokens create --name "backup" --scope notes:read --expires-in-days 90');

    const list = withOutput(group.command('list').alias('ls').description('your tokens, newest first'))
      .option('--active', 'only the usable ones (neither revoked nor expired)')
      .action(async (o: OutputOptions & { active?: boolean }) => {
        const { api, target } = cli.client();
        const items: Token[] = [];
        let cursor: string | undefined;
        do {
          const page = await ok(
            target,
            await api.GET('/tokens', {
              params: { query: { limit: 100, ...(o.active ? { active: true } : {}), ...(cursor ? { cursor } : {}) } },
            }),
          );
          items.push(...page.items);
          cursor = page.next_cursor ?? undefined;
        } while (cursor);
        await emit(items, o, () =>
          table(
            items,
            [
              { header: 'ID', get: (tk) => tk.id },
              { header: 'NAME', get: (tk) => tk.name ?? '-', flexible: true },
              { header: 'SCOPES', get: (tk) => tk.scopes.join(','), flexible: true },
              { header: 'STATE', get: (tk) => (tk.revoked_at ? 'revoked' : tk.active ? 'active' : 'expired') },
              { header: 'EXPIRES', get: (tk) => (tk.expires_at ? when(tk.expires_at) : '-') },
              { header: 'LAST USED', get: (tk) => (tk.last_used_at ? when(tk.last_used_at) : '-') },
            ],
            'no tokens',
          ),
        );
      });
    examples(list, 'folio tokens list --active', 'folio tokens list --json id,name,scopes');

    const create = withOutput(group.command('create').description('make a token and print its secret (shown only this once)'))
      .requiredOption('--name <name>', 'what the token is for, e.g. "laptop sync"')
      .requiredOption('--scope <scope>', 'a scope (repeat for several; see folio tokens scopes; * for all of yours)', collect, [])
      .requiredOption('--expires-in-days <days>', 'it expires this many days from now', positive)
      .option('--description <text>', 'a longer description')
      .action(async (o: OutputOptions & { name: string; scope: string[]; expiresInDays: number; description?: string }) => {
        const { api, target } = cli.client();
        const tk = await ok(
          target,
          await api.POST('/tokens', {
            body: {
              name: o.name,
              scopes: o.scope,
              expires_in_days: o.expiresInDays,
              ...(o.description !== undefined ? { description: o.description } : {}),
            },
          }),
        );
        await emit(tk, o, () => {
          process.stdout.write(tk.token + '\n');
          info(`created token ${tk.id}; store the secret now, it is not shown again`);
        });
      });
    examples(
      create,
      'folio tokens create --name "backup script" --scope notes:read --expires-in-days 90',
      'TOKEN=$(folio tokens create --name ci --scope notes:read --scope files:read --expires-in-days 30)',
    );

    const get = withOutput(group.command('get').description("one token's details (never its secret)"))
      .argument('<id>', 'the token id')
      .action(async (id: string, o: OutputOptions) => {
        const { api, target } = cli.client();
        const tk = await ok(target, await api.GET('/tokens/{id}', { params: { path: { id } } }));
        await emit(tk, o, () => describe(tk));
      });
    examples(get, 'folio tokens get $ID');

    const self = withOutput(group.command('self').description('the token this command runs with')).action(async (o: OutputOptions) => {
      const { api, target } = cli.client();
      const tk = await ok(target, await api.GET('/tokens/self'));
      await emit(tk, o, () => describe(tk));
    });
    examples(self, 'folio tokens self', 'FOLIO_TOKEN=... folio tokens self --json scopes,expires_at');

    const rotate = withOutput(
      group.command('rotate').description("replace a token's secret: the old one stops at once; prints the new one"),
    )
      .argument('<id>', 'the token id')
      .action(async (id: string, o: OutputOptions) => {
        const { api, target } = cli.client();
        const tk = await ok(target, await api.POST('/tokens/{id}/rotate', { params: { path: { id } } }));
        await emit(tk, o, () => {
          process.stdout.write(tk.token + '\n');
          info(`rotated token ${tk.id}; the old secret no longer works`);
        });
      });
    examples(rotate, 'folio tokens rotate $ID');

    const revoke = group
      .command('revoke')
      .description('revoke a token: it (and every token minted from it) stops at once')
      .argument('<id>', 'the token id')
      .action(async (id: string) => {
        const { api, target } = cli.client();
        await ok(target, await api.DELETE('/tokens/{id}', { params: { path: { id } } }));
        info(`revoked token ${id}`);
      });
    examples(revoke, 'folio tokens revoke $ID');

    const scopes = withOutput(group.command('scopes').description('every scope a token can have, what it implies and needs')).action(
      async (o: OutputOptions) => {
        const { api, target } = cli.client();
        const { items } = await ok(target, await api.GET('/tokens/scopes'));
        await emit(items, o, () =>
          table(items, [
            { header: 'SCOPE', get: (s) => s.scope },
            { header: 'IMPLIES', get: (s) => s.implies.join(',') || '-' },
            { header: 'ROLES', get: (s) => s.roles.join(',') || '-' },
            { header: 'DESCRIPTION', get: (s) => s.description, flexible: true },
          ]),
        );
      },
    );
    examples(scopes, 'folio tokens scopes', 'folio tokens scopes --template "{scope}"');
  },
};
