// Reports under load: a user with as many reports under way as one account may have (here 1) gets
// 429 too_many_reports on every surface, at once, while other users' reports, requests and /health
// are answered; once the report ends, the user may start another.
//
// A report is held under way for real: a client asks for a report of ~8 MB over a raw socket, reads
// the status line and stops reading, so the server's writes back up and the report waits mid-stream.
import t from 'tap';
import net from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { call, createUser, req, startTestServer } from '../helpers/server.ts';

const s = await startTestServer({
  overrides: { notes: { trashRetentionDays: 30, trashSweepMinutes: 60, reportsPerUser: 1, reportThreads: 1 } },
});
t.teardown(() => s.close());
const ada = await createUser(s, 'ada-reports@example.com');
const bob = await createUser(s, 'bob-reports@example.com');

// 80 notes of 200 open action items of 500 characters (what a note keeps of its items): their
// report is ~8 MB of Markdown, far more than the socket buffers hold.
const items = Array.from({ length: 200 }, (_, i) => `- [ ] item ${i} ${'x'.repeat(490)}`).join('\n');
for (let i = 0; i < 80; i++) {
  const r = await req(s, 'POST', '/api/v1/notetaker/notes', { token: ada.token, body: { title: `Big ${i}`, body: items } });
  if (r.status !== 201) throw new Error(`seeding failed: ${r.status} ${r.text.slice(0, 200)}`);
}
await req(s, 'POST', '/api/v1/notetaker/notes', { token: bob.token, body: { title: 'Small', body: 'one note\n- [ ] a task' } });

/** Starts Ada's big report and stops reading once the status line is in: the report stays under way. */
function holdReport(): Promise<{ status: number; release(): void }> {
  // A PDF: larger than the socket buffers of a loopback connection can hold, and slower to render,
  // so the report cannot finish (and free its slot) while nobody reads it.
  const body = JSON.stringify({ format: 'pdf' });
  const port = Number(new URL(s.url).port);
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let head = '';
    sock.on('error', reject);
    sock.on('data', (d: Buffer) => {
      head += d.toString('latin1');
      if (!head.includes('\r\n')) return;
      sock.pause(); // read nothing more
      sock.removeAllListeners('data');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), release: () => sock.destroy() });
    });
    sock.write(
      `POST /api/v1/notetaker/reports HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${ada.token}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });
}

async function mcpCall(token: string, name: string, args: Record<string, unknown>) {
  const client = new Client({ name: 'report-load-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  );
  try {
    return (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: Array<{ type: string; text?: string }> };
  } finally {
    await client.close();
  }
}

t.test('over the per-user cap: 429 too_many_reports on every surface; everyone else is answered', async (t) => {
  const held = await holdReport();
  t.equal(held.status, 200, 'the first report is under way');

  const rest = await req(s, 'POST', '/api/v1/notetaker/reports', { token: ada.token, body: { format: 'pdf' } });
  t.equal(rest.status, 429, 'REST: 429');
  t.match(rest.headers.get('content-type'), /^application\/problem\+json/);
  t.equal(rest.json().code, 'too_many_reports');
  t.match(rest.json().detail, /already have 1 report being generated.*Wait for one to finish/);
  t.equal(rest.headers.get('retry-after'), '5', 'with a Retry-After');

  const curl = await call(s, ada.token, 'notetaker', 'generate_report', { format: 'html' });
  t.equal(curl.status, 429, 'curl: 429');
  t.match(curl.text, /^429 Too Many Requests: you already have 1 report being generated/);
  t.equal(curl.headers.get('retry-after'), '5');

  const mcp = await mcpCall(ada.token, 'notetaker__generate_report', { format: 'html' });
  t.equal(mcp.isError, true, 'MCP: an error result');
  t.match(mcp.content[0]?.text, /429 Too Many Requests: you already have 1 report being generated/);

  // Everyone else, meanwhile.
  const other = await req(s, 'POST', '/api/v1/notetaker/reports', { token: bob.token, body: { format: 'pdf' } });
  t.equal(other.status, 200, "another user's report is generated");
  t.equal(other.text.slice(0, 5), '%PDF-');
  t.equal((await req(s, 'GET', '/curl/whoami', { token: bob.token })).status, 200, "another user's request is answered");
  t.equal((await req(s, 'GET', '/health')).status, 200, '/health is 200');
  t.equal(
    (await req(s, 'GET', '/api/v1/notetaker/notes?limit=1', { token: ada.token })).status,
    200,
    'the capped user can still read notes',
  );

  // The client goes away: the report ends, and with it the user's slot.
  held.release();
  let status = 0;
  for (let i = 0; i < 200 && status !== 200; i++) {
    const r = await req(s, 'POST', '/api/v1/notetaker/reports', { token: ada.token, body: { format: 'markdown', tags: ['none'] } });
    status = r.status;
    if (status !== 200) await new Promise((r) => setTimeout(r, 25));
  }
  t.equal(status, 200, 'once the first report is gone, a new one starts');
});

t.test('the OpenAPI document lists too_many_reports for the report operation', async (t) => {
  const doc = (await req(s, 'GET', '/api/v1/openapi.json')).json();
  const op = doc.paths['/notetaker/reports'].post;
  t.ok(op['x-problem-codes'].includes('too_many_reports'));
  t.ok(op.responses['429'], 'a 429 response');
});
