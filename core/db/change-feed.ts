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

const CHANNEL = 'folio_changes';

export class ChangeFeed {
  readonly #node = randomUUID();
  readonly #listeners = new Set<ChangeListener>();
  readonly #db: Database | undefined;
  readonly #databaseUrl: string | undefined;
  readonly #log: Logger | undefined;
  #client: pg.Client | undefined;
  #closed = false;
  #retry: NodeJS.Timeout | undefined;

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
        const { node, kind, userId } = JSON.parse(msg.payload ?? '') as { node: string } & Change;
        if (node !== this.#node) this.#emit({ kind, userId });
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
    this.#db.orm.em
      .fork()
      .execute('select pg_notify(?, ?)', [CHANNEL, payload])
      .catch((err: unknown) => this.#log?.warn({ err }, 'could not notify other nodes of a change'));
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

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    await this.#client?.end().catch(() => {});
    this.#client = undefined;
  }
}
