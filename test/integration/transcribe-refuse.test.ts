// A file that is not a recording (a photo, a PDF) is refused when the transcription is asked for,
// with 415 and the reason, on every surface: REST, the curl surface, MCP and the CLI. Nothing is
// queued. The type is the one sniffed from the bytes at upload, so a photo declared as audio is
// still a photo. Needs no transcription engine: the refusal comes before the engine is consulted.
import t from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { call, createUser, req, startTestServer } from '../helpers/server.ts';
import { runFolio } from '../helpers/cli.ts';

/** The first bytes of a JPEG (JFIF), as a camera writes them. */
const JPEG = Buffer.concat([
  Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]),
  Buffer.alloc(200, 7),
  Buffer.from([0xff, 0xd9]),
]);

const s = await startTestServer();
const home = await mkdtemp(path.join(tmpdir(), 'folio-transcribe-refuse-'));
t.teardown(async () => {
  await s.close();
  await rm(home, { recursive: true, force: true });
});
const ann = await createUser(s, 'ann-refuse@example.com');

// Declared as audio on purpose: the bytes decide.
const up = await fetch(`${s.url}/api/v1/filedb/files?name=standup.wav`, {
  method: 'POST',
  headers: { authorization: `Bearer ${ann.token}`, 'content-type': 'audio/wav' },
  body: JPEG,
});
const photo = (await up.json()) as { id: string; content_type: string };
const REASON = /this file is image\/jpeg, not audio or video; Folio transcribes .*WAV/;

t.test('the upload is known as a photo', async (t) => {
  t.equal(photo.content_type, 'image/jpeg');
});

t.test('REST: 415 problem+json with the reason; no job queued', async (t) => {
  const r = await req(s, 'POST', '/api/v1/transcribe/jobs', { token: ann.token, body: { file_id: photo.id } });
  t.equal(r.status, 415);
  t.match(r.headers.get('content-type'), /application\/problem\+json/);
  t.match(r.json(), { code: 'unsupported_media_type', detail: REASON });
  const jobs = await req(s, 'GET', '/api/v1/transcribe/jobs', { token: ann.token });
  t.same(jobs.json().items, [], 'nothing was queued');
});

t.test('curl surface: 415 with the reason', async (t) => {
  const r = await call(s, ann.token, 'transcribe', 'start', { file_id: photo.id });
  t.equal(r.status, 415);
  t.match(r.text, REASON);
});

t.test('MCP: an error result with the reason', async (t) => {
  const client = new Client({ name: 'transcribe-refuse-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${ann.token}` } } }),
  );
  t.teardown(() => client.close());
  const r = (await client.callTool({ name: 'transcribe__start', arguments: { file_id: photo.id } })) as {
    isError?: boolean;
    content: Array<{ text?: string }>;
  };
  t.equal(r.isError, true);
  t.match(r.content[0]?.text, REASON);
});

t.test('CLI: folio transcribe start photo.jpg exits non-zero with the reason', async (t) => {
  const file = path.join(home, 'photo.jpg');
  await writeFile(file, JPEG);
  const r = await runFolio(home, ['transcribe', 'start', file], { env: { FOLIO_URL: s.url, FOLIO_TOKEN: ann.token } });
  t.not(r.code, 0);
  t.match(r.stderr, REASON);
  t.equal(r.stdout, '');
});
