// Requests Node's HTTP parser refuses (a chunk size that is not hex, a body shorter than its
// Content-Length, a broken request line or header), sent raw over a socket: each gets a
// well-formed answer in the format of the surface it was for, nothing is written, and the log
// holds exactly one JSON line for it and nothing at all goes to stderr.
import t, { type Test } from 'tap';
import net from 'node:net';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';
import { testLogger } from '../helpers/db.ts';
import { fresh, req, startTestServer } from '../helpers/server.ts';
import { copyPgliteTemplate } from '../helpers/template.ts';

/** Every line the server logs, as written. */
const lines: string[] = [];
const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(s) });

// Anything written to this process's stderr while the server runs (Koa's default error handler
// prints stacks there).
const stderr: string[] = [];
const write = process.stderr.write.bind(process.stderr);
process.stderr.write = (chunk: string | Uint8Array, ...rest: never[]) => {
  stderr.push(String(chunk));
  return write(chunk, ...rest);
};
t.teardown(() => {
  process.stderr.write = write;
});

const s = await startTestServer({ log });
t.teardown(() => s.close());
const port = Number(new URL(s.url).port);
const AUTH = `Authorization: Bearer ${s.adminToken}\r\n`;

interface RawAnswer {
  /** The whole answer as received, '' when the connection closed without one. */
  raw: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `data` as is; `halfClose` ends our side after it (a client that gave up sending). */
function rawExchange(p: number, data: string | Buffer, opts: { halfClose?: boolean } = {}): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const sock = net.connect(p, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => sock.destroy(), 3000);
    sock.on('data', (d: Buffer) => chunks.push(d));
    sock.on('error', () => {});
    sock.on('close', () => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks).toString('utf8');
      const [head = '', ...rest] = raw.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of headerLines) {
        const i = l.indexOf(':');
        if (i > 0) headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      resolve({ raw, status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1] ?? 0), headers, body: rest.join('\r\n\r\n') });
    });
    sock.write(data);
    if (opts.halfClose) sock.end();
  });
}

const settle = () => new Promise((r) => setTimeout(r, 100));
const noteCount = async () => (await req(s, 'GET', '/api/v1/notetaker/notes?limit=100', { token: s.adminToken })).json().items.length;

/** The three surfaces' POSTs and how each words a 400. */
const SURFACES = [
  {
    name: 'REST',
    path: '/api/v1/notetaker/notes',
    check(t: Test, a: RawAnswer) {
      t.match(a.headers['content-type'], /^application\/problem\+json/, 'problem+json');
      t.match(JSON.parse(a.body), { status: 400, code: 'bad_request' });
    },
  },
  {
    name: 'curl',
    path: '/curl/call/notetaker/create',
    check(t: Test, a: RawAnswer) {
      t.match(a.headers['content-type'], /^text\/plain/, 'text');
      t.match(a.body, /^400 Bad Request: /);
    },
  },
  {
    name: 'MCP',
    path: '/mcp',
    check(t: Test, a: RawAnswer) {
      t.match(a.headers['content-type'], /^application\/json/, 'JSON-RPC');
      t.match(JSON.parse(a.body), { jsonrpc: '2.0', error: { code: Number }, id: null });
    },
  },
];

const post = (p: string, id: string, headers: string, body: string) =>
  `POST ${p} HTTP/1.1\r\nHost: localhost\r\n${AUTH}X-Request-Id: ${id}\r\n` +
  `Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n${headers}\r\n${body}`;

/** The log lines of one request, each parsed (a line that is not JSON fails the test). */
function linesOf(t: Test, reqId: string) {
  return lines.map((l) => JSON.parse(l) as Record<string, any>).filter((l) => l.reqId === reqId);
}

