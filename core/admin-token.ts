// `npm run admin-token`: a new API token for the first admin (admin@localhost), or for the user of
// `--email` (the first admin too, once their address was changed), printed once: the way back in
// when the token printed at first start is lost. It needs
// what the server needs (DATABASE_URL, or the embedded database under DATA_DIR), so only whoever
// runs the server can use it. On the embedded database stop the server first: the embedded engine
// belongs to one process at a time. Nothing else changes: the old tokens stay as they were (revoke
// a lost one with the new token: folio tokens revoke, or DELETE /api/v1/tokens/{id}).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './kernel/config.ts';
import { openDatabase } from './db/database.ts';
import { DATABASE_SCHEMA } from './domains.ts';
import { createLogger } from './app.ts';
import { IdentityService } from './domain/identity/service.ts';
import { BOOTSTRAP_ADMIN_EMAIL } from './domain/identity/bootstrap.ts';

const fail = (message: string, code = 1): never => {
  process.stderr.write(`folio admin-token: ${message}\n`);
  process.exit(code);
};

let args;
try {
  args = parseArgs({ options: { email: { type: 'string' }, name: { type: 'string' } }, allowPositionals: false });
} catch (err) {
  fail(`${(err as Error).message}. Usage: npm run admin-token [-- --email <user's email>] [--name <token name>]`, 2);
}
let config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) fail(err.message, 2);
  throw err;
}
const log = createLogger(process.env['LOG_LEVEL'] ? config : { ...config, logLevel: 'warn' as typeof config.logLevel }).child({
  process: 'admin-token',
});
const where = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `the embedded database in ${config.dataDir}`;
// A DATA_DIR with no database in it is a mistake (a wrong path), not one to make a database in.
if (!config.databaseUrl && !existsSync(path.join(config.dataDir, 'pglite')))
  fail(`there is no embedded database in ${config.dataDir} (has the server started once with this DATA_DIR?)`);
const db = await openDatabase({
  schema: DATABASE_SCHEMA,
  databaseUrl: config.databaseUrl ?? undefined,
  dataDir: config.dataDir,
  log,
}).catch((err: unknown) =>
  fail(
    `cannot open ${where}: ${err instanceof Error ? err.message : String(err)}` +
      (config.databaseUrl ? '' : '\n(on the embedded database, stop the server first)'),
  ),
);
// From here on the database is open: every way out goes through its close (an exit skipping it
// would stop the embedded engine without writing it out).
try {
  const identity = new IdentityService(db);
  const email = args?.values.email ?? BOOTSTRAP_ADMIN_EMAIL;
  const user = await identity.findUserByEmail(email);
  if (!user) {
    const hint = args?.values.email ? '' : ` (if the first admin's email was changed, pass it: -- --email <their email>)`;
    process.stderr.write(`folio admin-token: no user ${email} in ${where}${hint}\n`);
    process.exitCode = 1;
  } else if (user.disabled) {
    process.stderr.write(`folio admin-token: ${email} is deactivated: a token would not open anything (reactivate the account first)\n`);
    process.exitCode = 1;
  } else {
    const { token } = await identity.createApiToken(user.id, { name: args?.values.name ?? 'recovery', scopes: ['*'] });
    log.info({ userId: user.id }, 'a new API token was made with npm run admin-token');
    process.stdout.write(
      `A new API token for ${user.email}${user.roles.includes('admin') ? ' (admin)' : ''} (shown once; keep it safe):\n\n  ${token}\n\n`,
    );
  }
} catch (err) {
  process.stderr.write(`folio admin-token: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
} finally {
  await db.close();
}
