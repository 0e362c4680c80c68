// What can go wrong, and the exit code each outcome gives, so a script can branch on `$?` the way
// it would on a problem's `code`. Every failure the CLI reports is a CliError: one line, no stack.

export const EXIT = {
  ok: 0,
  /** Anything else: a request the server refused as malformed, a quota, an unexpected answer. */
  failed: 1,
  /** The command line itself: unknown command or flag, missing argument, bad value. */
  usage: 2,
  notFound: 3,
  /** Not logged in, a token the server refused (401) or one without the scope (403). */
  auth: 4,
  /** The resource's state forbids it: 409, or a stale version (412, 428). */
  conflict: 5,
  /** The server failed (5xx). */
  server: 6,
  /** No answer from the server: connection refused, DNS, timeout. */
  unreachable: 7,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export class CliError extends Error {
  readonly exitCode: ExitCode;
  constructor(message: string, exitCode: ExitCode = EXIT.failed) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** The exit code for an HTTP error status. */
export function exitForStatus(status: number): ExitCode {
  if (status === 401 || status === 403) return EXIT.auth;
  if (status === 404 || status === 410) return EXIT.notFound;
  if (status === 409 || status === 412 || status === 428) return EXIT.conflict;
  if (status >= 500 && status !== 507) return EXIT.server;
  return EXIT.failed;
}

/** An RFC 9457 problem as Folio sends it (only the members the CLI reads). */
export interface Problem {
  status?: number;
  code?: string;
  title?: string;
  detail?: string;
  error_id?: string;
  errors?: Array<{ in?: string; path?: string; message?: string }>;
  missing_scopes?: string[];
  current?: unknown;
}

/** One line: what went wrong, with the stable code and the status to branch on or search for. */
export function problemLine(status: number, problem: Problem | undefined, fallback: string): string {
  const code = problem?.code ?? `http_${status}`;
  let text = problem?.detail ?? problem?.title ?? fallback;
  const fields = (problem?.errors ?? []).map((e) => `${[e.in, e.path].filter(Boolean).join(' ')}: ${e.message ?? ''}`.trim());
  if (fields.length && problem?.code === 'validation_failed') text = fields.join('; ');
  if (problem?.error_id && !text.includes(problem.error_id)) text += ` (error id ${problem.error_id})`;
  return `${text.replace(/\s*\n\s*/g, ' ')} [${code}, ${status}]`;
}
