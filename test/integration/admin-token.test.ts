// `npm run admin-token`: the way back in when the first admin's token is lost. Folio runs as its own
// process on its embedded database, is stopped, the command makes a token, and the next start
// takes it.
import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runScript, startProcess, stopProcess as stop } from '../helpers/process.ts';

const dir = await mkdtemp(path.join(tmpdir(), 'folio-admin-token-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const env = { DATA_DIR: path.join(dir, 'data') };

const adminToken = (args: string[] = [], extra: Record<string, string> = {}) =>
  runScript('core/admin-token.ts', args, { ...env, ...extra });

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
