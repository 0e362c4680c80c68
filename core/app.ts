// Wires the parts together: database, identity, registry, dispatch, and the HTTP surfaces.
// `startFolio` is what `npm start` and the integration tests both run.
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import Koa, { type Next, type ParameterizedContext } from 'koa';
import Router from '@koa/router';
import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';
import { openDatabase, type Database } from './db/database.ts';
import { scheduleBackups } from './backup/schedule.ts';
import { DATABASE_SCHEMA, DOMAINS } from './domains.ts';
import type { Domain } from './contract/domain.ts';
import { ResourceEvents, type SearchSource } from './contract/search.ts';
import type { IdentityService } from './domain/identity/service.ts';
import type { CachedNotes } from './domain/notes/summary-cache.ts';
import { ChangeFeed } from './db/change-feed.ts';
import { StreamLog } from './db/stream-log.ts';
import { JobQueue } from './db/jobs.ts';
import { refreshPlannerStats } from './db/maintenance.ts';
import { EmbeddedUpkeep } from './db/embedded-upkeep.ts';
import { embeddedCapacity, forHealth, type CapacityReport } from './db/capacity.ts';
import { Authenticator } from './kernel/auth.ts';
import { PACKAGE, type Config } from './kernel/config.ts';
import { Dispatcher } from './kernel/dispatch.ts';
import { Registry } from './kernel/registry.ts';
import { sandboxSummary } from './kernel/isolation/sandbox.ts';
import { isolationSettings } from './kernel/isolation/host.ts';
import { Policy } from './kernel/policy.ts';
import { ScopeCatalogue } from './kernel/scopes.ts';
import { servicesFor } from './kernel/services.ts';
import { AdminService } from './kernel/admin/service.ts';
import { curlRouter } from './surfaces/curl/routes.ts';
import { fastCallRoute } from './surfaces/curl/fast-call.ts';
import { directRoutes } from './surfaces/http/direct.ts';
import { restSurface } from './surfaces/rest/routes.ts';
import { REST_PREFIX } from './surfaces/rest/router.ts';
import { toProblem } from './surfaces/rest/problems.ts';
import { mcpSurface, type McpSurface } from './surfaces/mcp/routes.ts';
import { sendText } from './surfaces/curl/respond.ts';
import { mountDocAssets } from './surfaces/pages/docs.ts';
import { landingRoute } from './surfaces/pages/landing.ts';
import { healthRoute } from './surfaces/health.ts';
import { listenOnLoopbackTwin } from './surfaces/http/loopback-twin.ts';
import { corsHandler } from './surfaces/http/cors.ts';
import { beginRequest, requestError, requestLog, type RequestLogState } from './surfaces/http/request-log.ts';
import { handleClientErrors, type RawAnswer } from './surfaces/http/client-errors.ts';
import { errorAnswer } from './surfaces/http/error-text.ts';
import { BadArguments } from './contract/errors.ts';
import { bootstrapAdmin, bootstrapDigest } from './domain/identity/bootstrap.ts';
import type Provider from 'oidc-provider';
import { mountProvider, OAUTH_PREFIX, passTo } from './surfaces/oauth/mount.ts';
import { loadOnce } from './domain/load-once.ts';
import { interactionRouter } from './surfaces/oauth/pages.ts';
import { invitationRouter } from './surfaces/pages/invite.ts';
import { scimRouter } from './surfaces/scim/routes.ts';
import { TRANSCRIBE_JOB, type TranscribeService } from './domain/transcribe/service.ts';
import type { FilesServiceImpl } from './domain/files/service.ts';
import type { SearchService } from './domain/search/service.ts';
import { UPLOADS_PATH } from './domain/files/resumable.ts';
import { clientAddress, ProxyTrust, trustProxies } from './surfaces/http/client-address.ts';
import { withRequest } from './contract/request-context.ts';
import type { AuditService } from './domain/audit/service.ts';
import { isLingering, lingerOnUnreadBodies, requestStarted } from './surfaces/http/linger.ts';
import { watchBodyPace } from './surfaces/http/slow-body.ts';
import { activeTraceId, newErrorId, tracingOn } from './contract/observe.ts';
import type { Metrics } from './observability/metrics.ts';
import { bearerIs } from './observability/bearer.ts';
import { Readiness, readyRoute } from './observability/ready.ts';
import { requestSpan } from './observability/request-span.ts';

