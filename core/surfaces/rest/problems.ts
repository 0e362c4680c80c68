// The one place the REST surface turns typed outcomes into HTTP: RFC 9457 problem+json with a
// stable `code`. The code table below is also what the OpenAPI document lists per operation and what
// /api/v1/problems/{code} explains, so the three cannot drift apart.
import { newErrorId } from '../../contract/observe.ts';
import type { Logger } from 'pino';
import {
  BadArguments,
  Conflict,
  ERROR_CODES,
  FolioError,
  FileTooLarge,
  FunctionFailed,
  MissingScope,
  PreconditionFailed,
  QuotaExceeded,
  type ErrorCode,
} from '../../contract/errors.ts';

/** The codes a REST answer can carry: every outcome but `aborted` (its caller is gone, nothing is sent). */
export type ProblemCode = Exclude<ErrorCode, 'aborted'>;
export const PROBLEM_CODES = Object.fromEntries(Object.entries(ERROR_CODES).filter(([code]) => code !== 'aborted')) as Pick<
  typeof ERROR_CODES,
  ProblemCode
>;

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
  quota?: { used: number; quota: number; needed: number };
  limit?: number;
  error_id?: string;
}

export interface ProblemAnswer {
  status: number;
  body: Problem;
  headers: Record<string, string>;
  /** The client went away; nothing is sent. */
  aborted?: true;
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

/**
 * The problem's `instance` for an error id: a URN of the UUID (36 characters), or, with tracing on
 * (trace id first, 41 characters), a tag URI (RFC 4151) of Folio's error id.
 */
function errorInstance(errorId: string): string {
  return errorId.length === 36 ? `urn:uuid:${errorId}` : `tag:folio,2026:error:${errorId}`;
}

/** Any error -> status, problem body and headers. Unknown errors become 500 + an error id (logged). */
export function toProblem(err: unknown, pc: ProblemContext): ProblemAnswer {
  const make = (code: ProblemCode, detail: string, extra: Partial<Problem> = {}, headers: Record<string, string> = {}): ProblemAnswer => {
    const { status, title } = PROBLEM_CODES[code];
    return { status, body: { type: problemTypeUrl(pc.base, code), title, status, detail, code, ...extra }, headers };
  };
  if (!(err instanceof FolioError)) {
    const errorId = newErrorId();
    pc.log.error({ errorId, err }, 'unexpected error in the REST API');
    return make('internal', 'something failed on the server; quote the error id when you report this', {
      error_id: errorId,
      instance: errorInstance(errorId),
    });
  }
  const code = err.code;
  if (code === 'aborted') return { ...make('bad_request', err.message), status: err.status, aborted: true };
  // What each outcome adds to the problem body.
  const extra: Partial<Problem> = {};
  if (err instanceof BadArguments && err.problems.length > 0) {
    const locate = pc.locate ?? ((path: string) => ({ in: 'body' as const, path }));
    extra.errors = err.problems.map((p): FieldProblem => {
      const at = pointer(p.path);
      return { ...(p.in ? { in: p.in, path: at } : locate(at)), message: p.message };
    });
  }
  if ((err instanceof Conflict || err instanceof PreconditionFailed) && err.current !== undefined) extra.current = err.current;
  if (err instanceof MissingScope) extra.missing_scopes = err.missingScopes;
  if (err instanceof QuotaExceeded) extra.quota = err.quota;
  if (err instanceof FileTooLarge) extra.limit = err.limit;
  if (err instanceof FunctionFailed) Object.assign(extra, { error_id: err.errorId, instance: errorInstance(err.errorId) });
  const detail = code === 'not_found' ? (pc.notFound ?? err.message) : err.message;
  return make(code, detail, extra, err.headers);
}

/** Service problem paths come as '/a/b', 'a.b' or 'a': make them JSON pointers. */
function pointer(p: string): string {
  if (p === '' || p === '(body)') return '';
  if (p.startsWith('/')) return p;
  return `/${p.split('.').join('/')}`;
}
