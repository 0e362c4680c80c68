// Folio as its own process (`node core/main.ts`), for tests that kill it: started with only the
// given environment, resolved once it logs that it listens; kill9 is a crash, not a shutdown.
import { spawn, type ChildProcess } from 'node:child_process';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';

export interface FolioProcess {
  child: ChildProcess;
  url: string;
}

const compileCache: Record<string, string> = process.env['NODE_COMPILE_CACHE']
  ? { NODE_COMPILE_CACHE: process.env['NODE_COMPILE_CACHE'] }
  : {};

/** `nodeArgs`: options for node itself, before the script (e.g. `--import` of a test hook). */
export async function startProcess(env: Record<string, string>, nodeArgs: string[] = []): Promise<FolioProcess> {
  const child = spawn(process.execPath, [...nodeArgs, 'core/main.ts'], {
    cwd: PACKAGE_ROOT,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', PORT: '0', LOG_LEVEL: 'info', ...compileCache, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /"url":"(http:\/\/[^"]+)".*"msg":"folio listening"/.exec(out);
      if (m) resolve(m[1]!);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('close', (code) => reject(new Error(`exited with ${code} before listening:\n${out}`)));
  });
  return { child, url };
}

export async function kill9(p: FolioProcess): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  const closed = new Promise((resolve) => p.child.once('close', resolve));
  p.child.kill('SIGKILL');
  await closed;
}
