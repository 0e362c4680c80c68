// The blob store going away, on an S3-compatible server (s3rver, started and stopped inside the test:
// no real S3 server is packaged for these machines). While it is down: uploads and downloads answer
// 503 blob_store_unavailable with Retry-After on REST, curl and MCP; an upload cut by it mid-body gets
// that answer too (not a silent "client went away"); /health says degraded. A tus upload whose last
// byte arrives while it is down is kept: HEAD answers 423, tus-js-client retries the same upload,
// and when the store is back the file is stored once.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import t from 'tap';
import * as tus from 'tus-js-client';
import { startTestServer, createUser, call } from '../helpers/server.ts';

interface S3rverLike {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  httpServer: Server;
}
const S3rver = createRequire(import.meta.url)('s3rver') as new (opts: Record<string, unknown>) => S3rverLike;
const BUCKET = 'folio-outage';
const directory = await mkdtemp(path.join(tmpdir(), 'folio-s3-outage-'));
let port = 0;
let s3: S3rverLike | null = null;

/** Starts s3rver on the same port and files each time: the store coming back as it was. */
async function s3Up(): Promise<void> {
  s3 = new S3rver({ address: '127.0.0.1', port, silent: true, directory, configureBuckets: [{ name: BUCKET }] });
  port = (await s3.run()).port;
}
/** Stops it at once, cutting the connections it has (an upload in flight among them). */
async function s3Down(): Promise<void> {
  const server = s3!;
  s3 = null;
  server.httpServer.closeAllConnections();
  await server.close();
}

await s3Up();
const s = await startTestServer({
  overrides: {
    files: {
      blobStore: {
        kind: 's3',
        s3: {
          endpoint: `http://127.0.0.1:${port}`,
          region: 'us-east-1',
          bucket: BUCKET,
          prefix: '',
          accessKeyId: 'S3RVER',
          secretAccessKey: 'S3RVER',
          forcePathStyle: true,
          checksums: 'WHEN_REQUIRED',
        },
      },
    },
  },
});
t.teardown(async () => {
  await s.close();
  if (s3) await s3Down();
  await rm(directory, { recursive: true, force: true });
});
const alice = await createUser(s, 'alice@example.com');
const auth = { authorization: `Bearer ${alice.token}` };
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

const health = async () =>
  (await (await fetch(`${s.url}/health`)).json()) as { status: string; blob_store: { status: string; kind: string; error?: string } };
