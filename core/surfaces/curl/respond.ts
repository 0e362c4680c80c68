// The one place the curl surface turns typed outcomes into HTTP: status + text/plain, worded by
// core/surfaces/http/error-text.ts (the MCP surface words its isError results the same way).
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { callersOwn } from '../../contract/errors.ts';
import { errorAnswer } from '../http/error-text.ts';
import { markCallersOutcome } from '../http/request-log.ts';

/**
 * On every bytes answer (a download): whatever its type, a browser neither guesses another one nor
 * runs it as a page on Folio's origin. The same as the REST download's (core/domain/files/rest/download.ts).
 */
export const DOWNLOAD_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "default-src 'none'; sandbox",
};

export function sendText(ctx: Context, status: number, text: string): void {
  ctx.status = status;
  ctx.type = 'text/plain; charset=utf-8';
  ctx.body = text.endsWith('\n') ? text : `${text}\n`;
}

/** Maps any error to the curl surface's status and text. Unknown errors become 500 + error id. */
export function sendError(ctx: Context, err: unknown, log: Logger): void {
  const answer = errorAnswer(err, log);
  if (callersOwn(err)) markCallersOutcome(ctx.res);
  for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
  if (answer.aborted) {
    ctx.status = answer.status;
    ctx.body = '';
    return;
  }
  sendText(ctx, answer.status, answer.text);
}