t.test('a chunk size that is not hex: 400 in the surface format, one log line, nothing written', async (t) => {
  const before = await noteCount();
  for (const surface of SURFACES) {
    const id = `bad-chunk-${surface.name}`;
    const a = await rawExchange(port, post(surface.path, id, 'Transfer-Encoding: chunked\r\n', 'zz\r\n{"title":"x"}\r\n0\r\n\r\n'));
    t.equal(a.status, 400, `${surface.name}: 400`);
    t.equal(a.headers['connection'], 'close', `${surface.name}: the connection is closed after it`);
    surface.check(t, a);
    await settle();
    const mine = linesOf(t, id);
    t.equal(mine.length, 1, `${surface.name}: one log line`);
    t.match(mine[0], { res: { statusCode: 400 }, req: { method: 'POST', path: surface.path } });
  }
  t.equal(await noteCount(), before, 'nothing was written');
});

t.test('a chunked body cut off after a good chunk is refused, not taken as the whole body', async (t) => {
  const before = await noteCount();
  const body = '{"title":"half"}';
  const a = await rawExchange(
    port,
    post(
      '/curl/call/notetaker/create',
      'cut-chunked',
      'Transfer-Encoding: chunked\r\n',
      `${body.length.toString(16)}\r\n${body}\r\nqq\r\n`,
    ),
  );
  t.equal(a.status, 400);
  t.match(a.body, /^400 Bad Request: /);
  t.equal(await noteCount(), before, 'nothing was written');
});

t.test('a body shorter than its Content-Length, the client done sending: 400 in the surface format', async (t) => {
  const before = await noteCount();
  for (const surface of SURFACES) {
    const id = `short-${surface.name}`;
    const a = await rawExchange(port, post(surface.path, id, 'Content-Length: 50\r\n', '{"title":"short"}'), { halfClose: true });
    t.equal(a.status, 400, `${surface.name}: 400`);
    surface.check(t, a);
    await settle();
    const mine = linesOf(t, id);
    t.equal(mine.length, 1, `${surface.name}: one log line`);
    t.match(mine[0], { res: { statusCode: 400 } });
  }
  t.equal(await noteCount(), before, 'nothing was written');
});

t.test('refused before any route: a well-formed 400 in the format the path suggests, one log line each', async (t) => {
  const cases: Array<[string, string, RegExp]> = [
    ['GET /api/v1/notetaker/notes HTTP/1.1\r\nHost: localhost\r\nno colon here\r\n\r\n', 'REST', /^application\/problem\+json/],
    ['GET /curl/whoami HTTP/1.1\r\nHost: localhost\r\nno colon here\r\n\r\n', 'curl', /^text\/plain/],
    ['POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n{}', 'MCP', /^application\/json/],
    ['GARBAGE\r\n\r\n', 'no request line', /^text\/plain/],
    ['GET /curl HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n', 'smuggling', /^text\/plain/],
    // Authorization is one field: two (which one a proxy checked?) are refused, whatever they hold.
    [
      'GET /curl/whoami HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n\r\n',
      'two credentials',
      /^text\/plain/,
    ],
    [
      'GET /api/v1/tokens/self HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer a\r\nauthorization: Bearer b\r\n\r\n',
      'REST',
      /^application\/problem\+json/,
    ],
  ];
  for (const [data, what, type] of cases) {
    lines.length = 0;
    const a = await rawExchange(port, data);
    t.equal(a.status, 400, `${what}: 400`);
    t.match(a.headers['content-type'], type, `${what}: its content type`);
    t.equal(Number(a.headers['content-length']), Buffer.byteLength(a.body), `${what}: a Content-Length that matches`);
    t.equal(a.headers['connection'], 'close');
    if (what === 'REST') t.match(JSON.parse(a.body), { status: 400, code: 'bad_request' });
    if (what === 'MCP') t.match(JSON.parse(a.body), { jsonrpc: '2.0', error: { message: /^Bad Request/ } });
    await settle();
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, any>);
    t.equal(parsed.length, 1, `${what}: one log line`);
    t.match(parsed[0], { level: 30, res: { statusCode: 400 } });
  }
});

