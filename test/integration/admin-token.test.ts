// `npm run admin-token`: the way back in when the first admin's token is lost. Folio runs as its own
// process on its embedded database, is stopped, the command makes a token, and the next start
// takes it.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';
import { startProcess, type FolioProcess } from '../helpers/process.ts';

const dir = await mkdtemp(path.join(tmpdir(), 'folio-admin-token-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const env = { DATA_DIR: path.join(dir, 'data') };

function adminToken(
  args: string[] = [],
  extra: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['core/admin-token.ts', ...args], {
      cwd: PACKAGE_ROOT,
      env: {
        PATH: process.env['PATH'] ?? '',
        HOME: process.env['HOME'] ?? '',
        ...(process.env['NODE_COMPILE_CACHE'] ? { NODE_COMPILE_CACHE: process.env['NODE_COMPILE_CACHE'] } : {}),
        ...env,
        ...extra,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function stop(p: FolioProcess): Promise<void> {
  if (p.child.exitCode !== null) return;
  const closed = new Promise((resolve) => p.child.once('close', resolve));
  p.child.kill('SIGTERM');
  await closed;
}

t.test('a lost first-admin token: stop the server, npm run admin-token, and the new token works', async (t) => {
  // The first start makes the admin, and prints a token nobody kept.
  const first = await startProcess(env);
  await stop(first);

  const made = await adminToken();
  t.equal(made.code, 0, made.stderr);
  const token = /^\s+(folio_api_\S+)$/m.exec(made.stdout)?.[1];
  t.ok(token, 'a token is printed');
  t.match(made.stdout, /A new API token for admin@localhost \(admin\)/);

  const unknown = await adminToken(['--email', 'nobody@example.com']);
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /^folio admin-token: no user nobody@example\.com in the embedded database/);
  const nowhere = await adminToken([], { DATA_DIR: path.join(dir, 'not-there') });
  t.equal(nowhere.code, 1);
  t.match(nowhere.stderr, /there is no embedded database in .*not-there/, 'a wrong DATA_DIR makes no database');
  const usage = await adminToken(['--bogus']);
  t.equal(usage.code, 2);
  t.match(usage.stderr, /Usage: npm run admin-token/);

  const again = await startProcess(env);
  t.teardown(() => stop(again));
  const who = await fetch(`${again.url}/curl/whoami`, { headers: { authorization: `Bearer ${token}` } });
  t.equal(who.status, 200);
  t.match(await who.text(), /admin@localhost/, 'it opens the admin account');

  const busy = await adminToken();
  t.equal(busy.code, 1, 'not while the server holds the embedded database');
  t.match(busy.stderr, /is in use by process \d+\n\(on the embedded database, stop the server first\)/);
});
