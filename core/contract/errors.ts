// Typed outcomes, modelled once. Every error Folio raises on purpose is one of these classes; each
// carries a stable `code`, and the table below gives each code its HTTP status, title and
// explanation. The surfaces derive their answers from it (curl: status + text, REST: RFC 9457
// problem+json, MCP: isError results), so a new outcome is one class and one row, never three
// hand-kept `instanceof` chains. This module imports nothing: the domain, the kernel, the surfaces
// and the plugin SDK may all use it.

export const ERROR_CODES = {
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
  password_required: {
    status: 401,
    title: 'Password required',
    about: 'This share link is protected by a password, and none or a wrong one was sent. Programs send it as X-Share-Password.',
  },
  forbidden: { status: 403, title: 'Forbidden', about: 'Authenticated, but this account may not do that: a role is missing.' },
  missing_scope: {
    status: 403,
    title: 'Missing scope',
    about: 'The token does not carry a scope the operation needs; `missing_scopes` names it. Mint or create a token that has it.',
  },
  not_found: {
    status: 404,
    title: 'Not found',
    about:
      'No such resource, or one that belongs to someone else, or a group switched off for your account: all answer with the same body, so existence cannot be probed.',
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
      'The version you based the edit on (If-Match or expected_version) is not the current one: someone else changed the resource. Nothing was written; `current` holds it as it is now (and ETag its version) when your token may read it. Merge and retry with that version.',
  },
  tus_version_unsupported: {
    status: 412,
    title: 'tus version not supported',
    about:
      'A resumable (tus) request named a protocol version in Tus-Resumable that this server does not speak, or none. Tus-Version lists the versions it does (1.0.0): send Tus-Resumable: 1.0.0.',
  },
  payload_too_large: {
    status: 413,
    title: 'Content too large',
    about: 'The request body is larger than the server accepts. Send less, e.g. create and then append in parts.',
  },
  file_too_large: {
    status: 413,
    title: 'File too large',
    about:
      'The file is larger than the per-file limit of this server (the `files.maxFileBytes` setting); nothing was stored. `limit` gives the limit in bytes.',
  },
  too_large: {
    status: 413,
    title: 'Answer too large',
    about: 'The answer is larger than the byte ceiling in force for the call. Ask for less: a smaller page or a part.',
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported media type',
    about:
      'The body, or the stored file an operation works on, is not of a type it takes. For a JSON body: send it as Content-Type: application/json (UTF-8, the only charset), without a Content-Encoding. For a transcription: the file must be audio or video (the type is read from its bytes, not from its name); the detail names the type found.',
  },
  range_not_satisfiable: {
    status: 416,
    title: 'Range not satisfiable',
    about: 'The Range asked for starts past the end of the content. Content-Range: bytes */<size> gives the size; ask again within it.',
  },
  precondition_required: {
    status: 428,
    title: 'Precondition required',
    about:
      'A replacing edit (title, body, tags, replace_section, PUT) must say which version it was based on: send If-Match: "<version>" (the ETag you read) or expected_version in the body.',
  },
  too_many_reports: {
    status: 429,
    title: 'Too many reports at once',
    about:
      'You already have as many reports being generated as one account may have at a time (2 by default). Nothing was started. Wait for one of them to finish, then ask again; Retry-After says how many seconds to wait at least.',
  },
  too_many_queued_jobs: {
    status: 429,
    title: 'Too many jobs queued',
    about:
      'You already have as many jobs of this kind queued or running as one account may have at a time (transcriptions: 5 by default; exports and imports together: 3 by default; the message says which and how many). Nothing was queued. Wait for one to finish or cancel one, then ask again; Retry-After says how many seconds to wait at least.',
  },
  plugin_busy: {
    status: 429,
    title: 'Plugin busy',
    about:
      'The plugin that serves this function is already running as many calls as its process may run at once (isolation.maxConcurrentCalls). Nothing was started. Retry-After says when to try again.',
  },
  quota_exceeded: {
    status: 507,
    title: 'Storage quota exceeded',
    about:
      'The write would take your stored bytes (note revisions, files) over your quota; nothing was stored. `quota` has `used`, `quota` and `needed` in bytes. Delete or purge something, or ask an operator for more space.',
  },
  engine_unavailable: {
    status: 503,
    title: 'Transcription engine unavailable',
    about:
      'The transcription engine asked for cannot run on this server (a program, a model or a setting is missing; the message names it). Nothing was queued. Ask the operator, or name another engine.',
  },
  search_timeout: {
    status: 503,
    title: 'Search stopped at its time limit',
    about:
      'The search ran past its time limit and was stopped; nothing is wrong with the query itself. It matches more than can be ranked in time: add a word, a kind, a tag or a date range to narrow it.',
  },
  blob_store_unavailable: {
    status: 503,
    title: 'File storage unavailable',
    about:
      "The server's file storage (its S3 bucket or its data disk) cannot be reached right now; nothing was stored or read. Your request was fine: send it again after the Retry-After seconds. An interrupted resumable upload keeps its bytes and is finished by asking for its offset again (HEAD answers 423 until the storage is back).",
  },
  storage_full: {
    status: 507,
    title: 'Storage full',
    about: "The server's storage has no room for this write; nothing was stored. Try again later, or tell the operator.",
  },
  too_many_requests: {
    status: 429,
    title: 'Too many requests',
    about: 'Too many wrong passwords for this link or from this client. Retry-After says how many seconds to wait.',
  },
  aborted: { status: 499, title: 'Client closed request', about: 'The caller went away before the answer; nothing is sent.' },
  internal: {
    status: 500,
    title: 'Internal server error',
    about: 'Something failed on the server. `error_id` is in the server log with the details; quote it when you report this.',
  },
} as const satisfies Record<string, { status: number; title: string; about: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * Outcomes with a 5xx status that are the caller's own limit, not a server fault: logged as
 * ordinary answers, not as failures (an operator alerting on failures is not paged because a user
 * filled their quota or asked a search too broad to rank in time).
 */
const CALLERS_OWN: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['quota_exceeded', 'search_timeout']);

