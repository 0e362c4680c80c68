// Isolated plugins that send Folio what no well-behaved worker sends (test/fixtures/plugins/hostile):
// errors of every shape, results that are not data, malformed and duplicate messages, service
// requests for calls they are not running. Each fails only its own call, with a clear answer; the
// server keeps answering, and no caller gets another caller's data.
import t, { type Test } from 'tap';
import path from 'node:path';
import { pino } from 'pino';
import { startTestServer, req, call, createUser, eventually, FIXTURES, type Reply } from '../helpers/server.ts';

const HOSTILE = path.join(FIXTURES, 'hostile');
const lines: Array<Record<string, any>> = [];
const log = pino({ level: 'debug' }, { write: (s: string) => void lines.push(JSON.parse(s)) });

const s = await startTestServer({
  copyToScratch: ['error_shapes', 'raw_wire', 'borrower'].map((p) => path.join(HOSTILE, p)),
  log,
  // Generous: loading is not what this file tries, and a busy machine starts workers slowly.
  overrides: { isolation: { importTimeoutMs: 30_000 } },
});
t.teardown(() => s.close());
const ada = await createUser(s, 'ada@example.com');
const bob = await createUser(s, 'bob@example.com');

/** The server and a namespace of Folio's own still answer. */
async function stillServing(t: Test): Promise<void> {
  t.equal((await req(s, 'GET', '/health')).status, 200, '/health answers');
  t.equal((await call(s, s.adminToken, 'admin', 'plugin_status')).status, 200, 'another namespace answers');
}

/** A failure with an error id that the log has too. */
function failedWithId(t: Test, r: Reply, what: string): void {
  t.equal(r.status, 500, `${what}: 500 (${r.text.slice(0, 200)})`);
  const id = /error id: ([0-9a-f-]{36})/.exec(r.text)?.[1];
  t.ok(id, `${what}: an error id`);
  t.ok(
    lines.some((l) => JSON.stringify(l).includes(id!)),
    `${what}: the error id is in the log`,
  );
}

const THROWS = [
  'plain_not_found',
  'named_not_found',
  'status_string',
  'status_object',
  'headers_array',
  'headers_crlf',
  'code_bogus',
  'name_number',
  'string',
  'number',
  'null',
  'undefined',
  'symbol',
  'bigint',
  'function',
  'circular',
  'throwing_getters',
  'error_with_throwing_getters',
  'proxy',
  'huge',
];

t.test('errors of every shape fail only their call, as a failure with an error id', async (t) => {
  for (const kind of THROWS) failedWithId(t, await call(s, bob.token, 'error_shapes', 'raise', { kind }), `throws ${kind}`);
  for (const kind of ['bigint', 'circular', 'function', 'symbol'])
    failedWithId(t, await call(s, bob.token, 'error_shapes', 'give', { kind }), `returns ${kind}`);
  const typed = await call(s, bob.token, 'error_shapes', 'raise', { kind: 'folio_with_props' });
  t.equal(typed.status, 404, "Folio's own NotFound answers 404, whatever own status, code or name it was given");
  t.match(typed.text, /a real NotFound/);
  t.equal((await call(s, bob.token, 'error_shapes', 'ok')).text, 'ok', 'the plugin still serves');
  await stillServing(t);
});

t.test('malformed, stray and duplicate messages fail only the call they name', async (t) => {
  t.equal((await call(s, bob.token, 'raw_wire', 'found')).text, 'true', "the plugin reached its process's channel and its call ids");
  const noise = await call(s, bob.token, 'raw_wire', 'send', { kind: 'noise' });
  t.equal(noise.status, 200, 'messages for no call (null, wrong types, made-up ids, out of turn) fail nothing');
  t.equal(noise.text, 'returned');
  for (const kind of ['bad_bytes', 'bad_json', 'bad_kind', 'bad_progress', 'bad_service', 'error_string'])
    failedWithId(t, await call(s, bob.token, 'raw_wire', 'send', { kind }), kind);
  const duplicate = await call(s, bob.token, 'raw_wire', 'send', { kind: 'duplicate' });
  t.equal(duplicate.status, 200);
  t.equal(duplicate.text, 'first', 'the first answer for a call counts; the others are dropped');
  const tooLarge = await call(s, bob.token, 'raw_wire', 'send', { kind: 'error_typed_hostile' });
  t.equal(tooLarge.status, 413, 'a typed outcome is revived from fields of the right type only');
  t.equal(tooLarge.headers.get('x-folio-size'), '0', 'a size that is not a number is not sent as a header');
  t.equal(tooLarge.headers.get('x'), null);
  const stale = await call(s, bob.token, 'raw_wire', 'send', { kind: 'error_etag' });
  t.equal(stale.status, 412);
  t.equal(stale.headers.get('etag'), null, 'an ETag that is not a header value is dropped');
  t.equal(stale.headers.get('x'), null);
  const garbage = await call(s, bob.token, 'raw_wire', 'send', { kind: 'garbage' });
  t.equal(garbage.status, 500, 'bytes that are not a frame: the call fails');
  t.match(garbage.text, /sent a message of 4294967295 bytes, over the channel's limit .*its process was killed/);
  t.match(garbage.text, /error id: [0-9a-f-]{36}/);
  await eventually(
    async () => (await call(s, bob.token, 'raw_wire', 'found')).text,
    (v) => v === 'true',
    15_000,
  );
  t.pass('its process was started again and serves');
  await stillServing(t);
});

t.test("a plugin serving one user cannot act for another user's call in flight", async (t) => {
  const note = (token: string, title: string) => req(s, 'POST', '/api/v1/notetaker/notes', { token, body: { title, body: 'x' } });
  t.equal((await note(ada.token, 'ada private')).status, 201);
  t.equal((await note(bob.token, 'bob own')).status, 201);
  const held = call(s, ada.token, 'borrower', 'hold');
  await eventually(
    async () => lines.some((l) => l.msg === 'holding'),
    (v) => v,
    10_000,
  );
  const borrowed = await call(s, bob.token, 'borrower', 'borrow');
  t.equal(borrowed.status, 200, borrowed.text);
  const got = borrowed.json<{ own: string[]; sent: number }>();
  t.same(got.own, ['bob own'], "bob's own call acts for bob: no note was made for him by the guessed ids");
  t.notMatch(borrowed.text, /ada private/);
  const ada1 = await held;
  t.same(ada1.json(), ['ada private'], "ada's call, still running meanwhile, acts for ada, and no note was made for her");
  const refused = lines.filter((l) => /borrower/.test(l.msg) && /not running|a service request without a call id/.test(l.msg));
  t.equal(refused.length, got.sent, 'each request for a call it is not running (or with no call id) was refused, and logged');
  t.ok(
    lines.some((l) => l.level === 40 && /borrower/.test(l.msg) && /not running/.test(l.msg)),
    'a service request for a call the plugin is not running is logged as a warning naming the plugin',
  );
  await stillServing(t);
});
