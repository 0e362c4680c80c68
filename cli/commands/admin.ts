// `folio admin ...`: the operators' commands over the admin REST group (/api/v1/admin): who reaches
// which namespace and why, switching a namespace per user, background jobs, plugins. Role admin and
// a token with the scope `admin`. Users themselves are `folio users`. Another resource of the group
// adds its subcommands as one more entry of ADMIN_SUBCOMMANDS.
import { InvalidArgumentError, type Command } from 'commander';
import type { components } from '../generated/openapi.d.ts';
import { ok } from '../lib/client.ts';
import { examples, type Cli, type CommandGroup } from '../lib/group.ts';
import { emit, table, when, withOutput, type OutputOptions } from '../lib/output.ts';

type UserAccess = components['schemas']['UserAccess'];
type AdminJob = components['schemas']['AdminJob'];
type PluginInfo = components['schemas']['PluginInfo'];

const positive = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number of 1 or more');
  return n;
};
const oneOf =
  <T extends string>(...allowed: T[]) =>
  (value: string): T => {
    if (!(allowed as string[]).includes(value)) throw new InvalidArgumentError(`must be one of: ${allowed.join(', ')}`);
    return value as T;
  };
const info = (line: string) => process.stderr.write(line + '\n');

function accessTable(a: UserAccess): void {
  info(`${a.user.email} (${a.user.id})${a.user.active ? '' : ', deactivated'}`);
  table(
    a.namespaces,
    [
      { header: 'NAMESPACE', get: (n) => n.namespace },
      { header: 'ENABLED', get: (n) => (n.enabled ? 'yes' : 'no') },
      { header: 'SOURCE', get: (n) => (n.rule_failed ? `${n.source} (${n.rule_failed})` : n.source) },
      { header: 'SWITCH', get: (n) => n.switch ?? '-' },
      { header: 'LOADED', get: (n) => (n.loaded ? 'yes' : 'no') },
    ],
    'no namespaces',
  );
}

function accessCommands(group: Command, cli: Cli): void {
  const access = group.command('access').description('who reaches which namespace, and switching one per user');
  examples(access, 'folio admin access get ada@example.com', 'folio admin access set ada@example.com meetings disabled');

  const get = withOutput(access.command('get').description("a user's access to every namespace, and what decided it"))
    .argument('<user>', "the user's id or email")
    .action(async (user: string, o: OutputOptions) => {
      const { api, target } = cli.client();
      const a = await ok(target, await api.GET('/admin/users/{id}/access', { params: { path: { id: user } } }));
      await emit(a, o, () => accessTable(a));
    });
  examples(get, 'folio admin access get ada@example.com', 'folio admin access get $ID --json namespaces');

  const set = withOutput(access.command('set').description('switch a namespace on or off for a user, or back to its default'))
    .argument('<user>', "the user's id or email")
    .argument('<namespace>', 'a namespace this server serves')
    .argument('<access>', 'enabled, disabled or default', oneOf('enabled', 'disabled', 'default'))
    .action(async (user: string, namespace: string, value: 'enabled' | 'disabled' | 'default', o: OutputOptions) => {
      const { api, target } = cli.client();
      const a = await ok(
        target,
        await api.PUT('/admin/users/{id}/access/{namespace}', { params: { path: { id: user, namespace } }, body: { access: value } }),
      );
      await emit(a, o, () => {
        const n = a.namespaces.find((x) => x.namespace === namespace);
        info(`${namespace} is ${n?.enabled ? 'enabled' : 'disabled'} for ${a.user.email} (${n?.source ?? 'default'})`);
      });
    });
  examples(set, 'folio admin access set ada@example.com meetings disabled', 'folio admin access set $ID meetings default');

  const matrix = withOutput(access.command('matrix').description('users by namespaces: + reaches it, - does not'))
    .option('-L, --limit <n>', 'how many users at most', positive, 100)
    .action(async (o: OutputOptions & { limit: number }) => {
      const { api, target } = cli.client();
      const items: UserAccess[] = [];
      let namespaces: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await ok(
          target,
          await api.GET('/admin/access', {
            params: { query: { limit: Math.min(200, o.limit - items.length), ...(cursor ? { cursor } : {}) } },
          }),
        );
        namespaces = page.namespaces;
        items.push(...page.items);
        cursor = page.next_cursor ?? undefined;
      } while (cursor && items.length < o.limit);
      await emit({ namespaces, items }, o, () =>
        table(
          items,
          [
            { header: 'USER', get: (u) => u.user.email, flexible: true },
            ...namespaces.map((name) => ({
              header: name.toUpperCase(),
              get: (u: UserAccess) => {
                const n = u.namespaces.find((x) => x.namespace === name);
                return n?.enabled ? (n.source === 'switch' ? '+!' : '+') : n?.source === 'switch' ? '-!' : '-';
              },
            })),
          ],
          'no users',
        ),
      );
    });
  examples(matrix, 'folio admin access matrix', '# "!" marks an operator\'s switch');
}

