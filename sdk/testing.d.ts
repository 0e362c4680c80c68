export declare interface AsUser {
    /** Who to act as: a user made on first use of this email. Default `tester@example.com`. */
    email?: string;
    roles?: string[];
    /** The token's scopes. Default: every scope Folio knows (a full API token). */
    scopes?: string[];
    /** How `ctx.ref` names functions in answers: 'curl' (default) or 'mcp'. */
    surface?: Surface;
}

/** An answer that is not JSON or text: what `bytes(...)` returned, as the server would send it. */
export declare interface BytesAnswer {
    contentType: string;
    filename: string | undefined;
    data: Buffer;
}

declare interface PluginCapabilities {
    network: string[];
    env: string[];
    processes: boolean;
    workers: boolean;
}

export declare class PluginLoadFailed extends Error {
}

declare interface PluginSandbox {
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

declare interface PluginStatus {
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

/**
 * Loads the plugin in `dir` (default: the current folder) into a Folio of its own. Fails with
 * PluginLoadFailed and the loader's reason (the one plugin_status gives) when it does not load.
 */
export declare function startTestFolio(dir?: string, opts?: TestFolioOptions): Promise<TestFolio>;

/** The surface a text is for: curl readers call routes, MCP readers call tools and read resources. */
declare type Surface = 'curl' | 'mcp';

export declare interface TestCaller {
    readonly user: {
        id: string;
        email: string;
        roles: string[];
    };
    /** Calls `namespace.fn` (or `fn` of the plugin under test); throws the server's typed error (NotFound, BadArguments, ...). */
    call<T = unknown>(fn: string, args?: Record<string, unknown>): Promise<T>;
    /** Renders a prompt's user message, as MCP prompts/get does. */
    prompt(name: string, args?: Record<string, string>): Promise<string>;
    /** Is the namespace shown to this caller (the plugin's `visible` rule and the operator's switches)? */
    visible(namespace?: string): Promise<boolean>;
}

export declare interface TestFolio {
    /** The plugin's namespace, once loaded. */
    readonly namespace: string;
    /** The loaded plugin's status, as `admin.plugin_status` reports it. */
    status(): PluginStatus;
    as(user?: AsUser): Promise<TestCaller>;
    close(): Promise<void>;
}

export declare interface TestFolioOptions {
    /** Load Folio's own plugins too (admin, notetaker, ...). Default false: only yours. */
    firstParty?: boolean;
    /**
     * A PostgreSQL database to use instead of an embedded one, as is: its data stays after close()
     * (users are found again by email), so point it at a database kept for tests only.
     */
    databaseUrl?: string;
    /** Configuration as in config/default.json (e.g. `{ isolation: { plugins: { ... } } }`). */
    config?: Record<string, unknown>;
    /** Log level of Folio's own log (default `silent`; `info` shows plugin loads, `error` its errors). */
    logLevel?: string;
}

export { }
