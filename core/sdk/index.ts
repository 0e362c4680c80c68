// The plugin SDK: everything a plugin may import from Folio. Plugins import it as 'folio/sdk'
// (the loader hands them this very module), or use none of it: a plain object works the same.
// Capabilities reach a handler through `ctx`, never through imports.
import type { Static, TSchema } from 'typebox';

/**
 * TypeBox, the version Folio validates with: write `args` schemas with `Type` from here
 * (`import { Type } from 'folio/sdk'`) and the handler's arguments are typed from them.
 */
export { Type } from 'typebox';
export type { Static, TSchema } from 'typebox';
import type { NotesService, NotesSummary } from '../domain/notes/types.ts';
import type { IdentityApi } from '../domain/identity/plugin-api.ts';

export type { IdentityApi } from '../domain/identity/plugin-api.ts';
export type { TokenInfo, NewToken, TokenPage, CreateToken, RotateToken } from '../domain/identity/personal-tokens.ts';
export type { UserInfo, UserPage, ListUsers, UpdateUser } from '../domain/identity/users.ts';
import type { FilesApi } from '../domain/files/plugin-api.ts';
import type { TranscribeApi } from '../domain/transcribe/plugin-api.ts';
import type { SearchApi } from '../domain/search/plugin-api.ts';

export type { FilesApi, TextPart, TextExtractPart, FileBytes } from '../domain/files/plugin-api.ts';
export type { TranscribeApi, TranscriptPart } from '../domain/transcribe/plugin-api.ts';
export type { SearchApi } from '../domain/search/plugin-api.ts';
export type {
  SearchHit as GlobalSearchHit,
  SearchPage as GlobalSearchPage,
  SearchOptions as GlobalSearchOptions,
} from '../domain/search/service.ts';
export type { SearchLocation } from '../contract/search.ts';
export type { Transcription, CreateTranscription, Segment as TranscriptSegment } from '../domain/transcribe/types.ts';
export type { FileMeta, FileVersion, ShareLink, CreatedShare, CreateShare, ListFilesOptions } from '../domain/files/types.ts';

export type {
  Note,
  NoteSummary,
  NoteSource,
  NotesSummary,
  Revision,
  RevisionSummary,
  Page,
  SearchHit,
  ListOptions,
  CreateNote,
  UpdateNote,
  AppendText,
  ReplaceSection,
  SearchOptions,
  ReportOptions,
} from '../domain/notes/types.ts';

/** The signed-in user a handler acts for. Supplied by the server, never by the caller. */
export interface CallerUser {
  id: string;
  email: string;
  name: string | null;
  roles: string[];
}

/** What an entitlement rule (`visible`) and a handler see of the caller. */
export interface Caller {
  user: CallerUser;
  scopes: string[];
  tokenKind: 'api' | 'minted' | 'oauth';
  /** The notes the caller owns, in brief (live notes only): enough for an entitlement rule. */
  notes: NotesSummary;
}

export interface Logger {
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
  debug(obj: object | string, msg?: string): void;
}

export interface AccessControl {
  /** Admins only: create a user and an API token for them. */
  createUser(input: { email: string; name?: string; roles?: string[] }): Promise<{
    id: string;
    email: string;
    roles: string[];
    token: string;
  }>;
  /**
   * Admins only: force a namespace on or off for one user (by id or email), or return it to its
   * rule. A namespace this server does not serve is refused, naming the closest ones.
   */
  setNamespaceAccess(input: {
    userId: string;
    namespace: string;
    access: 'enabled' | 'disabled' | 'default';
  }): Promise<{ user_id: string; namespace: string; access: string }>;
  /**
   * Any caller: a short-lived token acting as the caller, with the caller's scopes or fewer
   * (`scopes` narrows them). Minted tokens cannot mint.
   */
  mintToken(ttlSeconds?: number, scopes?: string[]): Promise<{ token: string; expires_at: string; scopes: string[] }>;
  /** Admins only: a user's (by id or email) effective access to every namespace, and where each answer comes from. */
  userAccess(user: string): Promise<UserAccess>;
}

/** One namespace as one user gets it. */
export interface NamespaceAccessView {
  namespace: string;
  /** Whether the namespace is shown to the user on every surface. */
  enabled: boolean;
  /** What decided it: nothing (default: shown), an operator's switch, or the plugin's `visible` rule. */
  source: 'default' | 'switch' | 'visible';
  /** The operator's switch, when there is one. */
  switch: 'enabled' | 'disabled' | null;
  /** False for a switch left over for a namespace no plugin serves now. */
  loaded: boolean;
  /** Why the `visible` rule could not answer (so the namespace is hidden): it hung, threw or gave a non-boolean; else null. */
  rule_failed: 'timed_out' | 'threw' | 'not_boolean' | null;
}

