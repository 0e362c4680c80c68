// Errors across the isolation boundary, both ways: a handler's error from the worker to Folio, a
// service's error from Folio to the worker. An error crosses as plain data and is revived as the
// same typed outcome on the other side (a NotFound thrown by a handler answers 404; a MissingScope
// from ctx.services reaches the handler as a MissingScope).
//
// The other side may be hostile: fromWire() takes anything and never throws. It revives an outcome
// by calling its constructor with fields checked one by one (a header value that is not one, a size
// that is not a number is dropped), never by copying what was sent onto Folio's objects: their
// `status`, `headers` and `code` are Folio's own, whatever the plugin claims.
import { randomUUID } from 'node:crypto';
import * as errors from '../../contract/errors.ts';

/** An error as data. `typed`: one of Folio's outcomes (errors.ts), revived as that class. */
export interface WireError {
  name: string;
  message: string;
  stack: string | undefined;
  typed: boolean;
  props: Record<string, unknown>;
}

/** Longest message and stack kept from the other side (the rest is cut, and says so). */
const MAX_TEXT = 64 * 1024;
/** Fields of an error that is not one of Folio's outcomes, kept for the log: a few short primitives. */
const MAX_PROPS = 32;
const MAX_PROP_TEXT = 1024;

type Props = Record<string, unknown>;

