// The `folio files`, `tokens` and `users` commands as a user meets them: a real subprocess
// (cli/folio.ts) against a real Folio over HTTP. A few-MB file goes up and comes back byte for byte,
// its versions are listed, a share link is fetched with no token, a token is made, used and revoked.
import t from 'tap';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';
import pkg from '../../package.json' with { type: 'json' };
import { createUser, startTestServer } from '../helpers/server.ts';

const BIN = path.join(PACKAGE_ROOT, 'cli/folio.ts');
const PACKAGE_VERSION = pkg.version;
const s = await startTestServer();
const home = await mkdtemp(path.join(tmpdir(), 'folio-cli-groups-'));
t.teardown(async () => {
  await s.close();
  await rm(home, { recursive: true, force: true });
});
const alice = await createUser(s, 'alice-cli-groups@example.com');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function folio(args: string[], opts: { token?: string; input?: string } = {}): Promise<Run> {
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '',
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, 'config'),
    NO_COLOR: '1',
    FOLIO_URL: s.url,
    FOLIO_TOKEN: opts.token ?? alice.token,
  };
  if (process.env['NODE_COMPILE_CACHE']) env['NODE_COMPILE_CACHE'] = process.env['NODE_COMPILE_CACHE'];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

t.test('files: upload a few MB, download it back identical, versions, share link without a token', async (t) => {
  const data = randomBytes(3 * 1024 * 1024 + 17);
  const src = path.join(home, 'blob.bin');
  await writeFile(src, data);

  const up = await folio(['files', 'upload', src, '--name', 'blob.bin']);
  t.equal(up.code, 0, up.stderr);
  const id = up.stdout.trim();
  t.match(id, /^\S+$/, 'only the id on stdout');
  t.equal(up.stderr, '', 'no progress bar when stderr is not a terminal');

  const infoRun = await folio(['files', 'info', id, '--json', 'name,size,sha256']);
  t.same(JSON.parse(infoRun.stdout), { name: 'blob.bin', size: data.length, sha256: sha256(data) });

  const dest = path.join(home, 'back.bin');
  const down = await folio(['files', 'download', id, '-o', dest]);
  t.equal(down.code, 0, down.stderr);
  t.equal(sha256(await readFile(dest)), sha256(data), 'byte-identical after the round trip');

  // --version <n> is the command's (an earlier version), not the program's --version.
  const v1 = path.join(home, 'v1.bin');
  const down1 = await folio(['files', 'download', id, '--version', '1', '-o', v1]);
  t.equal(down1.code, 0, down1.stderr);
  t.equal(down1.stdout, '', 'not the program version');
  t.equal(sha256(await readFile(v1)), sha256(data), 'version 1, written to the file');
  const [program, short, profiled] = await Promise.all([folio(['--version']), folio(['-V']), folio(['-p', 'work', '--version'])]);
  t.equal(program.stdout.trim(), PACKAGE_VERSION, 'folio --version alone is the program version');
  t.equal(short.stdout.trim(), PACKAGE_VERSION, 'and folio -V');
  t.equal(profiled.stdout.trim(), PACKAGE_VERSION, 'and folio -p work --version (the program option does not make it a command)');

  const versions = await folio(['files', 'versions', id, '--json', 'version,size']);
  t.equal(versions.code, 0, versions.stderr);
  t.same(JSON.parse(versions.stdout), [{ version: 1, size: data.length }]);

  const listed = await folio(['files', 'list', '--json', 'id']);
  t.ok(
    (JSON.parse(listed.stdout) as Array<{ id: string }>).some((f) => f.id === id),
    'listed',
  );

  const share = await folio(['files', 'share', id, '--password-stdin', '--max-downloads', '2'], { input: 's3cret\n' });
  t.equal(share.code, 0, share.stderr);
  const url = share.stdout.trim();
  t.match(url, /\/s\/\S+$/, 'prints the link');
  const anon = await fetch(url, { headers: { 'x-share-password': 's3cret' } });
  t.equal(anon.status, 200, 'anyone with the link and the password gets it, no token');
  t.equal(sha256(Buffer.from(await anon.arrayBuffer())), sha256(data));
  t.equal((await fetch(url)).status, 401, 'the password is needed');

  const shares = await folio(['files', 'shares', '--json', 'id,file_name,downloads']);
  const link = (JSON.parse(shares.stdout) as Array<{ id: string; file_name: string; downloads: number }>).find(
    (l) => l.file_name === 'blob.bin',
  );
  t.equal(link?.downloads, 1);
  const unshare = await folio(['files', 'unshare', link!.id]);
  t.equal(unshare.code, 0, unshare.stderr);
  t.equal((await fetch(url, { headers: { 'x-share-password': 's3cret' } })).status, 404, 'a revoked link is gone');

  t.equal((await folio(['files', 'rm', id])).code, 0);
  const trash = await folio(['files', 'list', '--trash', '--json', 'id']);
  t.same(JSON.parse(trash.stdout), [{ id }], 'rm moves it to the trash');
  t.equal((await folio(['files', 'restore', id])).code, 0);
  const missing = await folio(['files', 'info', '00000000-0000-0000-0000-000000000000']);
  t.equal(missing.code, 3, 'not found: exit 3');
  t.match(missing.stderr, /not_found/, 'one line with the code');
  t.equal(missing.stderr.trim().split('\n').length, 1);
});

t.test('tokens and users: create prints the secret once, self, revoke; users me', async (t) => {
  const me = await folio(['users', 'me', '--json', 'email']);
  t.equal(me.code, 0, me.stderr);
  t.same(JSON.parse(me.stdout), { email: 'alice-cli-groups@example.com' });

  const created = await folio(['tokens', 'create', '--name', 'laptop', '--scope', 'notes:read', '--expires-in-days', '7']);
  t.equal(created.code, 0, created.stderr);
  const secret = created.stdout.trim();
  t.match(secret, /^\S{16,}$/, 'the secret alone on stdout');

  const self = await folio(['tokens', 'self', '--json', 'id,name,scopes'], { token: secret });
  t.equal(self.code, 0, self.stderr);
  const mine = JSON.parse(self.stdout) as { id: string; name: string; scopes: string[] };
  t.same({ name: mine.name, scopes: mine.scopes }, { name: 'laptop', scopes: ['notes:read'] });

  const refused = await folio(['files', 'list'], { token: secret });
  t.equal(refused.code, 4, 'a token without files:read is refused (exit 4)');

  t.equal((await folio(['tokens', 'revoke', mine.id])).code, 0);
  t.equal((await folio(['tokens', 'self'], { token: secret })).code, 4, 'a revoked token no longer works');
  t.equal((await folio(['tokens', 'get', '00000000-0000-0000-0000-000000000000'])).code, 3, 'not found: exit 3');
});
