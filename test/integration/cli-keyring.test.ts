// The OS keyring as `folio` uses it: a real Secret Service (GNOME Keyring in a private D-Bus
// session), the CLI as a subprocess against a real Folio. The token goes into the keyring, not the
// file; commands use it; logout removes it. Without a keyring (the other CLI tests) the file is used.
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';
import { createUser, startTestServer } from '../helpers/server.ts';

const have = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
if (!have('dbus-run-session') || !have('gnome-keyring-daemon')) {
  t.plan(0, 'no D-Bus session runner or GNOME Keyring here (.ci/run installs gnome-keyring)');
} else {
  const BIN = path.join(PACKAGE_ROOT, 'cli/folio.ts');
  const s = await startTestServer();
  const home = await mkdtemp(path.join(tmpdir(), 'folio-cli-keyring-'));
  t.teardown(async () => {
    await s.close();
    await rm(home, { recursive: true, force: true });
  });
  const kim = await createUser(s, 'kim-keyring@example.com');

  t.test('login stores the token in the keyring, commands use it, logout removes it', async (t) => {
    const folio = `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)}`;
    // One keyring daemon for the whole sequence, as on a desktop.
    const script = [
      'echo -n unlock | gnome-keyring-daemon --unlock --components=secrets >/dev/null',
      `printf %s "$TOKEN" | ${folio} auth login --url "$URL" --with-token; echo "login=$?"`,
      `${folio} auth status; echo "status=$?"`,
      `${folio} notes list --json id; echo "list=$?"`,
      `${folio} auth logout; echo "logout=$?"`,
      `${folio} auth status; echo "after=$?"`,
    ].join('\n');
    const env: Record<string, string> = {
      PATH: process.env['PATH'] ?? '',
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, 'config'),
      XDG_DATA_HOME: path.join(home, 'data'),
      NO_COLOR: '1',
      TOKEN: kim.token,
      URL: s.url,
    };
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn('dbus-run-session', ['--', 'sh', '-c', script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (text += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (text += d));
      child.on('error', reject);
      child.on('close', () => resolve(text));
    });
    t.match(out, /logged in to .* \(API token, stored in the OS keyring\)/, out);
    t.match(out, /login=0/);
    t.match(out, /\* default\s+\S+\s+\(Folio [^)]+\)\s+token works, kept in the OS keyring/);
    t.match(out, /status=0/);
    t.match(out, /^\[\]$/m, 'a command authenticated with the token from the keyring');
    t.match(out, /list=0/);
    t.match(out, /logout=0/);
    t.match(out, /after=4/, 'after logout, not logged in');
    const file = path.join(home, 'config', 'folio', 'credentials.json');
    const onDisk = existsSync(file) ? await readFile(file, 'utf8') : '';
    t.notOk(onDisk.includes(kim.token), 'the token never went into the credentials file');
  });
}