export interface UserAccess {
  user: { id: string; email: string; name: string | null; roles: string[]; active: boolean };
  namespaces: NamespaceAccessView[];
}

export interface PluginStatus {
  namespace: string | null;
  dir: string;
  version: string | null;
  /**
   * loaded: the current files serve. stale: the last reload failed, the previous version serves.
   * failed: nothing serves. degraded: an isolated plugin whose process was killed (a limit) or
   * crashed since it loaded; it was restarted and serves.
   */
  state: 'loaded' | 'stale' | 'failed' | 'degraded';
  /** process: the plugin runs in a sandboxed process of its own; in-process: on Folio's own thread. */
  isolation: 'process' | 'in-process';
  /** For a plugin in a process: how it is sandboxed, what holds, what this platform does not give, what it asked for and got. */
  sandbox: PluginSandbox | null;
  loaded_at: string | null;
  last_attempt_at: string;
  last_error: string | null;
}

export interface PluginCapabilities {
  network: string[];
  env: string[];
  processes: boolean;
  workers: boolean;
}

export interface PluginSandbox {
  /** bubblewrap: an OS sandbox (namespaces); permission-model: Node's permission model only. */
  kind: 'bubblewrap' | 'permission-model';
  /** Its process is running now (it is stopped after a while without calls, and started by the next). */
  running: boolean;
  holds: string[];
  missing: string[];
  capabilities: { requested: PluginCapabilities; granted: PluginCapabilities; missing: PluginCapabilities };
}

type Bound<F> = F extends (p: any, ...args: infer A) => infer R ? (...args: A) => R : never;

/**
 * The caller's notes. Every method acts as the caller: another user's note is NotFound. Reads
 * need the token scope notes:read, writes notes:write (Forbidden otherwise).
 */
export type NotesApi = { [K in Exclude<keyof NotesService, 'summary'>]: Bound<NotesService[K]> } & {
  summary(): Promise<NotesSummary>;
};

/** A background job that failed every attempt (admins only). */
export interface DeadLetter {
  /** The dead letter's id, for retryDeadLetter. */
  id: string;
  /** The kind of job, e.g. 'extract-text', and its id when it ran. */
  job: string;
  job_id: string;
  data: unknown;
  /** The last attempt's error. */
  error: unknown;
  attempts: number;
  failed_at: string;
}

/** Background work as an operator sees it: a queue job, a dead letter, or a transcription. */
export interface AdminJob {
  /** What retry and cancel take: the transcription's, the queue job's or the dead letter's id. */
  id: string;
  /** The kind of work: 'extract-text', 'transcribe', ... */
  kind: string;
  source: 'queue' | 'dead_letter' | 'transcription';
  state: 'queued' | 'running' | 'failed';
  /** The user whose work it is, when it is one user's. */
  owner_id: string | null;
  /** Why it failed (or why its last attempt did, for a job waiting to retry). */
  reason: string | null;
  attempts: number;
  /** When the work was created (a dead letter: when the job that failed was first queued). */
  created_at: string;
  finished_at: string | null;
  /** A failed one's id where it ran (a dead letter: the failed queue job's id; a transcription: its own). */
  job_id?: string;
  /** What a failed one was given (a dead letter: the job's data; a transcription: its owner and file). */
  data?: unknown;
}

/** Admins only: background jobs. */
export interface JobsAdmin {
  /** Jobs that failed for good, newest first, at most `limit` (default 100): dead letters and failed transcriptions. */
  deadLetters(limit?: number): Promise<DeadLetter[]>;
  /** Queues a failed job (a dead letter or a transcription) again; NotFound when there is none. */
  retryDeadLetter(id: string): Promise<{ id: string; retried: true }>;
  /** Queued, running and failed work of every kind and user, oldest first. */
  list(opts?: {
    state?: 'queued' | 'running' | 'failed';
    limit?: number;
    cursor?: string;
  }): Promise<{ items: AdminJob[]; next_cursor: string | null; limit: number }>;
  /** Stops a queued or running job; NotFound when there is none. */
  cancel(id: string): Promise<{ id: string; cancelled: true }>;
}

/** A function of the catalogue, as `catalogue.find` answers it. */
export interface CatalogueHit {
  namespace: string;
  function: string;
  title: string | null;
  description: string;
  /** Its arguments' JSON Schema. */
  args: JsonSchema;
  annotations: FunctionAnnotations;
}

