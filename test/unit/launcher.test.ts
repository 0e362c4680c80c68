// The `folio` command as it is installed, under the system's older Node first on PATH: the launcher
// (bin/folio) runs the CLI on the pinned Node 24, whatever node PATH has, and prints Folio's version
// with no engine warning; so does ./cli/folio.ts run directly, or through a link to it.
import t from 'tap';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';

const { version } = JSON.parse(await readFile(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string };
const tmp = await mkdtemp(path.join(tmpdir(), 'folio-launcher-'));
t.teardown(() => rm(tmp, { recursive: true, force: true }));
const env = { PATH: '/usr/bin:/bin', HOME: tmp };
const haveSystemNode = existsSync('/usr/bin/node') && existsSync('/usr/bin/npm');

/** Runs a command as a user's shell would, with only the system's bin folders on PATH. */
async function run(cmd: string, args: string[]) {
  try {
    const r = await promisify(execFile)(cmd, args, { env, timeout: 60_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

const prints = (t: Pick<typeof import('tap').default, 'equal' | 'notMatch'>, r: Awaited<ReturnType<typeof run>>) => {
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stdout, `${version}\n`, "Folio's version");
  t.notMatch(r.stderr, /EBADENGINE|ERR_UNKNOWN_FILE_EXTENSION/, 'no engine warning, no loader error');
};

t.test('./cli/folio.ts and a link to it, with the system node first on PATH', { skip: !haveSystemNode && 'no system node' }, async (t) => {
  prints(t, await run(path.join(PACKAGE_ROOT, 'cli/folio.ts'), ['--version']));
  const bin = path.join(tmp, 'own-bin');
  await mkdir(bin);
  await symlink(path.join(PACKAGE_ROOT, 'cli/folio.ts'), path.join(bin, 'folio'));
  prints(t, await run(path.join(bin, 'folio'), ['--version']));
});

t.test('npm i -g of the checkout into a prefix: its bin/folio', { skip: !haveSystemNode && 'no system node' }, async (t) => {
  const prefix = path.join(tmp, 'prefix');
  // The system npm, offline: installing a folder links it, so nothing is fetched.
  const installed = await run('/usr/bin/npm', ['i', '-g', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', PACKAGE_ROOT]);
  t.equal(installed.code, 0, installed.stderr);
  prints(t, await run(path.join(prefix, 'bin/folio'), ['--version']));
});
