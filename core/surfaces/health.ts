// GET /health: liveness, version and a database check that answers within its time limit even
// when the database hangs, and recovers by itself when the database returns.
import type { Context } from 'koa';
import type { Database } from '../db/database.ts';

const PING_TIMEOUT_MS = 1500;

/** `details`: more of what a person checking the server wants to see (which transcription engines can run); never makes it unhealthy. */
export function healthRoute(db: Database, version: string, details: () => Promise<Record<string, unknown>> = () => Promise.resolve({})) {
  return async (ctx: Context) => {
    const started = performance.now();
    ctx.set('Cache-Control', 'no-store');
    try {
      await db.ping(PING_TIMEOUT_MS);
      ctx.status = 200;
      ctx.body = {
        status: 'ok',
        version,
        database: { status: 'ok', engine: db.engine, latency_ms: Math.round(performance.now() - started) },
        ...(await details().catch(() => ({}))),
      };
    } catch (err) {
      ctx.status = 503;
      ctx.body = { status: 'unavailable', version, database: { status: 'unreachable', engine: db.engine, error: (err as Error).message } };
    }
  };
}
