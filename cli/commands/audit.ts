// `folio audit ...`: the audit log (/api/v1/admin/audit, admins) and your own security events
// (/api/v1/users/me/events). Newest first; --all follows the cursor to the end, --jsonl prints one
// record a line (what the server's JSON Lines export gives).
import { InvalidArgumentError, type Command } from 'commander';
import type { components } from '../generated/openapi.d.ts';
import { ok } from '../lib/client.ts';
import { examples, type Cli, type CommandGroup } from '../lib/group.ts';
import { emit, table, when, withOutput, type OutputOptions } from '../lib/output.ts';

type AuditRecord = components['schemas']['AuditRecord'];
type AuditPage = components['schemas']['AuditPage'];

const positive = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number of 1 or more');
  return n;
};

interface Filters {
  actor?: string;
  action?: string;
  target?: string;
  since?: string;
  until?: string;
  limit?: number;
  all?: boolean;
  jsonl?: boolean;
}

function withFilters(cmd: Command, admin: boolean): Command {
  if (admin)
    cmd
      .option('--actor <id|email>', 'only what this user did')
      .option('--target <id>', 'only what was done to this object (a user, token, share, namespace, ns.function)');
  return withOutput(cmd)
    .option('--action <action>', 'one action (token.created) or a family (token.*)')
    .option('--since <time>', 'at or after this time (RFC 3339, e.g. 2026-11-01T00:00:00Z)')
    .option('--until <time>', 'at or before this time')
    .option('--limit <n>', 'records to show (default 100; with --all, per request)', positive)
    .option('--all', 'every matching record, following the cursor')
    .option('--jsonl', 'one JSON record a line');
}

async function collect(fetchPage: (cursor: string | undefined) => Promise<AuditPage>, o: Filters): Promise<AuditRecord[]> {
  const items: AuditRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor);
    items.push(...page.items);
    if (o.jsonl) for (const r of page.items.splice(0)) process.stdout.write(JSON.stringify(r) + '\n');
    cursor = page.next_cursor ?? undefined;
    // A page that stopped at its window without filling up goes on, even without --all.
  } while (cursor && (o.all || (items.length < (o.limit ?? 100) && !o.jsonl)));
  return items;
}

async function show(items: AuditRecord[], o: OutputOptions & Filters): Promise<void> {
  if (o.jsonl) return;
  await emit(items, o, () =>
    table(
      items,
      [
        { header: 'WHEN', get: (r) => when(r.at) },
        { header: 'ACTION', get: (r) => r.action },
        { header: 'OUTCOME', get: (r) => r.outcome },
        { header: 'ACTOR', get: (r) => r.actor.email ?? r.actor.id ?? '-', flexible: true },
        { header: 'TARGET', get: (r) => (r.target ? `${r.target.type} ${r.target.id}` : '-'), flexible: true },
        { header: 'ADDRESS', get: (r) => r.address ?? '-' },
      ],
      'no records',
    ),
  );
}

export const audit: CommandGroup = {
  register(program: Command, cli: Cli) {
    const group = program.command('audit').description('the audit log (admins) and your own security events');
    examples(group, 'folio audit list --action token.* --since 2026-11-01T00:00:00Z', 'folio audit events');

    const list = withFilters(group.command('list').alias('ls').description('the audit log, newest first (admins only)'), true).action(
      async (o: OutputOptions & Filters) => {
        const { api, target } = cli.client();
        const query = {
          ...(o.actor ? { actor: o.actor } : {}),
          ...(o.action ? { action: o.action } : {}),
          ...(o.target ? { target: o.target } : {}),
          ...(o.since ? { since: o.since } : {}),
          ...(o.until ? { until: o.until } : {}),
          limit: o.limit ?? 100,
        };
        const items = await collect(
          // Asked as JSON (the route also streams JSON Lines, hence the wider type).
          async (cursor) =>
            (await ok(
              target,
              await api.GET('/admin/audit', { params: { query: { ...query, ...(cursor ? { cursor } : {}) } } }),
            )) as AuditPage,
          o,
        );
        await show(items, o);
      },
    );
    examples(list, 'folio audit list --actor alice@example.com', 'folio audit list --all --jsonl > audit.jsonl');

    const events = withFilters(
      group.command('events').description('what happened to your own account: sign-ins, tokens, shares, changes'),
      false,
    ).action(async (o: OutputOptions & Filters) => {
      const { api, target } = cli.client();
      const query = {
        ...(o.action ? { action: o.action } : {}),
        ...(o.since ? { since: o.since } : {}),
        ...(o.until ? { until: o.until } : {}),
        limit: o.limit ?? 100,
      };
      const items = await collect(
        async (cursor) => ok(target, await api.GET('/users/me/events', { params: { query: { ...query, ...(cursor ? { cursor } : {}) } } })),
        o,
      );
      await show(items, o);
    });
    examples(events, 'folio audit events --action signin.*');
  },
};
