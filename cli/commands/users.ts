// `folio users ...`: accounts (/api/v1/users). `me` is for everyone; the rest needs the role admin
// and a token with the scope `users`.
import { InvalidArgumentError, type Command } from 'commander';
import type { components } from '../generated/openapi.d.ts';
import { ok } from '../lib/client.ts';
import { CliError, EXIT } from '../lib/errors.ts';
import { examples, type Cli, type CommandGroup } from '../lib/group.ts';
import { emit, table, when, withOutput, type OutputOptions } from '../lib/output.ts';

type User = components['schemas']['User'];

const collect = (value: string, previous: string[]) => [...previous, value];
const positive = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number of 1 or more');
  return n;
};
const info = (line: string) => process.stderr.write(line + '\n');

function describe(u: User): void {
  const rows: Array<[string, string]> = [
    ['id', u.id],
    ['email', u.email],
    ['name', u.name ?? '-'],
    ['roles', u.roles.join(' ') || '-'],
    ['active', u.active ? 'yes' : 'no'],
    ['created', u.created_at],
  ];
  for (const [k, v] of rows) process.stdout.write(`${k.padEnd(7)} ${v}\n`);
}

export const users: CommandGroup = {
  register(program: Command, cli: Cli) {
    const group = program.command('users').description("accounts: yours, and (for admins) everyone's");
    examples(group, 'folio users me', 'folio users list --role staff', 'folio users create --email ada@example.com --name Ada');

    const me = withOutput(group.command('me').description('your own account')).action(async (o: OutputOptions) => {
      const { api, target } = cli.client();
      const u = await ok(target, await api.GET('/users/me'));
      await emit(u, o, () => describe(u));
    });
    examples(me, 'folio users me', 'folio users me --json email,roles');

    const list = withOutput(group.command('list').alias('ls').description('users by email (admins)'))
      .option('--role <role>', 'only users with this role')
      .option('--email <email>', 'only this email')
      .option('--active', 'only active users')
      .option('--inactive', 'only deactivated users')
      .option('-L, --limit <n>', 'how many users at most', positive, 100)
      .action(async (o: OutputOptions & { role?: string; email?: string; active?: boolean; inactive?: boolean; limit: number }) => {
        if (o.active && o.inactive) throw new CliError('--active and --inactive exclude each other', EXIT.usage);
        const { api, target } = cli.client();
        const items: User[] = [];
        let cursor: string | undefined;
        do {
          const page = await ok(
            target,
            await api.GET('/users', {
              params: {
                query: {
                  limit: Math.min(100, o.limit - items.length),
                  ...(o.role ? { role: o.role } : {}),
                  ...(o.email ? { email: o.email } : {}),
                  ...(o.active || o.inactive ? { active: o.active === true } : {}),
                  ...(cursor ? { cursor } : {}),
                },
              },
            }),
          );
          items.push(...page.items);
          cursor = page.next_cursor ?? undefined;
        } while (cursor && items.length < o.limit);
        await emit(items, o, () =>
          table(
            items,
            [
              { header: 'ID', get: (u) => u.id },
              { header: 'EMAIL', get: (u) => u.email, flexible: true },
              { header: 'NAME', get: (u) => u.name ?? '-', flexible: true },
              { header: 'ROLES', get: (u) => u.roles.join(',') || '-' },
              { header: 'ACTIVE', get: (u) => (u.active ? 'yes' : 'no') },
              { header: 'CREATED', get: (u) => when(u.created_at) },
            ],
            'no users',
          ),
        );
      });
    examples(list, 'folio users list --role admin', 'folio users list --json id,email');

    const get = withOutput(group.command('get').description('one user (admins)'))
      .argument('<id>', 'the user id')
      .action(async (id: string, o: OutputOptions) => {
        const { api, target } = cli.client();
        const u = await ok(target, await api.GET('/users/{id}', { params: { path: { id } } }));
        await emit(u, o, () => describe(u));
      });
    examples(get, 'folio users get $ID');

    const create = withOutput(group.command('create').description('create a user and print its id (admins)'))
      .requiredOption('--email <email>', 'their email')
      .option('--name <name>', 'their name')
      .option('--role <role>', 'a role (repeat for several)', collect, [])
      .action(async (o: OutputOptions & { email: string; name?: string; role: string[] }) => {
        const { api, target } = cli.client();
        const u = await ok(
          target,
          await api.POST('/users', {
            body: { email: o.email, ...(o.name !== undefined ? { name: o.name } : {}), ...(o.role.length ? { roles: o.role } : {}) },
          }),
        );
        await emit(u, o, () => process.stdout.write(u.id + '\n'));
      });
    examples(create, 'folio users create --email ada@example.com --name Ada --role staff');

    const update = withOutput(group.command('update').description("change a user's name, roles or active state (admins)"))
      .argument('<id>', 'the user id')
      .option('--name <name>', 'a new name')
      .option('--role <role>', 'the whole new set of roles (repeat for several)', collect, [])
      .option('--no-roles', 'remove every role')
      .option('--activate', 'make the user active again')
      .action(async (id: string, o: OutputOptions & { name?: string; role: string[]; roles: boolean; activate?: boolean }) => {
        const body = {
          ...(o.name !== undefined ? { name: o.name } : {}),
          ...(o.role.length ? { roles: o.role } : o.roles === false ? { roles: [] } : {}),
          ...(o.activate ? { active: true } : {}),
        };
        if (Object.keys(body).length === 0)
          throw new CliError('nothing to change: give --name, --role, --no-roles or --activate', EXIT.usage);
        const { api, target } = cli.client();
        const u = await ok(target, await api.PATCH('/users/{id}', { params: { path: { id } }, body }));
        await emit(u, o, () => describe(u));
      });
    examples(update, 'folio users update $ID --role staff --role admin', 'folio users update $ID --name "Ada L."');

    const deactivate = group
      .command('deactivate')
      .description('deactivate a user: every token of theirs stops at once; their data is kept (admins)')
      .argument('<id>', 'the user id')
      .action(async (id: string) => {
        const { api, target } = cli.client();
        await ok(target, await api.PATCH('/users/{id}', { params: { path: { id } }, body: { active: false } }));
        info(`deactivated ${id} (undo: folio users update ${id} --activate)`);
      });
    examples(deactivate, 'folio users deactivate $ID');
  },
};
