import { EmptyOptions } from '@mikro-orm/core';
import { EntityCtor } from '@mikro-orm/core';
import { EntitySchemaWithMeta } from '@mikro-orm/core';
import { InferEntity } from '@mikro-orm/core';
import { InferEntityFromProperties } from '@mikro-orm/core';
import type { Logger as Logger_2 } from 'pino';
import { MikroORM } from '@mikro-orm/postgresql';
import { PropertyOptions } from '@mikro-orm/core';
import { Static } from 'typebox';
import { TSchema } from 'typebox';
import { Type } from 'typebox';
import { UniversalPropertyOptionsBuilder } from '@mikro-orm/core';

export declare interface AccessControl {
    /** Admins only: create a user and an API token for them. */
    createUser(input: {
        email: string;
        name?: string;
        roles?: string[];
    }): Promise<{
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
    }): Promise<{
        user_id: string;
        namespace: string;
        access: string;
    }>;
    /**
     * Any caller: a short-lived token acting as the caller, with the caller's scopes or fewer
     * (`scopes` narrows them). Minted tokens cannot mint.
     */
    mintToken(ttlSeconds?: number, scopes?: string[]): Promise<{
        token: string;
        expires_at: string;
        scopes: string[];
    }>;
    /** Admins only: a user's (by id or email) effective access to every namespace, and where each answer comes from. */
    userAccess(user: string): Promise<UserAccess>;
}

export declare interface ActionItem {
    /** 1-based line number. */
    line: number;
    /** The item's text, without the marker and the box. */
    text: string;
    /** [x] or [X]. */
    done: boolean;
}

/** Every action item (`- [ ] ...`, `* [x] ...`, `1. [ ] ...`) outside fenced code blocks, in order. */
export declare function actionItems(source: MarkdownSource): ActionItem[];

