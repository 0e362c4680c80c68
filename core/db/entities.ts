// The one list of every entity the ORM knows. A domain that adds tables adds its entities here
// (and a migration under ./migrations/).
import { identityEntities } from '../domain/identity/entities.ts';
import { notesEntities } from '../domain/notes/entities.ts';

export const entities = [...identityEntities, ...notesEntities];
