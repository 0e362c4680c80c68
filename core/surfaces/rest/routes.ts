// The REST API (spec §4.2) at /api/v1: the route tables of the domains' groups on the REST framework.
import type { Domain } from '../../contract/domain.ts';
import type { Authenticator } from '../../kernel/auth.ts';
import type { Policy } from '../../kernel/policy.ts';
import type { BodyLimits } from '../http/body.ts';
import type { CallObserver } from '../../contract/observe.ts';
import type { AdminService } from '../../kernel/admin/service.ts';
import { restFramework, type RestSurface } from './router.ts';
import { ADMIN_COMPONENTS } from './admin/schemas.ts';
import { ADMIN_GROUP, ADMIN_ROUTES } from './admin/routes.ts';

export interface RestDeps {
  auth: Authenticator;
  policy: Policy;
  /** Each domain with its service, as the host created it. */
  domains: Array<{ domain: Domain<any, any>; service: unknown }>;
  /** The operators' services, for the admin group (the kernel's, over every domain). */
  admin: AdminService;
  limits: BodyLimits;
  version: string;
  publicUrl: string | null;
  /** Counts and times each route's calls (metrics on). */
  observer?: CallObserver | undefined;
}

export function restSurface(deps: RestDeps): RestSurface {
  return restFramework({
    groups: [
      ...deps.domains.flatMap(({ domain, service }) =>
        [domain.rest ?? []].flat().map((group) => ({
          tag: group.tag,
          description: group.description,
          namespace: group.namespace,
          routes: group.routes(service),
          components: group.components,
          publicRoutes: group.publicRoutes?.(service),
        })),
      ),
      {
        ...ADMIN_GROUP,
        routes: ADMIN_ROUTES.flatMap((routes) => routes(deps.admin)),
        components: ADMIN_COMPONENTS,
        publicRoutes: undefined,
      },
    ],
    auth: deps.auth,
    policy: deps.policy,
    limits: deps.limits,
    version: deps.version,
    publicUrl: deps.publicUrl,
    observer: deps.observer,
  });
}
