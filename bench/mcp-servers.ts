// The two servers of bench/mcp.ts, each run alone in its own child process (same Node 24 binary):
//   mcp-servers.ts folio [databaseUrl]   Folio (stateful /mcp), the bench plugin's bench.noop (run
//                                       in-process) as the tool bench__noop, called by a plain
//                                       user's token
//   mcp-servers.ts bare                  the official SDK's own Streamable HTTP server on node:http
//                                       (McpServer + StreamableHTTPServerTransport, stateful, one
//                                       session per initialize) with one tool bench__noop that
//                                       answers what Folio answers: text {"ok":true}
// Each sends {url, token, engine} when ready, answers {cmd:'cpu'} with its CPU time so far (so the
// parent can tell CPU per call, which other load on the machine disturbs far less than calls per
// second), and stops when the parent says so.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { send, stopOnParentRequest } from './util.ts';

async function bare(): Promise<void> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const readJson = (req: http.IncomingMessage) =>
    new Promise<Buffer[]>((resolve, reject) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => resolve(chunks));
      req.on('error', reject);
    }).then((chunks): unknown => (chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined));
  const server = http.createServer((req, res) => {
    void (async () => {
      if (req.url !== '/mcp') {
        res.writeHead(404).end();
        return;
      }
      const body = req.method === 'POST' ? await readJson(req) : undefined;
      const sid = req.headers['mcp-session-id'];
      let transport = typeof sid === 'string' ? transports.get(sid) : undefined;
      if (!transport) {
        if (sid !== undefined || !isInitializeRequest(body)) {
          res
            .writeHead(400, { 'content-type': 'application/json' })
            .end('{"jsonrpc":"2.0","error":{"code":-32000,"message":"no session"},"id":null}');
          return;
        }
        const t: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id: string): void => {
            transports.set(id, t);
          },
        });
        t.onclose = () => {
          if (t.sessionId) transports.delete(t.sessionId);
        };
        const mcp = new McpServer({ name: 'bare', version: '1.0.0' });
        mcp.registerTool('bench__noop', { description: 'Do nothing and answer {"ok":true}.' }, () => ({
          content: [{ type: 'text', text: JSON.stringify({ ok: true }) }],
        }));
        await mcp.connect(t);
        transport = t;
      }
      await transport.handleRequest(req, res, body);
    })().catch((err: unknown) => {
      process.stderr.write(`[bare mcp] ${(err as Error).stack ?? String(err)}\n`);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  stopOnParentRequest(async () => {
    for (const t of transports.values()) await t.close();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  });
  send({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: 'unused', engine: 'none', pid: process.pid });
}

async function folio(databaseUrl: string | undefined): Promise<void> {
  // Imported here so the bare server never loads Folio's modules.
  const { BENCH_PLUGINS, createUserToken, startBenchFolio } = await import('./lib.ts');
  // The bench plugin runs in-process, as Folio's own plugins do and as the bare server's tool does
  // (the isolation benchmark measures the worker boundary on its own).
  const b = await startBenchFolio({
    plugins: [BENCH_PLUGINS],
    databaseUrl,
    watch: false,
    overrides: { isolation: { mode: 'in-process' } },
  });
  stopOnParentRequest(() => b.close());
  const { token } = await createUserToken(b.url);
  send({ url: b.url, token, engine: b.engine, pid: process.pid });
}

process.on('message', (m: { cmd?: string }) => {
  if (m?.cmd === 'cpu') send({ cpu: process.cpuUsage() });
});

try {
  const which = process.argv[2];
  if (which === 'bare') await bare();
  else if (which === 'folio') await folio(process.argv[3] || undefined);
  else throw new Error(`usage: mcp-servers.ts folio [databaseUrl] | bare (got ${which})`);
} catch (err) {
  send({ error: (err as Error).stack ?? String(err) });
  process.exit(1);
}