export interface CatalogueApi {
  /** The functions this caller may call whose names, titles or descriptions hold the words, best first. */
  find(query: string, limit: number): Promise<{ hits: CatalogueHit[]; total: number }>;
  /** The namespaces the caller pinned (MCP lists only their tools while there are any). */
  pins(): Promise<string[]>;
  /** Replaces the pins; each must be a namespace the caller can see. */
  pin(namespaces: string[]): Promise<string[]>;
}

export interface Services {
  access: AccessControl;
  notes: NotesApi;
  jobs: JobsAdmin;
  /**
   * The caller's personal tokens (scope tokens; `self` and `scopes` need none) and, for admins,
   * the users (scope users and role admin; `me` is for everyone).
   */
  identity: IdentityApi;
  /** The caller's files: reads need files:read, writes files:write. */
  files: FilesApi;
  /** The caller's transcriptions of their stored audio (scope transcribe). */
  transcribe: TranscribeApi;
  /** One ranked search over every kind of resource the caller may read (scope search). */
  search: SearchApi;
  /** The functions this caller may call, searched by words, and the namespaces they pinned. */
  catalogue: CatalogueApi;
  /** Admins only: each plugin, its version, last reload and last error. */
  pluginStatus(): Promise<PluginStatus[]>;
}

export interface Context {
  caller: Caller;
  /** Fires on the server's handler timeout and when the client goes away. */
  signal: AbortSignal;
  log: Logger;
  services: Services;
  /**
   * Reports how far a long call has got (e.g. 3 of 10 files). Reaches MCP clients that asked for
   * progress; a no-op on surfaces without a progress channel, so it is always safe to call.
   */
  progress(progress: number, total?: number, message?: string): void;
  /**
   * This call's byte ceiling: the server's default or the function's `maxBytes`, lowered by the
   * caller's `max_bytes_llm`. An answer over it is refused (413); page or cut to stay under it.
   */
  budget: number;
  /**
   * A function as this caller calls it, for hints in answers and error messages ("next part:
   * ..."): `ctx.ref('notetaker.get', { id })` is `notetaker.get {"id": "..."}` to a curl caller and
   * `notetaker__get {"id": "..."}` (the MCP tool) to an MCP client. `fn` is the dotted name.
   */
  ref: (fn: string, args?: Record<string, unknown>) => string;
  /**
   * fetch() for the hosts this plugin may reach. In a plugin's own process only the hosts it asked
   * for in package.json (`folio.capabilities.network`) and the operator granted are reached; any
   * other is refused with an error naming the host. In-process (Folio's own plugins) it is fetch.
   */
  fetch: typeof fetch;
}

/** A JSON Schema object; TypeBox schemas are JSON Schema and work as they are. */
export type JsonSchema = object;

/**
 * The arguments a handler receives for an `args` schema: a TypeBox schema's static type
 * (`Type.Object({ text: Type.String() })` gives `{ text: string }`), and `any` for a plain JSON
 * Schema object or no schema, whose shape TypeScript cannot see.
 */
export type ArgsOf<S> = S extends TSchema & { readonly '~kind': string } ? Static<S> : any;

/**
 * What calling a function does, for clients that ask before acting (MCP tool annotations). Hints,
 * not guarantees: the server enforces nothing by them. Omitted fields mean "not said".
 */
export interface FunctionAnnotations {
  /** Changes nothing: reads only. */
  readOnlyHint?: boolean;
  /** When not read-only: may overwrite or remove what exists (false: only adds). */
  destructiveHint?: boolean;
  /** When not read-only: calling it again with the same arguments changes nothing more. */
  idempotentHint?: boolean;
  /** Reaches beyond Folio (the web, another service); false: works on the user's own data only. */
  openWorldHint?: boolean;
}

/**
 * One function. `S` is the type of its `args` schema, from which the handler's arguments are
 * inferred (see ArgsOf); `R` is what the handler returns.
 */
export interface FunctionDefinition<S = JsonSchema, R = unknown> {
  /** A short human title for client UIs, e.g. 'Search notes'. Default: `namespace.function`. */
  title?: string;
  /** What calling it does (read-only, destructive, ...): shown in curl help, passed to MCP clients. */
  annotations?: FunctionAnnotations;
  description: string;
  /** JSON Schema of the keyword arguments; must be `type: 'object'`. */
  args?: S;
  /** JSON Schema of the result, shown in help. */
  returns?: JsonSchema;
  examples?: Array<{ args: Record<string, unknown>; description?: string }>;
  /** Visible but not entitled -> 403 that names what is missing. */
  requires?: { roles?: string[]; scopes?: string[] };
  /** Response ceiling for this function in bytes; may lower or raise the server default up to its hard cap. */
  maxBytes?: number;
  handler: (args: ArgsOf<S>, ctx: Context) => R | Promise<R>;
}

