// Lints the two OpenAPI documents Folio serves (/api/v1/openapi.json and /curl/openapi.json) with
// Redocly CLI and its recommended rules (redocly.yaml), and exits with its status: non-zero on any
// error. Both documents are made in-process from the same code the server serves them from (the
// REST one from the route tables, as cli/codegen.ts does; only `info.version` differs): no
// server, no database, no network.
//   npx node test/openapi-lint.ts
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { restDocument } from '../cli/codegen.ts';
import { PACKAGE_ROOT } from '../core/kernel/config.ts';
import { curlOpenApi } from '../core/surfaces/curl/openapi.ts';

const dir = await mkdtemp(path.join(tmpdir(), 'folio-openapi-'));
const files: string[] = [];
for (const [name, doc] of [
  ['rest-api.openapi.json', restDocument()],
  ['curl-surface.openapi.json', curlOpenApi('0.0.0')],
] as const) {
  // Indented, so that the lint's line numbers point somewhere readable.
  const file = path.join(dir, name);
  await writeFile(file, JSON.stringify(doc, null, 2));
  files.push(file);
}

const cli = path.join(PACKAGE_ROOT, 'node_modules/@redocly/cli/bin/cli.js');
const code = await new Promise<number>((resolve, reject) => {
  const child = spawn(
    process.execPath,
    [cli, 'lint', '--config', path.join(PACKAGE_ROOT, 'redocly.yaml'), '--format', 'stylish', ...files],
    {
      stdio: 'inherit',
      // No usage report, no update check: the lint runs offline.
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    },
  );
  child.on('error', reject);
  child.on('exit', (c) => resolve(c ?? 1));
});
await rm(dir, { recursive: true, force: true });
process.exit(code);
