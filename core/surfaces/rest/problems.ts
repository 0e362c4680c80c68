// The one place the REST surface turns typed outcomes into HTTP: RFC 9457 problem+json with a
// stable `code`. The code table below is also what the OpenAPI document lists per operation and what
// /api/v1/problems/{code} explains, so the three cannot drift apart.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { AuthError } from '../../kernel/auth.ts';
import {
  Aborted,
  BadArguments,
  Conflict,
  FolioError,
  Forbidden,
  FunctionFailed,
  NotFound,
  PayloadTooLarge,
  TooLarge,
  Unauthenticated,
} from '../../kernel/errors.ts';

export const PROBLEM_CODES = {
  bad_request: {
    status: 400,
    title: 'Bad request',
    about: 'The request itself is malformed: a body that is not JSON, nested too deeply, or a header in the wrong form.',
  },
  validation_failed: {
    status: 400,
    title: 'Validation failed',
    about:
      'A parameter or a field of the body does not match the schema, or the operation will not take it. `errors` names each one by `in` (path, query, body) and `path` (a JSON pointer).',
  },
  unauthenticated: {
    status: 401,
    title: 'Unauthenticated',
    about: 'No usable bearer token. Send Authorization: Bearer <token> (never a token in the URL).',
  },
  forbidden: { status: 403, title: 'Forbidden', about: 'Authenticated, but this account may not do that.' },
  missing_scope: {
    status: 403,
    title: 'Missing scope',
    about: 'The token does not carry a scope the operation needs; `missing_scopes` names it. Mint or create a token that has it.',
  },
  not_found: {
    status: 404,
    title: 'Not found',
    about: 'No such resource, or one that belongs to someone else: both answer with the same body, so existence cannot be probed.',
  },
  method_not_allowed: {
    status: 405,
    title: 'Method not allowed',
    about: 'The path exists, but not with this method. The Allow header lists the methods it takes.',
  },
  conflict: {
    status: 409,
    title: 'Conflict',
    about: 'The request collides with the current state of the resource (for example, purging a note that is not in the trash).',
  },
  precondition_failed: {
    status: 412,
    title: 'Precondition failed',
    about:
      'The version you based the edit on (If-Match or expected_version) is not the current one: someone else changed the note. Nothing was written; `current` holds the note as it is now (and ETag its version). Merge and retry with that version.',
  },
  payload_too_large: {
    status: 413,
    title: 'Content too large',
    about: 'The request body is larger than the server accepts. Send less, e.g. create and then append in parts.',
  },
  precondition_required: {
    status: 428,
    title: 'Precondition required',
    about:
      'A replacing edit (title, body, tags, replace_section, PUT) must say which version it was based on: send If-Match: "<version>" (the ETag you read) or expected_version in the body.',
  },
  internal: {
    status: 500,
    title: 'Internal server error',
    about: 'Something failed on the server. `error_id` is in the server log with the details; quote it when you report this.',
  },
} as const;

export type ProblemCode = keyof typeof PROBLEM_CODES;

export interface FieldProblem {
  /** Where the value was: the path, the query string, the body or a header. */
  in: 'path' | 'query' | 'body' | 'header';
  /** JSON pointer into that place ('' for the whole of it). */
  path: string;
  message: string;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ProblemCode;
  instance?: string;
  errors?: FieldProblem[];
  current?: unknown;
  missing_scopes?: string[];
  error_id?: string;
}

export interface ProblemAnswer {
  status: number;
  body: Problem;
  headers: Record<string, string>;
  /** The client went away; nothing is sent. */
  aborted?: true;
}

/** An outcome only the REST surface has: a code of the table above with its extras. */
export class RestProblem extends FolioError {
  readonly code: ProblemCode;
  readonly extra: Partial<Pick<Problem, 'errors' | 'current' | 'missing_scopes'>>;
  readonly headers: Record<string, string>;
  constructor(code: ProblemCode, detail: string, extra: RestProblem['extra'] = {}, headers: Record<string, string> = {}) {
    super(detail);
    this.code = code;
    this.extra = extra;
    this.headers = headers;
  }
}

export const problemTypeUrl = (base: string, code: string) => `${base}/api/v1/problems/${code}`;

export interface ProblemContext {
  /** Absolute base of the server, for the `type` URL. */
  base: string;
  log: Logger;
  /** The fixed 404 text of the operation: another user's resource and a missing one must read the same. */
  notFound?: string | undefined;
  /** Where a value the service refused came from (it only knows argument names). Default: the body. */
  locate?: ((path: string) => Pick<FieldProblem, 'in' | 'path'>) | undefined;
}

/** Any error -> status, problem body and headers. Unknown errors become 500 + an error id (logged). */
export function toProblem(err: unknown, pc: ProblemContext): ProblemAnswer {
  const make = (code: ProblemCode, detail: string, extra: Partial<Problem> = {}, headers: Record<string, string> = {}): ProblemAnswer => {
    const { status, title } = PROBLEM_CODES[code];
    return { status, body: { type: problemTypeUrl(pc.base, code), title, status, detail, code, ...extra }, headers };
  };
  if (err instanceof RestProblem) return make(err.code, err.message, err.extra, err.headers);
  if (err instanceof Unauthenticated) {
    const attr = err instanceof AuthError && err.bearerError ? `, error="${err.bearerError}"` : '';
    return make('unauthenticated', err.message, {}, { 'WWW-Authenticate': `Bearer realm="folio"${attr}` });
  }
  if (err instanceof Forbidden) return make('forbidden', err.message);
  if (err instanceof NotFound) return make('not_found', pc.notFound ?? err.message);
  if (err instanceof BadArguments) {
    const locate = pc.locate ?? ((path: string) => ({ in: 'body' as const, path }));
    const errors = err.problems.map((p): FieldProblem => ({ ...locate(pointer(p.path)), message: p.message }));
    return errors.length ? make('validation_failed', err.message, { errors }) : make('bad_request', err.message);
  }
  if (err instanceof Conflict) return make('conflict', err.message, err.current === undefined ? {} : { current: err.current });
  if (err instanceof PayloadTooLarge) return make('payload_too_large', err.message);
  if (err instanceof TooLarge) return make('payload_too_large', err.message);
  if (err instanceof Aborted) return { ...make('bad_request', err.message), status: 499, aborted: true };
  if (err instanceof FunctionFailed) return make('internal', err.message, { error_id: err.errorId, instance: `urn:uuid:${err.errorId}` });
  if (err instanceof FolioError) return make('bad_request', err.message);
  const errorId = randomUUID();
  pc.log.error({ errorId, err }, 'unexpected error in the REST API');
  return make('internal', 'something failed on the server; quote the error id when you report this', {
    error_id: errorId,
    instance: `urn:uuid:${errorId}`,
  });
}

/** Service problem paths come as '/a/b', 'a.b' or 'a': make them JSON pointers. */
function pointer(p: string): string {
  if (p === '' || p === '(body)') return '';
  if (p.startsWith('/')) return p;
  return `/${p.split('.').join('/')}`;
}