/** One argument of a prompt: a string the client asks the user for. */
export interface PromptArgument {
  /** ^[a-z][a-z0-9_]{0,31}$ */
  name: string;
  description?: string;
  required?: boolean;
  /** The values it takes: MCP clients complete the argument from them (completion/complete). */
  values?: string[];
  /** Where clients complete it from instead: 'tags', the caller's note tags, most used first. */
  suggest?: 'tags';
}

/** What a prompt's `render` gets: who asks, and how to name functions for them (ctx.ref). */
export interface PromptContext {
  caller: Caller;
  ref: (fn: string, args?: Record<string, unknown>) => string;
}

/**
 * A prompt: a ready-made request a user picks in their client (MCP prompts, often shown as slash
 * commands), e.g. "summarize my week's notes". `render` writes the user message it puts in the
 * conversation; the model then works with the tools as usual.
 */
export interface PromptDefinition {
  /** A short human title, e.g. 'Summarize my week'. */
  title?: string;
  description: string;
  arguments?: PromptArgument[];
  /** The text of the user message; `args` holds the arguments the user gave (required ones always). */
  render: (args: Record<string, string>, ctx: PromptContext) => string | Promise<string>;
}

/** A plugin. `F` maps each function name to the type of that function's `args` schema. */
export interface PluginDefinition<F = Record<string, JsonSchema>> {
  namespace: string;
  description: string;
  version?: string;
  catalogue?: 'public' | 'unlisted';
  /** Entitlement rule: is this namespace shown to the caller? Throwing or hanging hides it. */
  visible?: (caller: Caller) => boolean | Promise<boolean>;
  functions: { [K in keyof F]: FunctionDefinition<F[K]> };
  /** Prompts (MCP), named like functions; shown to whoever can see the namespace. */
  prompts?: Record<string, PromptDefinition>;
}

/**
 * Adds types only; returns its argument unchanged. Functions written inline in `functions` get
 * their handler's arguments inferred from their `args`, like defineFunction.
 */
export function definePlugin<F>(plugin: PluginDefinition<F>): PluginDefinition<F> {
  return plugin;
}

/**
 * Adds types only; returns its argument unchanged. The handler's arguments are inferred from
 * `args` when it is a TypeBox schema: `defineFunction({ args: Type.Object({ text: Type.String() }),
 * handler: ({ text }, ctx) => ... })` gives `text: string`.
 */
export function defineFunction<S extends JsonSchema = JsonSchema, R = unknown>(fn: FunctionDefinition<S, R>): FunctionDefinition<S, R> {
  return fn;
}

/**
 * Errors a handler may throw to answer like the server does: NotFound -> 404, BadArguments -> 400
 * (name the argument in `problems`), Forbidden -> 403, Conflict -> 409 (pass the current state).
 * Anything else a handler throws is a 500 with an error id, and its message stays in the log.
 */
export { NotFound, BadArguments, Forbidden, Conflict } from '../contract/errors.ts';

const BYTES = Symbol.for('folio.bytes');

export interface BytesResult {
  readonly [BYTES]: true;
  data: Uint8Array;
  contentType: string;
  filename: string | undefined;
}

/** A binary (or non-JSON text) result: served with this content type and a Content-Disposition. */
export function bytes(data: Uint8Array | string, contentType: string, filename?: string): BytesResult {
  return {
    [BYTES]: true,
    data: typeof data === 'string' ? new TextEncoder().encode(data) : data,
    contentType,
    filename,
  };
}

export function isBytes(v: unknown): v is BytesResult {
  return typeof v === 'object' && v !== null && (v as Record<symbol, unknown>)[BYTES] === true;
}

// ---- Markdown and tags ------------------------------------------------------------------------
// How Folio reads a note's Markdown and what a tag is: the very functions the notes service uses
// (core/domain/notes/markdown.ts), so a plugin finds the headings, sections and action items the
// service finds, and normalizes tags the way the service stores them. Pure functions, no ctx needed.
export {
  charLength,
  linesOutsideFences,
  headings,
  parseHeading,
  headingKey,
  findSection,
  actionItems,
  openItems,
  parseActionItem,
  checkItem,
  normalizeTag,
  isTag,
  TAG_PATTERN,
  TAG_INPUT_PATTERN,
  TAG_RULE,
} from '../domain/notes/markdown.ts';
export type { MarkdownSource, SourceLine, Heading, Section, ActionItem } from '../domain/notes/markdown.ts';
