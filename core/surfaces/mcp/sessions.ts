// Stateful mode: the live sessions, each bound to the user who opened it, and the fan-out that
// tells a session's client when its tool or guide list changed (hot reload, removal, an
// operator's set_namespace_access), debounced, and only when that client's own list changed.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Logger } from 'pino';
import type { Principal } from '../../domain/identity/types.ts';
import type { Dispatcher } from '../../kernel/dispatch.ts';
import { fingerprintResources } from './resources.ts';
import { listResources, listTools, type SessionHooks, type ToolListing } from './server.ts';
import type { FolioTransport } from './transport.ts';

export interface Session {
  id: string;
  userId: string;
  /** The principal of the latest request: background refreshes list tools as it. */
  principal: Principal;
  server: Server;
  transport: FolioTransport;
  lastSeen: number;
  /** GET streams open now (the channel notifications travel on). */
  streams: number;
  /** What the client last saw: from its last list, or the last change we told it about. */
  seenTools: Map<string, string> | undefined;
  seenResources: string | undefined;
  /** A change it was told about while no stream was open (the SDK drops those): say it again. */
  missedTools: boolean;
  missedResources: boolean;
}

export interface SessionStoreOptions {
  dispatcher: Dispatcher;
  log: Logger;
  /** Quiet time after a change before clients are told (bursts become one notification). */
  debounceMs: number;
  /** A session with no request and no open stream for this long is closed. */
  idleMs: number;
  /** The oldest idle session of a user is closed when they open more than this. */
  maxPerUser: number;
}

function principalKey(p: Principal): string {
  return [p.user.id, [...p.user.roles].sort().join(','), [...p.scopes].sort().join(' '), p.tokenKind].join('|');
}

function diff(before: Map<string, string>, after: Map<string, string>): { added: number; removed: number; changed: number } {
  let added = 0;
  let changed = 0;
  for (const [name, hash] of after) {
    const was = before.get(name);
    if (was === undefined) added++;
    else if (was !== hash) changed++;
  }
  let removed = 0;
  for (const name of before.keys()) if (!after.has(name)) removed++;
  return { added, removed, changed };
}

export class SessionStore {
  readonly #opts: SessionStoreOptions;
  readonly #sessions = new Map<string, Session>();
  readonly #byUser = new Map<string, Set<Session>>();
  #timer: NodeJS.Timeout | undefined;
  #everyone = false;
  readonly #users = new Set<string>();
  #refreshing: Promise<void> = Promise.resolve();
  readonly #sweeper: NodeJS.Timeout;

  constructor(opts: SessionStoreOptions) {
    this.#opts = opts;
    this.#sweeper = setInterval(() => this.#sweep(), Math.min(60_000, Math.max(1000, opts.idleMs / 4)));
    this.#sweeper.unref();
  }

  get size(): number {
    return this.#sessions.size;
  }

  get(id: string): Session | undefined {
    return this.#sessions.get(id);
  }

  hooks(session: Session): SessionHooks {
    return {
      toolsListed: (listing: ToolListing) => {
        session.seenTools = listing.hashes;
        session.missedTools = false;
      },
      resourcesListed: (fingerprint: string) => {
        session.seenResources = fingerprint;
        session.missedResources = false;
      },
    };
  }

  /** A session whose initialize succeeded. Takes a first look at its lists, as the baseline. */
  add(session: Session): void {
    this.#sessions.set(session.id, session);
    let mine = this.#byUser.get(session.userId);
    if (!mine) this.#byUser.set(session.userId, (mine = new Set()));
    mine.add(session);
    if (mine.size > this.#opts.maxPerUser) {
      const oldest = [...mine].filter((s) => s !== session).sort((a, b) => a.streams - b.streams || a.lastSeen - b.lastSeen)[0];
      if (oldest) void this.#close(oldest, 'too many sessions for this user');
    }
    void this.#refresh([session]).catch((err: unknown) => this.#opts.log.warn({ err }, 'mcp session baseline failed'));
  }

