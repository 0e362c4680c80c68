// Why `npm start` could not start, in one line a person can act on, for the failures an operator
// meets first: the database named in DATABASE_URL missing, unreachable or refusing the login, the
// port taken, the data directory not writable. The fatal log line keeps the whole error.

interface ErrorLike {
  code?: unknown;
  message?: unknown;
  address?: unknown;
  port?: unknown;
  path?: unknown;
  syscall?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/** The error and its causes (Error.cause, AggregateError.errors), outermost first. */
function chain(err: unknown): ErrorLike[] {
  const out: ErrorLike[] = [];
  const queue: unknown[] = [err];
  while (queue.length > 0 && out.length < 10) {
    const e = queue.shift();
    if (typeof e !== 'object' || e === null) continue;
    const x = e as ErrorLike;
    out.push(x);
    if (x.cause !== undefined) queue.push(x.cause);
    if (Array.isArray(x.errors)) queue.push(...(x.errors as unknown[]));
  }
  return out;
}

/** Where DATABASE_URL points, without its password. */
function where(databaseUrl: string | null): { db: string; at: string } {
  if (!databaseUrl) return { db: '', at: 'the database server' };
  try {
    const u = new URL(databaseUrl);
    return { db: decodeURIComponent(u.pathname.replace(/^\//, '')), at: `${u.hostname}:${u.port || '5432'}` };
  } catch {
    return { db: '', at: 'the database server' };
  }
}

/** One line saying what stopped the start and what to do, or undefined when it is none of the known causes. */
export function startFailureHint(err: unknown, opts: { databaseUrl: string | null; port: number; dataDir: string }): string | undefined {
  const { db, at } = where(opts.databaseUrl);
  for (const e of chain(err)) {
    const code = typeof e.code === 'string' ? e.code : '';
    if (opts.databaseUrl && code === '3D000')
      return `the database ${db ? `"${db}" ` : ''}does not exist on ${at}. Create it (createdb ${db || '<name>'}, or CREATE DATABASE in psql) or point DATABASE_URL at one that exists.`;
    if (opts.databaseUrl && (code === '28P01' || code === '28000'))
      return `${at} refused the login in DATABASE_URL (${typeof e.message === 'string' ? e.message : 'authentication failed'}). Check the user and password in it.`;
    if (opts.databaseUrl && (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ETIMEDOUT'))
      return `no PostgreSQL answers at ${at} (${code}). Start it, or fix DATABASE_URL; without DATABASE_URL Folio uses its embedded database.`;
    if (code === 'EADDRINUSE')
      return `port ${typeof e.port === 'number' ? e.port : opts.port} is in use by another program. Stop it, or start Folio on another port (PORT=3001 npm start).`;
    if ((code === 'EACCES' || code === 'EPERM') && e.syscall === 'listen')
      return `this user may not listen on port ${typeof e.port === 'number' ? e.port : opts.port} (${code}; ports below 1024 need privileges). Start Folio on a port above 1023 (PORT=3000 npm start) and put a reverse proxy in front if it must answer on this one.`;
    if ((code === 'EACCES' || code === 'EROFS') && typeof e.path === 'string')
      return `cannot write ${e.path} (${code}). Give this user write access to the data directory (${opts.dataDir}), or set DATA_DIR to one it can write.`;
  }
  return undefined;
}
