// A crash Folio can catch is one JSON log line, not a stack on stderr: an exception nothing caught
// and a promise rejection nothing handled each end the process with status 1 and a fatal line that
// says which it was. Folio runs as its own process (as `npm start` runs it), with a hook that makes
// it fail on a signal.
import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startProcess } from '../helpers/process.ts';

const dir = await mkdtemp(path.join(tmpdir(), 'folio-crash-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const hook = path.resolve(import.meta.dirname, '../fixtures/hooks/crash-on-signal.ts');

async function crash(signal: NodeJS.Signals, data: string) {
  const p = await startProcess(
    // A token given: no first-start banner on stdout, only log lines.
    { DATA_DIR: path.join(dir, data), BOOTSTRAP_ADMIN_TOKEN: 'crash-test-admin-token-0123456789abcdef' },
    ['--import', hook],
  );
  let stdout = '';
  let stderr = '';
  p.child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  p.child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => {
    p.child.once('close', (c) => resolve(c));
    p.child.kill(signal);
  });
  const lines = stdout.split('\n').filter(Boolean);
  return { code, stderr, lines, last: JSON.parse(lines.at(-1) ?? '{}') as Record<string, any> };
}

t.test('an uncaught exception: one fatal JSON line, exit 1, nothing on stderr', async (t) => {
  const r = await crash('SIGUSR2', 'a');
  t.equal(r.code, 1);
  t.equal(r.stderr, '');
  for (const line of r.lines) t.doesNotThrow(() => JSON.parse(line), 'every line is JSON');
  t.match(r.last, { level: 60, msg: 'uncaught exception', origin: 'uncaughtException', err: { message: 'forced crash for the test' } });
});

t.test('an unhandled promise rejection: one fatal JSON line that says so, exit 1', async (t) => {
  const r = await crash('SIGWINCH', 'b');
  t.equal(r.code, 1);
  t.equal(r.stderr, '');
  t.match(r.last, {
    level: 60,
    msg: 'unhandled promise rejection',
    origin: 'unhandledRejection',
    err: { message: 'forced rejection for the test' },
  });
});