function jobCommands(group: Command, cli: Cli): void {
  const jobs = group.command('jobs').description('background work of every kind and user: queued, running, failed');
  examples(jobs, 'folio admin jobs list --state failed', 'folio admin jobs retry $ID');

  const list = withOutput(jobs.command('list').alias('ls').description('jobs, newest first, failed ones with their reason'))
    .option('--state <state>', 'queued, running or failed', oneOf('queued', 'running', 'failed'))
    .option('-L, --limit <n>', 'how many at most (fetched page by page)', positive, 50)
    .action(async (o: OutputOptions & { state?: 'queued' | 'running' | 'failed'; limit: number }) => {
      const { api, target } = cli.client();
      const items: AdminJob[] = [];
      let cursor: string | undefined;
      do {
        const page = await ok(
          target,
          await api.GET('/admin/jobs', {
            params: {
              query: {
                limit: Math.min(o.limit - items.length, 200),
                ...(o.state ? { state: o.state } : {}),
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
            { header: 'ID', get: (j: AdminJob) => j.id },
            { header: 'KIND', get: (j) => j.kind },
            { header: 'STATE', get: (j) => j.state },
            { header: 'SOURCE', get: (j) => j.source },
            { header: 'OWNER', get: (j) => j.owner_id ?? '-' },
            { header: 'CREATED', get: (j) => when(j.created_at) },
            { header: 'REASON', get: (j) => j.reason ?? '-', flexible: true },
          ],
          'no jobs',
        ),
      );
    });
  examples(list, 'folio admin jobs list', 'folio admin jobs list --state failed --json id,reason');

  const retry = jobs
    .command('retry')
    .description('run a failed job again (a dead letter or a transcription)')
    .argument('<id>', 'a job id from `folio admin jobs list`')
    .action(async (id: string) => {
      const { api, target } = cli.client();
      await ok(target, await api.POST('/admin/jobs/{id}/retry', { params: { path: { id } } }));
      info(`queued ${id} again`);
    });
  examples(retry, 'folio admin jobs retry $ID');

  const cancel = jobs
    .command('cancel')
    .description('stop a queued or running job')
    .argument('<id>', 'a job id from `folio admin jobs list`')
    .action(async (id: string) => {
      const { api, target } = cli.client();
      await ok(target, await api.POST('/admin/jobs/{id}/cancel', { params: { path: { id } } }));
      info(`cancelled ${id}`);
    });
  examples(cancel, 'folio admin jobs cancel $ID');
}

function pluginCommands(group: Command, cli: Cli): void {
  const plugins = group.command('plugins').description('plugins: state, version, isolation, capabilities; reload');
  examples(plugins, 'folio admin plugins list', 'folio admin plugins reload acme');

  const list = withOutput(plugins.command('list').alias('ls').description('every plugin folder and how it serves')).action(
    async (o: OutputOptions) => {
      const { api, target } = cli.client();
      const { items } = await ok(target, await api.GET('/admin/plugins'));
      await emit(items, o, () =>
        table(
          items,
          [
            { header: 'NAMESPACE', get: (p: PluginInfo) => p.namespace ?? '-' },
            { header: 'VERSION', get: (p) => p.version ?? '-' },
            { header: 'STATE', get: (p) => p.state },
            { header: 'ISOLATION', get: (p) => p.isolation },
            { header: 'GRANTED', get: (p) => (p.sandbox ? grants(p.sandbox.capabilities.granted) : '-') },
            { header: 'LAST ERROR', get: (p) => p.last_error ?? '-', flexible: true },
          ],
          'no plugins',
        ),
      );
    },
  );
  examples(list, 'folio admin plugins list', 'folio admin plugins list --json namespace,state,last_error');

  const reload = withOutput(
    plugins.command('reload').description('load a plugin’s files again; a broken version leaves the last good one serving'),
  )
    .argument('<namespace>', 'the namespace the plugin serves')
    .action(async (namespace: string, o: OutputOptions) => {
      const { api, target } = cli.client();
      const p = await ok(target, await api.POST('/admin/plugins/{namespace}/reload', { params: { path: { namespace } } }));
      await emit(p, o, () => info(`${namespace}: ${p.state}${p.last_error ? `: ${p.last_error}` : ''}`));
    });
  examples(reload, 'folio admin plugins reload acme');
}

function grants(c: { network: string[]; env: string[]; processes: boolean; workers: boolean }): string {
  const parts = [...c.network.map((h) => `net:${h}`), ...c.env.map((e) => `env:${e}`)];
  if (c.processes) parts.push('processes');
  if (c.workers) parts.push('workers');
  return parts.join(' ') || 'none';
}

/** The admin subcommands, each resource's in one function. */
export const ADMIN_SUBCOMMANDS: Array<(group: Command, cli: Cli) => void> = [accessCommands, jobCommands, pluginCommands];

export const admin: CommandGroup = {
  register(program: Command, cli: Cli) {
    const group = program.command('admin').description('for operators: namespace access per user, background jobs, plugins');
    examples(group, 'folio admin access get ada@example.com', 'folio admin jobs list --state failed', 'folio admin plugins list');
    for (const add of ADMIN_SUBCOMMANDS) add(group, cli);
  },
};