export interface Folio {
  config: Config;
  url: string;
  server: http.Server;
  db: Database;
  registry: Registry;
  jobs: JobQueue;
  identity: IdentityService;
  policy: Policy;
  dispatcher: Dispatcher;
  log: Logger;
  /** GET /ready's state and dependency checks (add one with readiness.add). */
  readiness: Readiness;
  /** The /metrics registry; undefined when metrics are off. */
  metrics: Metrics | undefined;
  /** /ready answers 503 from now on (the first step of close(); callable earlier). */
  markDraining(): void;
  /** The admin token generated on this start, when there was no user yet and none was configured. */
  generatedAdminToken: string | undefined;
  /** A domain's service by its name (core/domains.ts), for operator commands and tests. */
  service<T>(name: string): T;
  close(): Promise<void>;
}

/**
 * The log's form on stdout: as LOG_FORMAT says, or (auto) readable lines when stdout is a terminal,
 * where a person reads it, and JSON lines otherwise, where a program does.
 */
export function logFormat(setting: Config['logFormat'], stdoutIsTTY: boolean): 'json' | 'pretty' {
  if (setting === 'auto') return stdoutIsTTY ? 'pretty' : 'json';
  return setting;
}

/** When the process's logger last wrote a line (ms since the epoch). */
let lastLogLine = 0;

/** Resolves once no line has been logged for `quietMs` (or after `maxMs` at most). */
export async function logsQuiet(quietMs: number, maxMs: number): Promise<void> {
  const until = Date.now() + maxMs;
  for (;;) {
    const wait = Math.min(lastLogLine + quietMs, until) - Date.now();
    if (wait <= 0) return;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

export function createLogger(config: Config, stdoutIsTTY = Boolean(process.stdout.isTTY)): Logger {
  const options = {
    level: config.logLevel,
    base: { service: 'folio', version: PACKAGE.version },
    hooks: {
      streamWrite: (line: string) => {
        lastLogLine = Date.now();
        return line;
      },
    },
    // With tracing on, every line written inside a span carries its trace id.
    ...(tracingOn ? { mixin: () => ({ trace_id: activeTraceId() }) } : {}),
  };
  if (logFormat(config.logFormat, stdoutIsTTY) === 'json') return pino(options);
  // On this thread and synchronously, as JSON lines are: a crash's last line is not lost.
  return pino(
    options,
    pretty({ sync: true, colorize: stdoutIsTTY, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname,service,version' }),
  );
}

/** The 400 for a request the HTTP parser refused before any route saw it, as its path's surface words one. */
function parserRefusal(path: string | undefined, message: string, publicUrl: string | null, log: Logger): RawAnswer {
  const err = new BadArguments(message);
  if (path === REST_PREFIX || path?.startsWith(`${REST_PREFIX}/`)) {
    // No trustworthy Host to build the problem type's URL from: the public URL's, else a relative one.
    const problem = toProblem(err, { base: (publicUrl ?? '').replace(/\/+$/, ''), log });
    return { status: problem.status, type: 'application/problem+json', body: JSON.stringify(problem.body) };
  }
  if (path === '/mcp')
    return {
      status: 400,
      type: 'application/json',
      body: JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: `Bad Request: ${message}` }, id: null }),
    };
  const text = errorAnswer(err, log);
  return { status: text.status, type: 'text/plain; charset=utf-8', body: `${text.text}\n` };
}

/** More than one Authorization field (Node's req.headers keeps only the first; rawHeaders has all). */
function credentialsTwice(req: http.IncomingMessage): boolean {
  const raw = req.rawHeaders;
  let seen = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 13 && name.toLowerCase() === 'authorization') {
      if (seen) return true;
      seen = true;
    }
  }
  return false;
}