  remove(session: Session): void {
    if (this.#sessions.get(session.id) !== session) return;
    this.#sessions.delete(session.id);
    const mine = this.#byUser.get(session.userId);
    mine?.delete(session);
    if (mine?.size === 0) this.#byUser.delete(session.userId);
  }

  touch(session: Session, principal: Principal): void {
    session.lastSeen = Date.now();
    session.principal = principal;
  }

  streamOpened(session: Session): void {
    session.streams++;
    if (session.missedTools || session.missedResources) {
      // The SDK registers the stream as it answers the GET; tell once it can carry a message.
      setTimeout(() => this.#resend(session), 50).unref();
    }
  }

  streamClosed(session: Session): void {
    session.streams = Math.max(0, session.streams - 1);
    session.lastSeen = Date.now();
  }

  /** The registry swapped a snapshot: any session's lists may have changed. */
  registryChanged(): void {
    this.#everyone = true;
    this.#schedule();
  }

  /** An operator changed one user's namespace access: only their sessions can be affected. */
  accessChanged(userId: string): void {
    this.#users.add(userId);
    this.#schedule();
  }

  async close(): Promise<void> {
    clearTimeout(this.#timer);
    clearInterval(this.#sweeper);
    await Promise.allSettled([...this.#sessions.values()].map((s) => this.#close(s, 'server shutting down')));
    await this.#refreshing;
  }

  #schedule(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      const all = this.#everyone;
      const users = [...this.#users];
      this.#everyone = false;
      this.#users.clear();
      const targets = all ? [...this.#sessions.values()] : users.flatMap((u) => [...(this.#byUser.get(u) ?? [])]);
      // One refresh at a time, in order: a later change is never overtaken by an earlier one.
      this.#refreshing = this.#refreshing
        .then(() => this.#refresh(targets))
        .catch((err: unknown) => this.#opts.log.error({ err }, 'mcp list refresh failed'));
    }, this.#opts.debounceMs);
    this.#timer.unref();
  }

  /** Recomputes each session's lists (once per distinct principal) and tells the clients that differ. */
  async #refresh(sessions: Session[]): Promise<void> {
    const { dispatcher, log } = this.#opts;
    const cache = new Map<string, Promise<{ tools: Map<string, string>; resources: string }>>();
    for (const session of sessions) {
      if (this.#sessions.get(session.id) !== session) continue;
      const key = principalKey(session.principal);
      let now = cache.get(key);
      if (!now) {
        const caller = { principal: session.principal, log };
        now = Promise.all([listTools(dispatcher, caller), listResources(dispatcher, caller)]).then(([t, r]) => ({
          tools: t.hashes,
          resources: fingerprintResources(r),
        }));
        cache.set(key, now);
      }
      const { tools, resources } = await now;
      if (session.seenTools === undefined) session.seenTools = tools;
      else {
        const d = diff(session.seenTools, tools);
        if (d.added + d.removed + d.changed > 0) {
          session.seenTools = tools;
          this.#notifyTools(session, d);
        }
      }
      if (session.seenResources === undefined) session.seenResources = resources;
      else if (session.seenResources !== resources) {
        session.seenResources = resources;
        this.#notifyResources(session);
      }
    }
  }

  #notifyTools(session: Session, d: { added: number; removed: number; changed: number }): void {
    if (session.streams === 0) session.missedTools = true;
    const log = this.#opts.log;
    session.server.sendToolListChanged().catch((err: unknown) => log.debug({ err }, 'tools/list_changed not delivered'));
    session.server
      .sendLoggingMessage(
        {
          level: 'info',
          logger: 'folio',
          data: `Your tools changed (${d.added} added, ${d.removed} removed, ${d.changed} changed); list them again before the next call.`,
        },
        session.id,
      )
      .catch((err: unknown) => log.debug({ err }, 'log notification not delivered'));
  }

  #notifyResources(session: Session): void {
    if (session.streams === 0) session.missedResources = true;
    session.server.sendResourceListChanged().catch((err: unknown) => this.#opts.log.debug({ err }, 'resources/list_changed not delivered'));
  }

  #resend(session: Session): void {
    if (this.#sessions.get(session.id) !== session || session.streams === 0) return;
    if (session.missedTools) {
      session.missedTools = false;
      session.server.sendToolListChanged().catch(() => {});
    }
    if (session.missedResources) {
      session.missedResources = false;
      session.server.sendResourceListChanged().catch(() => {});
    }
  }

  async #close(session: Session, why: string): Promise<void> {
    this.remove(session);
    this.#opts.log.info({ session: session.id.slice(0, 8), user: session.userId, why }, 'mcp session closed');
    try {
      await session.transport.close();
      await session.server.close();
    } catch (err) {
      this.#opts.log.warn({ err }, 'mcp session did not close cleanly');
    }
  }

  #sweep(): void {
    const cutoff = Date.now() - this.#opts.idleMs;
    for (const s of [...this.#sessions.values()]) if (s.streams === 0 && s.lastSeen < cutoff) void this.#close(s, 'idle');
  }
}
