// Worker thread that owns the embedded PGlite and serves it on a loopback socket.
//
// PGlite is PostgreSQL compiled to WebAssembly and runs synchronously: a long statement keeps the
// thread it runs on busy until it finishes. Here that is this worker, not the main thread, so HTTP
// requests, timers and health checks keep going while the database works.
//
// Protocol with the parent: workerData { dir } -> posts { type: 'ready', port } once listening;
// on { type: 'close' } stops the socket server, closes PGlite (flushing it to disk) and exits.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface PgliteWorkerData {
  dir: string;
}
export type PgliteWorkerMessage = { type: 'ready'; port: number; ms: number } | { type: 'close-error'; message: string };

if (!parentPort) throw new Error('pglite-worker.ts runs as a worker thread');
const port = parentPort;
const { dir } = workerData as PgliteWorkerData;

const started = Date.now();
// pg_trgm is loaded so migrations can `create extension if not exists pg_trgm` as on a server.
// The WAL kept: a single-user backend has no checkpointer, so core/db/embedded-upkeep.ts runs the
// checkpoints. After each one PostgreSQL removes the segments it no longer needs; wal_recycle off
// removes them rather than keep up to max_wal_size of them renamed for reuse (that saves creating
// files on a server that syncs them; PGlite runs with fsync off). The defaults (max_wal_size 1 GB,
// min_wal_size 80 MB) kept 80 MB to 1 GB in pg_wal of a personal server.
const WAL = ['-c', 'wal_recycle=off', '-c', 'max_wal_size=64MB', '-c', 'min_wal_size=32MB'];
const pglite = await PGlite.create({
  dataDir: dir,
  extensions: { pg_trgm },
  startParams: [...PGlite.defaultStartParams, ...WAL],
});
// port 0: the OS picks a free one. The ORM keeps exactly one connection, the health check one of its
// own and `npm run backup` one while it takes its snapshot (core/backup/connect.ts); the fourth slot
// only absorbs a reconnect racing the server's cleanup of a previous one.
const server = new PGLiteSocketServer({ db: pglite, host: '127.0.0.1', port: 0, maxConnections: 4 });
await server.start();
port.postMessage({
  type: 'ready',
  port: Number(server.getServerConn().split(':').pop()),
  ms: Date.now() - started,
} satisfies PgliteWorkerMessage);

port.on('message', (msg: { type?: string }) => {
  if (msg?.type !== 'close') return;
  void (async () => {
    try {
      await server.stop(); // detaches connections, rolling back anything left open
      if (!pglite.closed) await pglite.close(); // flushes and closes the data files
    } catch (err) {
      port.postMessage({ type: 'close-error', message: (err as Error).message } satisfies PgliteWorkerMessage);
    } finally {
      port.close(); // nothing else keeps this thread alive: it exits
    }
  })();
});
