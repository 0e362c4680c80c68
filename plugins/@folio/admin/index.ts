// First-party plugin: tokens, users and per-user namespace access. Written against the same SDK
// as any third-party plugin; the rules (admin only, minted tokens cannot mint) live in the
// services it calls.
import { Type } from 'typebox';
import { definePlugin } from 'folio/sdk';

const Capabilities = Type.Object({
  network: Type.Array(Type.String()),
  env: Type.Array(Type.String()),
  processes: Type.Boolean(),
  workers: Type.Boolean(),
});
const UserRef = Type.String({ minLength: 1, maxLength: 320, description: "The user's id (from create_user or whoami) or email address." });
const JobState = Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('failed')]);
const NamespaceAccess = Type.Object({
  namespace: Type.String(),
  enabled: Type.Boolean(),
  source: Type.Union([Type.Literal('default'), Type.Literal('switch'), Type.Literal('visible')]),
  switch: Type.Union([Type.Literal('enabled'), Type.Literal('disabled'), Type.Null()]),
  loaded: Type.Boolean(),
  rule_failed: Type.Union([Type.Literal('timed_out'), Type.Literal('threw'), Type.Literal('not_boolean'), Type.Null()]),
});

export default definePlugin({
  namespace: 'admin',
  description:
    'Short-lived curl tokens for yourself; for admins: users, per-user namespace access, plugin health and failed background jobs.',
  catalogue: 'public',
  functions: {
    mint_curl_token: {
      title: 'Mint a short-lived token',
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      description:
        'Mint a short-lived bearer token that acts as you, with your scopes or fewer. It never outlives the token that minted it and cannot mint further tokens. Hand it to a script or an agent instead of your API token.',
      args: Type.Object({
        ttl_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600, default: 900, description: 'Lifetime in seconds.' })),
        scopes: Type.Optional(
          Type.Array(Type.String({ pattern: '^(\\*|[a-z][a-z0-9_]*(:(\\*|[a-z][a-z0-9_]*))?)$' }), {
            maxItems: 32,
            uniqueItems: true,
            description: "Narrow the token to these scopes (each within yours), e.g. ['notes:read']. Default: all of yours.",
          }),
        ),
      }),
      returns: Type.Object({
        token: Type.String(),
        expires_at: Type.String({ format: 'date-time' }),
        scopes: Type.Array(Type.String()),
      }),
      examples: [
        { args: { ttl_seconds: 600 }, description: 'a token for the next ten minutes' },
        { args: { ttl_seconds: 300, scopes: ['notes:read'] }, description: 'a read-only token for a script' },
      ],
      handler: async ({ ttl_seconds, scopes }, ctx) => ctx.services.access.mintToken(ttl_seconds, scopes),
    },
    create_user: {
      title: 'Create a user',
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      description: 'Create a user and an API token for them (shown once: hand it over securely).',
      args: Type.Object({
        email: Type.String({ format: 'email', maxLength: 320 }),
        name: Type.Optional(Type.String({ maxLength: 200 })),
        roles: Type.Optional(Type.Array(Type.String({ pattern: '^[a-z][a-z0-9_-]{0,31}$' }), { maxItems: 16, uniqueItems: true })),
      }),
      returns: Type.Object({
        id: Type.String(),
        email: Type.String(),
        roles: Type.Array(Type.String()),
        token: Type.String(),
      }),
      examples: [{ args: { email: 'ada@example.com', name: 'Ada', roles: ['staff'] } }],
      requires: { roles: ['admin'], scopes: ['admin'] },
      handler: async (args, ctx) => ctx.services.access.createUser(args),
    },
    set_namespace_access: {
      title: "Set a user's namespace access",
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      description:
        "Force a namespace on or off for one user, whatever the namespace's own rule says: 'enabled' shows it, 'disabled' hides it (404 everywhere for them), 'default' returns to the rule. Takes effect on their next request. A namespace this server does not serve is refused, naming the closest ones.",
      args: Type.Object({
        user_id: UserRef,
        namespace: Type.String({ minLength: 1, maxLength: 200, description: 'A namespace this server serves.' }),
        access: Type.Union([Type.Literal('enabled'), Type.Literal('disabled'), Type.Literal('default')]),
      }),
      returns: Type.Object({ user_id: Type.String(), namespace: Type.String(), access: Type.String() }),
      examples: [
        {
          args: { user_id: 'ada@example.com', namespace: 'meetings', access: 'disabled' },
          description: 'hide the meetings namespace from one user',
        },
      ],
      requires: { roles: ['admin'], scopes: ['admin'] },
      handler: async (args, ctx) =>
        ctx.services.access.setNamespaceAccess({ userId: args.user_id, namespace: args.namespace, access: args.access }),
    },
    user_access: {
      title: "A user's namespace access",
      annotations: { readOnlyHint: true, openWorldHint: false },
      description:
        "Every namespace this server serves, whether one user reaches it and what decided it: 'default' (no rule, no switch), 'switch' (set_namespace_access), or 'visible' (the plugin's own rule).",
      args: Type.Object({ user_id: UserRef }),
      returns: Type.Object({
        user: Type.Object({
          id: Type.String(),
          email: Type.String(),
          name: Type.Union([Type.String(), Type.Null()]),
          roles: Type.Array(Type.String()),
          active: Type.Boolean(),
        }),
        namespaces: Type.Array(NamespaceAccess),
      }),
      examples: [{ args: { user_id: 'ada@example.com' } }],
      requires: { roles: ['admin'], scopes: ['admin'] },
      handler: async ({ user_id }, ctx) => ctx.services.access.userAccess(user_id),
    },
    plugin_status: {
      title: 'Plugin status',
      annotations: { readOnlyHint: true, openWorldHint: false },
      description:
        "Every plugin folder the server watches: its namespace, version, when it last loaded, and the error of its last failed reload. state 'stale' means the last reload failed and the previous good version keeps serving; 'failed' means nothing from that folder serves; 'degraded' means an isolated plugin's process was killed (a limit) or crashed since it loaded (last_error says why) and was restarted. isolation says whether the plugin runs in a sandboxed process of its own or on the server's thread; sandbox says, for a process, which protections hold and which this platform lacks, and the capabilities it asked for, was granted and misses.",
      returns: Type.Array(
        Type.Object({
          namespace: Type.Union([Type.String(), Type.Null()]),
          dir: Type.String(),
          version: Type.Union([Type.String(), Type.Null()]),
          state: Type.Union([Type.Literal('loaded'), Type.Literal('stale'), Type.Literal('failed'), Type.Literal('degraded')]),
          isolation: Type.Union([Type.Literal('process'), Type.Literal('in-process')]),
          sandbox: Type.Union([
            Type.Object({
              kind: Type.Union([Type.Literal('bubblewrap'), Type.Literal('permission-model')]),
              running: Type.Boolean(),
              holds: Type.Array(Type.String()),
              missing: Type.Array(Type.String()),
              capabilities: Type.Object({ requested: Capabilities, granted: Capabilities, missing: Capabilities }),
            }),
            Type.Null(),
          ]),
          loaded_at: Type.Union([Type.String(), Type.Null()]),
          last_attempt_at: Type.String(),
          last_error: Type.Union([Type.String(), Type.Null()]),
        }),
      ),
      requires: { roles: ['admin'], scopes: ['admin'] },
      handler: async (_args, ctx) => ctx.services.pluginStatus(),
    },
    failed_jobs: {
      title: 'List failed background jobs',
      annotations: { readOnlyHint: true, openWorldHint: false },
      description:
        'Background jobs that failed for good, newest first (by when each was created): jobs that failed every retry (text extraction, garbage collection, ...; kept for jobs.deadLetterRetentionDays) and failed transcriptions, with what they were given, the reason and how many attempts. retry_failed_job runs one again; list_jobs shows queued and running ones too, and pages.',
      args: Type.Object({
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'At most this many, newest first.' })),
      }),
      returns: Type.Array(
        Type.Object({
          id: Type.String(),
          job: Type.String(),
          job_id: Type.String(),
          data: Type.Unknown(),
          error: Type.Unknown(),
          attempts: Type.Integer(),
          failed_at: Type.String({ format: 'date-time' }),
        }),
      ),
      requires: { roles: ['admin'], scopes: ['admin'] },
      handler: async ({ limit }, ctx) => ctx.services.jobs.deadLetters(limit),
    },
    retry_failed_job: {
      title: 'Retry a failed background job',
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      description: 'Queue a failed job (an id from failed_jobs or list_jobs: a dead letter or a transcription) again, with fresh retries.',
      args: Type.Object({ id: Type.String({ format: 'uuid', description: 'The id failed_jobs or list_jobs listed.' }) }),
      returns: Type.Object({ id: Type.String(), retried: Type.Boolean() }),
      examples: [{ args: { id: '00000000-0000-4000-8000-000000000000' } }],
      requires: { roles: ['admin'], scopes: ['admin'] },
      handler: async ({ id }, ctx) => ctx.services.jobs.retryDeadLetter(id),
    },
    list_jobs: {
      title: 'List background jobs',
      annotations: { readOnlyHint: true, openWorldHint: false },
      description:
        'Queued, running and failed work of every kind and every user, newest first (by when each was created): queue jobs, dead letters and transcriptions, each failed one with its reason. Pass next_cursor back as cursor for older ones. cancel_job stops a queued or running one.',
      args: Type.Object({
        state: Type.Optional(JobState),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'At most this many.' })),
        cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'next_cursor of the previous page.' })),
      }),
      returns: Type.Object({
        items: Type.Array(
          Type.Object({
            id: Type.String(),
            kind: Type.String(),
            source: Type.Union([Type.Literal('queue'), Type.Literal('dead_letter'), Type.Literal('transcription')]),
            state: JobState,
            owner_id: Type.Union([Type.String(), Type.Null()]),
            reason: Type.Union([Type.String(), Type.Null()]),
            attempts: Type.Integer(),
            created_at: Type.String(),
            finished_at: Type.Union([Type.String(), Type.Null()]),
            job_id: Type.Optional(Type.String()),
            data: Type.Optional(Type.Unknown()),
          }),
        ),
        next_cursor: Type.Union([Type.String(), Type.Null()]),
        limit: Type.Integer(),
      }),
      examples: [{ args: { state: 'failed' }, description: 'what failed, and why' }],
      requires: { roles: ['admin'], scopes: ['admin'] },
      handler: async ({ state, limit, cursor }, ctx) =>
        ctx.services.jobs.list({ ...(state ? { state } : {}), ...(limit ? { limit } : {}), ...(cursor ? { cursor } : {}) }),
    },
    cancel_job: {
      title: 'Cancel a background job',
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
      description: 'Stop a queued or running job (an id from list_jobs); a transcription writes no note.',
      args: Type.Object({ id: Type.String({ format: 'uuid', description: 'The id list_jobs listed.' }) }),
      returns: Type.Object({ id: Type.String(), cancelled: Type.Boolean() }),
      examples: [{ args: { id: '00000000-0000-4000-8000-000000000000' } }],
      requires: { roles: ['admin'], scopes: ['admin'] },
      handler: async ({ id }, ctx) => ctx.services.jobs.cancel(id),
    },
  },
});
