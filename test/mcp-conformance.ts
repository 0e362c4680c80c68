// Runs the official MCP conformance suite (@modelcontextprotocol/conformance, server scenarios)
// against Folio's /mcp. Starts Folio in this process on a temporary data dir (embedded PGlite, or a
// fresh database when DATABASE_URL is set) with the conformance fixture plugin, then runs the
// suite with the scenarios Folio cannot serve as its expected-failure baseline. Exits non-zero on
// any unexpected failure, and also when a skipped scenario starts passing (a stale skip list).
//
//   npx node test/mcp-conformance.ts              every active server scenario
//   npx node test/mcp-conformance.ts tools-list   one scenario
//   npx node test/mcp-conformance.ts --stateless [scenario]   the same with mcp.mode stateless
//
// Between the suite and Folio sits a loopback proxy, for two things the suite cannot do: send an
// Authorization header (it adds a user's bearer token), and call tools by Folio's names (it renames
// test_X to conformance__X in tools/call and prompts/get). Everything else, Host and Origin included, passes as is.
import http from 'node:http';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { startFolio } from '../core/app.ts';
import { loadConfig, PACKAGE_ROOT } from '../core/kernel/config.ts';
import { fresh } from './helpers/server.ts';

/** Scenarios Folio does not pass, and why. Keep in step with the table in docs/mcp.md. */
export const SKIPPED: Record<string, string> = {
  'tools-call-mixed-content': 'A Folio function returns one value, so a result has one content item.',
  'tools-call-with-logging': 'Handlers log to the server log (ctx.log); it is not forwarded to MCP clients (see docs/mcp.md).',
  'tools-call-sampling': 'The plugin SDK has no server-to-client requests (sampling).',
  'tools-call-elicitation': 'The plugin SDK has no server-to-client requests (elicitation).',
  'elicitation-sep1034-defaults': 'The plugin SDK has no server-to-client requests (elicitation).',
  'elicitation-sep1330-enums': 'The plugin SDK has no server-to-client requests (elicitation).',
  'json-schema-2020-12': "The kernel compiles args with Ajv's draft-07 class: a plugin declaring $schema 2020-12 does not load.",
  'server-sse-polling': 'Needs a tool that closes its own SSE stream mid-call (plugins have no way to); resumption itself works.',
  'resources-read-text': "Reads the suite's fixed test:// resources; Folio's resources are skill guides (skill://...).",
  'resources-read-binary': "Reads the suite's fixed test:// resources; Folio's resources are skill guides (skill://...).",
  'resources-templates-read': "Reads the suite's fixed test:// template; Folio's template is skill://{namespace}/{name}.",
  'resources-subscribe': 'No resource subscriptions (guides change by reload; list_changed covers that).',
  'resources-unsubscribe': 'No resource subscriptions.',
  'prompts-get-embedded-resource': 'A Folio prompt renders one text message (no embedded resources).',
  'prompts-get-with-image': 'A Folio prompt renders one text message (no images).',
};

/** Scenarios that do not apply to stateless mode, on top of SKIPPED, and why. Also in docs/mcp.md. */
export const SKIPPED_STATELESS: Record<string, string> = {
  'server-sse-multiple-streams':
    'It opens several POST streams on one session and stops at the first step without a session id; stateless mode issues none (each POST stands alone). Concurrent POSTs each answered on their own stream are what stateless mode always does.',
};

const ADMIN_TOKEN = 'conformance-bootstrap-admin-token-0123456789abcdef';
const SUITE = path.join(PACKAGE_ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const FIXTURE_PLUGINS = path.join(PACKAGE_ROOT, 'test/fixtures/plugins/mcp/conformance');

/** Forwards to Folio, adding the bearer token and renaming the suite's fixed tool names. */
function startProxy(target: URL, token: string): Promise<http.Server> {
  const proxy = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body = Buffer.concat(chunks);
      if (body.length > 0 && /json/.test(req.headers['content-type'] ?? '')) {
        try {
          const renamed = JSON.stringify(JSON.parse(body.toString('utf8')), (key, value: unknown) =>
            key === 'name' && typeof value === 'string' && /^test_[a-z0-9_]+$/.test(value) ? `conformance__${value.slice(5)}` : value,
          );
          body = Buffer.from(renamed, 'utf8');
        } catch {
          // Not JSON: pass it on as it is, Folio answers it.
        }
      }
      const headers = { ...req.headers, authorization: req.headers.authorization ?? `Bearer ${token}` };
      if (body.length > 0) headers['content-length'] = String(body.length);
      const up = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers }, (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      });
      up.on('error', () => res.destroy());
      res.on('close', () => up.destroy());
      up.end(body);
    });
  });
  return new Promise((resolve) => proxy.listen(0, '127.0.0.1', () => resolve(proxy)));
}

export async function runConformance(scenario?: string, mode: 'stateful' | 'stateless' = 'stateful'): Promise<number> {
  const skipped = mode === 'stateless' ? { ...SKIPPED, ...SKIPPED_STATELESS } : SKIPPED;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'folio-conformance-'));
  const db = process.env['DATABASE_URL'] ? await fresh(process.env['DATABASE_URL']) : undefined;
  const folio = await startFolio(
    loadConfig({
      // The fixture plugin lives outside ./plugins, so it runs isolated (the default for
      // third-party plugins): its tools and prompts are served across the worker boundary.
      overrides: {
        port: 0,
        host: '127.0.0.1',
        dataDir,
        databaseUrl: db?.url ?? null,
        pluginsDir: [path.join(PACKAGE_ROOT, 'plugins', '@folio'), FIXTURE_PLUGINS],
        skillsDir: [path.join(PACKAGE_ROOT, 'skills')],
        bootstrapAdminToken: ADMIN_TOKEN,
        logLevel: 'silent',
        reload: { watch: false, debounceMs: 50 },
        mcp: { mode, allowedOrigins: [], allowedHosts: [] },
      },
    }),
    pino({ level: process.env['LOG_LEVEL'] ?? 'silent' }),
  );
  let proxy: http.Server | undefined;
  try {
    const made = await fetch(`${folio.url}/curl/call/admin/create_user`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'conformance@example.com' }),
    });
    if (!made.ok) throw new Error(`create_user: ${made.status} ${await made.text()}`);
    const { token } = (await made.json()) as { token: string };
    proxy = await startProxy(new URL(folio.url), token);
    const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
    const baseline = path.join(dataDir, 'expected-failures.yml');
    await writeFile(
      baseline,
      `server:\n${Object.keys(skipped)
        .map((s) => `  - ${s}\n`)
        .join('')}`,
    );
    const args = [SUITE, 'server', '--url', url, '-o', path.join(dataDir, 'results')];
    if (scenario) args.push('--scenario', scenario);
    if (!scenario || scenario in skipped) args.push('--expected-failures', baseline);
    console.error(`[conformance] Folio (${mode}) at ${folio.url}, suite against ${url}`);
    return await new Promise<number>((resolve, reject) => {
      const child = spawn(process.execPath, args, { stdio: 'inherit', cwd: dataDir });
      child.on('error', reject);
      child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    });
  } finally {
    await new Promise<void>((r) => (proxy ? proxy.close(() => r()) : r()));
    proxy?.closeAllConnections();
    await folio.close();
    await db?.drop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const started = Date.now();
  const stateless = process.argv.includes('--stateless');
  const code = await runConformance(
    process.argv.slice(2).find((a) => !a.startsWith('--')),
    stateless ? 'stateless' : 'stateful',
  );
  console.error(`[conformance] ${code === 0 ? 'passed' : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.exit(code);
}
