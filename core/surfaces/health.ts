// GET /health: liveness, version and a database check that answers within its time limit even
// when the database hangs, and recovers by itself when the database returns; and the blob store's
// check (cached for a few seconds by the store).
//
// Statuses: the spec has /health answer 200 while the server can serve and 503 when the database is
// unreachable. A blob store that cannot be reached leaves notes, search and everything but file bytes
// working, and restarting the process would not bring S3 back: 200 with `"status": "degraded"` and
// `blob_store.status: "unreachable"`, so a monitor alerts without an orchestrator killing a server
// that still serves. Readiness to take traffic that needs the store is a separate question.
import type { Context } from 'koa';
import type { Database } from '../db/database.ts';

const PING_TIMEOUT_MS = 1500;

/** What a blob store's check reports (core/domain/files/blob-store.ts BlobStoreCheck). */
export interface BlobStoreHealth {
  kind: string;
  status: 'ok' | 'unreachable';
  latency_ms: number;
  error?: string;
}

/**
 * `details`: more of what a person checking the server wants to see (which transcription engines can run); never makes it unhealthy.
 * `blobStore`: the file store's check; unreachable makes the status `degraded` (still 200).
 */
export function healthRoute(
  db: Database,
  version: string,
  details: () => Promise<Record<string, unknown>> = () => Promise.resolve({}),
  blobStore?: () => Promise<BlobStoreHealth>,
) {
  return async (ctx: Context) => {
    const started = performance.now();
    ctx.set('Cache-Control', 'no-store');
    // Probed alongside the database, not after it: the answer takes the longer of the two, not their sum.
    const store = blobStore?.().catch((err: unknown) => ({
      kind: 'unknown',
      status: 'unreachable' as const,
      latency_ms: 0,
      error: (err as Error).message,
    }));
    try {
      await db.ping(PING_TIMEOUT_MS);
      const latency = Math.round(performance.now() - started);
      const blob = await store;
      ctx.status = 200;
      ctx.body = {
        status: blob?.status === 'unreachable' ? 'degraded' : 'ok',
        version,
        database: { status: 'ok', engine: db.engine, latency_ms: latency },
        ...(blob ? { blob_store: blob } : {}),
        ...(await details().catch(() => ({}))),
      };
    } catch (err) {
      const blob = await store;
      ctx.status = 503;
      ctx.body = {
        status: 'unavailable',
        version,
        database: { status: 'unreachable', engine: db.engine, error: (err as Error).message },
        ...(blob ? { blob_store: blob } : {}),
      };
    }
  };
}
