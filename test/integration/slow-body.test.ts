// A request body must keep coming (core/surfaces/http/slow-body.ts): one that stops, or trickles in
// under the floor, is answered 408 and its connection closed; headers that trickle are answered 408
// by Node's own headers timeout. Uploads at an ordinary pace are untouched, and so are answers that
// take long to read. The limits are lowered here so each case takes a second or two.
import t from 'tap';
import net from 'node:net';
import { createHash } from 'node:crypto';
import { pino } from 'pino';
import { req, startTestServer } from '../helpers/server.ts';

const lines: string[] = [];
const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(s) });
const s = await startTestServer({
  log,
  overrides: { limits: { headersTimeoutMs: 1000, bodyIdleMs: 1000, bodyGraceMs: 1500, bodyMinBytesPerSecond: 1024 } },
});
t.teardown(() => s.close());
const port = Number(new URL(s.url).port);

interface Trickle {
  /** What the server sent before the connection closed ('' for none). */
  answer: string;
  /** The connection closed (by the server) within the test's bound. */
  closed: boolean;
  /** Bytes written after the head. */
  sent: number;
  /** /health answered while the connection was open. */
  healthy: boolean;
}

/**
 * Sends `head`, then one byte every `everyMs` (none if 0), until the server closes the connection
 * or `boundMs` passes; checks /health answers in the meantime.
 */
function trickle(head: string, everyMs: number, boundMs = 8000): Promise<Trickle> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let sent = 0;
    let healthy = false;
    let closed = false;
    let drip: NodeJS.Timeout | undefined;
    sock.on('data', (d: Buffer) => chunks.push(d));
    sock.on('error', () => {});
    sock.on('connect', () => {
      sock.write(head);
      if (everyMs > 0)
        drip = setInterval(() => {
          if (!sock.writable) return;
          sock.write('x');
          sent++;
        }, everyMs);
      setTimeout(() => {
        void req(s, 'GET', '/health').then((r) => (healthy = r.status === 200));
      }, 300);
    });
    const bound = setTimeout(() => sock.destroy(), boundMs);
    // The server's FIN: it closed the connection.
    sock.on('end', () => {
      closed = true;
      sock.destroy();
    });
    sock.on('close', () => {
      clearInterval(drip);
      clearTimeout(bound);
      resolve({ answer: Buffer.concat(chunks).toString('utf8'), closed, sent, healthy });
    });
  });
}

const FORM = 'application/x-www-form-urlencoded';
const AUTH = `Authorization: Bearer ${s.adminToken}\r\n`;
const post = (path: string, length: number, type = 'application/json', extra = '') =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}Content-Type: ${type}\r\nContent-Length: ${length}\r\n\r\n`;

t.test('a body that stops: 408 and the connection closed, the server answering meanwhile', async (t) => {
  const cases: [string, string, string][] = [
    ['/oauth/reg', 'application/json', ''],
    ['/oauth/token', FORM, ''],
    [`/s/${'A'.repeat(43)}`, FORM, ''],
    ['/curl/call/notes/list', 'application/json', AUTH],
    ['/api/v1/notetaker/notes', 'application/json', AUTH],
  ];
  for (const [path, type, extra] of cases) {
    const r = await trickle(`${post(path, 100, type, extra)}{`, 0);
    t.ok(r.closed, `${path}: the server closed the connection`);
    t.match(r.answer, /^HTTP\/1\.1 408 /, `${path}: answered 408`);
    t.match(r.answer, /no byte of the request body for 1 s/, path);
    t.ok(r.healthy, `${path}: /health answered while the body was awaited`);
  }
  const logged = lines.map((l) => JSON.parse(l)).filter((l) => l.res?.statusCode === 408);
  t.equal(logged.length, cases.length, 'one request log line each');
  for (const line of logged)
    t.match(line, { msg: 'request completed', clientError: { code: 'ERR_BODY_TOO_SLOW', reason: /no byte/ } }, 'the line says why');
});

t.test('a body that trickles under the floor: 408 once the grace is over', async (t) => {
  // A byte every 300 ms is never idle for the 1 s limit, but far under 1 KiB/s.
  const r = await trickle(post('/oauth/reg', 1000), 300);
  t.ok(r.closed, 'the server closed the connection');
  t.match(r.answer, /^HTTP\/1\.1 408 /);
  t.match(r.answer, /under the 1024 bytes\/s/);
  t.ok(r.sent >= 3 && r.sent < 20, `closed after the grace, not before or long after (${r.sent} bytes sent)`);
});

t.test('headers that trickle: 408 from the headers timeout', async (t) => {
  const r = await trickle('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ', 300);
  t.ok(r.closed, 'the server closed the connection');
  t.match(r.answer, /^HTTP\/1\.1 408 /);
});

t.test('an upload at an ordinary pace completes under the same limits', async (t) => {
  // 1 MiB in 64 KiB pieces, one every 150 ms: 2.4 s in all, past the grace and with pauses.
  const bytes = Buffer.alloc(1 << 20, 7);
  const pieces = Array.from({ length: 16 }, (_, i) => bytes.subarray(i << 16, (i + 1) << 16));
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = pieces.shift();
      if (!next) return controller.close();
      await new Promise((resolve) => setTimeout(resolve, 150));
      controller.enqueue(next);
    },
  });
  const res = await fetch(`${s.url}/api/v1/filedb/files?name=paced.bin`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${s.adminToken}`,
      'content-type': 'application/octet-stream',
      'content-length': String(bytes.length),
    },
    body,
    duplex: 'half',
  });
  t.equal(res.status, 201, await res.clone().text());
  const file = (await res.json()) as { id: string; sha256: string; size: number };
  t.equal(file.size, bytes.length);
  t.equal(file.sha256, createHash('sha256').update(bytes).digest('hex'));
});

t.test('an answer read slowly is not cut', async (t) => {
  // A 4 MiB download whose reader stops for longer than every limit above, then reads on.
  const bytes = Buffer.alloc(4 << 20, 9);
  const up = await fetch(`${s.url}/api/v1/filedb/files?name=big.bin`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.adminToken}`, 'content-type': 'application/octet-stream' },
    body: bytes,
  });
  t.equal(up.status, 201);
  const { id } = (await up.json()) as { id: string };
  const res = await fetch(`${s.url}/api/v1/filedb/files/${id}/content`, { headers: { authorization: `Bearer ${s.adminToken}` } });
  t.equal(res.status, 200);
  const reader = res.body!.getReader();
  let got = (await reader.read()).value?.length ?? 0;
  await new Promise((resolve) => setTimeout(resolve, 2500));
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    got += value.length;
  }
  t.equal(got, bytes.length, 'every byte arrived');
});
