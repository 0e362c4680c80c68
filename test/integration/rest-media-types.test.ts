// What a request body may be labelled and encoded as. The REST API takes what its OpenAPI document
// declares, application/json in UTF-8 (and other +json types), and answers 415 to anything else
// without writing. The curl surface reads any body as JSON, since `curl -d` labels it a form. On
// both, a body that is not valid UTF-8 is a 400, never stored with U+FFFD in it.
import t from 'tap';
import { startTestServer, req, call } from '../helpers/server.ts';
import { api, spec } from './rest-support.ts';

const s = await startTestServer();
t.teardown(() => s.close());
const A = { token: s.adminToken };
const BODY = JSON.stringify({ title: 'Labelled', body: 'text', tags: ['media'] });

const count = async () => (await api(s, 'GET', '/notetaker/notes?tag=media&limit=100', A)).json().items.length;

/** A POST with raw bytes, for bodies `req` cannot send (invalid UTF-8). */
async function postBytes(path: string, bytes: Uint8Array, type: string) {
  const r = await fetch(`${s.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.adminToken}`, 'content-type': type },
    body: bytes,
  });
  const text = await r.text();
  return { status: r.status, type: r.headers.get('content-type') ?? '', text };
}

t.test('REST: a body labelled anything but JSON in UTF-8 is 415, and nothing is written', async (t) => {
  const before = await count();
  const note = (await api(s, 'POST', '/notetaker/notes', { ...A, body: { title: 'Patch me', body: 'x', tags: ['other'] } })).json();
  for (const type of [
    'text/plain',
    'text/plain; charset=utf-8',
    'application/xml',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/json; charset=utf-16',
    'application/json; charset=iso-8859-1',
    'application/merge-patch+json',
    'application/json-patch+json',
    'json',
  ]) {
    const r = await api(s, 'POST', '/notetaker/notes', { ...A, body: BODY, headers: { 'content-type': type } });
    t.equal(r.status, 415, `POST as ${type}`);
    t.match(r.headers.get('content-type'), /^application\/problem\+json/);
    t.match(r.json(), { code: 'unsupported_media_type', status: 415, detail: /application\/json/ });
    const p = await api(s, 'PATCH', `/notetaker/notes/${note.id}`, {
      ...A,
      body: { append: { text: 'more' } },
      headers: { 'content-type': type },
    });
    t.equal(p.status, 415, `PATCH as ${type}`);
  }
  const gzip = await api(s, 'POST', '/notetaker/notes', { ...A, body: BODY, headers: { 'content-encoding': 'gzip' } });
  t.equal(gzip.status, 415, 'a Content-Encoding it does not decode');
  const unlabelled = await fetch(`${s.url}/api/v1/notetaker/notes`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.adminToken}` },
    body: new TextEncoder().encode(BODY),
  });
  t.equal(unlabelled.status, 415, 'no Content-Type at all');
  t.equal(await count(), before, 'nothing was created');
  t.equal((await api(s, 'GET', `/notetaker/notes/${note.id}`, A)).json().version, 1, 'nothing was appended');
});

t.test('REST: application/json with or without charset=utf-8, and other +json types, are taken', async (t) => {
  for (const type of [
    'application/json',
    'application/json; charset=utf-8',
    'Application/JSON;charset="UTF-8"',
    'application/json; charset=utf8',
    'application/vnd.api+json',
  ]) {
    const r = await api(s, 'POST', '/notetaker/notes', { ...A, body: BODY, headers: { 'content-type': type } });
    t.equal(r.status, 201, type);
  }
});

t.test('the OpenAPI document lists 415 on every operation with a body, and only there', async (t) => {
  const { operations } = await spec(s);
  for (const o of operations) {
    const codes: string[] = o.op['x-problem-codes'];
    t.equal(codes.includes('unsupported_media_type'), o.op.requestBody !== undefined, `${o.method} ${o.template}`);
    if (o.op.requestBody) t.match(o.op.responses['415'], { 'x-problem-codes': ['unsupported_media_type'] });
  }
  const page = await req(s, 'GET', '/api/v1/problems/unsupported_media_type');
  t.equal(page.status, 200, 'the code is explained');
});

t.test('invalid UTF-8 in a JSON body is 400 bad_request on REST and on curl, and nothing is written', async (t) => {
  const before = await count();
  const bytes = new Uint8Array([
    ...new TextEncoder().encode('{"title":"bad '),
    0xff,
    0xfe,
    ...new TextEncoder().encode('","tags":["media"]}'),
  ]);
  const rest = await postBytes('/api/v1/notetaker/notes', bytes, 'application/json');
  t.equal(rest.status, 400);
  t.match(rest.type, /^application\/problem\+json/);
  t.match(JSON.parse(rest.text), { code: 'bad_request', detail: /UTF-8/ });
  for (const type of ['application/json', 'application/x-www-form-urlencoded']) {
    const curl = await postBytes('/curl/call/notetaker/create', bytes, type);
    t.equal(curl.status, 400, `curl, ${type}`);
    t.match(curl.text, /^400 Bad Request: .*UTF-8/);
  }
  // A lone surrogate's encoding and an overlong encoding are invalid UTF-8 too.
  for (const bad of [
    [0xed, 0xa0, 0x80],
    [0xc0, 0xaf],
  ]) {
    const b = new Uint8Array([...new TextEncoder().encode('{"title":"'), ...bad, ...new TextEncoder().encode('","tags":["media"]}')]);
    t.equal((await postBytes('/api/v1/notetaker/notes', b, 'application/json')).status, 400);
    t.equal((await postBytes('/curl/call/notetaker/create', b, 'application/json')).status, 400);
  }
  t.equal(await count(), before, 'nothing was written');
  const fine = await postBytes(
    '/api/v1/notetaker/notes',
    new TextEncoder().encode('{"title":"naïve café ✓","tags":["media"]}'),
    'application/json',
  );
  t.equal(fine.status, 201, 'valid UTF-8 is taken');
  t.equal(JSON.parse(fine.text).title, 'naïve café ✓');
});

t.test('curl: a JSON body is read whatever its Content-Type (curl -d sends a form type)', async (t) => {
  for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'application/json; charset=utf-16']) {
    const r = await req(s, 'POST', '/curl/call/notetaker/create', {
      token: s.adminToken,
      body: JSON.stringify({ title: `As ${type}` }),
      headers: { 'content-type': type },
    });
    t.equal(r.status, 200, type);
  }
  const plain = await call(s, s.adminToken, 'notetaker', 'create', { title: 'As JSON' });
  t.equal(plain.status, 200);
});
