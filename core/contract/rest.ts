// The declarative REST route table, the contract between a domain and the REST surface: one entry
// per operation, from which both the Koa router and the OpenAPI document are made. A handler gets validated, typed input and returns a Reply; it never
// touches Koa, and it throws typed errors that problems.ts maps.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable, Writable } from 'node:stream';
import type { Static, TSchema } from 'typebox';
import type { Logger } from 'pino';
import type { Principal } from '../domain/identity/types.ts';
import type { ErrorCode } from './errors.ts';

type ProblemCode = Exclude<ErrorCode, 'aborted'>;

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface HeaderDoc {
  name: string;
  description: string;
  schema: Record<string, unknown>;
  required?: boolean;
}

export interface ResponseDoc {
  description: string;
  /** JSON body schema (application/json). */
  schema?: TSchema;
  /** Other media types the body may have (streams); the schema is a string/binary. */
  media?: string[];
  headers?: HeaderDoc[];
}

/** What a handler gives back. `stream` is piped as it comes (reports). */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  stream?: AsyncIterable<Uint8Array>;
  /** HTTP trailers sent after the stream (their names must be in a Trailer header). */
  trailers?: () => Promise<Record<string, string>>;
}

/** The header a list answers with when it lowered the limit asked for (every list: docs/rest.md). */
export const LIMIT_CLAMPED: HeaderDoc = {
  name: 'Folio-Limit-Clamped',
  description: 'Present when the requested limit was over the maximum: "requested=<asked>; limit=<used>".',
  schema: { type: 'string' },
};

/**
 * A list's page as the REST surface answers it, with the one list rule: a limit asked for over the
 * maximum was lowered (never refused), and the page says so in `limit_clamped_from` and the
 * Folio-Limit-Clamped header. `requested` is the limit the query asked for.
 */
export function pageReply<P extends { limit: number; limit_clamped_from?: number }>(page: P, requested: number | undefined): Reply {
  const body = { ...page };
  if (body.limit_clamped_from === undefined && requested !== undefined && requested > page.limit) body.limit_clamped_from = requested;
  const headers: Record<string, string> = {};
  if (body.limit_clamped_from !== undefined) headers[LIMIT_CLAMPED.name] = `requested=${body.limit_clamped_from}; limit=${body.limit}`;
  return { status: 200, body, headers };
}

/**
 * A route outside /api/v1 that takes no bearer token (a share link's public URL). No policy, no
 * OpenAPI entry: its handler decides everything from the request itself.
 */
export interface PublicRoute {
  method: 'GET' | 'POST';
  /** Absolute, OpenAPI style: '/s/{token}'. */
  path: string;
  handler: (call: PublicCall) => Promise<Reply>;
}

export interface PublicCall {
  params: Record<string, string>;
  method: string;
  header(this: void, name: string): string | undefined;
  /** The client's address, for throttles. */
  client: string;
  baseUrl: string;
  /** A small application/x-www-form-urlencoded body (a browser form), parsed; {} without one. */
  form(this: void): Promise<Record<string, string>>;
  log: Logger;
  signal: AbortSignal;
}

/**
 * A reply stream that can also write itself to an HTTP response, ending it (a stored file reuses a
 * few buffers rather than making one per chunk). The REST surface uses it when a reply's stream
 * has it; anything else reads the stream as the Readable it is.
 */
export const WRITE_TO = Symbol('folio.writeTo');
export interface WritesItself {
  [WRITE_TO](out: Writable): Promise<void>;
}

export function writesItself(stream: unknown): stream is WritesItself {
  return typeof stream === 'object' && stream !== null && typeof (stream as Partial<WritesItself>)[WRITE_TO] === 'function';
}

/**
 * A request body a route takes as bytes, never buffered: the raw body, or the part named `file` of
 * a multipart/form-data body (what a browser form sends). Reading it is the handler's business.
 */
export interface UploadBody {
  stream: Readable;
  /** The Content-Type of the bytes: the request's, or the multipart part's. */
  contentType: string | undefined;
  /** Content-Length, when the client declared it (raw bodies only). */
  length: number | undefined;
  /** The file name a multipart part carries. */
  filename: string | undefined;
  /** Form fields sent before the file part (multipart only). */
  fields: Record<string, string>;
}

