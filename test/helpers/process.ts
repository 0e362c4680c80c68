// Folio's own scripts as their own processes, with only the given environment (plus PATH and HOME):
// startProcess starts the server (`node core/main.ts`) and resolves once it logs that it listens;
// stopProcess is a shutdown (SIGTERM), kill9 a crash; runScript runs a script to its end (the
// server that cannot start, `npm run admin-token`) and gives its exit code and output.
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

/** The server's graceful shutdown (SIGTERM), resolved once it has exited. */
export async function stopProcess(p: FolioProcess): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  const closed = new Promise((resolve) => p.child.once('close', resolve));
  p.child.kill('SIGTERM');
  await closed;
}

export interface ScriptRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node <script> ...args` from the package root to its end; killed (code null) after `timeoutMs`. */
export function runScript(script: string, args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<ScriptRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd: PACKAGE_ROOT,
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...compileCache, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export async function kill9(p: FolioProcess): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  const closed = new Promise((resolve) => p.child.once('close', resolve));
  p.child.kill('SIGKILL');
  await closed;
}
