// Runs the command-line client as a user would: `folio ...args` in its own process, with only the
// given environment (plus PATH and a private config dir under `home`), stdin from `input`.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../core/kernel/config.ts';

export const FOLIO_BIN = path.join(PACKAGE_ROOT, 'cli/folio.ts');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runFolio(
  home: string,
  args: string[],
  opts: { env?: Record<string, string | undefined>; input?: string; cwd?: string } = {},
): Promise<CliRun> {
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '',
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, 'config'),
    NO_COLOR: '1',
  };
  if (process.env['NODE_COMPILE_CACHE']) env['NODE_COMPILE_CACHE'] = process.env['NODE_COMPILE_CACHE'];
  for (const [k, v] of Object.entries(opts.env ?? {})) if (v !== undefined) env[k] = v;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FOLIO_BIN, ...args], {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(opts.cwd ? { cwd: opts.cwd } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}
