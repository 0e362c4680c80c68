// `npm start` as a user runs it: a real process, its output, its data folder, its exit codes.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';
import { testLogger } from '../helpers/db.ts';
import { fresh } from '../helpers/server.ts';
import { copyPgliteTemplate } from '../helpers/template.ts';

interface Run {
  url: Promise<string>;
  /** Resolves once the output matches (or after `ms`), with whether it did. */
  waitFor(re: RegExp, ms?: number): Promise<boolean>;
  output(): string;
  stop(): Promise<number | null>;
  exited: Promise<number | null>;
}

// Node's bytecode cache, when the test run uses one (package.json, tap's test-env): it changes
// nothing the process does, only how long loading its modules takes.
const compileCache: Record<string, string> = process.env['NODE_COMPILE_CACHE']
  ? { NODE_COMPILE_CACHE: process.env['NODE_COMPILE_CACHE'] }
  : {};

function start(env: Record<string, string>): Run {
  const child = spawn(process.execPath, ['core/main.ts'], {
    cwd: PACKAGE_ROOT,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', PORT: '0', LOG_LEVEL: 'info', ...compileCache, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  // 'close', not 'exit': by then the output has been read to its end.
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const url = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /"url":"(http:\/\/[^"]+)".*"msg":"folio listening"/.exec(out);
      if (m) resolve(m[1]!);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => reject(new Error(`exited with ${code} before listening:\n${out}`)));
  });
  url.catch(() => {});
  const waitFor = async (re: RegExp, ms = 1000) => {
    const until = Date.now() + ms;
    while (!re.test(out) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    return re.test(out);
  };
  return {
    url,
    waitFor,
    exited,
    output: () => out,
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

const serverUrl = process.env['DATABASE_URL'];

t.test('first start creates the admin and prints its token once; the next start finds the data', async (t) => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'folio-proc-'));
  const db = serverUrl ? await fresh(serverUrl) : undefined;
  t.teardown(async () => {
    await rm(dataDir, { recursive: true, force: true });
    await db?.drop();
  });
  const env = { DATA_DIR: dataDir, ...(db ? { DATABASE_URL: db.url } : {}) };
  const first = start(env);
  const url = await first.url;
  // The banner waits for start-up's lines to settle (up to 5 s) to be the last thing on screen.
  t.ok(await first.waitFor(/curl -H "Authorization: Bearer \$FOLIO_TOKEN"/, 10_000), 'the first-start banner is printed');
  const token = /folio_api_[A-Za-z0-9]+/.exec(first.output())?.[0];
  t.ok(token, 'the generated admin token is printed');
  t.match(first.output(), /shown once/);
  const who = await fetch(`${url}/curl/whoami`, { headers: { authorization: `Bearer ${token}` } });
  t.equal(who.status, 200);
  t.equal(await first.stop(), 0, 'SIGTERM stops it cleanly');

  const second = start(env);
  const url2 = await second.url;
  await second.waitFor(/folio_api_/, 300);
  t.notMatch(second.output(), /folio_api_/, 'no token printed the second time');
  const again = await fetch(`${url2}/curl/whoami`, { headers: { authorization: `Bearer ${token}` } });
  t.equal(again.status, 200, 'the same token works: the data was found again');
  t.equal(await second.stop(), 0);
});

t.test('BOOTSTRAP_ADMIN_TOKEN becomes the first admin token', async (t) => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'folio-proc-'));
  // A migrated database with no user yet, copied from the test template: the first start on an
  // empty one (migrations and all) is the test above.
  const db = serverUrl ? await fresh(serverUrl, { fromTemplate: true }) : undefined;
  if (!db) await copyPgliteTemplate(dataDir, testLogger());
  t.teardown(async () => {
    await rm(dataDir, { recursive: true, force: true });
    await db?.drop();
  });
  const token = 'my-own-bootstrap-token-with-32-characters!';
  const run = start({ DATA_DIR: dataDir, BOOTSTRAP_ADMIN_TOKEN: token, ...(db ? { DATABASE_URL: db.url } : {}) });
  const url = await run.url;
  await run.waitFor(/folio_api_/, 300);
  t.notMatch(run.output(), /folio_api_/, 'nothing generated, nothing printed');
  const who = await fetch(`${url}/curl/whoami`, { headers: { authorization: `Bearer ${token}` } });
  t.equal(who.status, 200);
  t.match(await who.text(), /roles: admin/);
  await run.stop();
});

t.test('a bad setting stops the start with a message naming it', async (t) => {
  const runs: { name: string; value: string; pattern: RegExp; run: Run }[] = [];
  for (const [name, value, pattern] of [
    ['PORT', 'eighty', /port \(from PORT\)/],
    ['BOOTSTRAP_ADMIN_TOKEN', 'short', /bootstrapAdminToken \(from BOOTSTRAP_ADMIN_TOKEN\)/],
    ['DATABASE_URL', 'mysql://x', /databaseUrl \(from DATABASE_URL\)/],
    ['LOG_LEVEL', 'loud', /logLevel \(from LOG_LEVEL\)/],
  ] as const) {
    runs.push({ name, value, pattern, run: start({ [name]: value }) });
  }
  // Started together (each is a whole process start), checked in order.
  for (const { name, value, pattern, run } of runs) {
    const code = await run.exited;
    t.equal(code, 2, `${name}=${value} exits 2`);
    t.match(run.output(), pattern, `${name} is named`);
    t.notMatch(run.output(), /\n\s+at /, 'no stack trace');
  }
});
