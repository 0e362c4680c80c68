// `folio auth login --web` as a person at a terminal meets it: the CLI (a real subprocess) prints
// the address to open, the person signs in on Folio's page with their password (driven here over
// HTTP, cookies and redirects as a browser does), the browser is sent back to the CLI's loopback
// address, and the CLI stores the tokens. Commands then work with them, and an access token that
// has run out is renewed by itself with the refresh token.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';
import { Browser } from '../helpers/oauth.ts';
import { req, startTestServer } from '../helpers/server.ts';

const BIN = path.join(PACKAGE_ROOT, 'cli/folio.ts');
const s = await startTestServer();
const home = await mkdtemp(path.join(tmpdir(), 'folio-cli-oauth-'));
t.teardown(async () => {
  await s.close();
  await rm(home, { recursive: true, force: true });
});
const PASSWORD = 'correct horse battery staple';
const made = await req(s, 'POST', '/api/v1/users', {
  token: s.adminToken,
  body: { email: 'lee@example.com', name: 'Lee', password: PASSWORD },
});
if (made.status !== 201) throw new Error(`user: ${made.status} ${made.text}`);

const env: Record<string, string> = {
  PATH: process.env['PATH'] ?? '',
  HOME: home,
  XDG_CONFIG_HOME: path.join(home, 'config'),
  NO_COLOR: '1',
};
if (process.env['NODE_COMPILE_CACHE']) env['NODE_COMPILE_CACHE'] = process.env['NODE_COMPILE_CACHE'];
const credentialsFile = path.join(home, 'config', 'folio', 'credentials.json');

function folio(args: string[], input = ''): { exited: Promise<number | null>; stdout: () => string; stderr: () => string } {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  child.stdin.end(input);
  return { exited: new Promise((resolve) => child.on('close', resolve)), stdout: () => out, stderr: () => err };
}

async function waitFor<T>(get: () => T | undefined, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Signs in on Folio's page and follows the redirects to where the browser leaves Folio. */
async function signInAndApprove(address: string, form: Record<string, string>): Promise<Response> {
  const origin = new URL(s.url).origin;
  const browser = new Browser(s.url);
  const first = await browser.follow(address);
  if (first.res.status !== 200) throw new Error(`sign-in page: ${first.res.status}`);
  let at = first.url;
  let res = await browser.go(at, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  while (res.status >= 300 && res.status < 400) {
    const next = new URL(res.headers.get('location')!, at);
    if (next.origin !== origin) return fetch(next); // the browser arrives at the CLI's loopback address
    at = next.href;
    res = await browser.go(at);
  }
  throw new Error(`stayed on Folio: ${res.status} ${(await res.text()).slice(0, 200)}`);
}

t.test('sign in in the browser, use it, and the expired access token is renewed by itself', async (t) => {
  const login = folio(['auth', 'login', '--url', s.url, '--web', '--no-browser', '--scopes', 'notes:read,notes:write']);
  const address = await waitFor(() => /^\s+(http\S+)$/m.exec(login.stderr())?.[1]);
  const u = new URL(address);
  t.equal(u.searchParams.get('code_challenge_method'), 'S256', 'PKCE');
  t.match(u.searchParams.get('redirect_uri'), /^http:\/\/127\.0\.0\.1:\d+\/callback$/, 'a loopback redirect on a free port');
  const landed = await signInAndApprove(address, { email: 'lee@example.com', password: PASSWORD, decision: 'allow' });
  t.equal(landed.status, 200);
  t.match(await landed.text(), /Signed in/, 'the browser tab says so');
  t.equal(await login.exited, 0, login.stderr());
  t.match(login.stderr(), /logged in to .* as profile default \(browser sign-in/);

  const created = folio(['notes', 'create', '--title', 'From the CLI'], 'signed in with OAuth\n');
  t.equal(await created.exited, 0, created.stderr());
  const id = created.stdout().trim();
  const own = await req(s, 'GET', `/api/v1/notetaker/notes/${id}`, { token: s.adminToken });
  t.equal(own.status, 404, "the note is Lee's, not the admin's");

  // An hour later, as far as the CLI can tell: the stored access token has run out.
  const stored = JSON.parse(await readFile(credentialsFile, 'utf8')) as Record<
    string,
    { access_token: string; refresh_token: string; expires_at: number }
  >;
  const before = stored['default']!;
  t.ok(before.refresh_token, 'a refresh token was stored');
  await writeFile(credentialsFile, JSON.stringify({ default: { ...before, expires_at: Date.now() - 1000 } }));
  const got = folio(['notes', 'get', id]);
  t.equal(await got.exited, 0, got.stderr());
  t.equal(got.stdout(), 'signed in with OAuth\n');
  const after = (JSON.parse(await readFile(credentialsFile, 'utf8')) as typeof stored)['default']!;
  t.not(after.access_token, before.access_token, 'a new access token');
  t.not(after.refresh_token, before.refresh_token, 'and the refresh token rotated');
  t.ok(after.expires_at > Date.now(), 'good for a while');
  const status = folio(['auth', 'status']);
  t.equal(await status.exited, 0, status.stderr());
  t.match(status.stdout(), /^\* default .*\n\s+token works/m);
});

t.test('a sign-in the person denies saves nothing and says why', async (t) => {
  await rm(path.join(home, 'config'), { recursive: true, force: true });
  const login = folio(['auth', 'login', '--url', s.url, '--web', '--no-browser']);
  const address = await waitFor(() => /^\s+(http\S+)$/m.exec(login.stderr())?.[1]);
  const landed = await signInAndApprove(address, { email: 'lee@example.com', password: PASSWORD, decision: 'deny' });
  t.equal(landed.status, 200);
  t.equal(await login.exited, 4, 'exit 4: auth');
  t.match(login.stderr(), /sign-in refused: .*nothing was saved/);
  await t.rejects(readFile(credentialsFile, 'utf8'), 'no credentials written');
});
