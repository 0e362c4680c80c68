// `npm run worker` as a user runs it: refused on the embedded PGlite, and on PostgreSQL a process
// that starts the job workers and stops cleanly on SIGTERM.
import t from 'tap';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';
import { testLogger } from '../helpers/db.ts';
import { createFromPostgresTemplate } from '../helpers/template.ts';

function worker(env: Record<string, string>) {
  const child = spawn(process.execPath, ['core/worker.ts'], {
    cwd: PACKAGE_ROOT,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, output: () => out };
}

const dataDir = await mkdtemp(path.join(tmpdir(), 'folio-worker-'));
t.teardown(() => rm(dataDir, { recursive: true, force: true }));

t.test('on the embedded database it refuses, saying why', async (t) => {
  const w = worker({ DATA_DIR: dataDir });
  t.equal(await w.exited, 2);
  t.match(w.output(), /needs PostgreSQL \(set DATABASE_URL\)/);
  t.match(w.output(), /`npm start` runs the jobs itself/);
});

const serverUrl = process.env['DATABASE_URL'];
t.test('on PostgreSQL it runs until SIGTERM, then exits 0', { skip: serverUrl ? false : 'PostgreSQL only (DATABASE_URL)' }, async (t) => {
  const dbName = `folio_t_${randomBytes(6).toString('hex')}`;
  await createFromPostgresTemplate(serverUrl!, dbName, testLogger());
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: serverUrl });
    await c.connect();
    await c.query(sql).finally(() => c.end());
  };
  t.teardown(() => admin(`drop database if exists ${dbName} with (force)`));
  const url = new URL(serverUrl!);
  url.pathname = `/${dbName}`;
  const w = worker({ DATA_DIR: dataDir, DATABASE_URL: url.toString() });
  const deadline = Date.now() + 30_000;
  while (!w.output().includes('folio worker running') && Date.now() < deadline) {
    if (w.child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  t.match(w.output(), /folio worker running/, w.output());
  w.child.kill('SIGTERM');
  t.equal(await w.exited, 0);
});
