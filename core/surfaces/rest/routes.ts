// The REST API (spec §4.2) at /api/v1: the route tables of its groups on the REST framework.
import type { NotesService } from '../../domain/notes/types.ts';
import type { Authenticator } from '../../kernel/auth.ts';
import type { BodyLimits } from '../http/body.ts';
import { notetakerRoutes } from './notetaker.ts';
import { restFramework, type RestSurface } from './router.ts';

export interface RestDeps {
  auth: Authenticator;
  notes: NotesService;
  limits: BodyLimits;
  version: string;
  publicUrl: string | null;
}

export const REST_TAGS = [
  { name: 'notetaker', description: 'Read, search and edit notes; trash and revisions; generate reports from notes.' },
];

export function restSurface(deps: RestDeps): RestSurface {
  return restFramework({
    routes: notetakerRoutes(deps.notes),
    tags: REST_TAGS,
    auth: deps.auth,
    limits: deps.limits,
    version: deps.version,
    publicUrl: deps.publicUrl,
  });
}
