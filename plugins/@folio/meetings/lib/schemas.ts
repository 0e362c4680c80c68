// Argument schemas shared by the meetings functions.
import { Type } from 'typebox';

export const READ = { scopes: ['notes:read'] };
export const WRITE = { scopes: ['notes:write'] };

export const NoteId = (what: string) => Type.String({ format: 'uuid', description: what });

export const Cursor = Type.String({
  maxLength: 4096,
  description: 'next_cursor from the previous answer, to continue. Keep the other arguments the same.',
});

// ISO 8601 date (2026-11-21) or date-time (2026-11-21T09:00:00Z).
const ISO_DATE = '^\\d{4}-\\d{2}-\\d{2}([T ]\\d{2}:\\d{2}.*)?$';
export const DateArg = (what: string) => Type.String({ pattern: ISO_DATE, maxLength: 40, description: what });