// The drain (delay + grace) ends by then: core/main.ts exits 1 at 25 s whatever is left.
const DRAIN_CAP_MS = 22_000;
const settingsOf = (config: Config, name: string) => (config as unknown as Record<string, unknown>)[name];

/**
 * Each domain's service, made from its registration with its own section of the config (the
 * domains define their kinds of job on `jobs` here). Shared by the server and `npm run worker`.
 */
/** The one scope catalogue, from every domain's registration. */
export function scopeCatalogue(): ScopeCatalogue {
  return new ScopeCatalogue(DOMAINS.flatMap((d: Domain<any, any>) => Object.entries(d.scopes ?? {})));
}

export function createDomains(
  config: Config,
  env: { db: Database; feed: ChangeFeed; jobs: JobQueue; log: Logger; scopes: ScopeCatalogue; publicUrl: () => string },
) {
  const made = new Map<string, unknown>();
  // Told by each domain inside its writes; search (made last) listens and indexes.
  const events = new ResourceEvents();
  const sources: SearchSource[] = [];
  return DOMAINS.map((domain: Domain<any, any>) => {
    const service = domain.create({
      db: env.db,
      feed: env.feed,
      jobs: env.jobs,
      log: env.log.child({ domain: domain.name }),
      settings: settingsOf(config, domain.name),
      storage: config.storage,
      scopes: env.scopes,
      dataDir: config.dataDir,
      publicUrl: env.publicUrl,
      domain: <T>(name: string): T => {
        if (!made.has(name)) throw new Error(`domain ${domain.name} asks for ${name}, which is not made before it in core/domains.ts`);
        return made.get(name) as T;
      },
      events,
      searchSources: () => sources,
    }) as unknown;
    made.set(domain.name, service);
    if (domain.search) sources.push(...domain.search(service));
    return { domain, service };
  });
}

/** What every call needs, without any surface: the database, the domains, the registry, the policy. */
export interface FolioCore {
  db: Database;
  feed: ChangeFeed;
  jobs: JobQueue;
  domains: ReturnType<typeof createDomains>;
  identity: IdentityService;
  notes: CachedNotes;
  scopes: ScopeCatalogue;
  registry: Registry;
  policy: Policy;
  admin: AdminService;
  generatedAdminToken: string | undefined;
  serviceOf: (name: string) => unknown;
}

/**
 * Opens the database and makes the domains, the registry (every plugin loaded) and the policy:
 * the part of Folio that serves calls, shared by the server (startFolio) and the plugin test
 * harness (core/sdk/testing.ts), which calls the dispatcher without any HTTP surface.
 */
