// TypeBox schemas of the admin REST group (requests and the OpenAPI document's components).
import { Type, type TSchema } from 'typebox';
import { MATRIX_LIMIT_DEFAULT, MATRIX_LIMIT_MAX } from '../../../kernel/admin/access.ts';
import { JOB_LIST_DEFAULT, JOB_LIST_MAX } from '../../../kernel/admin/jobs.ts';

const DateTime = Type.String({ format: 'date-time' });
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

function limit(def: number, max: number) {
  return Type.Optional(
    Type.Integer({
      minimum: 1,
      default: def,
      description: `How many to return; default ${def}, at most ${max} (a larger value is lowered to it).`,
    }),
  );
}

export const UserRefParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 320, description: "The user's id, or their email address." }),
});

export const UserNamespaceParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 320, description: "The user's id, or their email address." }),
  namespace: Type.String({ minLength: 1, maxLength: 200, description: 'A namespace this server serves (GET /admin/plugins lists them).' }),
});

export const SetAccess = Type.Object(
  {
    access: Type.Union([Type.Literal('enabled'), Type.Literal('disabled'), Type.Literal('default')], {
      description:
        "'enabled' shows the namespace to the user whatever its rule says, 'disabled' hides it (404 on every surface), 'default' returns to its rule.",
    }),
  },
  { additionalProperties: false },
);

export const NamespaceAccess = Type.Object(
  {
    namespace: Type.String(),
    enabled: Type.Boolean({ description: 'Whether the user reaches the namespace, on curl, MCP and REST alike.' }),
    source: Type.Union([Type.Literal('default'), Type.Literal('switch'), Type.Literal('visible')], {
      description: "What decided it: nothing (default: shown), an operator's switch, or the plugin's `visible` rule.",
    }),
    switch: Nullable(Type.Union([Type.Literal('enabled'), Type.Literal('disabled')], { description: "The operator's switch, if any." })),
    loaded: Type.Boolean({ description: 'False for a switch left over for a namespace no plugin serves now.' }),
    rule_failed: Nullable(
      Type.Union([Type.Literal('timed_out'), Type.Literal('threw'), Type.Literal('not_boolean')], {
        description:
          "With source visible: why the plugin's rule could not answer (it hung past its time limit, threw, or gave a non-boolean), which hides the namespace; null when it answered.",
      }),
    ),
  },
  { description: 'One namespace as one user gets it.' },
);

export const UserAccess = Type.Object(
  {
    user: Type.Object({
      id: Type.String({ format: 'uuid' }),
      email: Type.String(),
      name: Nullable(Type.String()),
      roles: Type.Array(Type.String()),
      active: Type.Boolean(),
    }),
    namespaces: Type.Array(NamespaceAccess),
  },
  { description: "A user's effective access to every namespace." },
);

export const AccessMatrixQuery = Type.Object(
  {
    limit: limit(MATRIX_LIMIT_DEFAULT, MATRIX_LIMIT_MAX),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'next_cursor of the previous page.' })),
  },
  { additionalProperties: false },
);

export const AccessMatrix = Type.Object(
  {
    namespaces: Type.Array(Type.String(), { description: 'Every namespace this server serves, in name order.' }),
    items: Type.Array(UserAccess),
    next_cursor: Nullable(Type.String({ description: 'Pass it back as `cursor` for the next page.' })),
    limit: Type.Integer({ minimum: 1, description: 'The limit actually used.' }),
    limit_clamped_from: Type.Optional(Type.Integer({ description: 'Present when the limit asked for was over the maximum.' })),
  },
  { description: 'A page of users (email order), each with their access to every namespace.' },
);

export const JobListQuery = Type.Object(
  {
    state: Type.Optional(
      Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('failed')], { description: 'Only jobs in this state.' }),
    ),
    limit: limit(JOB_LIST_DEFAULT, JOB_LIST_MAX),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'next_cursor of the previous page.' })),
  },
  { additionalProperties: false },
);

export const AdminJob = Type.Object(
  {
    id: Type.String({ description: 'What retry and cancel take.' }),
    kind: Type.String({ description: "The kind of work: 'extract-text', 'transcribe', ..." }),
    source: Type.Union([Type.Literal('queue'), Type.Literal('dead_letter'), Type.Literal('transcription')], {
      description: 'queue: a job waiting or running; dead_letter: a job that failed every attempt; transcription: a transcription job.',
    }),
    state: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('failed')]),
    owner_id: Nullable(Type.String({ description: 'The user whose work it is, when it is one user’s.' })),
    reason: Nullable(Type.String({ description: 'Why it failed (or why its last attempt did).' })),
    attempts: Type.Integer({ minimum: 0 }),
    created_at: Type.String({
      format: 'date-time',
      description: 'When the work was created (a dead letter: when the failed job was first queued).',
    }),
    finished_at: Nullable(DateTime),
    job_id: Type.Optional(
      Type.String({ description: "A failed one's id where it ran: a dead letter's failed queue job, a transcription's own id." }),
    ),
    data: Type.Optional(Type.Unknown({ description: 'What a failed one was given (a transcription: its owner and file).' })),
  },
  { description: 'Background work as an operator sees it.' },
);

export const AdminJobList = Type.Object(
  {
    items: Type.Array(AdminJob),
    next_cursor: Nullable(Type.String({ description: 'Pass it back as `cursor` for the next (older) page.' })),
    limit: Type.Integer({ minimum: 1 }),
    limit_clamped_from: Type.Optional(Type.Integer({ description: 'Present when the limit asked for was over the maximum.' })),
  },
  { description: 'Jobs, newest first (by when each was created), every source merged.' },
);

export const JobIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: 'A job id from GET /admin/jobs.' }) });

export const Retried = Type.Object({ id: Type.String(), retried: Type.Literal(true) });
export const Cancelled = Type.Object({ id: Type.String(), cancelled: Type.Literal(true) });

const Capabilities = Type.Object({
  network: Type.Array(Type.String()),
  env: Type.Array(Type.String()),
  processes: Type.Boolean(),
  workers: Type.Boolean(),
});

export const PluginInfo = Type.Object(
  {
    namespace: Nullable(Type.String()),
    dir: Type.String(),
    version: Nullable(Type.String()),
    state: Type.Union([Type.Literal('loaded'), Type.Literal('stale'), Type.Literal('failed'), Type.Literal('degraded')], {
      description:
        'loaded: serving; stale: the last reload failed and the previous version serves; failed: nothing serves; degraded: its process was restarted.',
    }),
    isolation: Type.Union([Type.Literal('process'), Type.Literal('in-process')]),
    sandbox: Nullable(
      Type.Object({
        kind: Type.Union([Type.Literal('bubblewrap'), Type.Literal('permission-model')]),
        running: Type.Boolean(),
        holds: Type.Array(Type.String()),
        missing: Type.Array(Type.String()),
        capabilities: Type.Object({ requested: Capabilities, granted: Capabilities, missing: Capabilities }),
      }),
    ),
    loaded_at: Nullable(DateTime),
    last_attempt_at: DateTime,
    last_error: Nullable(Type.String()),
  },
  { description: 'A plugin folder and how it serves.' },
);

export const PluginList = Type.Object({ items: Type.Array(PluginInfo) });

export const PluginParams = Type.Object({
  namespace: Type.String({ minLength: 1, maxLength: 200, description: 'The namespace the plugin serves.' }),
});

export const ADMIN_COMPONENTS: Record<string, TSchema> = {
  NamespaceAccess,
  UserAccess,
  AccessMatrix,
  SetAccess,
  AdminJob,
  AdminJobList,
  PluginInfo,
  PluginList,
};
