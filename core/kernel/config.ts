// Configuration: config/default.json, then config/local.json, then environment variables.
// Validated with TypeBox at start; a bad value stops the start with a message naming it.
import { readFileSync, existsSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { Ajv } from 'ajv';
import { Type, type Static } from 'typebox';

const Int = (min: number, max = Number.MAX_SAFE_INTEGER) => Type.Integer({ minimum: min, maximum: max });
/** What a plugin may be given beyond its own folder (docs/plugins.md §15). */
const Grant = Type.Object(
  {
    /** Hosts it may reach (ctx.fetch), or true for any; without it the process has no network where the sandbox can cut it. */
    network: Type.Optional(Type.Union([Type.Array(Type.String({ minLength: 1, maxLength: 253 })), Type.Boolean()])),
    /** Names of Folio's environment variables passed to it. */
    env: Type.Optional(Type.Array(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }))),
    /** May start child processes. */
    processes: Type.Optional(Type.Boolean()),
    /** May start worker threads. */
    workers: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type Grant = Static<typeof Grant>;
const DirList = Type.Array(Type.String({ minLength: 1 }), { minItems: 1 });

export const ConfigSchema = Type.Object(
  {
    port: Int(0, 65535),
    host: Type.String({ minLength: 1 }),
    publicUrl: Type.Union([Type.String({ pattern: '^https?://' }), Type.Null()]),
    databaseUrl: Type.Union([Type.String({ pattern: '^postgres(ql)?://' }), Type.Null()]),
    dataDir: Type.String({ minLength: 1 }),
    pluginsDir: DirList,
    skillsDir: DirList,
    bootstrapAdminToken: Type.Union([Type.String({ minLength: 32 }), Type.Null()]),
    logLevel: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l))),
    /** auto: human-readable lines when stdout is a terminal, JSON lines otherwise. */
    logFormat: Type.Union([Type.Literal('auto'), Type.Literal('json'), Type.Literal('pretty')]),
    limits: Type.Object(
      {
        responseBytes: Int(64),
        responseHardCapBytes: Int(64),
        requestBytes: Int(64),
        jsonDepth: Int(1, 1000),
        handlerTimeoutMs: Int(1),
        visibleTimeoutMs: Int(1),
        /** A request's headers must all arrive within this long (Node's server.headersTimeout). */
        headersTimeoutMs: Int(100),
        /** A request body with no byte for this long (while the server waits for one) is answered 408. */
        bodyIdleMs: Int(100),
        /** After this long, a request body arriving slower than bodyMinBytesPerSecond on average is answered 408. */
        bodyGraceMs: Int(100),
        bodyMinBytesPerSecond: Int(0),
      },
      { additionalProperties: false },
    ),
    isolation: Type.Object(
      {
        /**
         * Where plugins run: third-party (a sandboxed process each, except Folio's own plugins),
         * process (every plugin in a process), in-process (none). 'worker' is the former name of 'process'.
         */
        mode: Type.Union([Type.Literal('third-party'), Type.Literal('process'), Type.Literal('worker'), Type.Literal('in-process')]),
        /** Per plugin folder name: 'process' or 'in-process' (an explicit trust), over `mode`. */
        plugins: Type.Record(
          Type.String({ minLength: 1 }),
          Type.Union([Type.Literal('process'), Type.Literal('worker'), Type.Literal('in-process')]),
        ),
        /** Per plugin folder name: what the operator grants of what the plugin asks for (package.json folio.capabilities). */
        grants: Type.Record(Type.String({ minLength: 1 }), Grant),
        /** How a plugin's process is sandboxed: auto (bubblewrap where it works), bubblewrap (required), none. */
        sandbox: Type.Union([Type.Literal('auto'), Type.Literal('bubblewrap'), Type.Literal('none')]),
        /** A plugin process's JavaScript heap limit in MB (--max-old-space-size). */
        heapMb: Int(16, 65_536),
        /** A plugin process's resident memory ceiling in MB, external memory included: past it the process is killed. */
        memoryMb: Int(32, 1_048_576),
        /** How long a plugin may compute without a pause before its process is stopped. */
        cpuTimeoutMs: Int(10),
        /** How long loading a plugin's module may take (every plugin, isolated or not). */
        importTimeoutMs: Int(10),
        /** Crashes of an isolated plugin within a minute after which it is disabled until its files change. */
        maxCrashes: Int(1, 1000),
        /** Calls one plugin process runs at once; one more is answered 429 plugin_busy. */
        maxConcurrentCalls: Int(1, 100_000),
        /** A plugin process with no call for this long is stopped, and started again by the next call; 0 keeps it. */
        idleStopSeconds: Int(0),
      },
      { additionalProperties: false },
    ),
    reload: Type.Object({ watch: Type.Boolean(), debounceMs: Int(0, 10_000) }, { additionalProperties: false }),
    tokens: Type.Object({ mintDefaultTtlSeconds: Int(1), mintMaxTtlSeconds: Int(1) }, { additionalProperties: false }),
    notes: Type.Object(
      {
        /** Notes in the trash longer than this are purged for good. */
        trashRetentionDays: Int(1, 3650),
        /** How often the purge of expired trash runs. */
        trashSweepMinutes: Int(1, 10_080),
        /** Reports one user may have being generated at once; one more is 429 too_many_reports. */
        reportsPerUser: Int(1, 1000),
        /** Worker threads that render reports; null: the cores but one, 1 to 4. */
        reportThreads: Type.Union([Int(1, 64), Type.Null()]),
      },
      { additionalProperties: false },
    ),
    identity: Type.Object(
      {
        /** The latest expiry a personal API token may have, in days from its creation or rotation. */
        tokenMaxLifetimeDays: Int(1, 3650),
        /** OAuth clients may use an https URL of their metadata document as client_id (CIMD). */
        clientMetadataDocuments: Type.Boolean(),
        /** Fetch such documents from private and loopback addresses too (a client on your own network). */
        clientMetadataPrivateNetworks: Type.Boolean(),
        /** PEM file of extra certificate authorities trusted when fetching them (a private PKI); null: the system's. */
        clientMetadataCaFile: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
        /** A dynamically registered OAuth client no user authorised is deleted this many days after registering. */
        oauthClientUnusedDays: Int(1, 3650),
      },
      { additionalProperties: false },
    ),
    files: Type.Object(
      {
        /** The largest file (one version) in bytes. */
        maxFileBytes: Int(0),
        /** Files in the trash longer than this are purged for good. */
        trashRetentionDays: Int(1, 3650),
        /** How often that purge (and the sweep of abandoned uploads) runs. */
        trashSweepMinutes: Int(1, 10_080),
        /** Text extraction (search): limits of its child process and caps inside the extractors. */
        extraction: Type.Object(
          {
            /** The extraction process's heap and resident memory in MB; over it, it is killed. */
            memoryMb: Int(64, 65_536),
            /** How long one file's extraction may take; over it, it is killed. */
            timeSeconds: Int(1, 600),
            /** Most bytes a DOCX's zip may expand to; a larger one is not read. */
            maxDecompressedBytes: Int(1024),
            /** Most pages of a PDF read. */
            maxPages: Int(1),
            /** Most characters of text kept per file version. */
            maxChars: Int(1),
          },
          { additionalProperties: false },
        ),
        /** Where file bytes live. */
        blobStore: Type.Object(
          {
            /** Where file bytes live: 'disk' under dataDir, or 's3' (any S3-compatible service). */
            kind: Type.Union([Type.Literal('disk'), Type.Literal('s3')]),
            s3: Type.Object(
              {
                /** The service's URL (MinIO, R2, B2, ...); null: AWS S3 itself. */
                endpoint: Type.Union([Type.String({ pattern: '^https?://' }), Type.Null()]),
                region: Type.String({ minLength: 1 }),
                bucket: Type.Union([Type.String({ minLength: 3, maxLength: 63 }), Type.Null()]),
                /** Key prefix inside the bucket, e.g. 'folio/'. */
                prefix: Type.String({ pattern: '^([^/].*/)?$' }),
                /** null: the SDK's default credential chain (AWS_ACCESS_KEY_ID, instance roles, ...). */
                accessKeyId: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
                secretAccessKey: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
                /** bucket in the path (http://host/bucket/key), as MinIO and most self-hosted services want. */
                forcePathStyle: Type.Boolean(),
                /** WHEN_REQUIRED: no CRC32 checksums unless the operation needs one (MinIO, R2, B2 break on them). */
                checksums: Type.Union([Type.Literal('WHEN_REQUIRED'), Type.Literal('WHEN_SUPPORTED')]),
              },
              { additionalProperties: false },
            ),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
    /** The audit log (core/domain/audit): who did what, kept a while. */
    audit: Type.Object(
      {
        /** Days a record is kept; upkeep deletes older ones. */
        retentionDays: Int(1, 36_500),
        /** Also record every tool call (caller, token, surface, function, outcome, status, duration, sizes; never arguments). */
        toolCalls: Type.Boolean(),
      },
      { additionalProperties: false },
    ),
    /** Export and import of notes and files (core/domain/exchange). */
    exchange: Type.Object(
      {
        /** The largest archive an import takes; a larger upload is 413 payload_too_large. */
        maxImportBytes: Int(1),
        /** Entries one import archive may hold; more fails the import. */
        maxEntries: Int(1),
        /** Bytes one archive member may inflate to (declared and actual). */
        maxMemberBytes: Int(1),
        /** Bytes all members of one archive may inflate to. */
        maxTotalBytes: Int(1),
        /** Hours a finished job and its archive are kept. */
        keepHours: Int(1),
        /** Export and import jobs one user may have queued or running at once. */
        maxQueuedPerUser: Int(1, 1000),
      },
      { additionalProperties: false },
    ),
    transcribe: Type.Object(
      {
        /** The engine jobs use unless a request names another (and allowEngineChoice lets it). */
        engine: Type.Union([Type.Literal('local'), Type.Literal('openai')]),
        /** A request may name its engine (one that is configured). */
        allowEngineChoice: Type.Boolean(),
        /** Longer recordings are refused (the job fails saying so), before any transcribing. */
        maxSeconds: Int(1),
        /** One attempt may run this long; then the engine is stopped and the job fails. */
        timeoutSeconds: Int(1),
        /** Transcriptions at once per process (the offline engine takes a core each). */
        concurrency: Int(1, 64),
        /** Jobs one user may have queued or running at once; one more is 429 too_many_queued_jobs. */
        maxQueuedPerUser: Int(1, 10_000),
        /** The offline engine: pocketsphinx on 16 kHz mono audio made by ffmpeg (Debian packages). */
        local: Type.Object(
          {
            ffmpeg: Type.String({ minLength: 1 }),
            ffprobe: Type.String({ minLength: 1 }),
            pocketsphinx: Type.String({ minLength: 1 }),
            /** A model folder (hmm) in place of pocketsphinx-en-us's; null: the package's. */
            model: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
          },
          { additionalProperties: false },
        ),
        /** Any server that speaks OpenAI's POST /v1/audio/transcriptions; url null: not configured. */
        openai: Type.Object(
          {
            url: Type.Union([Type.String({ pattern: '^https?://' }), Type.Null()]),
            key: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
            model: Type.String({ minLength: 1 }),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
    http: Type.Object(
      {
        /** Reverse proxies (addresses or CIDR ranges) whose X-Forwarded-For/-Proto/-Host and Forwarded are believed. */
        trustedProxies: Type.Array(Type.String({ minLength: 1 })),
        /** Browser origins (scheme://host[:port]) whose pages may call /api/v1 and /curl (CORS); '*' for any. /mcp has its own (mcp.allowedOrigins). */
        allowedOrigins: Type.Array(Type.String({ pattern: '^(\\*|https?://[^/]+)$' })),
      },
      { additionalProperties: false },
    ),
    mcp: Type.Object(
      {
        /** stateful: sessions with live list_changed; stateless: any node answers any request. */
        mode: Type.Union([Type.Literal('stateful'), Type.Literal('stateless')]),
        /** Origins (scheme://host[:port]) browsers may call /mcp from, besides Folio's own. */
        allowedOrigins: Type.Array(Type.String({ pattern: '^https?://[^/]+$' })),
        /** Host header values (host or host:port) accepted besides localhost, 127.0.0.1 and [::1]. */
        allowedHosts: Type.Array(Type.String({ minLength: 1 })),
        /** How long a POST's requests may go unanswered before they are abandoned; null: the handler timeout + 5 s. */
        streamDeadlineMs: Type.Union([Int(1), Type.Null()]),
        /** How long a POST's answer may be held back to go out whole, in one write (0: stream at once). */
        holdMs: Int(0, 10_000),
      },
      { additionalProperties: false },
    ),
    storage: Type.Object(
      {
        /** Bytes one user may store in all (note revisions, files); null: no limit. */
        quotaBytesPerUser: Type.Union([Int(0), Type.Null()]),
      },
      { additionalProperties: false },
    ),
    embedded: Type.Object(
      {
        /** Live notes of one user the embedded database serves within the latency targets (measured); past it Folio warns. */
        notesPerUser: Int(1),
        /** Rows of one user's search index likewise (chunks of notes, files, transcripts). */
        searchChunksPerUser: Int(1),
        /** How often the embedded database's size is checked against them (fractions for tests). */
        checkMinutes: Type.Number({ minimum: 0.01, maximum: 10_080 }),
        /** The embedded database's vacuum and checkpoint (core/db/embedded-upkeep.ts): a pass at least this often. */
        upkeepMinutes: Type.Number({ minimum: 0.01, maximum: 10_080 }),
        /** ... and as soon as this much WAL has been written since the last pass. */
        upkeepWalMb: Int(1, 65_536),
      },
      { additionalProperties: false },
    ),
    backup: Type.Object(
      {
        /** Where the server writes scheduled backups (`npm run backup` archives); null: no scheduled backups. */
        dir: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
        /** Hours between scheduled backups (counted from the newest archive in `dir`). */
        everyHours: Type.Number({ minimum: 0.0001, maximum: 8760 }),
        /** Scheduled archives kept in `dir`; older ones are removed after each new one. */
        keep: Int(1, 10_000),
        /** S3 blob store: copy the file bytes into each archive, or record the bucket's keys only. */
        blobs: Type.Union([Type.Literal('include'), Type.Literal('reference')]),
      },
      { additionalProperties: false },
    ),
    shutdown: Type.Object(
      {
        /** On SIGTERM, keep accepting new connections this long (GET /ready answers 503) so a load balancer stops sending first. */
        drainDelaySeconds: Type.Number({ minimum: 0, maximum: 20 }),
        /** Then wait this long for requests in flight (a download, a slow upload) before cutting them; below the 25 s stop deadline. */
        graceSeconds: Type.Number({ minimum: 0, maximum: 22 }),
      },
      { additionalProperties: false },
    ),
    metrics: Type.Object(
      {
        /** Serve GET /metrics (Prometheus text). */
        enabled: Type.Boolean(),
        /** When set, /metrics (and /ready's details) answer only to `Authorization: Bearer <token>`. */
        token: Type.Union([Type.String({ minLength: 16 }), Type.Null()]),
      },
      { additionalProperties: false },
    ),
    jobs: Type.Object(
      {
        /** Run the background workers inside the server process; false when `npm run worker` processes do it. */
        inProcess: Type.Boolean(),
        /** Jobs of one kind run at once, per process. */
        concurrency: Int(1, 64),
        /** How often an idle worker looks for jobs, and a running job for its cancellation. */
        pollSeconds: Type.Number({ minimum: 0.5, maximum: 600 }),
        /** Attempts after the first before a job is dead-lettered. */
        retryLimit: Int(0, 100),
        /** The first retry's delay; each further one doubles, up to an hour. */
        retryDelaySeconds: Int(1, 3600),
        /** How long jobs that failed every attempt are kept for admins to see. */
        deadLetterRetentionDays: Int(1, 3650),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export type Config = Static<typeof ConfigSchema>;

/** Environment variable -> config path, and how to read its text. */
const ENV: Record<string, { at: string[]; parse: (v: string) => unknown }> = {
  PORT: { at: ['port'], parse: num },
  HOST: { at: ['host'], parse: str },
  PUBLIC_URL: { at: ['publicUrl'], parse: str },
  DATABASE_URL: { at: ['databaseUrl'], parse: str },
  DATA_DIR: { at: ['dataDir'], parse: str },
  PLUGINS_DIR: { at: ['pluginsDir'], parse: list },
  SKILLS_DIR: { at: ['skillsDir'], parse: list },
  BOOTSTRAP_ADMIN_TOKEN: { at: ['bootstrapAdminToken'], parse: str },
  LOG_LEVEL: { at: ['logLevel'], parse: str },
  LOG_FORMAT: { at: ['logFormat'], parse: str },
  RESPONSE_MAX_BYTES: { at: ['limits', 'responseBytes'], parse: num },
  RESPONSE_HARD_CAP_BYTES: { at: ['limits', 'responseHardCapBytes'], parse: num },
  REQUEST_MAX_BYTES: { at: ['limits', 'requestBytes'], parse: num },
  HANDLER_TIMEOUT_MS: { at: ['limits', 'handlerTimeoutMs'], parse: num },
  VISIBLE_TIMEOUT_MS: { at: ['limits', 'visibleTimeoutMs'], parse: num },
  PLUGIN_ISOLATION: { at: ['isolation', 'mode'], parse: str },
  PLUGIN_HEAP_MB: { at: ['isolation', 'heapMb'], parse: num },
  PLUGIN_CPU_TIMEOUT_MS: { at: ['isolation', 'cpuTimeoutMs'], parse: num },
  PLUGIN_IMPORT_TIMEOUT_MS: { at: ['isolation', 'importTimeoutMs'], parse: num },
  PLUGIN_MEMORY_MB: { at: ['isolation', 'memoryMb'], parse: num },
  PLUGIN_SANDBOX: { at: ['isolation', 'sandbox'], parse: str },
  PLUGIN_IDLE_STOP_SECONDS: { at: ['isolation', 'idleStopSeconds'], parse: num },
  PLUGIN_MAX_CONCURRENT_CALLS: { at: ['isolation', 'maxConcurrentCalls'], parse: num },
  RELOAD_WATCH: { at: ['reload', 'watch'], parse: bool },
  RELOAD_DEBOUNCE_MS: { at: ['reload', 'debounceMs'], parse: num },
  MCP_MODE: { at: ['mcp', 'mode'], parse: str },
  CORS_ALLOWED_ORIGINS: { at: ['http', 'allowedOrigins'], parse: (v) => v.split(/[\s,]+/).filter((o) => o !== '') },
  TRUSTED_PROXIES: { at: ['http', 'trustedProxies'], parse: (v) => v.split(/[\s,]+/).filter((p) => p !== '') },
  STORAGE_QUOTA_BYTES: { at: ['storage', 'quotaBytesPerUser'], parse: (v) => (v === '' ? null : num(v)) },
  FILES_MAX_FILE_BYTES: { at: ['files', 'maxFileBytes'], parse: num },
  NOTES_TRASH_RETENTION_DAYS: { at: ['notes', 'trashRetentionDays'], parse: num },
  METRICS_ENABLED: { at: ['metrics', 'enabled'], parse: bool },
  METRICS_TOKEN: { at: ['metrics', 'token'], parse: str },
  JOBS_IN_PROCESS: { at: ['jobs', 'inProcess'], parse: bool },
  JOBS_CONCURRENCY: { at: ['jobs', 'concurrency'], parse: num },
  JOBS_POLL_SECONDS: { at: ['jobs', 'pollSeconds'], parse: decimal },
  BLOB_STORE: { at: ['files', 'blobStore', 'kind'], parse: str },
  S3_ENDPOINT: { at: ['files', 'blobStore', 's3', 'endpoint'], parse: str },
  S3_REGION: { at: ['files', 'blobStore', 's3', 'region'], parse: str },
  S3_BUCKET: { at: ['files', 'blobStore', 's3', 'bucket'], parse: str },
  S3_PREFIX: { at: ['files', 'blobStore', 's3', 'prefix'], parse: (v) => v },
  S3_ACCESS_KEY_ID: { at: ['files', 'blobStore', 's3', 'accessKeyId'], parse: str },
  S3_SECRET_ACCESS_KEY: { at: ['files', 'blobStore', 's3', 'secretAccessKey'], parse: str },
  S3_FORCE_PATH_STYLE: { at: ['files', 'blobStore', 's3', 'forcePathStyle'], parse: bool },
  S3_CHECKSUMS: { at: ['files', 'blobStore', 's3', 'checksums'], parse: str },
  NOTES_REPORTS_PER_USER: { at: ['notes', 'reportsPerUser'], parse: num },
  TRANSCRIBE_ENGINE: { at: ['transcribe', 'engine'], parse: str },
  TRANSCRIBE_ALLOW_ENGINE_CHOICE: { at: ['transcribe', 'allowEngineChoice'], parse: bool },
  TRANSCRIBE_MAX_SECONDS: { at: ['transcribe', 'maxSeconds'], parse: num },
  TRANSCRIBE_TIMEOUT_SECONDS: { at: ['transcribe', 'timeoutSeconds'], parse: num },
  TRANSCRIBE_CONCURRENCY: { at: ['transcribe', 'concurrency'], parse: num },
  TRANSCRIBE_MAX_QUEUED_PER_USER: { at: ['transcribe', 'maxQueuedPerUser'], parse: num },
  TRANSCRIBE_FFMPEG: { at: ['transcribe', 'local', 'ffmpeg'], parse: str },
  TRANSCRIBE_FFPROBE: { at: ['transcribe', 'local', 'ffprobe'], parse: str },
  TRANSCRIBE_POCKETSPHINX: { at: ['transcribe', 'local', 'pocketsphinx'], parse: str },
  TRANSCRIBE_OPENAI_URL: { at: ['transcribe', 'openai', 'url'], parse: str },
  TRANSCRIBE_OPENAI_KEY: { at: ['transcribe', 'openai', 'key'], parse: str },
  TRANSCRIBE_OPENAI_MODEL: { at: ['transcribe', 'openai', 'model'], parse: str },
  BACKUP_DIR: { at: ['backup', 'dir'], parse: str },
  SHUTDOWN_DRAIN_DELAY_SECONDS: { at: ['shutdown', 'drainDelaySeconds'], parse: decimal },
  SHUTDOWN_GRACE_SECONDS: { at: ['shutdown', 'graceSeconds'], parse: decimal },
  BACKUP_EVERY_HOURS: { at: ['backup', 'everyHours'], parse: decimal },
  BACKUP_KEEP: { at: ['backup', 'keep'], parse: num },
  BACKUP_BLOBS: { at: ['backup', 'blobs'], parse: str },
  NOTES_REPORT_THREADS: { at: ['notes', 'reportThreads'], parse: (v) => (v === '' ? null : num(v)) },
};

function str(v: string): unknown {
  return v === '' ? null : v;
}
function num(v: string): unknown {
  return /^-?\d+$/.test(v.trim()) ? Number(v) : v; // leave bad text for the validator to name
}
function decimal(v: string): unknown {
  return /^\d+(\.\d+)?$/.test(v.trim()) ? Number(v) : v;
}
function list(v: string): unknown {
  return v.split(':').filter((p) => p !== '');
}
function bool(v: string): unknown {
  return v === 'true' || v === '1' ? true : v === 'false' || v === '0' ? false : v;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export const PACKAGE_ROOT = path.resolve(import.meta.dirname, '../..');
export const PACKAGE = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
};

function readJson(file: string): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new ConfigError(`config: cannot read ${file}: ${(err as Error).message}`);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isObject(b) && isObject(v) ? merge(b, v) : v;
  }
  return out;
}

function setAt(obj: Record<string, unknown>, at: string[], value: unknown): void {
  let cur = obj;
  for (const key of at.slice(0, -1)) {
    if (!isObject(cur[key])) cur[key] = {};
    cur = cur[key] as Record<string, unknown>;
  }
  cur[at[at.length - 1]!] = value;
}

/**
 * Loads and validates the configuration. `overrides` (deep-merged last) is for tests and
 * embedding; `env` defaults to process.env. Relative directories resolve against the working
 * directory, as a user typing `DATA_DIR=./x npm start` expects.
 */
export function loadConfig(opts: { env?: NodeJS.ProcessEnv; overrides?: Record<string, unknown>; configDir?: string } = {}): Config {
  const env = opts.env ?? process.env;
  const dir = opts.configDir ?? path.join(PACKAGE_ROOT, 'config');
  let raw = readJson(path.join(dir, 'default.json'));
  const local = path.join(dir, 'local.json');
  if (existsSync(local)) raw = merge(raw, readJson(local));
  const envNames: Record<string, string> = {};
  for (const [name, { at, parse }] of Object.entries(ENV)) {
    const v = env[name];
    if (v === undefined) continue;
    setAt(raw, at, parse(v));
    envNames[at.join('.')] = name;
  }
  if (opts.overrides) raw = merge(raw, opts.overrides);

  // Ajv, as every request's validation: TypeBox's own checker would load ~300 more modules, held
  // for the process's life (each garbage collection marks them).
  const check = new Ajv({ allErrors: true, strict: false }).compile(ConfigSchema);
  const errors = check(raw) ? [] : (check.errors ?? []);
  if (errors.length > 0) {
    const lines = errors.slice(0, 10).map((e) => {
      const key = e.instancePath.replace(/^\//, '').replaceAll('/', '.') || '(root)';
      const source = envNames[key] ? ` (from ${envNames[key]})` : '';
      const extra = e.keyword === 'additionalProperties' ? ` ${JSON.stringify(e.params)}` : '';
      return `  ${key}${source}: ${e.message}${extra}; got ${JSON.stringify(valueAt(raw, key))}`;
    });
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const cfg = raw as Config;
  if (cfg.limits.responseBytes > cfg.limits.responseHardCapBytes) {
    throw new ConfigError('invalid configuration:\n  limits.responseBytes: must not exceed limits.responseHardCapBytes');
  }
  if (cfg.tokens.mintDefaultTtlSeconds > cfg.tokens.mintMaxTtlSeconds) {
    throw new ConfigError('invalid configuration:\n  tokens.mintDefaultTtlSeconds: must not exceed tokens.mintMaxTtlSeconds');
  }
  const notAddress = cfg.http.trustedProxies.filter((p) => !isAddressOrRange(p));
  if (notAddress.length) {
    const source = envNames['http.trustedProxies'] ? ' (from TRUSTED_PROXIES)' : '';
    throw new ConfigError(
      `invalid configuration:\n  http.trustedProxies${source}: each must be an IP address or a CIDR range (10.0.0.0/8, fd00::/8); got ${JSON.stringify(notAddress)}`,
    );
  }
  if (cfg.files.blobStore.kind === 's3' && !cfg.files.blobStore.s3.bucket) {
    throw new ConfigError('invalid configuration:\n  files.blobStore.s3.bucket (S3_BUCKET): required when files.blobStore.kind is s3');
  }
  if ((cfg.files.blobStore.s3.accessKeyId === null) !== (cfg.files.blobStore.s3.secretAccessKey === null)) {
    throw new ConfigError(
      'invalid configuration:\n  files.blobStore.s3: accessKeyId and secretAccessKey go together (set both, or neither)',
    );
  }
  if (cfg.backup.blobs === 'reference' && cfg.files.blobStore.kind !== 's3') {
    throw new ConfigError(
      `invalid configuration:\n  backup.blobs (BACKUP_BLOBS): 'reference' records S3 keys and is for the s3 blob store only; the ${cfg.files.blobStore.kind} store's bytes must be included ('include')`,
    );
  }
  return {
    ...cfg,
    dataDir: path.resolve(cfg.dataDir),
    backup: { ...cfg.backup, dir: cfg.backup.dir === null ? null : path.resolve(cfg.backup.dir) },
    pluginsDir: cfg.pluginsDir.map((d) => path.resolve(d)),
    skillsDir: cfg.skillsDir.map((d) => path.resolve(d)),
  };
}

/** `192.0.2.7`, `10.0.0.0/8`, `::1`, `fd00::/8`. */
function isAddressOrRange(entry: string): boolean {
  const [address = '', bits, more] = entry.split('/');
  const v = isIP(address);
  if (v === 0 || more !== undefined) return false;
  return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (v === 4 ? 32 : 128));
}

function valueAt(obj: unknown, key: string): unknown {
  if (key === '(root)') return undefined;
  let cur = obj;
  for (const k of key.split('.')) cur = isObject(cur) ? cur[k] : undefined;
  return cur;
}