export async function startCore(config: Config, log: Logger, publicUrl: () => string): Promise<FolioCore> {
  const db = await openDatabase({ schema: DATABASE_SCHEMA, databaseUrl: config.databaseUrl ?? undefined, dataDir: config.dataDir, log });
  const feed = new ChangeFeed({ db, databaseUrl: config.databaseUrl ?? undefined, log: log.child({ component: 'changes' }) });
  await feed.start();
  const scopes = scopeCatalogue();
  const jobs = new JobQueue({ db, log: log.child({ component: 'jobs' }), settings: config.jobs });
  const domains = createDomains(config, {
    db,
    feed,
    jobs,
    log,
    scopes,
    publicUrl,
  });
  // Workers run here unless `npm run worker` processes do the work (jobs.inProcess false).
  await jobs.start({ work: config.jobs.inProcess });
  const serviceOf = (name: string): unknown => domains.find((d) => d.domain.name === name)?.service;
  // The kernel itself needs two of them: identity (who is calling, their switches) and notes (the
  // caller's notes in brief, which visibility rules read).
  const identity = serviceOf('identity') as IdentityService;
  const notes = serviceOf('notes') as CachedNotes;
  const generatedAdminToken = await bootstrapAdmin(identity, config.bootstrapAdminToken, log);

  const registry = new Registry({
    pluginsDirs: config.pluginsDir,
    skillsDirs: config.skillsDir,
    log: log.child({ component: 'registry' }),
    debounceMs: config.reload.debounceMs,
    isolation: isolationSettings(config),
  });
  const sandbox = sandboxSummary(config.isolation.sandbox);
  log[sandbox.level](sandbox.message);
  await registry.loadAll();
  if (config.reload.watch) await registry.watch();

  const policy = new Policy({
    registry,
    scopes,
    limits: config.limits,
    overrides: (userId) => identity.namespaceAccess(userId),
    notesSummary: (userId) => notes.summary(userId),
    pins: (userId) => identity.pins(userId),
  });
  const admin = new AdminService({
    identity,
    transcribe: serviceOf('transcribe') as TranscribeService,
    transcribeKind: TRANSCRIBE_JOB,
    policy,
    jobs,
    log: log.child({ component: 'admin' }),
  });
  return { db, feed, jobs, domains, identity, notes, scopes, registry, policy, admin, generatedAdminToken, serviceOf };
}

