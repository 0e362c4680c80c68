// The one place the curl surface turns typed outcomes into HTTP: status + text/plain.
import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { AuthError } from '../../kernel/auth.ts';
import { Aborted, BadArguments, Conflict, FolioError, Forbidden, FunctionFailed, NotFound, PayloadTooLarge, TooLarge, Unauthenticated } from '../../kernel/errors.ts';

export function sendText(ctx: Context, status: number, text: string): void {
  ctx.status = status;
  ctx.type = 'text/plain; charset=utf-8';
  ctx.body = text.endsWith('\n') ? text : `${text}\n`;
}

/** Maps any error to the curl surface's status and text. Unknown errors become 500 + error id. */
export function sendError(ctx: Context, err: unknown, log: Logger): void {
  if (err instanceof Unauthenticated) {
    const attr = err instanceof AuthError && err.bearerError ? `, error="${err.bearerError}"` : '';
    ctx.set('WWW-Authenticate', `Bearer realm="folio"${attr}`);
    return sendText(ctx, 401, `401 Unauthorized: ${err.message}`);
  }
  if (err instanceof Forbidden) return sendText(ctx, 403, `403 Forbidden: ${err.message}`);
  if (err instanceof NotFound) return sendText(ctx, 404, `404 Not Found: ${err.message}`);
  if (err instanceof BadArguments) {
    const lines = [`400 Bad Request: ${err.message}`];
    for (const p of err.problems) lines.push(`  - ${p.path}: ${p.message}`);
    if (err.signature) lines.push('', `signature: ${err.signature}`);
    if (err.help) lines.push(`help: GET ${err.help}`);
    return sendText(ctx, 400, lines.join('\n'));
  }
  if (err instanceof Conflict) {
    const lines = [`409 Conflict: ${err.message}`];
    if (err.current !== undefined) lines.push('', 'current:', JSON.stringify(err.current, null, 2));
    return sendText(ctx, 409, lines.join('\n'));
  }
  if (err instanceof TooLarge) {
    ctx.set('X-Folio-Size', String(err.size));
    ctx.set('X-Folio-Ceiling', String(err.limit));
    return sendText(ctx, 413, `413 Content Too Large: ${err.message}`);
  }
  if (err instanceof PayloadTooLarge) return sendText(ctx, 413, `413 Content Too Large: ${err.message}`);
  if (err instanceof FunctionFailed) {
    return sendText(ctx, 500, `500 Internal Server Error: ${err.message}. error id: ${err.errorId} (quote it when you report this; the details are in the server log)`);
  }
  if (err instanceof Aborted) {
    // The client is gone; nobody reads this, but keep the log honest.
    ctx.status = 499;
    ctx.body = '';
    return;
  }
  if (err instanceof FolioError) return sendText(ctx, 400, `400 Bad Request: ${err.message}`);
  const errorId = randomUUID();
  log.error({ errorId, err }, 'unexpected error');
  sendText(ctx, 500, `500 Internal Server Error: something failed on the server. error id: ${errorId} (quote it when you report this)`);
}
