// Typed outcomes. Raised anywhere below the surfaces; each surface maps them to its protocol in
// one place (curl: core/surfaces/curl/respond.ts).

export abstract class FolioError extends Error {
  abstract readonly code: string;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** No such thing, or a thing the caller may not see. Both answer the same, by design. */
export class NotFound extends FolioError {
  readonly code = 'not_found';
}

/**
 * The registry has no namespace, function or skill by that name for this caller (absent or
 * hidden alike). Distinct from a NotFound a handler raises about its own data: MCP answers the
 * first with the protocol's unknown-tool error and the second as a tool result.
 */
export class UnknownName extends NotFound {}

/** No usable credentials. */
export class Unauthenticated extends FolioError {
  readonly code = 'unauthenticated';
}

/** Authenticated, visible, but not entitled. The message says what is missing. */
export class Forbidden extends FolioError {
  readonly code = 'forbidden';
}

export interface ArgProblem {
  /** JSON pointer-ish path of the argument, '' for the whole body. */
  path: string;
  message: string;
}

/** Malformed request or arguments the function will not take. */
export class BadArguments extends FolioError {
  readonly code = 'bad_arguments';
  readonly problems: ArgProblem[];
  /** Set by dispatch once the function is known, so the answer can print how to call it. */
  signature: string | undefined;
  help: string | undefined;
  constructor(message: string, problems: ArgProblem[] = []) {
    super(message);
    // One spelling for argument paths whoever raised it: 'tags.0', not '/tags/0'.
    this.problems = problems.map((p) => ({ ...p, path: p.path.replace(/^\//, '').replaceAll('/', '.') || '(body)' }));
  }
}

/** A write that lost a race (stale version) or collides with existing data. */
export class Conflict extends FolioError {
  readonly code = 'conflict';
  readonly current: unknown;
  constructor(message: string, current?: unknown) {
    super(message);
    this.current = current;
  }
}

/** The answer is larger than the byte ceiling in force for this call. */
export class TooLarge extends FolioError {
  readonly code = 'too_large';
  readonly size: number;
  readonly limit: number;
  constructor(message: string, size: number, limit: number) {
    super(message);
    this.size = size;
    this.limit = limit;
  }
}

/** The request body itself is over the accepted size. */
export class PayloadTooLarge extends FolioError {
  readonly code = 'payload_too_large';
}

/** The handler did not finish in time or its caller went away. */
export class Aborted extends FolioError {
  readonly code = 'aborted';
}

/** A handler raised. The message is safe to show; the cause goes to the log only. */
export class FunctionFailed extends FolioError {
  readonly code = 'function_failed';
  readonly errorId: string;
  constructor(message: string, errorId: string, cause?: unknown) {
    super(message, { cause });
    this.errorId = errorId;
  }
}
