// GET /ready: whether this node should get traffic. 503 while it starts, once it drains (the
// shutdown path calls markDraining() first), and while a required dependency fails its check;
// 200 otherwise. /health stays the cheap liveness check (core/surfaces/health.ts): a node whose
// database is down is alive (restarting it does not help) but not ready. Each dependency is a
// `{ name, check }`: the database now, the blob store's check plugs in the same way. Which check
// failed and how long each took is told only to a caller with the metrics token or an admin token.
import type { Context } from 'koa';

export interface DependencyCheck {
  name: string;
  /** Resolves when the dependency answers; rejects (or takes past the deadline) when it does not. */
  check(): Promise<void>;
}

/** A check that has not answered by then counts as down: /ready answers within about this long. */
const CHECK_TIMEOUT_MS = 1500;

export type ReadyState = 'starting' | 'ready' | 'draining';

interface Outcome {
  name: string;
  status: 'ok' | 'down';
  latency_ms: number;
  error?: string;
}

export class Readiness {
  #state: ReadyState = 'starting';
  readonly #checks: DependencyCheck[] = [];

  constructor(checks: DependencyCheck[] = []) {
    this.#checks.push(...checks);
  }

  get state(): ReadyState {
    return this.#state;
  }

  /** One more required dependency (e.g. the blob store). */
  add(check: DependencyCheck): void {
    this.#checks.push(check);
  }

  /** Start is over: the node serves. */
  started(): void {
    if (this.#state === 'starting') this.#state = 'ready';
  }

  /** The node is going away: load balancers stop sending to it; requests in flight still finish. */
  markDraining(): void {
    this.#state = 'draining';
  }

  async #run(c: DependencyCheck): Promise<Outcome> {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        c.check(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
        }),
      ]);
      return { name: c.name, status: 'ok', latency_ms: Math.round(performance.now() - started) };
    } catch (err) {
      return {
        name: c.name,
        status: 'down',
        latency_ms: Math.round(performance.now() - started),
        error: (err as Error | undefined)?.message ?? String(err),
      };
    } finally {
      clearTimeout(timer);
    }
  }

  /** The answer: its status, and the body for a plain caller and for an operator. */
  async answer(): Promise<{ status: number; plain: object; details: object }> {
    const state = this.#state;
    if (state !== 'ready') {
      const plain = { status: state };
      return { status: 503, plain, details: { ...plain, dependencies: [] } };
    }
    const outcomes = await Promise.all(this.#checks.map((c) => this.#run(c)));
    const down = outcomes.filter((o) => o.status === 'down');
    const status = down.length ? 'unavailable' : 'ready';
    return {
      status: down.length ? 503 : 200,
      plain: { status },
      details: { status, dependencies: outcomes },
    };
  }
}

/** The Koa route; `operator(ctx)` says whether the caller may see the details. */
export function readyRoute(readiness: Readiness, operator: (authorization: string | undefined) => Promise<boolean>) {
  return async (ctx: Context) => {
    ctx.set('Cache-Control', 'no-store');
    const [a, details] = await Promise.all([readiness.answer(), operator(ctx.get('authorization') || undefined).catch(() => false)]);
    ctx.status = a.status;
    ctx.body = details ? a.details : a.plain;
  };
}
