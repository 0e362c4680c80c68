// The service's first run as a person sees it in a terminal: readable log lines (not JSON) when
// stdout is a terminal (JSON lines when LOG_FORMAT=json asks, or when it is not one: the other
// tests that start the process read those), and the admin token banner last, after start-up's own
// lines, with the next command to run. The terminal is a real pseudo-terminal (util-linux `script`).
import t from 'tap';
import { spawn, execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { logFormat } from '../../core/app.ts';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';

t.test('the log format: LOG_FORMAT, else readable on a terminal and JSON lines elsewhere', async (t) => {
  t.equal(logFormat('auto', true), 'pretty');
  t.equal(logFormat('auto', false), 'json');
  t.equal(logFormat('json', true), 'json');
  t.equal(logFormat('pretty', false), 'pretty');
});

const hasScript = await promisify(execFile)('script', ['--version']).then(
  () => true,
  () => false,
);

// eslint-disable-next-line no-control-regex -- the terminal's colour codes are what is stripped
const STRIP = /\x1b\[[0-9;]*m|\r/g;

/** `node core/main.ts` on a fresh data dir, its stdout a pseudo-terminal; stopped (SIGTERM) once `until` shows. */
async function firstStart(env: Record<string, string>, until: RegExp): Promise<string> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'folio-first-run-'));
  try {
    const command = `exec ${JSON.stringify(process.execPath)} core/main.ts`;
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      cwd: PACKAGE_ROOT,
      env: { PATH: process.env['PATH'] ?? '', HOME: dataDir, PORT: '0', DATA_DIR: dataDir, TERM: 'xterm', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let stopped = false;
    const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
    const onData = (d: Buffer) => {
      out += d.toString();
      if (!stopped && until.test(out.replace(STRIP, ''))) {
        stopped = true;
        // A person reads the banner for a moment before stopping: whatever start-up logs in that
        // time lands before the marker, where the test looks for it.
        setTimeout(() => {
          out += '\n@@SIGTERM\n';
          child.stdin.write('\x03'); // Ctrl-C on the terminal: SIGINT, as a person stops it
        }, 2000);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    await closed;
    clearTimeout(timer);
    return out.replace(STRIP, '');
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

const BANNER_END = /curl -H "Authorization: Bearer \$FOLIO_TOKEN" \$FOLIO\/curl\/whoami\n/;

t.test(
  'on a terminal: readable lines, and the token banner last with the next command',
  { skip: !hasScript && 'needs script (util-linux)' },
  async (t) => {
    const out = await firstStart({}, BANNER_END);
    const [before = '', after = ''] = out.split('First start: created the admin user admin@localhost.');
    t.notMatch(out, /^\{"level"/m, 'no JSON lines');
    t.match(before, /^\[\d\d:\d\d:\d\d\] INFO: folio listening$/m, 'a readable line: time, level, message');
    t.match(before, /^ {4}url: "http:\/\/127\.0\.0\.1:\d+"$/m, 'with its fields below it');
    t.match(after, /folio_api_[A-Za-z0-9]+/, 'the token');
    t.match(after, /export FOLIO=http:\/\/127\.0\.0\.1:\d+ FOLIO_TOKEN=folio_api_/, 'the next command');
    const tail = after.split(BANNER_END)[1] ?? '';
    t.match(tail, /^\s*(\^C)?\s*@@SIGTERM/, 'nothing logged after the banner until it was stopped');
    t.match(tail, /INFO: stopping/, 'then it stops as asked');
  },
);
