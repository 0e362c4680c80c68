// The audit log over REST: the whole log for admins (GET /admin/audit, also as JSON Lines), and a
// user's own security events (GET /users/me/events). Reading only: nothing writes the log but
// the services, each in the transaction of the change it records.
import { Type } from 'typebox';
import { LIMIT_CLAMPED, pageReply, route, type Call, type Route } from '../../../contract/rest.ts';
import { AUDIT_ACTIONS } from '../record.ts';
import { DEFAULT_LIMIT, EXPORT_MAX, MAX_LIMIT, SCAN_WINDOW, type AuditFilters, type AuditService } from '../service.ts';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
const JSONL = 'application/x-ndjson';

export const AuditRecord = Type.Object(
  {
    id: Type.String({ description: 'The record id; records are listed newest (highest) first.' }),
    at: Type.String({ format: 'date-time' }),
    actor: Type.Object(
      {
        id: Nullable(Type.String({ format: 'uuid' })),
        email: Nullable(Type.String()),
      },
      { description: 'Who did it; both null for a caller not known (a sign-in with an unknown email).' },
    ),
    subject: Nullable(
      Type.String({ format: 'uuid', description: 'The account the event concerns (its owner sees it in /users/me/events).' }),
    ),
    action: Type.String({ description: `One of: ${AUDIT_ACTIONS.join(', ')}.` }),
    outcome: Type.Union([Type.Literal('success'), Type.Literal('failure')]),
    target: Nullable(
      Type.Object(
        { type: Type.String(), id: Type.String() },
        { description: 'What it was done to (a user, token, share, namespace, function...).' },
      ),
    ),
    address: Nullable(Type.String({ description: "The client's address (forwarding headers only from trusted proxies)." })),
    user_agent: Nullable(Type.String()),
    request_id: Nullable(Type.String({ description: 'The X-Request-Id of the request, as in the request log.' })),
    detail: Type.Record(Type.String(), Type.Unknown(), {
      description: "A few facts about the event; never secrets, never a call's arguments.",
    }),
  },
  { $id: 'AuditRecord' },
);

export const AuditPage = Type.Object(
  {
    items: Type.Array(AuditRecord),
    next_cursor: Nullable(Type.String({ description: 'Pass it back as `cursor` for older records. Null: nothing older matches.' })),
    limit: Type.Integer({ minimum: 1, description: 'The limit actually used.' }),
    limit_clamped_from: Type.Optional(
      Type.Integer({
        description:
          'Present when the limit asked for was over the maximum and was lowered to it (the Folio-Limit-Clamped header says the same).',
      }),
    ),
    window_exhausted: Type.Boolean({
      description: `True when the page stopped after looking at ${SCAN_WINDOW} records of the log without filling up: it may hold fewer than limit (even none); follow next_cursor to go on.`,
    }),
  },
  { $id: 'AuditPage' },
);

const Time = (what: string) => Type.Optional(Type.String({ maxLength: 64, description: `${what} (RFC 3339 date-time).` }));
const Common = {
  action: Type.Optional(Type.String({ maxLength: 64, description: 'One action (token.created), or a family (token.*).' })),
  since: Time('Records at or after this time'),
  until: Time('Records at or before this time'),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 32, description: 'next_cursor of the previous page.' })),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      default: DEFAULT_LIMIT,
      description: `How many to return; default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT} (a larger value is lowered to it).`,
    }),
  ),
};

const AdminQuery = Type.Object(
  {
    actor: Type.Optional(Type.String({ maxLength: 320, description: 'Only what this user did: their id or email.' })),
    target: Type.Optional(
      Type.String({
        maxLength: 200,
        description: 'Only what was done to this object (its id: a user, token, share, namespace, ns.function).',
      }),
    ),
    ...Common,
    format: Type.Optional(
      Type.Union([Type.Literal('json'), Type.Literal('jsonl')], { description: 'jsonl: the same as Accept: application/x-ndjson.' }),
    ),
  },
  { additionalProperties: false },
);
const MineQuery = Type.Object(Common, { additionalProperties: false });

export const COMPONENTS = { AuditRecord, AuditPage };

const DOC = `Filters combine (all must hold). Newest first, paged by cursor. Each page looks at no more than ${SCAN_WINDOW} records of the log, whatever the filters and the time range: a long range or a filter that matches little answers at once with a partial (even empty) page, window_exhausted true and a next_cursor to go on.`;

function filters(q: Partial<AuditFilters>): AuditFilters {
  return Object.fromEntries(Object.entries(q).filter(([, v]) => v !== undefined));
}

function wantsLines(call: Pick<Call<unknown, { format?: string }, unknown>, 'header' | 'query'>): boolean {
  if (call.query.format !== undefined) return call.query.format === 'jsonl';
  return (call.header('accept') ?? '').toLowerCase().includes(JSONL);
}

export function adminAuditRoutes(audit: AuditService): Route[] {
  return [
    route({
      id: 'listAuditEvents',
      method: 'GET',
      path: '/admin/audit',
      summary: 'The audit log',
      description: `Sign-ins (failed and throttled ones too), password changes and invitations, personal and minted tokens created, rotated and revoked, share links created, downloaded and revoked, namespace switches, users created, updated, deactivated, reactivated and deleted, exports, and (when audit.toolCalls is on) every tool call, with who, from which address and user agent, and the request id. Not recorded yet: OAuth grants and clients, plugins, backups, and admin actions other than those listed. Admins only. ${DOC} With Accept: ${JSONL} (or format=jsonl) the records matching the filters are streamed as JSON Lines, one record a line, at most ${EXPORT_MAX}; when more remain the last line is {"truncated": true, "next_cursor": ...}.`,
      tags: ['admin'],
      scopes: ['admin'],
      roles: ['admin'],
      query: AdminQuery,
      responses: {
        200: {
          description: 'A page of records, or (JSON Lines) the records.',
          schema: AuditPage,
          media: [JSONL],
          headers: [LIMIT_CLAMPED],
        },
      },
      handler: async (call) => {
        const { format: _format, ...q } = call.query;
        const f = filters(q);
        if (wantsLines(call)) {
          const stream = audit.export(f, call.signal);
          // The first chunk is awaited here: bad filters answer 400, not a broken stream.
          const first = await stream.next();
          return {
            status: 200,
            headers: { 'Content-Type': `${JSONL}; charset=utf-8`, 'Cache-Control': 'no-store' },
            stream: (async function* () {
              if (!first.done) yield first.value;
              yield* stream;
            })(),
          };
        }
        return pageReply(await audit.list(f), call.query.limit);
      },
    }),
  ];
}

export function myEventsRoutes(audit: AuditService): Route[] {
  return [
    route({
      id: 'listMyEvents',
      method: 'GET',
      path: '/users/me/events',
      summary: 'Your security events',
      description: `What happened to your account, whoever did it: sign-ins (failed ones too), password changes, your personal and minted tokens, share links, namespace switches and changes an admin made to your account, exports. Never anyone else's. ${DOC}`,
      tags: ['users'],
      scopes: [],
      query: MineQuery,
      responses: { 200: { description: 'A page of your events.', schema: AuditPage, headers: [LIMIT_CLAMPED] } },
      handler: async ({ principal, query }) => pageReply(await audit.mine(principal, filters(query)), query.limit),
    }),
  ];
}