t.test('garbage after a good request on the same connection: the good one is answered whole', async (t) => {
  lines.length = 0;
  const a = await rawExchange(port, 'GET /health HTTP/1.1\r\nHost: localhost\r\n\r\nGARBAGE\r\n\r\n');
  t.equal(a.status, 200);
  t.match(JSON.parse(a.body.split('HTTP/1.1')[0]!), { status: 'ok' });
  await settle();
  t.ok(
    lines.every((l) => JSON.parse(l)),
    'every line is JSON',
  );
});

t.test('a client that hangs up mid-body or mid-answer: one line for its request, nothing on stderr', async (t) => {
  const hangUp = (data: string, afterMs: number) =>
    new Promise<void>((resolve) => {
      const sock = net.connect(port, '127.0.0.1');
      sock.on('error', () => {});
      sock.on('close', () => resolve());
      sock.write(data, () => setTimeout(() => sock.resetAndDestroy(), afterMs));
    });
  await hangUp(post('/api/v1/notetaker/notes', 'hang-up-body', 'Content-Length: 50\r\n', '{"title":'), 20);
  await hangUp(`GET /api/v1/openapi.json HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: hang-up-answer\r\n\r\n`, 0);
  await settle();
  for (const id of ['hang-up-body', 'hang-up-answer']) t.equal(linesOf(t, id).length, 1, `${id}: one line`);
  t.same(stderr, [], 'stderr is empty');
});

t.test('every log line is JSON and nothing went to stderr', async (t) => {
  await settle();
  t.same(stderr, [], 'stderr is empty');
  for (const l of lines) t.doesNotThrow(() => JSON.parse(l), l.slice(0, 80));
});

t.test('as a process: malformed requests leave stderr empty and stdout all JSON lines', async (t) => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'folio-malformed-'));
  const serverUrl = process.env['DATABASE_URL'];
  const db = serverUrl ? await fresh(serverUrl, { fromTemplate: true }) : undefined;
  if (!db) await copyPgliteTemplate(dataDir, testLogger());
  t.teardown(async () => {
    await rm(dataDir, { recursive: true, force: true });
    await db?.drop();
  });
  const token = 'malformed-requests-bootstrap-token-0123456789';
  const compileCache: Record<string, string> = process.env['NODE_COMPILE_CACHE']
    ? { NODE_COMPILE_CACHE: process.env['NODE_COMPILE_CACHE'] }
    : {};
  const child = spawn(process.execPath, ['core/main.ts'], {
    cwd: PACKAGE_ROOT,
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? '',
      PORT: '0',
      LOG_LEVEL: 'info',
      DATA_DIR: dataDir,
      BOOTSTRAP_ADMIN_TOKEN: token,
      ...(db ? { DATABASE_URL: db.url } : {}),
      ...compileCache,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const until = Date.now() + 60_000;
  const listening = () => /"url":"http:\/\/[^"]+:(\d+)".*"msg":"folio listening"/.exec(out);
  while (!listening() && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  const m = listening();
  t.ok(m, 'the server started');
  const p = Number(m?.[1]);
  const auth = `Authorization: Bearer ${token}\r\n`;
  for (const surface of SURFACES) {
    const head = `POST ${surface.path} HTTP/1.1\r\nHost: localhost\r\n${auth}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n`;
    t.equal((await rawExchange(p, `${head}Transfer-Encoding: chunked\r\n\r\nzz\r\n`)).status, 400, `${surface.name}: bad chunk`);
    t.equal((await rawExchange(p, `${head}Content-Length: 50\r\n\r\n{"a":`, { halfClose: true })).status, 400, `${surface.name}: short`);
  }
  t.equal((await rawExchange(p, 'GARBAGE\r\n\r\n')).status, 400);
  await settle();
  child.kill('SIGTERM');
  t.equal(await exited, 0, 'stops cleanly');
  t.equal(err, '', 'nothing on stderr');
  const outLines = out.split('\n').filter((l) => l !== '');
  for (const l of outLines) t.doesNotThrow(() => JSON.parse(l), `JSON: ${l.slice(0, 80)}`);
  t.equal(outLines.filter((l) => /"statusCode":400/.test(l)).length, 7, 'one line for each malformed request');
});