/** Background work as an operator sees it: a queue job, a dead letter, or a transcription. */
export declare interface AdminJob {
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

export declare interface AppendText {
    text: string;
    /** Append at the end of this heading's section instead of the note's end. A missing heading is BadArguments. */
    heading?: string;
}

declare interface ArgProblem {
    /** Dotted path of the argument ('tags.0'), '(body)' for the whole body. */
    path: string;
    message: string;
    /** Where the value was, on surfaces that tell (REST: path, query, body, header). */
    in?: 'path' | 'query' | 'body' | 'header';
}

/**
 * The arguments a handler receives for an `args` schema: a TypeBox schema's static type
 * (`Type.Object({ text: Type.String() })` gives `{ text: string }`), and `any` for a plain JSON
 * Schema object or no schema, whose shape TypeScript cannot see.
 */
export declare type ArgsOf<S> = S extends TSchema & {
    readonly '~kind': string;
} ? Static<S> : any;

/**
 * Malformed request or arguments the function will not take. With `problems` it is a
 * validation failure naming each argument; without, the request as a whole is malformed.
 */
export declare class BadArguments extends FolioError {
    readonly problems: ArgProblem[];
    /** Set by dispatch once the function is known, so the answer can print how to call it. */
    signature: string | undefined;
    help: string | undefined;
    constructor(message: string, problems?: ArgProblem[]);
    get code(): ErrorCode;
}

declare function bindIdentity(identity: IdentityService, caller: DomainCaller): {
    tokens: {
        scopes: () => Promise<{
            scope: string;
            description: string;
            implies: string[];
            roles: string[];
        }[]>;
        self: () => Promise<TokenInfo>;
        list: (opts?: {
            limit?: number;
            cursor?: string;
            active?: boolean;
        }) => Promise<TokenPage>;
        get: (id: string) => Promise<TokenInfo>;
        create: (input: CreateToken) => Promise<NewToken>;
        rotate: (id: string, input?: RotateToken) => Promise<NewToken>;
        revoke: (id: string) => Promise<TokenInfo>;
    };
    oauth: {
        grants: () => Promise<OAuthGrant[]>;
        revokeGrant: (id: string) => Promise<void>;
        clients: (opts?: {
            limit?: number;
            cursor?: string;
        }) => Promise<OAuthClientPage>;
        deleteClient: (id: string) => Promise<void>;
    };
    users: {
        me: () => Promise<UserInfo>;
        list: (opts?: ListUsers) => Promise<UserPage>;
        get: (id: string) => Promise<UserInfo>;
        create: (input: {
            email: string;
            name?: string | null;
            roles?: string[];
        }) => Promise<UserInfo>;
        update: (id: string, input: UpdateUser) => Promise<UserInfo>;
        delete: (id: string, confirm?: string) => Promise<void>;
        invite: (id: string, expiresInHours?: number) => Promise<Invitation>;
    };
};

declare type Bound<F> = F extends (p: any, ...args: infer A) => infer R ? (...args: A) => R : never;

declare const BYTES: unique symbol;

/** A binary (or non-JSON text) result: served with this content type and a Content-Disposition. */
export declare function bytes(data: Uint8Array | string, contentType: string, filename?: string): BytesResult;

export declare interface BytesResult {
    readonly [BYTES]: true;
    data: Uint8Array;
    contentType: string;
    filename: string | undefined;
}

/** What an entitlement rule (`visible`) and a handler see of the caller. */
export declare interface Caller {
    user: CallerUser;
    scopes: string[];
    tokenKind: 'api' | 'minted' | 'oauth';
    /** The notes the caller owns, in brief (live notes only): enough for an entitlement rule. */
    notes: NotesSummary;
}

/** The signed-in user a handler acts for. Supplied by the server, never by the caller. */
export declare interface CallerUser {
    id: string;
    email: string;
    name: string | null;
    roles: string[];
}

export declare interface CatalogueApi {
    /** The functions this caller may call whose names, titles or descriptions hold the words, best first. */
    find(query: string, limit: number): Promise<{
        hits: CatalogueHit[];
        total: number;
    }>;
    /** The namespaces the caller pinned (MCP lists only their tools while there are any). */
    pins(): Promise<string[]>;
    /** Replaces the pins; each must be a namespace the caller can see. */
    pin(namespaces: string[]): Promise<string[]>;
}

/** A function of the catalogue, as `catalogue.find` answers it. */
export declare interface CatalogueHit {
    namespace: string;
    function: string;
    title: string | null;
    description: string;
    /** Its arguments' JSON Schema. */
    args: JsonSchema;
    annotations: FunctionAnnotations;
}

declare interface Change {
    kind: ChangeKind;
    userId: string;
}

declare class ChangeFeed implements Signals {
    #private;
    /** Without a database (or with the embedded one) changes stay in this process. */
    constructor(opts?: {
        db?: Database;
        databaseUrl?: string | undefined;
        log?: Logger_2;
    });
    /** Starts listening to the other nodes (PostgreSQL server only). */
    start(): Promise<void>;
    subscribe(listener: ChangeListener): () => void;
    /** Call after the change has committed. Local listeners hear it before this returns. */
    publish(change: Change): void;
    /** Tells the other nodes (PostgreSQL server only: the embedded engine has no other node). */
    send(topic: string, data: unknown): void;
    on(topic: string, listener: (data: unknown) => void): () => void;
    close(): Promise<void>;
}

declare type ChangeKind = 'identity' | 'notes';

/** `all`: a reconnect may have missed notifications; drop everything. */
declare type ChangeListener = (change: Change | 'all') => void;

/** Length in characters (Unicode code points). */
export declare function charLength(s: string): number;

/**
 * The body with the open item on `line` checked: only the character inside its box changes
 * (`[ ]` -> `[x]`), the rest of the line and its line ending stay. Null when that line is not an
 * open action item.
 */
export declare function checkItem(body: string, line: number): string | null;

/** A write that lost a race (stale version) or collides with existing data. */
export declare class Conflict extends FolioError {
    readonly code = "conflict";
    readonly current: unknown;
    constructor(message: string, current?: unknown);
}

export declare interface Context {
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

declare interface CreateApiTokenInput {
    name?: string | null | undefined;
    scopes: string[];
    expiresAt?: Date | null | undefined;
    /** Store this exact token (e.g. the bootstrap admin token, 32+ chars) instead of generating one. */
    raw?: string | undefined;
}

/** A new link: the token appears here once and is never stored. */
export declare type CreatedShare = ShareLink & {
    token: string;
};

export declare interface CreateNote {
    title: string;
    body?: string;
    tags?: string[];
    source?: NoteSource;
}

export declare interface CreateShare {
    expires_in_seconds?: number | undefined;
    password?: string | undefined;
    max_downloads?: number | undefined;
    version?: number | undefined;
    label?: string | undefined;
}

export declare interface CreateToken {
    name: string;
    description?: string | null | undefined;
    scopes: string[];
    /** One of the two: whole days from now, or an instant. */
    expires_in_days?: number | undefined;
    expires_at?: string | undefined;
}

export declare interface CreateTranscription {
    file_id: string;
    version?: number;
    language?: string;
    engine?: EngineName;
    tags?: string[];
    to_note?: boolean;
}

declare interface CreateUserInput {
    email: string;
    name?: string | null | undefined;
    roles?: string[] | undefined;
}

declare interface Database {
    /** The MikroORM instance (postgresql driver). Fork `orm.em` per unit of work. */
    orm: MikroORM;
    engine: 'postgres' | 'pglite';
    /**
     * Runs `select 1` on a connection of its own (never one of the pool the application's queries
     * wait for, so a busy pool does not delay it); rejects on error or when no answer arrives within
     * `timeoutMs`. Never hangs.
     */
    ping(timeoutMs: number): Promise<void>;
    /** Closes the ORM pool, and in PGlite mode the socket server and PGlite itself. Idempotent. */
    close(): Promise<void>;
}

/** A background job that failed every attempt (admins only). */
export declare interface DeadLetter {
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

/**
 * Adds types only; returns its argument unchanged. The handler's arguments are inferred from
 * `args` when it is a TypeBox schema: `defineFunction({ args: Type.Object({ text: Type.String() }),
 * handler: ({ text }, ctx) => ... })` gives `text: string`.
 */
export declare function defineFunction<S extends JsonSchema = JsonSchema, R = unknown>(fn: FunctionDefinition<S, R>): FunctionDefinition<S, R>;

/**
 * Adds types only; returns its argument unchanged. Functions written inline in `functions` get
 * their handler's arguments inferred from their `args`, like defineFunction.
 */
export declare function definePlugin<F>(plugin: PluginDefinition<F>): PluginDefinition<F>;

/** The caller a domain's plugin API acts for, and the policy's scope check. */
declare interface DomainCaller {
    principal: Principal;
    /** Throws MissingScope unless the caller's token allows every scope. */
    entitle(scopes: string[], what: string): void;
    /**
     * May the caller read what `namespace` governs with `scope`? (The namespace is visible to them and
     * their token carries the scope.) Search asks it per kind of resource.
     */
    mayRead(namespace: string, scope: string): Promise<boolean>;
    /** Is the namespace (a domain's REST group) visible to the caller: no operator switch off, its rule passes? */
    groupVisible(namespace: string): Promise<boolean>;
}

declare type EngineName = 'local' | 'openai';

declare const ERROR_CODES: {
    readonly bad_request: {
        readonly status: 400;
        readonly title: "Bad request";
        readonly about: "The request itself is malformed: a body that is not JSON, nested too deeply, or a header in the wrong form.";
    };
    readonly validation_failed: {
        readonly status: 400;
        readonly title: "Validation failed";
        readonly about: "A parameter or a field of the body does not match the schema, or the operation will not take it. `errors` names each one by `in` (path, query, body) and `path` (a JSON pointer).";
    };
    readonly unauthenticated: {
        readonly status: 401;
        readonly title: "Unauthenticated";
        readonly about: "No usable bearer token. Send Authorization: Bearer <token> (never a token in the URL).";
    };
    readonly password_required: {
        readonly status: 401;
        readonly title: "Password required";
        readonly about: "This share link is protected by a password, and none or a wrong one was sent. Programs send it as X-Share-Password.";
    };
    readonly forbidden: {
        readonly status: 403;
        readonly title: "Forbidden";
        readonly about: "Authenticated, but this account may not do that: a role is missing.";
    };
    readonly missing_scope: {
        readonly status: 403;
        readonly title: "Missing scope";
        readonly about: "The token does not carry a scope the operation needs; `missing_scopes` names it. Mint or create a token that has it.";
    };
    readonly not_found: {
        readonly status: 404;
        readonly title: "Not found";
        readonly about: "No such resource, or one that belongs to someone else, or a group switched off for your account: all answer with the same body, so existence cannot be probed.";
    };
    readonly method_not_allowed: {
        readonly status: 405;
        readonly title: "Method not allowed";
        readonly about: "The path exists, but not with this method. The Allow header lists the methods it takes.";
    };
    readonly conflict: {
        readonly status: 409;
        readonly title: "Conflict";
        readonly about: "The request collides with the current state of the resource (for example, purging a note that is not in the trash).";
    };
    readonly precondition_failed: {
        readonly status: 412;
        readonly title: "Precondition failed";
        readonly about: "The version you based the edit on (If-Match or expected_version) is not the current one: someone else changed the resource. Nothing was written; `current` holds it as it is now (and ETag its version) when your token may read it. Merge and retry with that version.";
    };
    readonly tus_version_unsupported: {
        readonly status: 412;
        readonly title: "tus version not supported";
        readonly about: "A resumable (tus) request named a protocol version in Tus-Resumable that this server does not speak, or none. Tus-Version lists the versions it does (1.0.0): send Tus-Resumable: 1.0.0.";
    };
    readonly payload_too_large: {
        readonly status: 413;
        readonly title: "Content too large";
        readonly about: "The request body is larger than the server accepts. Send less, e.g. create and then append in parts.";
    };
    readonly file_too_large: {
        readonly status: 413;
        readonly title: "File too large";
        readonly about: "The file is larger than the per-file limit of this server (the `files.maxFileBytes` setting); nothing was stored. `limit` gives the limit in bytes.";
    };
    readonly too_large: {
        readonly status: 413;
        readonly title: "Answer too large";
        readonly about: "The answer is larger than the byte ceiling in force for the call. Ask for less: a smaller page or a part.";
    };
    readonly unsupported_media_type: {
        readonly status: 415;
        readonly title: "Unsupported media type";
        readonly about: "The body, or the stored file an operation works on, is not of a type it takes. For a JSON body: send it as Content-Type: application/json (UTF-8, the only charset), without a Content-Encoding. For a transcription: the file must be audio or video (the type is read from its bytes, not from its name); the detail names the type found.";
    };
    readonly range_not_satisfiable: {
        readonly status: 416;
        readonly title: "Range not satisfiable";
        readonly about: "The Range asked for starts past the end of the content. Content-Range: bytes */<size> gives the size; ask again within it.";
    };
    readonly precondition_required: {
        readonly status: 428;
        readonly title: "Precondition required";
        readonly about: "A replacing edit (title, body, tags, replace_section, PUT) must say which version it was based on: send If-Match: \"<version>\" (the ETag you read) or expected_version in the body.";
    };
    readonly too_many_reports: {
        readonly status: 429;
        readonly title: "Too many reports at once";
        readonly about: "You already have as many reports being generated as one account may have at a time (2 by default). Nothing was started. Wait for one of them to finish, then ask again; Retry-After says how many seconds to wait at least.";
    };
    readonly too_many_queued_jobs: {
        readonly status: 429;
        readonly title: "Too many jobs queued";
        readonly about: "You already have as many jobs of this kind queued or running as one account may have at a time (transcriptions: 5 by default; exports and imports together: 3 by default; the message says which and how many). Nothing was queued. Wait for one to finish or cancel one, then ask again; Retry-After says how many seconds to wait at least.";
    };
    readonly plugin_busy: {
        readonly status: 429;
        readonly title: "Plugin busy";
        readonly about: "The plugin that serves this function is already running as many calls as its process may run at once (isolation.maxConcurrentCalls). Nothing was started. Retry-After says when to try again.";
    };
    readonly quota_exceeded: {
        readonly status: 507;
        readonly title: "Storage quota exceeded";
        readonly about: "The write would take your stored bytes (note revisions, files) over your quota; nothing was stored. `quota` has `used`, `quota` and `needed` in bytes. Delete or purge something, or ask an operator for more space.";
    };
    readonly engine_unavailable: {
        readonly status: 503;
        readonly title: "Transcription engine unavailable";
        readonly about: "The transcription engine asked for cannot run on this server (a program, a model or a setting is missing; the message names it). Nothing was queued. Ask the operator, or name another engine.";
    };
    readonly search_timeout: {
        readonly status: 503;
        readonly title: "Search stopped at its time limit";
        readonly about: "The search ran past its time limit and was stopped; nothing is wrong with the query itself. It matches more than can be ranked in time: add a word, a kind, a tag or a date range to narrow it.";
    };
    readonly blob_store_unavailable: {
        readonly status: 503;
        readonly title: "File storage unavailable";
        readonly about: "The server's file storage (its S3 bucket or its data disk) cannot be reached right now; nothing was stored or read. Your request was fine: send it again after the Retry-After seconds. An interrupted resumable upload keeps its bytes and is finished by asking for its offset again (HEAD answers 423 until the storage is back).";
    };
    readonly storage_full: {
        readonly status: 507;
        readonly title: "Storage full";
        readonly about: "The server's storage has no room for this write; nothing was stored. Try again later, or tell the operator.";
    };
    readonly too_many_requests: {
        readonly status: 429;
        readonly title: "Too many requests";
        readonly about: "Too many wrong passwords for this link or from this client. Retry-After says how many seconds to wait.";
    };
    readonly aborted: {
        readonly status: 499;
        readonly title: "Client closed request";
        readonly about: "The caller went away before the answer; nothing is sent.";
    };
    readonly internal: {
        readonly status: 500;
        readonly title: "Internal server error";
        readonly about: "Something failed on the server. `error_id` is in the server log with the details; quote it when you report this.";
    };
};

declare type ErrorCode = keyof typeof ERROR_CODES;

export declare interface FileBytes {
    file: Pick<FileMeta, 'id' | 'name' | 'content_type' | 'size' | 'version'>;
    data: Uint8Array;
}

/** A file as every surface shows it (JSON field names are the wire names): its current version. */
export declare interface FileMeta {
    id: string;
    name: string;
    /** Optional folder path ('' for none), e.g. 'projects/2026'. */
    folder: string;
    /** Sniffed from the bytes (file-type), else the declared type, else guessed from the name. */
    content_type: string;
    size: number;
    sha256: string;
    /** 1 on the first upload; every new content (an upload or a restore) increments it. */
    version: number;
    /** The note this file is attached to, if any. */
    note_id: string | null;
    created_at: string;
    updated_at: string;
    /** Set while the file is in the trash. */
    deleted_at: string | null;
}

/** The caller's files (ctx.services.files). Reads need files:read, writes files:write. */
export declare interface FilesApi {
    list(opts?: ListFilesOptions): Promise<Page<FileMeta>>;
    get(id: string): Promise<FileMeta>;
    versions(id: string): Promise<FileVersion[]>;
    /** Up to `maxBytes` of the file's text from byte `offset` (UTF-8; a partial character is left for the next part). */
    readText(id: string, opts: {
        offset?: number;
        maxBytes: number;
        version?: number;
    }): Promise<TextPart>;
    /**
     * The text Folio extracted from the file (any type it extracts: PDF, DOCX, text), or from one PDF
     * page, from character `offset`, at most `maxChars` characters of it.
     */
    extractedText(id: string, opts: {
        version?: number;
        page?: number;
        offset?: number;
        maxChars: number;
    }): Promise<TextExtractPart>;
    /** The whole content, when it is at most `maxBytes`; else TooLarge (fetch it from `contentUrl` instead). */
    readBytes(id: string, opts: {
        maxBytes: number;
        version?: number;
    }): Promise<FileBytes>;
    /** The REST URL of the content, for a caller that holds a bearer token. */
    contentUrl(id: string): string;
    /** A new file from text (UTF-8). */
    writeText(input: {
        name: string;
        text: string;
        folder?: string;
        content_type?: string;
        note_id?: string;
    }): Promise<FileMeta>;
    /** New text content of an existing file, based on `expectedVersion`. */
    replaceText(id: string, expectedVersion: number, text: string, contentType?: string): Promise<FileMeta>;
    attach(id: string, noteId: string | null): Promise<FileMeta>;
    attachments(noteId: string): Promise<FileMeta[]>;
    trash(id: string): Promise<FileMeta>;
    untrash(id: string): Promise<FileMeta>;
    createShare(id: string, opts?: CreateShare): Promise<CreatedShare & {
        url: string;
    }>;
    listShares(opts?: {
        file_id?: string;
    }): Promise<ShareLink[]>;
    revokeShare(shareId: string): Promise<void>;
}

/** A version's extracted text, as the files-extract-text job stored it (for search and for reading). */
declare interface FileText {
    file_id: string;
    version: number;
    /**
     * 'pending' until the job has run; 'skipped' when there is no text to extract (`note` says why);
     * 'failed' when extracting it went over the extractor's memory or time limit (`note` says which).
     */
    state: 'pending' | 'extracted' | 'skipped' | 'failed';
    /** Why it was skipped or failed, or 'truncated' when the text was cut at the extraction cap. */
    note: string | null;
    /** A PDF's page count; 0 for other types. */
    pages: number;
    /** The page `text` is, when one page was asked for. */
    page: number | null;
    /** The whole text (PDF pages joined by a blank line), or that one page; '' unless extracted. */
    text: string;
}

export declare interface FileVersion {
    file_id: string;
    version: number;
    name: string;
    content_type: string;
    size: number;
    sha256: string;
    change: VersionChange;
    created_at: string;
}

/** The section of the first heading whose key is `name`'s key (see headingKey), or undefined. */
export declare function findSection(source: MarkdownSource, name: string): Section | undefined;

declare abstract class FolioError extends Error {
    abstract readonly code: ErrorCode;
    constructor(message: string, options?: ErrorOptions);
    get status(): number;
    /** Response headers the outcome needs on every HTTP surface (WWW-Authenticate, Allow, ...). */
    get headers(): Record<string, string>;
}

/** Authenticated, visible, but not entitled. The message says what is missing. */
export declare class Forbidden extends FolioError {
    readonly code: ErrorCode;
}

/**
 * What calling a function does, for clients that ask before acting (MCP tool annotations). Hints,
 * not guarantees: the server enforces nothing by them. Omitted fields mean "not said".
 */
export declare interface FunctionAnnotations {
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
export declare interface FunctionDefinition<S = JsonSchema, R = unknown> {
    /** A short human title for client UIs, e.g. 'Search notes'. Default: `namespace.function`. */
    title?: string;
    /** What calling it does (read-only, destructive, ...): shown in curl help, passed to MCP clients. */
    annotations?: FunctionAnnotations;
    description: string;
    /** JSON Schema of the keyword arguments; must be `type: 'object'`. */
    args?: S;
    /** JSON Schema of the result, shown in help. */
    returns?: JsonSchema;
    examples?: Array<{
        args: Record<string, unknown>;
        description?: string;
    }>;
    /** Visible but not entitled -> 403 that names what is missing. */
    requires?: {
        roles?: string[];
        scopes?: string[];
    };
    /** Response ceiling for this function in bytes; may lower or raise the server default up to its hard cap. */
    maxBytes?: number;
    handler: (args: ArgsOf<S>, ctx: Context) => R | Promise<R>;
}

export declare interface GlobalSearchHit {
    kind: string;
    id: string;
    title: string;
    /** Text around the first match, the matched words between « and ». */
    snippet: string;
    /** Where the match is: page, start_seconds or heading; null when it is in the title only. */
    where: SearchLocation | null;
    updated_at: string;
    /** The resource on the REST API. */
    link: string;
    tags: string[];
    content_type: string | null;
    rank: number;
    /** 'fuzzy' when typo tolerance replaced words of the query that matched nothing. */
    match: 'fulltext' | 'fuzzy';
}

export declare interface GlobalSearchOptions {
    q: unknown;
    /** Only these kinds (default: every kind the caller may read). */
    kinds?: string[] | undefined;
    tags?: string[] | undefined;
    from?: string | undefined;
    to?: string | undefined;
    /** A content type (`application/pdf`) or a family (`audio/*`): files of that type only. */
    type?: string | undefined;
    limit?: number | undefined;
    cursor?: string | undefined;
}

export declare interface GlobalSearchPage {
    hits: GlobalSearchHit[];
    next_cursor: string | null;
    limit: number;
    limit_clamped_from?: number;
    /** The kinds that were searched (those asked for that the caller may read). */
    kinds: string[];
}

export declare interface Heading {
    /** 1-based line number of the heading line. */
    line: number;
    /** 1 to 6: the number of #s. */
    level: number;
    /** The heading's text: without the #s, a closing run of #s, or the spaces and tabs around it. */
    text: string;
    /** Character offset of the heading line's first character. */
    offset: number;
}

/**
 * How a caller names a heading, and how headings are compared: trimmed, any leading #s dropped,
 * lowercased. Lenient on purpose ("## Decisions ", "decisions" and "Decisions" are one name).
 */
export declare function headingKey(name: string): string;

/** The ATX headings (`# ...` to `###### ...`) outside fenced code blocks, in order. */
export declare function headings(source: MarkdownSource): Heading[];

export declare type IdentityApi = ReturnType<typeof bindIdentity>;

declare class IdentityService {
    #private;
    /** Personal API tokens: list, create, rotate, revoke (the REST group tokens). */
    readonly tokens: PersonalTokens;
    /** User provisioning (the REST group users). */
    readonly users: UserDirectory;
    /** The OAuth authorization server's storage. */
    readonly oauth: OAuthStore;
    /** Passwords for interactive sign-in, invitation links, and the throttled sign-in itself. */
    readonly passwords: Passwords;
    constructor(db: Database | {
        orm: MikroORM;
    }, opts?: {
        feed?: ChangeFeed;
        scopes?: ScopeRules;
        settings?: TokenSettings;
        publicUrl?: () => string;
    });
    countUsers(): Promise<number>;
    /** The user with this email (any case), or null. */
    findUserByEmail(email: string): Promise<User | null>;
    /**
     * The stored hash of the first admin's `bootstrap` API token while it is active: the one
     * BOOTSTRAP_ADMIN_TOKEN chose at first start (or the generated one, which has Folio's format
     * anyway). The Authenticator takes a token of this hash though it has no Folio prefix, so a chosen
     * token keeps working once the variable is unset, until it is rotated or revoked.
     */
    bootstrapTokenHash(): Promise<string | null>;
    /** How many API tokens (live or not) a user has ever been given. */
    countApiTokens(userId: string): Promise<number>;
    createUser(input: CreateUserInput): Promise<User>;
    /** Null when there is no such user, including when `id` is not a uuid at all. */
    getUser(id: string): Promise<User | null>;
    setDisabled(userId: string, disabled: boolean): Promise<void>;
    createApiToken(userId: string, input: CreateApiTokenInput): Promise<{
        token: string;
        id: string;
        expiresAt: Date | null;
    }>;
    /**
     * A short-lived child of the caller's API token: same user, same scopes, expiring at
     * now + ttl or when the parent expires, whichever is first; revoking the parent kills it.
     * Only an API token can mint (a minted token cannot mint again).
     */
    mintToken(parent: Principal, ttlSeconds: number, scopes?: string[]): Promise<{
        token: string;
        id: string;
        expiresAt: Date;
    }>;
    /**
     * The principal of a well-formed token (Folio's format, or an OAuth access token's shape) this
     * process authenticated lately and still holds (the common case: every request of a client
     * carries the same token), without any I/O and without checking its format again; undefined
     * otherwise (then `authenticate` decides). An expired one is dropped here.
     */
    cached(raw: string): Principal | undefined;
    /**
     * The principal behind a raw token, or null: unknown, malformed, revoked, expired, user disabled,
     * or (minted) parent revoked/expired/gone. One indexed query; last_used_at is written at most
     * once a minute per token.
     */
    authenticate(raw: string): Promise<Principal | null>;
    /**
     * Why `authenticate` refused a token it once knew: 'expired', 'revoked' or 'user disabled';
     * null when it never knew it. Only on the refusal path, so a caller can say what to do.
     */
    refusal(raw: string): Promise<'expired' | 'revoked' | 'user disabled' | null>;
    /** Revokes one of the user's tokens (minted children die with it). Idempotent. */
    revokeToken(userId: string, tokenId: string): Promise<void>;
    /** Turns a namespace on or off for a user; 'default' forgets the override. */
    setNamespaceAccess(userId: string, namespace: string, access: NamespaceAccessSetting, actor?: Principal | null): Promise<void>;
    /**
     * The user's overrides; namespaces not in the map are at their default. Read-only: the map is the
     * cached one (asked on every call), never copied.
     */
    namespaceAccess(userId: string): Promise<ReadonlyMap<string, NamespaceAccessValue>>;
    /** The namespaces the user pinned, in name order. */
    pins(userId: string): Promise<string[]>;
    /** Replaces the user's pins (an empty list: none, every tool is listed again). */
    setPins(userId: string, namespaces: string[]): Promise<string[]>;
}

declare interface Invitation {
    url: string;
    expires_at: string;
}

export declare function isBytes(v: unknown): v is BytesResult;

/** Whether `raw` is a tag once normalized. */
export declare function isTag(raw: string): boolean;

/** Admins only: background jobs. */
export declare interface JobsAdmin {
    /** Jobs that failed for good, newest first, at most `limit` (default 100): dead letters and failed transcriptions. */
    deadLetters(limit?: number): Promise<DeadLetter[]>;
    /** Queues a failed job (a dead letter or a transcription) again; NotFound when there is none. */
    retryDeadLetter(id: string): Promise<{
        id: string;
        retried: true;
    }>;
    /** Queued, running and failed work of every kind and user, oldest first. */
    list(opts?: {
        state?: 'queued' | 'running' | 'failed';
        limit?: number;
        cursor?: string;
    }): Promise<{
        items: AdminJob[];
        next_cursor: string | null;
        limit: number;
    }>;
    /** Stops a queued or running job; NotFound when there is none. */
    cancel(id: string): Promise<{
        id: string;
        cancelled: true;
    }>;
}

declare type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** A JSON Schema object; TypeBox schemas are JSON Schema and work as they are. */
export declare type JsonSchema = object;

/** Each line outside fenced code blocks (fence lines excluded), in order. */
export declare function linesOutsideFences(source: MarkdownSource): SourceLine[];

export declare interface ListFilesOptions {
    limit?: number;
    cursor?: string;
    trashed?: boolean;
    /** Only files in this folder (exactly). */
    folder?: string;
    /** Only files whose id starts with this (the short ids lists print). */
    idPrefix?: string;
}

export declare interface ListOptions {
    limit?: number;
    cursor?: string;
    /** Only notes carrying every one of these tags. */
    tags?: string[];
    /** The trash instead of the live notes. */
    trashed?: boolean;
    /** Only notes whose id starts with this (see validate.idPrefixRange). */
    idPrefix?: string;
}

export declare interface ListUsers {
    limit?: number | undefined;
    cursor?: string | undefined;
    email?: string | undefined;
    role?: string | undefined;
    active?: boolean | undefined;
}

export declare interface Logger {
    info(obj: object | string, msg?: string): void;
    warn(obj: object | string, msg?: string): void;
    error(obj: object | string, msg?: string): void;
    debug(obj: object | string, msg?: string): void;
}

/** A body, or the body already split at '\n'. */
export declare type MarkdownSource = string | readonly string[];

declare const NAMESPACE_ACCESS: readonly ["enabled", "disabled"];

declare type NamespaceAccessSetting = 'enabled' | 'disabled' | 'default';

declare type NamespaceAccessValue = (typeof NAMESPACE_ACCESS)[number];

/** One namespace as one user gets it. */
export declare interface NamespaceAccessView {
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

/** A token just made: its description and, this once, the secret. */
export declare type NewToken = TokenInfo & {
    token: string;
};

/** The stored form of a tag: trimmed and lowercased. Tags compare by this form. */
export declare function normalizeTag(raw: string): string;

/** A note as every surface shows it (JSON field names are the wire names). */
export declare interface Note {
    id: string;
    title: string;
    /** Markdown. */
    body: string;
    tags: string[];
    source: NoteSource;
    /** 1 on create; every change increments it by one. */
    version: number;
    created_at: string;
    updated_at: string;
    /** Set while the note is in the trash. */
    deleted_at: string | null;
}

/**
 * The caller's notes. Every method acts as the caller: another user's note is NotFound. Reads
 * need the token scope notes:read, writes notes:write (Forbidden otherwise).
 */
export declare type NotesApi = {
    [K in Exclude<keyof NotesService, 'summary'>]: Bound<NotesService[K]>;
} & {
    summary(): Promise<NotesSummary>;
};

export declare type NoteSource = 'manual' | 'agent' | 'transcript' | 'import';

declare interface NotesService {
    list(p: Principal, opts?: ListOptions): Promise<Page<NoteSummary>>;
    get(p: Principal, id: string): Promise<Note>;
    create(p: Principal, input: CreateNote): Promise<Note>;
    update(p: Principal, id: string, input: UpdateNote): Promise<Note>;
    append(p: Principal, id: string, input: AppendText): Promise<Note>;
    prepend(p: Principal, id: string, input: AppendText): Promise<Note>;
    replaceSection(p: Principal, id: string, input: ReplaceSection): Promise<Note>;
    /** Moves to the trash (a new version). */
    trash(p: Principal, id: string, expectedVersion?: number): Promise<Note>;
    /** Out of the trash (a new version). */
    untrash(p: Principal, id: string): Promise<Note>;
    /** Gone for good, with its revisions. Only from the trash. */
    purge(p: Principal, id: string): Promise<void>;
    revisions(p: Principal, id: string, opts?: {
        limit?: number;
        cursor?: string;
    }): Promise<Page<RevisionSummary>>;
    revision(p: Principal, id: string, version: number): Promise<Revision>;
    /** Unified diff from that revision to the current note. */
    diff(p: Principal, id: string, version: number): Promise<RevisionDiff>;
    /** Makes that revision's content current again, as a new version. */
    restoreRevision(p: Principal, id: string, version: number, expectedVersion?: number): Promise<Note>;
    tags(p: Principal): Promise<Array<{
        tag: string;
        count: number;
    }>>;
    search(p: Principal, opts: SearchOptions): Promise<Page<SearchHit>>;
    /** The caller's storage use against the quota, notes and everything else it counts. */
    storageUse(p: Principal): Promise<StorageUse>;
    /** Count and tag counts of the caller's live notes: cheap enough for every request. */
    summary(userId: string): Promise<NotesSummary>;
    /** Streams the report; never holds every selected note in memory. */
    report(p: Principal, opts: ReportOptions): Promise<{
        contentType: string;
        filename: string;
        stream: AsyncIterable<Uint8Array>;
        saved_note_id?: Promise<string>;
    }>;
}

export declare interface NotesSummary {
    count: number;
    tags: Record<string, number>;
}

/** A note without its body, for lists. */
export declare type NoteSummary = Omit<Note, 'body'> & {
    excerpt: string;
    body_bytes: number;
};

/** No such thing, or a thing the caller may not see. Both answer the same, by design. */
export declare class NotFound extends FolioError {
    readonly code = "not_found";
}

/** An OAuth access token as authentication needs it. */
declare interface OAuthAccess {
    tokenId: string;
    userId: string;
    scopes: string[];
    expiresMs: number;
    audience: string | null;
}

declare interface OAuthClient {
    client_id: string;
    client_name: string | null;
    redirect_uris: string[];
    registered_at: string | null;
}

declare interface OAuthClientPage {
    items: OAuthClient[];
    next_cursor: string | null;
    limit: number;
}

/** A client the user authorised, as they see it. */
declare interface OAuthGrant {
    id: string;
    client_id: string;
    client_name: string | null;
    redirect_uris: string[];
    scopes: string[];
    created_at: string | null;
}

declare class OAuthStore {
    #private;
    constructor(orm: MikroORM, changed: (userId: string) => void, unusedClientDays?: number);
    /**
     * Counts one dynamic registration from `client` (its address) and answers how many seconds it
     * must wait when that is over the limit (0: go on). Counted before the registration, in one
     * statement, so parallel requests are all counted. The counts share the sign-in throttle's table.
     */
    registrationWait(client: string): Promise<number>;
    /**
     * Deletes clients registered more than the configured days ago that no user ever authorised (no
     * grant of theirs is held): what a registration flood leaves behind. Answers how many went.
     */
    purgeUnusedClients(): Promise<number>;
    /** The adapter oidc-provider asks for, one per model name. */
    adapter(model: string): {
        upsert: (id: string, given: Record<string, unknown>, expiresIn?: number) => Promise<void>;
        find: (id: string) => Promise<Record<string, unknown> | undefined>;
        findByUid: (uid: string) => Promise<Record<string, unknown> | undefined>;
        findByUserCode: (code: string) => Promise<Record<string, unknown> | undefined>;
        consume: (id: string) => Promise<void>;
        destroy: (id: string) => Promise<void>;
        revokeByGrantId: (grantId: string) => Promise<void>;
    };
    /**
     * Removes records past their expiry by more than `graceMs` (codes, tokens, sessions, grants and
     * interactions oidc-provider no longer finds), so the table holds what is alive and not every
     * token ever issued. The grace keeps a just-expired record for a late reuse check or a support
     * question. Answers how many went.
     */
    purgeExpired(graceMs?: number): Promise<number>;
    /** The clients a user has authorised: one grant each, newest first. */
    grants(userId: string): Promise<OAuthGrant[]>;
    /** Revokes one of the user's grants: every token of it stops at once. Another user's is NotFound. */
    revokeGrant(userId: string, grantId: string): Promise<void>;
    /** The registered clients (for admins), newest first, a page at a time (as the other lists: limit and cursor). */
    clients(opts?: {
        limit?: number | undefined;
        cursor?: string | undefined;
    }): Promise<OAuthClientPage>;
    /** Deletes a registered client and every grant made to it. */
    deleteClient(clientId: string): Promise<void>;
    /** The signing key and cookie keys: made on the first start, then kept in the database. */
    keys(): Promise<{
        jwks: {
            keys: object[];
        };
        cookieKeys: string[];
    }>;
    /** Why an access token is refused, when it is one this server issued and still holds. */
    refusal(raw: string): Promise<'expired' | null>;
    /**
     * A live access token, or null: unknown, expired, or its grant revoked. Its `tokenId` is the row
     * id (the hash), never the token: it travels to the other nodes (MCP cancellations).
     */
    access(raw: string): Promise<OAuthAccess | null>;
}

/** The action items not yet done. */
export declare function openItems(source: MarkdownSource): ActionItem[];

export declare interface Page<T> {
    items: T[];
    /** Opaque; pass back as `cursor` for the next page. Null when there is no more. */
    next_cursor: string | null;
    /** The limit actually used. */
    limit: number;
    /** Present when the requested limit was over the maximum and was lowered to it. */
    limit_clamped_from?: number;
}

/** The action item (task-list item) a line of text is, or null. */
export declare function parseActionItem(line: string): {
    text: string;
    done: boolean;
} | null;

/** The heading a line of text is, or null. */
export declare function parseHeading(line: string): {
    level: number;
    text: string;
} | null;

declare class Passwords {
    #private;
    constructor(orm: MikroORM, deps: {
        changed: (userId: string) => void;
        scopes: ScopeRules;
        publicUrl: () => string;
        authenticateToken: (raw: string) => Promise<Principal | null>;
    });
    /**
     * Sets the caller's own password. With a password already set, `current` must be it. Only an
     * API token may do this: an OAuth client or a minted token acting for the user may not. A
     * password signs in to everything the user may do, so the token must hold '*'.
     */
    setOwn(p: Principal, input: {
        password: unknown;
        current_password?: unknown;
    }): Promise<void>;
    /** A new user's first password, set by the admin who creates them. */
    setInitial(userId: string, email: string, password: unknown): Promise<void>;
    /** A one-time link for the user to set their password; the secret is in the URL, shown this once. */
    invite(p: Principal, userId: string, hours?: number): Promise<Invitation>;
    /** The email an unused, unexpired invitation is for; NotFound for any other link. */
    invitation(secret: string): Promise<{
        email: string;
    }>;
    /**
     * Sets the password through an invitation, which is then used up (as are the user's other
     * open invitations). Two at once: one wins, the other is NotFound.
     */
    accept(secret: string, password: unknown): Promise<{
        email: string;
    }>;
    /**
     * Email and password (or one of the user's API tokens typed as the password) to an active
     * user, or null. Throws TooManyRequests while the account or the client is throttled.
     */
    signIn(emailIn: string, secret: string, client: string): Promise<SignedIn | null>;
}

declare class PersonalTokens {
    #private;
    constructor(orm: MikroORM, scopes: ScopeRules, settings: TokenSettings, changed: (userId: string) => void);
    /** The scope catalogue: what a token may carry. */
    catalogue(): ReturnType<ScopeRules['list']>;
    /** The caller's personal tokens, newest first, revoked and expired ones included. */
    list(p: Principal, opts?: {
        limit?: number | undefined;
        cursor?: string | undefined;
        active?: boolean | undefined;
    }): Promise<TokenPage>;
    get(p: Principal, id: string): Promise<TokenInfo>;
    /** The token the caller is using right now (any kind). */
    self(p: Principal): Promise<TokenInfo>;
    create(p: Principal, input: CreateToken): Promise<NewToken>;
    /**
     * Revokes the token and issues a new one with the same name, description and scopes, in one
     * transaction. The new expiry is the one given, else the old token's lifetime again (capped at
     * the maximum). A revoked token cannot be rotated; an expired one can.
     */
    rotate(p: Principal, id: string, input?: RotateToken): Promise<NewToken>;
    /** Revokes one of the caller's personal tokens, at once on every node. Idempotent. */
    revoke(p: Principal, id: string): Promise<TokenInfo>;
}

export declare interface PluginCapabilities {
    network: string[];
    env: string[];
    processes: boolean;
    workers: boolean;
}

/** A plugin. `F` maps each function name to the type of that function's `args` schema. */
export declare interface PluginDefinition<F = Record<string, JsonSchema>> {
    namespace: string;
    description: string;
    version?: string;
    catalogue?: 'public' | 'unlisted';
    /** Entitlement rule: is this namespace shown to the caller? Throwing or hanging hides it. */
    visible?: (caller: Caller) => boolean | Promise<boolean>;
    functions: {
        [K in keyof F]: FunctionDefinition<F[K]>;
    };
    /** Prompts (MCP), named like functions; shown to whoever can see the namespace. */
    prompts?: Record<string, PromptDefinition>;
}

export declare interface PluginSandbox {
    /** bubblewrap: an OS sandbox (namespaces); permission-model: Node's permission model only. */
    kind: 'bubblewrap' | 'permission-model';
    /** Its process is running now (it is stopped after a while without calls, and started by the next). */
    running: boolean;
    holds: string[];
    missing: string[];
    capabilities: {
        requested: PluginCapabilities;
        granted: PluginCapabilities;
        missing: PluginCapabilities;
    };
}

export declare interface PluginStatus {
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

/** Who is calling: the user behind a valid token, and what that token may do. */
declare interface Principal {
    user: {
        id: string;
        email: string;
        name: string | null;
        roles: string[];
    };
    scopes: string[];
    tokenKind: TokenKind;
    tokenId: string;
    tokenExpiresAt: Date | null;
    /** An OAuth access token's audience: the resource (RFC 8707) it was issued for. */
    audience?: string | null;
}

/** One argument of a prompt: a string the client asks the user for. */
export declare interface PromptArgument {
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
export declare interface PromptContext {
    caller: Caller;
    ref: (fn: string, args?: Record<string, unknown>) => string;
}

/**
 * A prompt: a ready-made request a user picks in their client (MCP prompts, often shown as slash
 * commands), e.g. "summarize my week's notes". `render` writes the user message it puts in the
 * conversation; the model then works with the tools as usual.
 */
export declare interface PromptDefinition {
    /** A short human title, e.g. 'Summarize my week'. */
    title?: string;
    description: string;
    arguments?: PromptArgument[];
    /** The text of the user message; `args` holds the arguments the user gave (required ones always). */
    render: (args: Record<string, string>, ctx: PromptContext) => string | Promise<string>;
}

export declare interface ReplaceSection {
    expected_version: number;
    /** The heading text (without #), matched case-insensitively after trimming; the first match wins. */
    heading: string;
    /** The new text under the heading (the heading line itself stays). */
    text: string;
}

declare type ReportFormat = 'markdown' | 'html' | 'pdf';

declare type ReportGroup = 'day' | 'week' | 'tag';

export declare interface ReportOptions {
    q?: string;
    tags?: string[];
    from?: string;
    to?: string;
    group_by: ReportGroup;
    format: ReportFormat;
    title?: string;
    /** Also save the report (markdown) as a new note; its id is reported. */
    save_as_note?: boolean;
}

/** The content of one version of a note, kept when that version was written. */
export declare interface Revision {
    note_id: string;
    version: number;
    title: string;
    body: string;
    tags: string[];
    change: RevisionChange;
    created_at: string;
}

declare type RevisionChange = 'create' | 'update' | 'append' | 'prepend' | 'replace_section' | 'restore_revision' | 'trash' | 'untrash';

/** A unified diff from one version of a note to the current one. */
declare interface RevisionDiff {
    from_version: number;
    to_version: number;
    diff: string;
    /**
     * True when the versions differ on too many lines for an exact diff within its bounds: the diff
     * then replaces everything between the common first and last lines as one block.
     */
    coarse: boolean;
}

export declare type RevisionSummary = Omit<Revision, 'body'> & {
    body_bytes: number;
};

export declare interface RotateToken {
    expires_in_days?: number | undefined;
    expires_at?: string | undefined;
}

/** What a SCIM client sent about a user that has no column of its own (see the SCIM surface). */
declare type ScimProfile = Record<string, unknown>;

/** The scope catalogue as the kernel keeps it (core/kernel/scopes.ts). */
declare interface ScopeRules {
    /** Every scope with its description, what it implies and the roles it needs, in name order. */
    list(): Array<{
        scope: string;
        description: string;
        implies: string[];
        roles: string[];
    }>;
    /** Is this a scope a token may carry: a catalogued one, '*', or '<prefix>:*' over catalogued ones? */
    known(scope: string): boolean;
    /** Does holding `granted`, as a user with `roles`, allow `wanted`? Without roles: the token's scopes alone. */
    allows(granted: readonly string[], wanted: string, roles?: readonly string[]): boolean;
    /** The scopes as granted: each with everything it implies. */
    expand(scopes: readonly string[]): string[];
}

export declare interface SearchApi {
    /** One ranked page over every kind the caller may read (or those of `kinds`). */
    query(opts: GlobalSearchOptions): Promise<GlobalSearchPage>;
    /** Every kind of result this server has, and whether the caller's hits include it. */
    kinds(): Promise<Array<{
        kind: string;
        readable: boolean;
        scope: string;
    }>>;
}

export declare interface SearchHit {
    id: string;
    title: string;
    tags: string[];
    updated_at: string;
    version: number;
    rank: number;
    /** Matched words wrapped in « » (plain text, safe for any surface). */
    snippet: string;
    /** 'fulltext' for a direct match, 'fuzzy' when found through typo tolerance. */
    match: 'fulltext' | 'fuzzy';
}

/** Where in a resource a piece of its text is: the page of a PDF, a transcript segment's start, a note's heading. */
export declare interface SearchLocation {
    page?: number;
    start_seconds?: number;
    heading?: string;
}

export declare interface SearchOptions {
    /** Web-search syntax: words, "quoted phrases", -excluded, OR. Any language. */
    q: string;
    tags?: string[];
    /** ISO date or date-time, inclusive, on updated_at. */
    from?: string;
    to?: string;
    limit?: number;
    cursor?: string;
}

export declare interface Section {
    heading: Heading;
    /**
     * The lines under the heading line, 1-based and half-open: [firstLine, endLine). endLine is the
     * line of the next heading of the same or a higher level, or one past the last line.
     */
    firstLine: number;
    endLine: number;
    /**
     * Characters of the section, half-open: [start, end), from the heading line's first character
     * to the next heading of the same or a higher level, or the end of the body.
     */
    start: number;
    end: number;
}

export declare interface Services {
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

export declare interface ShareLink {
    id: string;
    file_id: string;
    file_name: string;
    /** The version the link serves; null: always the file's current version. */
    version: number | null;
    label: string;
    has_password: boolean;
    expires_at: string | null;
    max_downloads: number | null;
    downloads: number;
    last_access_at: string | null;
    created_at: string;
    /** 'active', or why the link no longer answers: 'expired', 'exhausted'. */
    state: 'active' | 'expired' | 'exhausted';
}

/**
 * A message for the other nodes about something in flight rather than stored (an MCP client's
 * cancel that landed on a node not running the request): heard by the other nodes only, and only
 * those listening at that moment. Nothing is kept; a node that was not listening never hears it.
 */
declare interface Signals {
    send(topic: string, data: unknown): void;
    on(topic: string, listener: (data: unknown) => void): () => void;
}

/** Who signed in, and what they may grant: everything their roles allow, or at most a token's scopes. */
declare interface SignedIn {
    user: Principal['user'];
    scopes: string[];
    /** 'password', or 'token' when an API token was typed as the password. */
    by: 'password' | 'token';
}

export declare interface SourceLine {
    /** 1-based line number. */
    line: number;
    /** The line without its line ending (\n or \r\n), and for line 1 without a byte order mark. */
    text: string;
    /** Character offset in the body where the line starts. */
    offset: number;
}

export { Static }

/** What the caller stores against the storage quota, in bytes (note revisions, files, ...). */
declare interface StorageUse {
    used: number;
    /** The quota in force; null when there is none. */
    quota: number | null;
    /** `used`, per kind of storage: `notes` (revisions as stored), `files`, ... */
    by_kind: Record<string, number>;
}

/** A tag as a caller may send it: what normalizeTag turns into a stored tag (spaces around it, any case). */
export declare const TAG_INPUT_PATTERN: string;

/** A stored tag: 1 to 64 letters, digits, _ - / . starting with a letter or digit (JSON Schema / RegExp source, `u` flag). */
export declare const TAG_PATTERN = "^[\\p{L}\\p{N}][\\p{L}\\p{N}_\\-/.]{0,63}$";

/** The rule in words, for messages and descriptions. */
export declare const TAG_RULE = "1 to 64 letters, digits, _ - / . starting with a letter or digit";

/** A part of a version's extracted text (or of one PDF page's), within a budget of characters. */
export declare type TextExtractPart = FileText & {
    /** Character offset of `text` in the whole extracted text (or page). */
    offset: number;
    /** Where the next part starts; null when this part reaches the end. */
    next_offset: number | null;
};

/** A part of a text file, cut on a character boundary. */
export declare interface TextPart {
    file_id: string;
    version: number;
    name: string;
    content_type: string;
    size: number;
    /** Byte offset of `text` in the file. */
    offset: number;
    text: string;
    /** Where the next part starts; null when this part reaches the end. */
    next_offset: number | null;
}

/** A token as its owner sees it. The secret is never part of it. */
export declare interface TokenInfo {
    id: string;
    kind: 'api' | 'minted';
    name: string | null;
    description: string | null;
    scopes: string[];
    created_at: string;
    last_used_at: string | null;
    expires_at: string | null;
    revoked_at: string | null;
    /** Neither revoked nor expired. */
    active: boolean;
}

declare type TokenKind = 'api' | 'minted' | 'oauth';

export declare interface TokenPage {
    items: TokenInfo[];
    next_cursor: string | null;
    limit: number;
}

declare interface TokenSettings {
    /** The latest expiry a personal token may have, in days from its creation (or rotation). */
    tokenMaxLifetimeDays: number;
    /** A registered OAuth client no user has authorised is deleted this many days after registering. */
    oauthClientUnusedDays?: number | undefined;
}

export declare interface TranscribeApi {
    start(input: CreateTranscription): Promise<Transcription>;
    get(id: string): Promise<Transcription>;
    list(opts?: {
        limit?: number;
        cursor?: string;
        status?: JobStatus;
    }): Promise<{
        items: Transcription[];
        next_cursor: string | null;
    }>;
    cancel(id: string): Promise<Transcription>;
    retry(id: string): Promise<Transcription>;
    /** The transcript's segments from `offset`, as many as fit in `maxChars` (at least one). */
    transcript(id: string, opts: {
        offset?: number;
        maxChars: number;
    }): Promise<TranscriptPart>;
}

/** A transcription job as every surface shows it. */
export declare interface Transcription {
    id: string;
    file_id: string;
    file_version: number;
    status: JobStatus;
    /** 0..100. */
    progress: number;
    engine: EngineName;
    /** The model the engine used (pocketsphinx's en-us, whisper-1, ...). */
    model: string | null;
    language: string | null;
    tags: string[];
    /** Write the transcript as a note when it succeeds. */
    to_note: boolean;
    /** The note it was written to (a re-run makes a new version of the same note). */
    note_id: string | null;
    /** What went wrong, in words a person can act on. */
    error: string | null;
    /** The audio's length in seconds, once known. */
    duration: number | null;
    created_at: string;
    started_at: string | null;
    finished_at: string | null;
}

/** A part of a transcript: its segments from `offset` that fit the budget. */
export declare interface TranscriptPart {
    job_id: string;
    language: string | null;
    duration: number;
    /** Index of the first segment in this part. */
    offset: number;
    segments: TranscriptSegment[];
    /** Where the next part starts; null when this part reaches the end. */
    next_offset: number | null;
    /** Segments in the whole transcript. */
    total: number;
}

export declare interface TranscriptSegment {
    /** Seconds from the start. */
    start: number;
    end: number;
    text: string;
}

export { TSchema }

export { Type }

/** Replacing edits need the version they were based on; a stale one is a Conflict carrying the current note. */
export declare interface UpdateNote {
    expected_version: number;
    title?: string;
    body?: string;
    tags?: string[];
}

export declare interface UpdateUser {
    /** A new email address (lowercased; unique: 409 when another user has it). Tokens and sessions stay valid. */
    email?: string | undefined;
    name?: string | null | undefined;
    /** Replaces the SCIM profile (null: none). */
    scim?: ScimProfile | null | undefined;
    roles?: string[] | undefined;
    active?: boolean | undefined;
}

declare const User: EntitySchemaWithMeta<"User", "users", InferEntityFromProperties<    {
readonly id: Pick<UniversalPropertyOptionsBuilder<string, Omit<EmptyOptions, "primary"> & {
primary: true;
} & {
onCreate: (...args: any[]) => any;
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
/** Always stored lowercased (the service does it); unique. */
readonly email: Pick<UniversalPropertyOptionsBuilder<string, Omit<EmptyOptions, "unique"> & {
unique: "users_email_unique";
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
readonly name: Pick<UniversalPropertyOptionsBuilder<string, Omit<EmptyOptions, "nullable"> & {
nullable: true;
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
readonly roles: Pick<UniversalPropertyOptionsBuilder<string[], Omit<EmptyOptions, "default"> & {
default: never[];
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
readonly disabled: Pick<UniversalPropertyOptionsBuilder<NonNullable<boolean | null | undefined>, Omit<EmptyOptions, "default"> & {
default: false;
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
/** argon2id hash of the password for interactive sign-in; null: none set. */
readonly passwordHash: Pick<UniversalPropertyOptionsBuilder<string, Omit<EmptyOptions, "nullable"> & {
nullable: true;
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
readonly passwordSetAt: Pick<UniversalPropertyOptionsBuilder<Date, Omit<EmptyOptions, "nullable"> & {
nullable: true;
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
/** What a SCIM client sent that has no column here (externalId, name parts, extensions); null: none. */
readonly scim: Pick<UniversalPropertyOptionsBuilder<Record<string, unknown>, Omit<EmptyOptions, "nullable"> & {
nullable: true;
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
readonly createdAt: Pick<UniversalPropertyOptionsBuilder<Date, EmptyOptions & {
defaultRaw: string;
} & {
onCreate: (...args: any[]) => any;
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
readonly updatedAt: Pick<UniversalPropertyOptionsBuilder<Date, EmptyOptions & {
defaultRaw: string;
} & {
onCreate: (...args: any[]) => any;
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
}, undefined, never, never, false, undefined, undefined, false>, never, {
readonly id: Pick<UniversalPropertyOptionsBuilder<string, Omit<EmptyOptions, "primary"> & {
primary: true;
} & {
onCreate: (...args: any[]) => any;
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
/** Always stored lowercased (the service does it); unique. */
readonly email: Pick<UniversalPropertyOptionsBuilder<string, Omit<EmptyOptions, "unique"> & {
unique: "users_email_unique";
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
readonly name: Pick<UniversalPropertyOptionsBuilder<string, Omit<EmptyOptions, "nullable"> & {
nullable: true;
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
readonly roles: Pick<UniversalPropertyOptionsBuilder<string[], Omit<EmptyOptions, "default"> & {
default: never[];
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
readonly disabled: Pick<UniversalPropertyOptionsBuilder<NonNullable<boolean | null | undefined>, Omit<EmptyOptions, "default"> & {
default: false;
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
/** argon2id hash of the password for interactive sign-in; null: none set. */
readonly passwordHash: Pick<UniversalPropertyOptionsBuilder<string, Omit<EmptyOptions, "nullable"> & {
nullable: true;
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
readonly passwordSetAt: Pick<UniversalPropertyOptionsBuilder<Date, Omit<EmptyOptions, "nullable"> & {
nullable: true;
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
/** What a SCIM client sent that has no column here (externalId, name parts, extensions); null: none. */
readonly scim: Pick<UniversalPropertyOptionsBuilder<Record<string, unknown>, Omit<EmptyOptions, "nullable"> & {
nullable: true;
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
readonly createdAt: Pick<UniversalPropertyOptionsBuilder<Date, EmptyOptions & {
defaultRaw: string;
} & {
onCreate: (...args: any[]) => any;
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
readonly updatedAt: Pick<UniversalPropertyOptionsBuilder<Date, EmptyOptions & {
defaultRaw: string;
} & {
onCreate: (...args: any[]) => any;
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
}, EntityCtor<InferEntityFromProperties<    {
readonly id: Pick<UniversalPropertyOptionsBuilder<string, Omit<EmptyOptions, "primary"> & {
primary: true;
} & {
onCreate: (...args: any[]) => any;
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
/** Always stored lowercased (the service does it); unique. */
readonly email: Pick<UniversalPropertyOptionsBuilder<string, Omit<EmptyOptions, "unique"> & {
unique: "users_email_unique";
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
readonly name: Pick<UniversalPropertyOptionsBuilder<string, Omit<EmptyOptions, "nullable"> & {
nullable: true;
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
readonly roles: Pick<UniversalPropertyOptionsBuilder<string[], Omit<EmptyOptions, "default"> & {
default: never[];
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
readonly disabled: Pick<UniversalPropertyOptionsBuilder<NonNullable<boolean | null | undefined>, Omit<EmptyOptions, "default"> & {
default: false;
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
/** argon2id hash of the password for interactive sign-in; null: none set. */
readonly passwordHash: Pick<UniversalPropertyOptionsBuilder<string, Omit<EmptyOptions, "nullable"> & {
nullable: true;
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
readonly passwordSetAt: Pick<UniversalPropertyOptionsBuilder<Date, Omit<EmptyOptions, "nullable"> & {
nullable: true;
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
/** What a SCIM client sent that has no column here (externalId, name parts, extensions); null: none. */
readonly scim: Pick<UniversalPropertyOptionsBuilder<Record<string, unknown>, Omit<EmptyOptions, "nullable"> & {
nullable: true;
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
readonly createdAt: Pick<UniversalPropertyOptionsBuilder<Date, EmptyOptions & {
defaultRaw: string;
} & {
onCreate: (...args: any[]) => any;
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
readonly updatedAt: Pick<UniversalPropertyOptionsBuilder<Date, EmptyOptions & {
defaultRaw: string;
} & {
onCreate: (...args: any[]) => any;
}, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>, keyof PropertyOptions<any> | ("~options" | "~type" | "$type" | "strictNullable" | "lazyRef")>;
}, undefined, never, never, false, undefined, undefined, false>>, undefined>;

declare type User = InferEntity<typeof User>;

export declare interface UserAccess {
    user: {
        id: string;
        email: string;
        name: string | null;
        roles: string[];
        active: boolean;
    };
    namespaces: NamespaceAccessView[];
}

declare class UserDirectory {
    #private;
    constructor(orm: MikroORM, changed: (userId: string) => void, passwords: Passwords);
    /** The caller's own account. */
    me(p: Principal): Promise<UserInfo>;
    list(p: Principal, opts?: ListUsers): Promise<UserPage>;
    /**
     * By position rather than cursor (SCIM's startIndex and count): `offset` users skipped in email
     * order, at most `limit`, and how many match in all. Admins only.
     */
    listByOffset(p: Principal, opts: {
        email?: string | undefined;
        offset: number;
        limit: number;
    }): Promise<{
        items: UserInfo[];
        total: number;
    }>;
    /** The SCIM profiles of these users (those that have one). Admins only. */
    scimProfiles(p: Principal, ids: string[]): Promise<Map<string, ScimProfile>>;
    get(p: Principal, id: string): Promise<UserInfo>;
    /** With an optional first password (else they set one through an invitation link). */
    create(p: Principal, input: {
        email: string;
        name?: string | null | undefined;
        roles?: string[] | undefined;
        password?: string | undefined;
        scim?: ScimProfile | undefined;
    }): Promise<UserInfo>;
    /**
     * Email, name, roles, active. `active: false` deactivates: every token of theirs stops at once. A
     * new email changes only the address: everything of theirs is keyed by their id, so their tokens,
     * sessions and OAuth grants stay valid, and they sign in with the new address from now on.
     */
    update(p: Principal, id: string, input: UpdateUser): Promise<UserInfo>;
    /**
     * Deletes the user and everything they own (notes, revisions, tokens, ...). `confirm` must be the
     * user's email address: a mistyped id cannot delete someone.
     */
    delete(p: Principal, id: string, confirm: string | undefined): Promise<void>;
}

export declare interface UserInfo {
    id: string;
    email: string;
    name: string | null;
    roles: string[];
    active: boolean;
    /** Whether the user has a password to sign in with (never the password itself). */
    has_password: boolean;
    created_at: string;
    updated_at: string;
}

export declare interface UserPage {
    items: UserInfo[];
    next_cursor: string | null;
    limit: number;
}

declare type VersionChange = 'upload' | 'restore';

export { }
