// Tells every Folio process that some user's data changed, so caches of it can be dropped: at
// once in this process, and through PostgreSQL LISTEN/NOTIFY in the others (several nodes behind
// a balancer share one PostgreSQL server; the embedded engine only ever has one process).
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Database } from './database.ts';

export type ChangeKind = 'identity' | 'notes';

export interface Change {
  kind: ChangeKind;
  userId: string;
}

/** `all`: a reconnect may have missed notifications; drop everything. */
export type ChangeListener = (change: Change | 'all') => void;

/**
 * A message for the other nodes about something in flight rather than stored (an MCP client's
 * cancel that landed on a node not running the request): heard by the other nodes only, and only
 * those listening at that moment. Nothing is kept; a node that was not listening never hears it.
 */
export interface Signals {
  send(topic: string, data: unknown): void;
  on(topic: string, listener: (data: unknown) => void): () => void;
}

const CHANNEL = 'folio_changes';

export class ChangeFeed implements Signals {
  readonly #node = randomUUID();
  readonly #listeners = new Set<ChangeListener>();
  readonly #signals = new Map<string, Set<(data: unknown) => void>>();
  readonly #db: Database | undefined;
  readonly #databaseUrl: string | undefined;
  readonly #log: Logger | undefined;
  #client: pg.Client | undefined;
  #closed = false;
  #retry: NodeJS.Timeout | undefined;
  /** NOTIFYs sent and not yet done: close() waits for them (a committed revocation must reach the other nodes). */
  #pending = new Set<Promise<unknown>>();

  /** Without a database (or with the embedded one) changes stay in this process. */
  constructor(opts: { db?: Database; databaseUrl?: string | undefined; log?: Logger } = {}) {
    this.#db = opts.db;
    this.#databaseUrl = opts.db?.engine === 'postgres' ? opts.databaseUrl : undefined;
    this.#log = opts.log;
  }

  /** Starts listening to the other nodes (PostgreSQL server only). */
  async start(): Promise<void> {
    if (!this.#databaseUrl || this.#closed) return;
    const client = new pg.Client({ connectionString: this.#databaseUrl });
    client.on('notification', (msg) => {
      try {
        const parsed = JSON.parse(msg.payload ?? '') as { node: string; signal?: string; data?: unknown } & Change;
        if (parsed.node === this.#node) return;
        if (typeof parsed.signal === 'string') this.#signal(parsed.signal, parsed.data);
        else this.#emit({ kind: parsed.kind, userId: parsed.userId });
      } catch (err) {
        this.#log?.warn({ err }, 'ignoring a malformed change notification');
      }
    });
    client.on('error', (err) => {
      this.#log?.warn({ err: err.message }, 'change feed connection lost; reconnecting');
      this.#reconnect();
    });
    try {
      await client.connect();
      await client.query(`listen ${CHANNEL}`);
      this.#client = client;
    } catch (err) {
      this.#log?.warn({ err: (err as Error).message }, 'change feed could not listen; retrying');
      await client.end().catch(() => {});
      this.#reconnect();
    }
  }

  #reconnect(): void {
    const old = this.#client;
    this.#client = undefined;
    void old?.end().catch(() => {});
    // Whatever happened while we were not listening is unknown: forget all cached state.
    this.#emit('all');
    if (this.#closed || this.#retry) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      void this.start();
    }, 1000);
    this.#retry.unref();
  }

  subscribe(listener: ChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Call after the change has committed. Local listeners hear it before this returns. */
  publish(change: Change): void {
    this.#emit(change);
    if (!this.#databaseUrl || !this.#db) return;
    const payload = JSON.stringify({ node: this.#node, ...change });
    this.#track(
      this.#db.orm.em
        .fork()
        .execute('select pg_notify(?, ?)', [CHANNEL, payload])
        .catch((err: unknown) => this.#log?.warn({ err }, 'could not notify other nodes of a change')),
    );
  }

  /** Tells the other nodes (PostgreSQL server only: the embedded engine has no other node). */
  send(topic: string, data: unknown): void {
    if (!this.#databaseUrl || !this.#db) return;
    const payload = JSON.stringify({ node: this.#node, signal: topic, data });
    // NOTIFY's payload is at most 8000 bytes: a signal is a few ids, never a document.
    if (Buffer.byteLength(payload) > 7900) {
      this.#log?.warn({ topic, bytes: Buffer.byteLength(payload) }, 'signal too large for NOTIFY: not sent');
      return;
    }
    this.#track(
      this.#db.orm.em
        .fork()
        .execute('select pg_notify(?, ?)', [CHANNEL, payload])
        .catch((err: unknown) => this.#log?.warn({ err }, 'could not signal other nodes')),
    );
  }

  on(topic: string, listener: (data: unknown) => void): () => void {
    let set = this.#signals.get(topic);
    if (!set) this.#signals.set(topic, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  #signal(topic: string, data: unknown): void {
    for (const l of this.#signals.get(topic) ?? []) {
      try {
        l(data);
      } catch (err) {
        this.#log?.error({ err, topic }, 'signal listener failed');
      }
    }
  }

  #emit(change: Change | 'all'): void {
    for (const l of this.#listeners) {
      try {
        l(change);
      } catch (err) {
        this.#log?.error({ err }, 'change listener failed');
      }
    }
  }

  #track(p: Promise<unknown>): void {
    this.#pending.add(p);
    void p.finally(() => this.#pending.delete(p));
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    // Before the database closes: the NOTIFYs already sent reach the other nodes.
    await Promise.all(this.#pending);
    await this.#client?.end().catch(() => {});
    this.#client = undefined;
  }
}
