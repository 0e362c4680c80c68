import t from 'tap';
import path from 'node:path';
import { loadConfig, ConfigError } from '../../core/kernel/config.ts';

t.test('defaults load and resolve directories', async (t) => {
  const c = loadConfig({ env: {} });
  t.equal(c.port, 3000);
  t.equal(c.databaseUrl, null);
  t.ok(c.dataDir.startsWith('/'));
  // Folio's own plugins first, then the folder a user drops theirs into.
  t.same(
    c.pluginsDir.map((d) => d.split('/').slice(-2).join('/')),
    ['plugins/@folio', path.basename(path.resolve('.')) + '/plugins'],
  );
});

t.test('environment variables override, lists split on colons', async (t) => {
  const c = loadConfig({ env: { PORT: '8080', PLUGINS_DIR: '/a:/b', DATABASE_URL: 'postgres://x@h/db', RELOAD_WATCH: 'false' } });
  t.equal(c.port, 8080);
  t.same(c.pluginsDir, ['/a', '/b']);
  t.equal(c.databaseUrl, 'postgres://x@h/db');
  t.equal(c.reload.watch, false);
});

t.test('bad values stop the start, naming the variable', async (t) => {
  t.throws(() => loadConfig({ env: { PORT: 'x' } }), { message: /port \(from PORT\)/ });
  t.throws(() => loadConfig({ env: { PORT: '70000' } }), ConfigError);
  t.throws(() => loadConfig({ env: { BOOTSTRAP_ADMIN_TOKEN: 'short' } }), { message: /bootstrapAdminToken/ });
  t.throws(() => loadConfig({ env: {}, overrides: { limits: { typo: 1 } } }), { message: /limits/ });
  t.throws(() => loadConfig({ env: { RESPONSE_MAX_BYTES: '99999999999' } }), { message: /responseBytes/ });
});
