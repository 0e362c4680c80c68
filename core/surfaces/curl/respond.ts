// The one place the curl surface turns typed outcomes into HTTP: status + text/plain. The wording
// lives in `errorAnswer`, which the MCP surface also uses for its isError results, so an MCP client
// reads the same text a curl caller does.
import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { AuthError } from '../../kernel/auth.ts';
import {
  Aborted,
  BadArguments,
  Conflict,
  FolioError,
  Forbidden,
  FunctionFailed,
  NotFound,
  PayloadTooLarge,
  TooLarge,
  Unauthenticated,
} from '../../kernel/errors.ts';

export function sendText(ctx: Context, status: number, text: string): void {
  ctx.status = status;
  ctx.type = 'text/plain; charset=utf-8';
  ctx.body = text.endsWith('\n') ? text : `${text}\n`;
}

/** An outcome as the curl surface words it. `aborted`: the caller is gone, nothing to say. */
export interface ErrorAnswer {
  status: number;
  text: string;
  headers: Record<string, string>;
  aborted?: true;
}

/** Any error -> status, text and headers. Unknown errors become 500 + an error id (logged). */
export function errorAnswer(err: unknown, log: Logger): ErrorAnswer {
  const plain = (status: number, text: string, headers: Record<string, string> = {}): ErrorAnswer => ({ status, text, headers });
  if (err instanceof Unauthenticated) {
    const attr = err instanceof AuthError && err.bearerError ? `, error="${err.bearerError}"` : '';
    return plain(401, `401 Unauthorized: ${err.message}`, { 'WWW-Authenticate': `Bearer realm="folio"${attr}` });
  }
  if (err instanceof Forbidden) return plain(403, `403 Forbidden: ${err.message}`);
  if (err instanceof NotFound) return plain(404, `404 Not Found: ${err.message}`);
  if (err instanceof BadArguments) {
    const lines = [`400 Bad Request: ${err.message}`];
    for (const p of err.problems) lines.push(`  - ${p.path}: ${p.message}`);
    if (err.signature) lines.push('', `signature: ${err.signature}`);
    if (err.help) lines.push(`help: GET ${err.help}`);
    return plain(400, lines.join('\n'));
  }
  if (err instanceof Conflict) {
    const lines = [`409 Conflict: ${err.message}`];
    if (err.current !== undefined) lines.push('', 'current:', JSON.stringify(err.current, null, 2));
    return plain(409, lines.join('\n'));
  }
  if (err instanceof TooLarge)
    return plain(413, `413 Content Too Large: ${err.message}`, { 'X-Folio-Size': String(err.size), 'X-Folio-Ceiling': String(err.limit) });
  if (err instanceof PayloadTooLarge) return plain(413, `413 Content Too Large: ${err.message}`);
  if (err instanceof FunctionFailed)
    return plain(
      500,
      `500 Internal Server Error: ${err.message}. error id: ${err.errorId} (quote it when you report this; the details are in the server log)`,
    );
  // The client is gone; nobody reads this, but keep the log honest.
  if (err instanceof Aborted) return { status: 499, text: '', headers: {}, aborted: true };
  if (err instanceof FolioError) return plain(400, `400 Bad Request: ${err.message}`);
  const errorId = randomUUID();
  log.error({ errorId, err }, 'unexpected error');
  return plain(500, `500 Internal Server Error: something failed on the server. error id: ${errorId} (quote it when you report this)`);
}

/** Maps any error to the curl surface's status and text. Unknown errors become 500 + error id. */
export function sendError(ctx: Context, err: unknown, log: Logger): void {
  const answer = errorAnswer(err, log);
  for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
  if (answer.aborted) {
    ctx.status = answer.status;
    ctx.body = '';
    return;
  }
  sendText(ctx, answer.status, answer.text);
}
