// The baseline: a bare Koa hello world in its own process, same arrangement as servers/folio.ts.
// One POST route on the same path as the Folio call, answering {"ok":true}; nothing else.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import Router from '@koa/router';
import { send, stopOnParentRequest } from '../util.ts';

const app = new Koa();
const router = new Router();
router.post('/curl/call/bench/noop', (ctx) => {
  ctx.body = { ok: true };
});
app.use(router.routes());
const handle = app.callback();
const server = http.createServer((req, res) => {
  handle(req, res).catch((err: unknown) => process.stderr.write(`[koa] ${(err as Error).stack ?? String(err)}\n`));
});
await new Promise<void>((resolve, reject) => {
  server.once('error', reject);
  server.listen(0, '127.0.0.1', () => resolve());
});
stopOnParentRequest(
  () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
);
// The parent asks for this process's CPU time before and after a load: CPU per request.
process.on('message', (m: { cmd?: string }) => {
  if (m?.cmd === 'cpu') send({ ok: true, cpu: process.cpuUsage() });
});
const { port } = server.address() as AddressInfo;
send({ url: `http://127.0.0.1:${port}`, token: 'unused', engine: 'none', pid: process.pid });
