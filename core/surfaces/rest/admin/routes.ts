// The admin REST group: namespace access per user, background jobs, plugins. Scope `admin` and
// role `admin`; the rules are the admin services' (core/kernel/admin/), which the admin namespace
// on curl and MCP calls too. Another resource joins by adding its own route file to ADMIN_ROUTES.
import { pageReply, route, type Route } from '../../../contract/rest.ts';
import type { AdminService } from '../../../kernel/admin/service.ts';
import { ADMIN_USER_404 } from '../../../kernel/admin/access.ts';
import { ADMIN_JOB_404 } from '../../../kernel/admin/jobs.ts';
import { PLUGIN_404 } from '../../../kernel/admin/service.ts';
import * as S from './schemas.ts';

const tags = ['admin'];
const ADMIN = { scopes: ['admin'], roles: ['admin'] };

export function accessRoutes(admin: AdminService): Route[] {
  return [
    route({
      id: 'getUserAccess',
      method: 'GET',
      path: '/admin/users/{id}/access',
      summary: "A user's access per namespace",
      description:
        "Every namespace this server serves, whether the user reaches it (on curl, MCP and REST alike) and what decided it: `default` (no rule, no switch), `switch` (an operator's), or `visible` (the plugin's own rule). `{id}` is the user's id or email address.",
      tags,
      ...ADMIN,
      params: S.UserRefParams,
      notFound: ADMIN_USER_404,
      responses: { 200: { description: "The user's access.", schema: S.UserAccess } },
      handler: async ({ principal, params }) => ({ status: 200, body: await admin.access.get(principal, params.id) }),
    }),
    route({
      id: 'setUserAccess',
      method: 'PUT',
      path: '/admin/users/{id}/access/{namespace}',
      summary: 'Switch a namespace on or off for a user',
      description:
        "`enabled` shows the namespace to the user whatever its rule says, `disabled` hides it (404 on every surface, from their next request), `default` returns it to its rule. A namespace this server does not serve is refused (400) naming the closest ones. Answers the user's access as it is now.",
      tags,
      ...ADMIN,
      params: S.UserNamespaceParams,
      body: S.SetAccess,
      bodyRequired: true,
      notFound: ADMIN_USER_404,
      responses: { 200: { description: "The user's access, with the change.", schema: S.UserAccess } },
      handler: async ({ principal, params, body }) => ({
        status: 200,
        body: await admin.access.set(principal, params.id, params.namespace, body.access),
      }),
    }),
    route({
      id: 'getAccessMatrix',
      method: 'GET',
      path: '/admin/access',
      summary: 'Users by namespaces',
      description: 'A page of users in email order, each with their access to every namespace (as GET /admin/users/{id}/access).',
      tags,
      ...ADMIN,
      query: S.AccessMatrixQuery,
      responses: { 200: { description: 'A page of the matrix.', schema: S.AccessMatrix } },
      handler: async ({ principal, query }) =>
        pageReply(await admin.access.matrix(principal, { limit: query.limit, cursor: query.cursor }), query.limit),
    }),
  ];
}

export function jobRoutes(admin: AdminService): Route[] {
  return [
    route({
      id: 'listAdminJobs',
      method: 'GET',
      path: '/admin/jobs',
      summary: 'Background jobs',
      description:
        'Queued, running and failed work of every kind and every user, newest first (by when each was created), paged with `cursor`: ' +
        'queue jobs, dead letters (jobs that failed every attempt) and transcriptions, each failed one with its reason, its job id and what it was given.',
      tags,
      ...ADMIN,
      query: S.JobListQuery,
      responses: { 200: { description: 'The jobs.', schema: S.AdminJobList } },
      handler: async ({ principal, query }) =>
        pageReply(await admin.jobs.list(principal, { state: query.state, limit: query.limit, cursor: query.cursor }), query.limit),
    }),
    route({
      id: 'retryAdminJob',
      method: 'POST',
      path: '/admin/jobs/{id}/retry',
      summary: 'Retry a failed job',
      description:
        'A dead letter goes back to its queue as a new job with fresh retries; a failed or cancelled transcription is queued again. ' +
        "Any other transcription (queued, running, succeeded) is a 409: running a succeeded one again would write a new version of its owner's note.",
      tags,
      ...ADMIN,
      params: S.JobIdParams,
      notFound: ADMIN_JOB_404,
      problems: ['conflict', 'engine_unavailable', 'too_many_queued_jobs'],
      responses: { 200: { description: 'Queued again.', schema: S.Retried } },
      handler: async ({ principal, params }) => ({ status: 200, body: await admin.jobs.retry(principal, params.id) }),
    }),
    route({
      id: 'cancelAdminJob',
      method: 'POST',
      path: '/admin/jobs/{id}/cancel',
      summary: 'Cancel a queued or running job',
      description: 'Stops it; a transcription writes no note.',
      tags,
      ...ADMIN,
      params: S.JobIdParams,
      notFound: ADMIN_JOB_404,
      problems: ['conflict'],
      responses: { 200: { description: 'Cancelled.', schema: S.Cancelled } },
      handler: async ({ principal, params }) => ({ status: 200, body: await admin.jobs.cancel(principal, params.id) }),
    }),
  ];
}

export function pluginRoutes(admin: AdminService): Route[] {
  return [
    route({
      id: 'listPlugins',
      method: 'GET',
      path: '/admin/plugins',
      summary: 'Plugins and how they serve',
      description:
        'Every plugin folder: its namespace, version, state (loaded, stale, failed, degraded), isolation, the capabilities it asked for and was granted, when it loaded and its last error.',
      tags,
      ...ADMIN,
      responses: { 200: { description: 'The plugins.', schema: S.PluginList } },
      handler: ({ principal }) => Promise.resolve({ status: 200, body: { items: admin.plugins(principal) } }),
    }),
    route({
      id: 'reloadPlugin',
      method: 'POST',
      path: '/admin/plugins/{namespace}/reload',
      summary: 'Reload a plugin',
      description:
        'Loads its files again, as an edit would. A broken version is reported in `last_error` and the last good one keeps serving.',
      tags,
      ...ADMIN,
      params: S.PluginParams,
      notFound: PLUGIN_404,
      responses: { 200: { description: 'The plugin after the reload.', schema: S.PluginInfo } },
      handler: async ({ principal, params }) => ({ status: 200, body: await admin.reloadPlugin(principal, params.namespace) }),
    }),
  ];
}

/** Every route of the group. A resource of its own (the audit log) adds its route table here. */
export const ADMIN_ROUTES: Array<(admin: AdminService) => Route[]> = [accessRoutes, jobRoutes, pluginRoutes];

export const ADMIN_GROUP = {
  tag: 'admin',
  description: 'For operators: who reaches which namespace and why, switching namespaces per user, background jobs, plugins.',
  namespace: 'admin',
} as const;