/** Is this error an outcome the caller brought about (CALLERS_OWN), whatever its status? */
export function callersOwn(err: unknown): boolean {
  return err instanceof FolioError && CALLERS_OWN.has(err.code);
}

/** The reason phrase of each status Folio answers with, for the plain-text surfaces. */
export const REASON: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  416: 'Range Not Satisfiable',
  423: 'Locked',
  428: 'Precondition Required',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  499: 'Client Closed Request',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
  507: 'Insufficient Storage',
};

export abstract class FolioError extends Error {
  abstract readonly code: ErrorCode;
  constructor(message: string, options?: ErrorOptions) {
    // An outcome, not a fault: where it was thrown tells no one anything (a failure it wraps keeps
    // its own stack, as `cause`). Capturing a stack trace was a fifth of the CPU of a 401 answer.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message, options);
    Error.stackTraceLimit = limit;
    this.name = new.target.name;
  }
  get status(): number {
    return ERROR_CODES[this.code].status;
  }
  /** Response headers the outcome needs on every HTTP surface (WWW-Authenticate, Allow, ...). */
  get headers(): Record<string, string> {
    return {};
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

/** No usable credentials. `bearerError` is the RFC 6750 `error` attribute, when there is one. */
export class Unauthenticated extends FolioError {
  readonly code = 'unauthenticated';
  readonly bearerError: 'invalid_request' | 'invalid_token' | undefined;
  constructor(message: string, bearerError?: 'invalid_request' | 'invalid_token') {
    super(message);
    this.bearerError = bearerError;
  }
  override get headers(): Record<string, string> {
    const attr = this.bearerError ? `, error="${this.bearerError}"` : '';
    return { 'WWW-Authenticate': `Bearer realm="folio"${attr}` };
  }
}

/** Authenticated, visible, but not entitled. The message says what is missing. */
export class Forbidden extends FolioError {
  readonly code: ErrorCode = 'forbidden';
}

/** Entitled by role, but the token lacks a scope. `missingScopes` names each one. */
export class MissingScope extends Forbidden {
  override readonly code = 'missing_scope';
  readonly missingScopes: string[];
  constructor(message: string, missingScopes: string[]) {
    super(message);
    this.missingScopes = missingScopes;
  }
  override get headers(): Record<string, string> {
    return { 'WWW-Authenticate': `Bearer realm="folio", error="insufficient_scope", scope="${this.missingScopes.join(' ')}"` };
  }
}

export interface ArgProblem {
  /** Dotted path of the argument ('tags.0'), '(body)' for the whole body. */
  path: string;
  message: string;
  /** Where the value was, on surfaces that tell (REST: path, query, body, header). */
  in?: 'path' | 'query' | 'body' | 'header';
}

/** One spelling for argument paths whoever raised it: 'tags.0', never '/tags/0'. */
export function argPath(path: string): string {
  return path.replace(/^\//, '').replaceAll('/', '.') || '(body)';
}

/**
 * Malformed request or arguments the function will not take. With `problems` it is a
 * validation failure naming each argument; without, the request as a whole is malformed.
 */
export class BadArguments extends FolioError {
  readonly problems: ArgProblem[];
  /** Set by dispatch once the function is known, so the answer can print how to call it. */
  signature: string | undefined;
  help: string | undefined;
  constructor(message: string, problems: ArgProblem[] = []) {
    super(message);
    this.problems = problems.map((p) => ({ ...p, path: argPath(p.path) }));
  }
  get code(): ErrorCode {
    return this.problems.length > 0 ? 'validation_failed' : 'bad_request';
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

/** A conditional request (If-Match) whose version is not the current one. */
export class PreconditionFailed extends FolioError {
  readonly code = 'precondition_failed';
  readonly current: unknown;
  readonly etag: string | undefined;
  constructor(message: string, current?: unknown, etag?: string) {
    super(message);
    this.current = current;
    this.etag = etag;
  }
  override get headers(): Record<string, string> {
    return this.etag ? { ETag: this.etag } : {};
  }
}

/** A tus request whose Tus-Resumable names a version this server does not speak (or none). */
export class TusVersionUnsupported extends FolioError {
  readonly code = 'tus_version_unsupported';
  readonly versions: string;
  constructor(message: string, versions: string) {
    super(message);
    this.versions = versions;
  }
  override get headers(): Record<string, string> {
    return { 'Tus-Version': this.versions };
  }
}

/** A replacing write that did not say which version it was based on. */
export class PreconditionRequired extends FolioError {
  readonly code = 'precondition_required';
}

/** The path exists, but not with this method. */
export class MethodNotAllowed extends FolioError {
  readonly code = 'method_not_allowed';
  readonly allow: string;
  constructor(message: string, allow: string) {
    super(message);
    this.allow = allow;
  }
  override get headers(): Record<string, string> {
    return { Allow: this.allow };
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
  override get headers(): Record<string, string> {
    return { 'X-Folio-Size': String(this.size), 'X-Folio-Ceiling': String(this.limit) };
  }
}

/** The request body itself is over the accepted size. */
export class PayloadTooLarge extends FolioError {
  readonly code = 'payload_too_large';
}

/** A request body in a media type, charset or content coding the operation does not take. */
export class UnsupportedMediaType extends FolioError {
  readonly code = 'unsupported_media_type';
}

/** A write that would take the user's stored bytes over their quota. Nothing was stored. */
export class QuotaExceeded extends FolioError {
  readonly code = 'quota_exceeded';
  readonly quota: { used: number; quota: number; needed: number };
  constructor(message: string, quota: { used: number; quota: number; needed: number }) {
    super(message);
    this.quota = quota;
  }
}

/** A file over the per-file size limit. Nothing was stored. */
export class FileTooLarge extends FolioError {
  readonly code = 'file_too_large';
  readonly limit: number;
  constructor(message: string, limit: number) {
    super(message);
    this.limit = limit;
  }
}

/** A Range that starts past the end of the content. */
export class RangeNotSatisfiable extends FolioError {
  readonly code = 'range_not_satisfiable';
  readonly size: number;
  constructor(message: string, size: number) {
    super(message);
    this.size = size;
  }
  override get headers(): Record<string, string> {
    return { 'Content-Range': `bytes */${this.size}` };
  }
}

/** The storage itself is full (ENOSPC): nothing was stored. */
export class StorageFull extends FolioError {
  readonly code = 'storage_full';
}

/** The transcription engine cannot run here (what is missing is in the message): nothing was queued. */
export class EngineUnavailable extends FolioError {
  readonly code = 'engine_unavailable';
}

/** A share link's password is missing or wrong. */
export class PasswordRequired extends FolioError {
  readonly code = 'password_required';
}

/** A refusal that says when to try again (Retry-After, in seconds). */
export abstract class RetryLater extends FolioError {
  readonly retryAfter: number;
  constructor(message: string, retryAfter: number) {
    super(message);
    this.retryAfter = retryAfter;
  }
  override get headers(): Record<string, string> {
    return { 'Retry-After': String(this.retryAfter) };
  }
}

/** Refused for a while (wrong passwords); `retryAfter` seconds. */
export class TooManyRequests extends RetryLater {
  readonly code = 'too_many_requests';
}

/** The user already has as many reports being generated as one account may have at once. */
export class TooManyReports extends RetryLater {
  readonly code = 'too_many_reports';
}

/** The user already has as many transcription jobs queued or running as one account may have. */
export class TooManyQueuedJobs extends RetryLater {
  readonly code = 'too_many_queued_jobs';
}

/** An isolated plugin already runs as many calls as its process may run at once. */
export class PluginBusy extends RetryLater {
  readonly code = 'plugin_busy';
}

/**
 * The blob store (S3, the data disk) cannot be reached: connection refused or reset, a timeout, an
 * I/O error. The request may be sent again as it is; `retryAfter` seconds.
 */
export class BlobStoreUnavailable extends RetryLater {
  readonly code = 'blob_store_unavailable';
}

/** A search statement ran past its time limit (PostgreSQL's statement_timeout) and was stopped. */
export class SearchTimeout extends FolioError {
  readonly code = 'search_timeout';
}

/** The caller went away before the answer. */
export class Aborted extends FolioError {
  readonly code = 'aborted';
}

/** A handler raised or ran out of time. The message is safe to show; the cause goes to the log only. */
export class FunctionFailed extends FolioError {
  readonly code = 'internal';
  readonly errorId: string;
  constructor(message: string, errorId: string, cause?: unknown) {
    super(message, { cause });
    this.errorId = errorId;
  }
}