function isRecord(v: unknown): v is Props {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function cut(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max)}... (${s.length - max} more characters)`;
}

function text(v: unknown, max = MAX_TEXT): string | undefined {
  return typeof v === 'string' ? cut(v, max) : undefined;
}

/** A value a header may carry as it is: visible ASCII and spaces, no quote or backslash (they sit inside quoted strings). */
function headerSafe(v: unknown, max = 1024): string | undefined {
  return typeof v === 'string' && v.length <= max && /^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/.test(v) ? v : undefined;
}

function count(v: unknown): number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : 0;
}

/** JSON data as the surfaces will print it, or nothing (a cycle, a BigInt: not printable). */
function jsonData(v: unknown): unknown {
  if (v === undefined) return undefined;
  try {
    return JSON.parse(JSON.stringify(v)) as unknown;
  } catch {
    return undefined;
  }
}

const WHERE = new Set(['path', 'query', 'body', 'header']);

function problems(v: unknown): errors.ArgProblem[] {
  if (!Array.isArray(v)) return [];
  const out: errors.ArgProblem[] = [];
  for (const p of v.slice(0, 100)) {
    if (!isRecord(p)) continue;
    const path = text(p.path, 1024);
    const message = text(p.message, 4096);
    if (path === undefined || message === undefined) continue;
    const where = typeof p.in === 'string' && WHERE.has(p.in) ? { in: p.in as NonNullable<errors.ArgProblem['in']> } : {};
    out.push({ path, message, ...where });
  }
  return out;
}

/** Folio's outcomes a plugin may raise, by class name; typecheck fails until a new outcome has its line. */
type Outcome = {
  [K in keyof typeof errors]: (typeof errors)[K] extends new (...args: never[]) => errors.FolioError ? K : never;
}[keyof typeof errors];

const REVIVE: { [K in Outcome]: (message: string, p: Props) => errors.FolioError } = {
  NotFound: (m) => new errors.NotFound(m),
  UnknownName: (m) => new errors.UnknownName(m),
  Unauthenticated: (m, p) =>
    new errors.Unauthenticated(m, p.bearerError === 'invalid_request' || p.bearerError === 'invalid_token' ? p.bearerError : undefined),
  Forbidden: (m) => new errors.Forbidden(m),
  MissingScope: (m, p) =>
    new errors.MissingScope(
      m,
      (Array.isArray(p.missingScopes) ? p.missingScopes : []).map((s) => headerSafe(s, 128)).filter((s) => s !== undefined),
    ),
  BadArguments: (m, p) => {
    const err = new errors.BadArguments(m, problems(p.problems));
    err.signature = text(p.signature, 4096);
    err.help = text(p.help, 1024);
    return err;
  },
  Conflict: (m, p) => new errors.Conflict(m, jsonData(p.current)),
  PreconditionFailed: (m, p) => new errors.PreconditionFailed(m, jsonData(p.current), headerSafe(p.etag, 256)),
  PreconditionRequired: (m) => new errors.PreconditionRequired(m),
  TusVersionUnsupported: (m, p) => new errors.TusVersionUnsupported(m, headerSafe(p.versions, 64) ?? '1.0.0'),
  MethodNotAllowed: (m, p) => new errors.MethodNotAllowed(m, headerSafe(p.allow, 256) ?? ''),
  TooLarge: (m, p) => new errors.TooLarge(m, count(p.size), count(p.limit)),
  PayloadTooLarge: (m) => new errors.PayloadTooLarge(m),
  UnsupportedMediaType: (m) => new errors.UnsupportedMediaType(m),
  QuotaExceeded: (m, p) => {
    const q = isRecord(p.quota) ? p.quota : {};
    return new errors.QuotaExceeded(m, { used: count(q.used), quota: count(q.quota), needed: count(q.needed) });
  },
  FileTooLarge: (m, p) => new errors.FileTooLarge(m, count(p.limit)),
  RangeNotSatisfiable: (m, p) => new errors.RangeNotSatisfiable(m, count(p.size)),
  StorageFull: (m) => new errors.StorageFull(m),
  EngineUnavailable: (m) => new errors.EngineUnavailable(m),
  PasswordRequired: (m) => new errors.PasswordRequired(m),
  TooManyRequests: (m, p) => new errors.TooManyRequests(m, count(p.retryAfter)),
  TooManyReports: (m, p) => new errors.TooManyReports(m, count(p.retryAfter)),
  TooManyQueuedJobs: (m, p) => new errors.TooManyQueuedJobs(m, count(p.retryAfter)),
  PluginBusy: (m, p) => new errors.PluginBusy(m, count(p.retryAfter)),
  BlobStoreUnavailable: (m, p) => new errors.BlobStoreUnavailable(m, count(p.retryAfter)),
  SearchTimeout: (m) => new errors.SearchTimeout(m),
  Aborted: (m) => new errors.Aborted(m),
  FunctionFailed: (m, p) => new errors.FunctionFailed(m, headerSafe(p.errorId, 64) ?? randomUUID()),
};

/** Reads what may throw (a getter, a toString) and answers `fallback` instead. */
function safely<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}

/** A thrown value that is not an Error, described for the log (String() throws for some). */
function describe(v: unknown): string {
  if (typeof v === 'string') return cut(v, MAX_TEXT);
  if (typeof v === 'object' && v !== null) return safely(() => Object.prototype.toString.call(v), '[object]');
  if (typeof v === 'function') return 'a function';
  return safely(() => String(v), typeof v);
}

/** Own enumerable fields that survive structured clone; the rest is dropped rather than failing the message. */
function cloneable(err: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of safely(() => Object.keys(err), [])) {
    try {
      out[k] = structuredClone((err as Props)[k]);
    } catch {
      // a function, a socket, a getter that throws: not data, not sent
    }
  }
  return out;
}

const OUTCOMES = new Map<unknown, Outcome>(Object.keys(REVIVE).map((k) => [errors[k as Outcome].prototype, k as Outcome]));

/** The outcome class an error is of (its own subclass of NotFound is a NotFound), whatever its `name` says. */
function outcomeOf(err: Error): Outcome | undefined {
  const protoOf = (o: unknown): unknown => safely(() => Object.getPrototypeOf(o) as unknown, null);
  for (let p = protoOf(err); p; p = protoOf(p)) {
    const outcome = OUTCOMES.get(p);
    if (outcome) return outcome;
  }
  return undefined;
}

/** Any thrown value as data; never throws (a hostile or broken error must still fail only its call). */
export function toWire(err: unknown): WireError {
  if (!safely(() => err instanceof Error, false))
    return {
      name: 'Error',
      message: `a value that is not an Error was thrown: ${describe(err)}`,
      stack: undefined,
      typed: false,
      props: {},
    };
  const e = err as Error;
  const outcome = outcomeOf(e);
  return {
    name: outcome ?? describe(safely(() => e.name, 'Error')),
    message: describe(safely(() => e.message, '')),
    stack: safely(() => (typeof e.stack === 'string' ? cut(e.stack, MAX_TEXT) : undefined), undefined),
    typed: outcome !== undefined,
    props: cloneable(e),
  };
}

/** An error that is not one of Folio's outcomes: name, message, stack and a few short fields, for the log. */
function plainError(name: string, message: string, props: Props): Error {
  const err = new Error(message);
  Object.defineProperty(err, 'name', { value: name, writable: true, configurable: true });
  let kept = 0;
  for (const [k, v] of Object.entries(props)) {
    if (kept >= MAX_PROPS || k === 'name' || k === 'message' || k === 'stack' || k === '__proto__') continue;
    const value = typeof v === 'string' ? cut(v, MAX_PROP_TEXT) : v;
    if (value !== null && typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') continue;
    Object.defineProperty(err, k, { value, writable: true, enumerable: true, configurable: true });
    kept++;
  }
  return err;
}

/**
 * The error again, from anything the other side sent: of its typed class when it says it is one of
 * Folio's outcomes, else a plain Error (which a call answers as a failure with an error id). Never throws.
 */
export function fromWire(w: unknown): Error {
  if (!isRecord(w)) return new Error(`the plugin's worker sent an error that is not one: ${describe(w)}`);
  const name = text(w.name, 256) ?? 'Error';
  const message = text(w.message) ?? '';
  const props = isRecord(w.props) ? w.props : {};
  const revive = w.typed === true && Object.hasOwn(REVIVE, name) ? REVIVE[name as Outcome] : undefined;
  const err = revive ? revive(message, props) : plainError(name, message, props);
  const stack = text(w.stack);
  if (stack !== undefined) Object.defineProperty(err, 'stack', { value: stack, writable: true, configurable: true });
  return err;
}
