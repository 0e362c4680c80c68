// The places a newcomer stumbled in the command line, each as they met it: a typo in --json, a jq
// filter, a second profile, the short ids lists print, a download over an existing file, and an
// error that named a REST route where a command exists. Real subprocesses against a real Folio.
import t from 'tap';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { call, createUser, req, startTestServer } from '../helpers/server.ts';
import { runFolio } from '../helpers/cli.ts';

const s = await startTestServer();
const home = await mkdtemp(path.join(tmpdir(), 'folio-cli-first-'));
t.teardown(async () => {
  await s.close();
  await rm(home, { recursive: true, force: true });
});
const alice = await createUser(s, 'alice-first@example.com');
const asAlice = { FOLIO_URL: s.url, FOLIO_TOKEN: alice.token };
const folio = (args: string[], opts: { env?: Record<string, string | undefined>; input?: string } = {}) => runFolio(home, args, opts);
const rest = (method: string, p: string, body?: unknown) => req(s, method, `/api/v1${p}`, { token: alice.token, body });

t.test('--json refuses a field the data does not have, naming the ones it has; --jq filters', async (t) => {
  await rest('POST', '/notetaker/notes', { title: 'First', body: 'one', tags: ['jq'] });
  await rest('POST', '/notetaker/notes', { title: 'Second', body: 'two', tags: ['jq'] });

  const typo = await folio(['notes', 'list', '--tag', 'jq', '--json', 'id,titel'], { env: asAlice });
  t.equal(typo.code, 2, 'a usage error');
  t.equal(typo.stdout, '', 'nothing printed as if it had worked');
  t.match(typo.stderr, /unknown JSON field "titel"; available fields: .*\bid\b.*\btitle\b/);

  const titles = await folio(['notes', 'list', '--tag', 'jq', '--jq', '.[].title'], { env: asAlice });
  t.equal(titles.code, 0, titles.stderr);
  t.same(titles.stdout.split('\n').filter(Boolean).sort(), ['First', 'Second'], 'strings print without quotes, one per line');

  const shaped = await folio(['notes', 'list', '--tag', 'jq', '--json', 'title,tags', '--jq', 'map(select(.title == "Second"))'], {
    env: asAlice,
  });
  t.same(JSON.parse(shaped.stdout), [{ title: 'Second', tags: ['jq'] }], '--jq runs over the fields --json kept');

  const broken = await folio(['notes', 'list', '--jq', '.[', '--tag', 'jq'], { env: asAlice });
  t.equal(broken.code, 2);
  t.match(broken.stderr, /^folio: --jq "\.\[": .*syntax error/);
});

t.test('profiles: a second login does not take over; status says who, where, what; switch', async (t) => {
  const first = (await call(s, alice.token, 'admin', 'mint_curl_token', { ttl_seconds: 3600 })).json();
  const bob = await createUser(s, 'bob-first@example.com');
  const env = { FOLIO_URL: undefined, FOLIO_TOKEN: undefined };
  t.equal((await folio(['auth', 'login', '--url', s.url], { input: `${first.token}\n`, env })).code, 0);
  const second = await folio(['auth', 'login', '--url', s.url, '--profile', 'bob'], { input: `${bob.token}\n`, env });
  t.equal(second.code, 0, second.stderr);
  t.match(second.stderr, 'profile default is still the one in use: folio auth switch bob');

  const mine = await folio(['users', 'me', '--json', 'email'], { env });
  t.same(JSON.parse(mine.stdout), { email: 'alice-first@example.com' }, 'commands still act as the first profile');

  const version = (await req(s, 'GET', '/health')).json().version as string;
  const status = await folio(['auth', 'status'], { env });
  t.equal(status.code, 0, status.stderr);
  t.match(status.stdout, new RegExp(`^\\* default  ${s.url}  \\(Folio ${version.replace(/\./g, '\\.')}\\)`, 'm'));
  t.match(status.stdout, /account: alice-first@example\.com/);
  t.match(status.stdout, /token: minted token, expires \d{4}-\d\d-\d\dT/);
  t.match(status.stdout, /^ {2}bob {2}/m, 'the other profile, not in use');
  t.match(status.stdout, /account: bob-first@example\.com/);
  const rows = JSON.parse(
    (await folio(['auth', 'status', '--json', 'profile,active,account,token_kind,scopes,expires_at'], { env })).stdout,
  );
  const bobRow = rows.find((r: { profile: string }) => r.profile === 'bob');
  t.match(bobRow, { active: false, account: { email: 'bob-first@example.com' }, token_kind: 'api' });
  t.ok(Array.isArray(bobRow.scopes) && bobRow.scopes.length > 0, 'the scopes of the token');

  const switched = await folio(['auth', 'switch', 'bob'], { env });
  t.equal(switched.code, 0, switched.stderr);
  t.same(JSON.parse((await folio(['users', 'me', '--json', 'email'], { env })).stdout), { email: 'bob-first@example.com' });
  const back = await folio(['auth', 'switch'], { env });
  t.equal(back.code, 0, 'with two profiles, switch alone goes to the other');
  t.same(JSON.parse((await folio(['users', 'me', '--json', 'email'], { env })).stdout), { email: 'alice-first@example.com' });
  const nosuch = await folio(['auth', 'switch', 'nosuch'], { env });
  t.equal(nosuch.code, 2);
  t.match(nosuch.stderr, 'no profile named nosuch; the profiles are: default, bob');
});

