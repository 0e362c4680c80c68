// The schemas every REST group shares: the problem detail of every error answer.
import { Type } from 'typebox';
import { PROBLEM_CODES } from './problems.ts';

export const Problem = Type.Object(
  {
    // RFC 9457 §3.1.1: a URI reference. Relative (/problems/<code>) when no trustworthy origin is
    // known: a request the HTTP parser refused, with no public URL configured.
    type: Type.String({
      format: 'uri-reference',
      description: 'A URL per code (relative to this server when it is not absolute); GET it for an explanation.',
    }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String({ description: 'What went wrong with this request and what to do about it.' }),
    code: Type.Union(
      Object.keys(PROBLEM_CODES).map((c) => Type.Literal(c)),
      { description: 'Stable, machine-readable. Branch on this, not on the text.' },
    ),
    instance: Type.Optional(Type.String()),
    errors: Type.Optional(
      Type.Array(
        Type.Object({
          in: Type.Union([Type.Literal('path'), Type.Literal('query'), Type.Literal('body'), Type.Literal('header')]),
          path: Type.String({ description: 'JSON pointer into that part of the request.' }),
          message: Type.String(),
        }),
        { description: 'validation_failed: each value that was refused.' },
      ),
    ),
    current: Type.Optional(Type.Unknown({ description: 'precondition_failed: the note as it is now.' })),
    missing_scopes: Type.Optional(Type.Array(Type.String(), { description: 'missing_scope: the scopes the token lacks.' })),
    limit: Type.Optional(Type.Integer({ description: 'file_too_large: the per-file limit in bytes.' })),
    error_id: Type.Optional(Type.String({ description: 'internal: the id of this failure in the server log.' })),
  },
  { description: 'An RFC 9457 problem detail with a stable `code`.' },
);