const waitHealth = async (want: string) => {
  for (let i = 0; i < 100; i++) {
    const h = await health();
    if (h.blob_store.status === want) return h;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the blob store never became ${want}`);
};

const upload = (body: string | ReadableStream<Uint8Array>, name: string) =>
  fetch(`${s.url}/api/v1/filedb/files?name=${name}`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/octet-stream' },
    body,
    duplex: 'half',
  });

/** A tools/call through the MCP SDK's own client, as an MCP client makes it. */
async function mcpCall(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: auth } });
  const client = new Client({ name: 'outage-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    return (await client.callTool({ name, arguments: args })) as CallToolResult;
  } finally {
    await client.close();
  }
}

let stored = '';
t.test('with the store up: /health says ok, an upload is stored', async (t) => {
  const h = await health();
  t.equal(h.status, 'ok');
  t.match(h.blob_store, { kind: 's3', status: 'ok' });
  t.equal((await fetch(`${s.url}/ready`)).status, 200, '/ready with the store up');
  const res = await upload('hello outage\n', 'kept.txt');
  t.equal(res.status, 201);
  stored = ((await res.json()) as { id: string }).id;
});

t.test('with the store down: 503 blob_store_unavailable with Retry-After on every surface; /health degraded', async (t) => {
  await s3Down();
  const h = await waitHealth('unreachable');
  t.equal(h.status, 'degraded');
  t.match(h.blob_store.error, /ECONNREFUSED|connect/i, 'says why');
  const ready = await fetch(`${s.url}/ready`, { headers: { authorization: `Bearer ${s.adminToken}` } });
  t.equal(ready.status, 503, '/ready: a node without its blob store does not take traffic');
  t.match(await ready.json(), { status: 'unavailable' }, 'and says so');
  const up = await upload('new bytes\n', 'new.txt');
  t.equal(up.status, 503, 'REST upload');
  t.match(up.headers.get('retry-after'), /^\d+$/);
  t.match(await up.json(), { code: 'blob_store_unavailable', status: 503 });
  const down = await fetch(`${s.url}/api/v1/filedb/files/${stored}/content`, { headers: auth });
  t.equal(down.status, 503, 'REST download');
  t.match(down.headers.get('retry-after'), /^\d+$/);
  t.match(await down.json(), { code: 'blob_store_unavailable' });
  const curl = await call(s, alice.token, 'files', 'read', { id: stored });
  t.equal(curl.status, 503, 'curl');
  t.match(curl.headers.get('retry-after'), /^\d+$/);
  t.match(curl.text, /blob_store_unavailable|cannot be reached/);
  const mcp = await mcpCall('files__read', { id: stored });
  t.equal(mcp.isError, true, 'MCP: a tool error');
  t.match((mcp.content[0] as { text: string }).text, /cannot be reached/);
  const list = await fetch(`${s.url}/api/v1/filedb/files`, { headers: auth });
  t.equal(list.status, 200, 'what needs no file bytes still works');
  await list.body?.cancel();
});

t.test('the store stopping mid-upload: the client gets the 503 with its code, nothing is stored', async (t) => {
  await s3Up();
  await waitHealth('ok');
  const chunk = randomBytes(1024 * 1024);
  let sent = 0;
  // 12 MiB, the S3 store sends parts of 5 MiB: the store goes away after the first part.
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent === 7) await s3Down();
      if (sent === 12) return controller.close();
      sent++;
      controller.enqueue(new Uint8Array(chunk));
    },
  });
  const res = await upload(body, 'cut.bin');
  t.equal(res.status, 503);
  t.match(res.headers.get('retry-after'), /^\d+$/);
  t.match(await res.json(), { code: 'blob_store_unavailable' });
  await s3Up();
  const names = (
    (await (await fetch(`${s.url}/api/v1/filedb/files`, { headers: auth })).json()) as { items: Array<{ name: string }> }
  ).items.map((f) => f.name);
  t.notOk(names.includes('cut.bin'), 'no file');
});

t.test('tus: the store away at the last byte: HEAD 423, the same upload is retried, stored once', async (t) => {
  await waitHealth('ok');
  const bytes = randomBytes(256 * 1024);
  const seen: string[] = [];
  let stopped = false;
  let restarted = false;
  let fileId: string | null = null;
  await new Promise<void>((resolve, reject) => {
    const up = new tus.Upload(bytes, {
      endpoint: `${s.url}/api/v1/filedb/uploads`,
      chunkSize: 64 * 1024,
      headers: auth,
      metadata: { filename: 'late.bin' },
      retryDelays: Array.from({ length: 40 }, () => 250),
      onBeforeRequest: async (req) => {
        // The last chunk: the store goes away just before it is sent.
        if (req.getMethod() === 'PATCH' && req.getHeader('Upload-Offset') === String(192 * 1024) && !stopped) {
          stopped = true;
          await s3Down();
        }
      },
      onAfterResponse: async (req, res) => {
        seen.push(`${req.getMethod()} ${res.getStatus()}`);
        fileId = res.getHeader('Folio-File-Id') ?? fileId;
        if (req.getMethod() === 'HEAD' && res.getStatus() === 423 && !restarted && seen.filter((x) => x === 'HEAD 423').length >= 2) {
          restarted = true;
          await s3Up();
        }
      },
      onError: reject,
      onSuccess: () => resolve(),
    });
    up.start();
  });
  t.ok(seen.includes('PATCH 503'), 'the last PATCH: store unavailable');
  t.ok(seen.includes('HEAD 423'), 'HEAD: locked, retry the same upload');
  t.equal(seen.filter((x) => x.startsWith('POST')).length, 1, 'one upload created, never a second');
  t.ok(fileId, 'the answer names the file');
  const list = (
    (await (await fetch(`${s.url}/api/v1/filedb/files`, { headers: auth })).json()) as { items: Array<{ name: string; id: string }> }
  ).items;
  t.equal(list.filter((f) => f.name === 'late.bin').length, 1, 'stored once');
  const got = Buffer.from(await (await fetch(`${s.url}/api/v1/filedb/files/${fileId}/content`, { headers: auth })).arrayBuffer());
  t.equal(sha(got), sha(bytes), 'with every byte');
});