export async function startFolio(config: Config, log: Logger = createLogger(config)): Promise<Folio> {
  // The address the server listens on, known once it does: the public URL when none is configured.
  let listening = `http://${config.host}:${config.port}`;
  const core = await startCore(config, log, () => (config.publicUrl ?? listening).replace(/\/+$/, ''));
  const { db, feed, jobs, domains, identity, scopes, registry, policy, admin, generatedAdminToken, serviceOf } = core;
  const audit = serviceOf('audit') as AuditService;
  // Its vacuum and checkpoint (no autovacuum, no checkpointer: core/db/embedded-upkeep.ts).
  const upkeep = new EmbeddedUpkeep(db, config.embedded, log.child({ component: 'upkeep' }));
  // prom-client is loaded only when metrics are on.
  const metricsModule = config.metrics.enabled ? await import('./observability/metrics.ts') : undefined;
  const metrics: Metrics | undefined = metricsModule
    ? new metricsModule.Metrics({
        db,
        jobs,
        registry,
        upkeep,
        mcpSessions: () => mcp.sessionCount,
        log: log.child({ component: 'metrics' }),
      })
    : undefined;
  const dispatcher = new Dispatcher({
    policy,
    observer: metrics,
    callLog: config.audit.toolCalls ? audit : undefined,
    limits: config.limits,
    services: (principal, l) => servicesFor({ identity, domains, registry, policy, jobs, admin, tokens: config.tokens }, principal, l),
  });
  const auth = new Authenticator(identity, { digest: await bootstrapDigest(identity, config.bootstrapAdminToken) });
  // An OAuth access token works on the surface it was issued for (RFC 8707), or on all of them
  // when issued for Folio as a whole (no resource named).
  const audiences = (path: string) => () => [`${publicBase}${path}`, publicBase];

  const app = new Koa();
  // ctx.ip, ctx.protocol, ctx.host: forwarding headers only from the configured proxies.
  const proxies = new ProxyTrust(config.http.trustedProxies);
  trustProxies(app, proxies);
  if (config.publicUrl && config.http.trustedProxies.length === 0)
    log.warn(
      "PUBLIC_URL is set but TRUSTED_PROXIES is empty: behind a reverse proxy every client has the proxy's address, and the per-address sign-in and registration limits count them all as one. Set TRUSTED_PROXIES to the proxy's address.",
    );
  // In place of Koa's default, which prints the stack to stderr: the request's own log line.
  app.on('error', (err: unknown, ctx?: ParameterizedContext) => requestError(log, err, ctx));
  app.use(requestLog(log));
  app.use(async (ctx: ParameterizedContext<RequestLogState>, next: Next) => {
    try {
      await next();
    } catch (err) {
      // Last line of defence: no framework error page, no stack in a body.
      const errorId = newErrorId();
      ctx.state.log.error({ errorId, err }, 'unhandled error');
      sendText(ctx, 500, `500 Internal Server Error: error id ${errorId}`);
    }
  });

  // The OAuth authorization server: its issuer is known once the server knows its address; it is
  // made by the first request that needs it (./surfaces/oauth/mount.ts).
  let provider: (() => Promise<Provider>) | null = null;
  let issuer: string | null = null;
  let publicBase = '';
  app.use(mountProvider(() => provider?.() ?? null, { registrationWait: (ip) => identity.oauth.registrationWait(ip) }));
  const oauthPages = interactionRouter({ provider: () => provider?.() ?? null, identity, scopes, defaultResource: () => publicBase });
  app.use(oauthPages.routes());
  app.use(invitationRouter(identity).routes());

  const root = new Router();
  const transcribe = serviceOf('transcribe') as TranscribeService;
  // The embedded engine's size against what it was measured to serve (core/db/capacity.ts);
  // checked after start and then every embedded.checkMinutes.
  let capacity: CapacityReport | null = null;
  root.get(
    '/health',
    healthRoute(
      db,
      PACKAGE.version,
      async () => ({
        transcription: await transcribe.engines(),
        // Resources waiting for their search index job, and the longest wait.
        search_index: await (serviceOf('search') as SearchService).backlog(),
        ...(capacity ? { embedded_capacity: forHealth(capacity) } : {}),
        ...(capacity && upkeep.last ? { embedded_upkeep: upkeep.last } : {}),
      }),
      () => (serviceOf('files') as FilesServiceImpl).checkBlobStore(),
    ),
  );
  // Readiness (core/observability/ready.ts): required dependencies; the blob store's check joins them.
  const readiness = new Readiness([
    { name: 'database', check: () => db.ping(1500) },
    {
      name: 'blob store',
      check: async () => {
        const b = await (serviceOf('files') as FilesServiceImpl).checkBlobStore();
        if (b.status !== 'ok') throw new Error(`${b.kind} blob store ${b.status}${b.error ? `: ${b.error}` : ''}`);
      },
    },
  ]);
  const metricsToken = config.metrics.token;
  root.get(
    '/ready',
    readyRoute(readiness, async (authorization) => {
      if (!authorization) return false;
      if (metricsToken && bearerIs(authorization, metricsToken)) return true;
      const principal = await auth.authenticate(authorization, new URLSearchParams());
      return principal.user.roles.includes('admin');
    }),
  );
  if (metrics && metricsModule) root.get('/metrics', metricsModule.metricsRoute(metrics, metricsToken));
  // Said once at start: a default engine that cannot run, and what it needs.
  void transcribe.engines().then((e) => {
    const d = e.engines[e.default];
    if (!d.ok) log.warn(`transcription: the ${e.default} engine cannot run here: ${d.reason}`);
  });
  // RFC 8414: the metadata of the issuer <base>/oauth, at the well-known location derived from it
  // (and at the root form, which some clients try first).
  for (const wellKnown of ['/.well-known/oauth-authorization-server/oauth', '/.well-known/oauth-authorization-server']) {
    root.get(wellKnown, async (ctx, next) => {
      if (!provider) {
        await next();
        return;
      }
      await passTo(await provider(), ctx, '/.well-known/openid-configuration');
    });
  }
  mountDocAssets(root);
  // A browser at `/` gets the landing page; a program falls through to the plain-text answer.
  root.get(
    '/',
    landingRoute(PACKAGE.version, () => publicBase),
  );
  app.use(root.routes());
  const curl = curlRouter({
    dispatcher,
    auth: auth.forAudiences(audiences('/curl')),
    limits: { requestBytes: config.limits.requestBytes, jsonDepth: config.limits.jsonDepth },
    version: PACKAGE.version,
    publicUrl: config.publicUrl,
    serverNotes: async () => {
      const e = await transcribe.engines();
      return Object.entries(e.engines).map(
        ([name, a]) =>
          `transcription ${name}${name === e.default ? ' (default)' : ''}: ${a.ok ? `ready (${a.model ?? 'ok'})` : `unavailable: ${a.reason}`}`,
      );
    },
  });
  app.use(curl.routes());
  // The call itself, served before Koa (the same answers; see core/surfaces/curl/fast-call.ts).
  const fastCall = fastCallRoute({
    dispatcher,
    auth: auth.forAudiences(audiences('/curl')),
    limits: { requestBytes: config.limits.requestBytes, jsonDepth: config.limits.jsonDepth },
    log,
    koaContext: (req, res) => app.createContext(req, res),
  });
  const rest = restSurface({
    auth: auth.forAudiences(audiences('/api/v1')),
    policy,
    domains,
    admin,
    limits: { requestBytes: config.limits.requestBytes, jsonDepth: config.limits.jsonDepth },
    version: PACKAGE.version,
    publicUrl: config.publicUrl,
    observer: metrics,
  });
  app.use(rest.router.routes());
  app.use(rest.publicRouter.routes());
  const mcp: McpSurface = mcpSurface({
    dispatcher,
    auth: auth.forAudiences(audiences('/mcp')),
    version: PACKAGE.version,
    publicUrl: config.publicUrl,
    ...config.mcp,
    limits: { requestBytes: config.limits.requestBytes, jsonDepth: config.limits.jsonDepth },
    log,
    oauth: () => (issuer ? { issuer, scopes: scopes.list().map((x) => x.scope) } : null),
    streams: new StreamLog(db),
    signals: feed,
  });
  app.use(mcp.router.routes());
  // POST /mcp, the MCP surface's every message, runs its route at once rather than after the
  // middleware and the routers above it (the same route, context and answers: core/surfaces/http/direct.ts).
  const direct = directRoutes({
    log,
    context: (req, res) => app.createContext(req, res),
    routes: [{ match: (req) => req.method === 'POST' && req.url === '/mcp', handle: (ctx) => mcp.handle(ctx) }],
  });
  app.use(
    scimRouter({
      identity,
      auth: auth.forAudiences(audiences('/scim/v2')),
      scopes,
      limits: { requestBytes: config.limits.requestBytes, jsonDepth: config.limits.jsonDepth },
      publicUrl: () => publicBase,
      log,
    }).routes(),
  );
  // A user's tool list depends on their namespace access and on their notes (caller.notes feeds
  // visibility rules): any such change, made on this node or another, re-checks their sessions.
  feed.subscribe((change) => (change === 'all' ? mcp.everyoneChanged() : mcp.accessChanged(change.userId)));
  app.use((ctx) => {
    // Anything no route took: a plain 404 that says where to start, never a framework page.
    sendText(ctx, 404, `404 Not Found: no route ${ctx.method} ${ctx.path}. Start at GET /curl (with a token) or /curl/docs.`);
  });

  const handle = app.callback();
  // Koa answers its own errors (the middleware above, then app.onerror); the catch is for a failure
  // in that answering itself, which would otherwise be an unhandled rejection.
  const timeouts: http.ServerOptions = {
    headersTimeout: config.limits.headersTimeoutMs,
    // Node looks for connections past it now and then: often enough for the limit set.
    connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(config.limits.headersTimeoutMs / 4))),
    // No bound on a whole request: a large upload on a slow line takes long. A body must keep coming
    // instead (core/surfaces/http/slow-body.ts). Answers are never timed here: long downloads and
    // event streams must not be cut, and handlers have their own timeout.
    requestTimeout: 0,
  };
  const traceRequest = requestSpan();
  const addressOf = (req: http.IncomingMessage) => clientAddress(req, proxies);
  const cors = corsHandler(config.http.allowedOrigins);
  const server = http.createServer(timeouts, (req, res) => {
    // A request pipelined after an answer that closed its connection while the body was still
    // coming (the connection drains before it closes: core/surfaces/http/linger.ts) is not served.
    if (isLingering(req.socket)) {
      req.socket.destroy();
      return;
    }
    requestStarted(res);
    if (credentialsTwice(req)) {
      // Authorization is a singleton field: with two, which one a proxy in front checked and which
      // one Folio would use could differ (Node keeps the first). Refused, in the surface's format.
      const [path = '', querystring = ''] = (req.url ?? '').split('?', 2);
      beginRequest(log, req, res, () => ({ method: req.method ?? '', path, querystring }));
      const a = parserRefusal(path, 'the request has more than one Authorization header; send one', config.publicUrl, log);
      res.writeHead(a.status, { 'content-type': a.type, 'content-length': Buffer.byteLength(a.body), connection: 'close' }).end(a.body);
      return;
    }
    if (cors(req, res)) return;
    // tus 1.0: every answer on the upload URLs says the protocol version, refusals included (a 401 too).
    if (req.url?.startsWith(UPLOADS_PATH)) res.setHeader('Tus-Resumable', '1.0.0');
    const serve = () => {
      if (fastCall(req, res) || direct(req, res)) return;
      handle(req, res).catch((err: unknown) => log.error({ err }, 'request handling failed'));
    };
    // With tracing on, the request's root span around all of it; all of it as the handling of this
    // request (its id, address and user agent, for the audit log: core/contract/request-context.ts).
    withRequest(req, addressOf, () => {
      if (traceRequest) traceRequest(req, res, serve);
      else serve();
    });
  });
  watchBodyPace(server, {
    idleMs: config.limits.bodyIdleMs,
    graceMs: config.limits.bodyGraceMs,
    minBytesPerSecond: config.limits.bodyMinBytesPerSecond,
  });
  // An answer given before its request's body was read reaches a client that is still sending it.
  const lingering = lingerOnUnreadBodies(server);
  // What the HTTP parser refuses never reaches Koa: answered here, in the format of the surface the
  // path names (the request in flight, if any, is answered by its route: core/surfaces/http/body.ts).
  handleClientErrors(server, { log, answer: (path, message) => parserRefusal(path, message, config.publicUrl, log) });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const twin = await listenOnLoopbackTwin(server, log);
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const url = `http://${host}:${addr.port}`;
  publicBase = (config.publicUrl ?? url).replace(/\/+$/, '');
  issuer = `${publicBase}${OAUTH_PREFIX}`;
  const oauthIssuer = issuer;
  const ca = config.identity.clientMetadataCaFile ? await readFile(config.identity.clientMetadataCaFile, 'utf8') : undefined;
  provider = loadOnce(async () =>
    (await import('./surfaces/oauth/provider.ts')).createProvider(oauthIssuer, publicBase, {
      identity,
      scopes,
      log: log.child({ component: 'oauth' }),
      proxies,
      publicUrl: config.publicUrl,
      loopbackAliases: twin.aliases,
      clientMetadata: {
        enabled: config.identity.clientMetadataDocuments,
        allowPrivate: config.identity.clientMetadataPrivateNetworks,
        ca,
      },
    }),
  );
  listening = url;
  log.info({ url, engine: db.engine, namespaces: [...registry.snapshot.namespaces.keys()] }, 'folio listening');
  // The first scrape finds the database-backed figures read already.
  metrics?.prime();

  // Now and then: each domain's upkeep (the notes trash sweep, ...), then keep the embedded
  // engine's planner statistics fresh (it has no autovacuum).
  let closing: Promise<void> | undefined;
  // Runs in flight are awaited on close (for a while), so none outlives the database it works on.
  const running = new Set<Promise<void>>();
  const timers = domains.flatMap(({ domain, service }) => {
    const upkeep = domain.upkeep;
    if (!upkeep) return [];
    const l = log.child({ domain: domain.name });
    const once = () =>
      upkeep
        .run(service, l)
        .catch((err: unknown) => l.error({ err }, 'upkeep failed'))
        .then(() => refreshPlannerStats(db))
        .then(
          (analyzed) => analyzed && log.info('refreshed the embedded database planner statistics'),
          (err: unknown) => log.error({ err }, 'analyze failed'),
        );
    const run = () => {
      if (closing) return;
      const p = once().then(() => {
        running.delete(p);
      });
      running.add(p);
    };
    run();
    const timer = setInterval(run, upkeep.everyMinutes(settingsOf(config, domain.name)) * 60_000);
    timer.unref();
    return [timer];
  });

  const checkCapacity = async () => {
    const report = await embeddedCapacity(db, config.embedded);
    capacity = report;
    if (report?.status === 'over')
      log.warn(
        { largest: report.largest, limits: report.limits, usersOver: report.users_over },
        `the embedded database holds more than it serves within its latency targets: ${report.advice}`,
      );
  };
  if (db.engine === 'pglite') {
    const run = () => {
      if (closing) return;
      const p = checkCapacity()
        .catch((err: unknown) => log.error({ err }, 'embedded capacity check failed'))
        .then(() => {
          running.delete(p);
        });
      running.add(p);
    };
    run();
    const timer = setInterval(run, config.embedded.checkMinutes * 60_000);
    timer.unref();
    timers.push(timer);
    upkeep.start();
  }

  // Scheduled backups (backup.dir; off by default): core/backup/schedule.ts.
  const backups = scheduleBackups(config, log.child({ component: 'backup' }));
  readiness.started();

  return {
    config,
    url,
    server,
    db,
    registry,
    jobs,
    identity,
    policy,
    dispatcher,
    log,
    readiness,
    metrics,
    markDraining: () => readiness.markDraining(),
    generatedAdminToken,
    service: <T>(name: string) => serviceOf(name) as T,
    close() {
      closing ??= (async () => {
        // Draining: GET /ready answers 503 from now on. For shutdown.drainDelaySeconds new
        // connections are still accepted (a load balancer needs a moment to see /ready fail), then
        // the listener closes and the requests in flight (a download, a slow upload) get until
        // shutdown.graceSeconds to finish before their connections are cut. Both are capped so
        // the whole drain ends inside the process's 25 s stop deadline.
        readiness.markDraining();
        const started = Date.now();
        const delayMs = Math.min(config.shutdown.drainDelaySeconds * 1000, DRAIN_CAP_MS);
        const cutAt = started + Math.min(delayMs + config.shutdown.graceSeconds * 1000, DRAIN_CAP_MS);
        for (const timer of timers) clearInterval(timer);
        await backups?.close();
        await upkeep.stop();
        if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
        // MCP streams never end by themselves: their calls are answered (with an error) and their
        // sessions closed first, while their plugins are still there.
        await mcp.close();
        await twin.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          // Idle keep-alive connections close now, and each busy one as soon as its answer is out.
          server.closeIdleConnections();
          const idle = setInterval(() => server.closeIdleConnections(), 100);
          idle.unref();
          server.once('close', () => clearInterval(idle));
          // A connection draining what a client still sends after its answer has nothing left to give.
          lingering.destroyAll();
          setTimeout(
            () => {
              log.warn('shutdown grace over: closing the connections still open');
              server.closeAllConnections();
            },
            Math.max(0, cutAt - Date.now()),
          ).unref();
        });
        await mcp.drained();
        // A run stuck on a hung database must not hold the close up: wait a little, then go on.
        await Promise.race([Promise.all(running), new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
        await registry.close();
        // Running jobs get a few seconds to finish; the rest are retried by the next worker.
        await jobs.stop();
        await audit.close();
        await feed.close();
        await db.close();
      })();
      return closing;
    },
  };
}