t.test('short ids: the 8 characters a list shows work wherever an id is asked for; an ambiguous one is named', async (t) => {
  const note = (await rest('POST', '/notetaker/notes', { title: 'Short', body: 'by a short id\n' })).json();
  const got = await folio(['notes', 'get', note.id.slice(0, 8)], { env: asAlice });
  t.equal(got.code, 0, got.stderr);
  t.equal(got.stdout, 'by a short id\n');

  await rest('DELETE', `/notetaker/notes/${note.id}`);
  const restored = await folio(['notes', 'restore', note.id.slice(0, 8)], { env: asAlice });
  t.equal(restored.code, 0, `a trashed note is found by its short id too: ${restored.stderr}`);

  const missing = await folio(['notes', 'get', 'ffff0000'], { env: asAlice });
  t.equal(missing.code, 3, 'not found');
  // Another user's note is not found by its start either.
  const other = await createUser(s, 'carol-first@example.com');
  const hers = (await req(s, 'POST', '/api/v1/notetaker/notes', { token: other.token, body: { title: 'Hers', body: 'x' } })).json();
  t.equal((await folio(['notes', 'get', hers.id.slice(0, 8)], { env: asAlice })).code, 3, "another user's note stays a 404");

  // Notes until two of them share their first 4 hex digits (ids are random: a few hundred at most).
  const seen = new Map<string, string>();
  let pair: [string, string] | undefined;
  for (let i = 0; i < 4000 && !pair; i += 25) {
    const made = await Promise.all(
      Array.from({ length: 25 }, (_, k) => rest('POST', '/notetaker/notes', { title: `n${i + k}`, body: '', tags: ['many'] })),
    );
    for (const r of made) {
      const id = r.json().id as string;
      const start = id.slice(0, 4);
      const before = seen.get(start);
      if (before && !pair) pair = [before, id];
      seen.set(start, id);
    }
  }
  t.ok(pair, 'two notes share the start of their ids');
  const ambiguous = await folio(['notes', 'get', pair![0].slice(0, 4)], { env: asAlice });
  t.equal(ambiguous.code, 2);
  t.match(ambiguous.stderr, `${pair![0].slice(0, 4)} is the start of more than one note's id`);
  t.match(ambiguous.stderr, pair![0].slice(0, 13));
  t.match(ambiguous.stderr, pair![1].slice(0, 13));

  const bad = await rest('GET', '/notetaker/notes?id_prefix=xyz1');
  t.equal(bad.status, 400, 'the REST filter refuses what is not the start of an id');
});

t.test('files download does not overwrite a file unless --clobber', async (t) => {
  const local = path.join(home, 'report.txt');
  await writeFile(local, 'the new content\n');
  const up = await folio(['files', 'upload', local], { env: asAlice });
  t.equal(up.code, 0, up.stderr);
  const id = up.stdout.trim();
  const out = path.join(home, 'existing.txt');
  await writeFile(out, 'precious\n');
  const refused = await folio(['files', 'download', id.slice(0, 8), '-o', out], { env: asAlice });
  t.equal(refused.code, 2);
  t.match(refused.stderr, `${out} already exists; nothing was written (--clobber overwrites it`);
  t.equal(await readFile(out, 'utf8'), 'precious\n', 'the file is as it was');
  const clobbered = await folio(['files', 'download', id, '-o', out, '--clobber'], { env: asAlice });
  t.equal(clobbered.code, 0, clobbered.stderr);
  t.equal(await readFile(out, 'utf8'), 'the new content\n');
});

t.test('an error that names a REST route names the command instead', async (t) => {
  const r = await folio(['tokens', 'create', '--name', 'x', '--scope', 'nosuch', '--expires-in-days', '1'], { env: asAlice });
  t.equal(r.code, 1);
  t.match(r.stderr, 'folio tokens scopes lists them');
  t.notMatch(r.stderr, '/api/v1/');
});
