// What the server holds from its start: the parts only some requests need are loaded by the first
// of them, not at start (every module the main thread holds is marked by each of its garbage
// collections, and a large upload makes many: bench/README (f)). Folio runs as its own process on
// its embedded database, with a hook that lists the npm packages its main thread loads.
import t from 'tap';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { kill9, startProcess } from '../helpers/process.ts';

const LOADED_ON_FIRST_USE = ['pdfkit', 'mammoth', 'unpdf', '@aws-sdk/client-s3', 'oidc-provider', '@tus/server'];
/**
 * Loaded only when asked for: metrics (METRICS_ENABLED), traces (OTEL_TRACES_EXPORTER, through the
 * preload npm start runs). Not @opentelemetry/api: pg-boss loads it whatever Folio does.
 */
const LOADED_ONLY_WHEN_ON = ['prom-client', '@opentelemetry/sdk-node', '@opentelemetry/sdk-trace-base', 'import-in-the-middle'];

t.test('the server starts without the parts only some requests need, and loads them when one comes', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'folio-startup-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const list = path.join(dir, 'packages.txt');
  const hook = path.resolve(import.meta.dirname, '../fixtures/hooks/record-packages.ts');
  const preload = path.resolve(import.meta.dirname, '../../core/tracing.ts');
  const p = await startProcess({ DATA_DIR: path.join(dir, 'data'), FOLIO_TEST_PACKAGES_FILE: list }, [
    '--import',
    hook,
    '--import',
    preload,
  ]);
  t.teardown(() => kill9(p));
  const loaded = async () => new Set((await readFile(list, 'utf8')).split('\n').filter(Boolean));

  const atStart = await loaded();
  t.ok(atStart.has('koa') && atStart.has('@mikro-orm/core'), 'the hook sees what the server loads');
  for (const pkg of LOADED_ON_FIRST_USE) t.notOk(atStart.has(pkg), `${pkg} is not loaded at start`);
  for (const pkg of LOADED_ONLY_WHEN_ON) t.notOk(atStart.has(pkg), `${pkg} is not loaded with metrics and tracing off`);

  // The first OAuth request makes the authorization server.
  const res = await fetch(`${p.url}/.well-known/oauth-authorization-server`);
  t.equal(res.status, 200);
  t.match(await res.json(), { issuer: `${p.url}/oauth` });
  const after = await loaded();
  t.ok(after.has('oidc-provider'), 'oidc-provider is loaded by the first OAuth request');
  for (const pkg of LOADED_ON_FIRST_USE.filter((p) => p !== 'oidc-provider')) t.notOk(after.has(pkg), `${pkg} is still not loaded`);
});