/** The request as it came, for a `raw` route that speaks a protocol of its own (tus). */
export interface RawExchange {
  req: IncomingMessage;
  res: ServerResponse;
}

export interface Call<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** The streamed body of an `upload` route; undefined on other routes. */
  upload: UploadBody | undefined;
  /** The untouched request of a `raw` route; undefined on other routes. */
  raw: RawExchange | undefined;
  /** 'HEAD' for a HEAD on a GET route: answer the headers, open no stream. */
  method: string;
  /** The server's public base URL (no trailing slash), for links in answers. */
  baseUrl: string;
  principal: Principal;
  /** Request headers, lower-cased names. */
  header(this: void, name: string): string | undefined;
  log: Logger;
  /** Fires on the call deadline and when the caller goes away. */
  signal: AbortSignal;
  /** Lets a handler raise missing_scope for a scope only some inputs need (the policy's rule). */
  requireScope(this: void, scope: string): void;
  /** May the caller read what `namespace` governs with `scope` (visible, and the token has the scope)? */
  mayRead(this: void, namespace: string, scope: string): Promise<boolean>;
}

export interface Route<P extends TSchema = TSchema, Q extends TSchema = TSchema, B extends TSchema = TSchema> {
  /** operationId. */
  id: string;
  method: Method;
  /** OpenAPI style, relative to /api/v1: '/notetaker/notes/{id}'. */
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  /** Every one is needed (403 missing_scope names the first one lacking). */
  scopes: string[];
  /** Roles the user must have (403 forbidden otherwise), checked with the scopes. */
  roles?: string[];
  params?: P;
  query?: Q;
  body?: B;
  bodyRequired?: boolean;
  /**
   * The route takes its body as a stream of bytes (raw, or multipart/form-data with a part `file`)
   * instead of JSON: the JSON parser never touches it, nothing is buffered.
   */
  upload?: { description: string };
  /**
   * The route speaks a protocol of its own over the request (the tus resumable-upload protocol):
   * after authentication and the policy, nothing reads its body or checks its headers; the handler
   * gets the request as it came (`call.raw`) and answers with a Reply. `media`: the body's types.
   */
  raw?: { description: string; media?: string[] };
  /** Request headers the operation reads (documented as parameters). */
  headers?: HeaderDoc[];
  /**
   * Headers an OPTIONS request on this path answers with, besides Allow: a protocol's discovery
   * (tus: Tus-Version, Tus-Extension, Tus-Max-Size). OPTIONS needs no token.
   */
  options?: () => Record<string, string>;
  responses: Record<number, ResponseDoc>;
  /** Problem codes beyond the ones the framework infers from the shape of the route. */
  problems?: ProblemCode[];
  /** The 404 text: fixed, so another user's id and a missing one get the same body. */
  notFound?: string;
  handler: (call: Call<Static<P>, Static<Q>, Static<B>>) => Promise<Reply>;
}

/** Identity, for type inference of the handler's input from the schemas. */
export function route<P extends TSchema = TSchema, Q extends TSchema = TSchema, B extends TSchema = TSchema>(r: Route<P, Q, B>): Route {
  return r;
}

/** The problem codes an operation can answer: those its shape implies plus its own. */
export function problemCodesOf(r: Route): ProblemCode[] {
  const codes = new Set<ProblemCode>(['unauthenticated']);
  if (r.scopes.length > 0) codes.add('missing_scope');
  if ((r.roles ?? []).length > 0) codes.add('forbidden');
  // Every route belongs to a group governed by a namespace: a caller for whom an operator switched
  // it off gets 404 for the whole group, params or not.
  codes.add('not_found');
  // Every operation refuses query parameters it does not take.
  codes.add('validation_failed');
  if (r.body || r.upload || r.raw?.media?.length) {
    codes.add('bad_request');
    codes.add('payload_too_large');
    codes.add('unsupported_media_type');
  }
  for (const c of r.problems ?? []) codes.add(c);
  codes.add('internal');
  return [...codes];
}

/** '/notetaker/notes/{id}' -> '/notetaker/notes/:id' */
export function koaPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}
