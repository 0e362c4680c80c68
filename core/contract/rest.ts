// The declarative REST route table, the contract between a domain and the REST surface: one entry
// per operation, from which both the Koa router and the OpenAPI document are made. A handler gets validated, typed input and returns a Reply; it never
// touches Koa, and it throws typed errors that problems.ts maps.
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

export interface Call<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  principal: Principal;
  /** Request headers, lower-cased names. */
  header(this: void, name: string): string | undefined;
  log: Logger;
  /** Fires on the call deadline and when the caller goes away. */
  signal: AbortSignal;
  /** Lets a handler raise missing_scope for a scope only some inputs need (the policy's rule). */
  requireScope(this: void, scope: string): void;
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
  /** Request headers the operation reads (documented as parameters). */
  headers?: HeaderDoc[];
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
  if (r.params) codes.add('not_found');
  // Every operation refuses query parameters it does not take.
  codes.add('validation_failed');
  if (r.body) {
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
