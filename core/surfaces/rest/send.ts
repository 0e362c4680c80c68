// A handler's Reply onto the Koa response: JSON, nothing (204, 304), or a stream pulled as the
// client reads it (a download never sits in memory).
import { Readable } from 'node:stream';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { WRITE_TO, writesItself, type Reply } from '../../contract/rest.ts';
import { isClientGone } from '../http/client-errors.ts';

export async function send(ctx: Context, reply: Reply, log: Logger): Promise<void> {
  for (const [name, value] of Object.entries(reply.headers ?? {})) ctx.set(name, value);
  if (writesItself(reply.stream) && !reply.trailers) {
    // A stored file writes itself to the response (reusing its buffers) and ends it. Koa stays out.
    ctx.status = reply.status;
    ctx.respond = false;
    try {
      await reply.stream[WRITE_TO](ctx.res);
    } catch (err) {
      // Headers are gone: the response was cut (the connection is destroyed), the client sees a short body.
      if (isClientGone(err)) log.debug({ err: { message: (err as Error).message } }, 'client gone mid-download');
      else log.error({ err }, 'stream failed after the response started');
    }
    return;
  }
  if (reply.stream instanceof Readable && !reply.trailers) {
    // A Node stream (a file's bytes) is piped as it is: no per-chunk hop through an async iterator.
    // Its errors after the headers cut the connection (Koa's stream error handling).
    const stream = reply.stream;
    stream.once('error', (err) => log.error({ err }, 'stream failed after the response started'));
    ctx.status = reply.status;
    ctx.body = stream;
    return;
  }
  if (reply.stream) {
    // Pull the first chunk before the status goes out: an error raised on it is still a problem answer.
    const it = reply.stream[Symbol.asyncIterator]();
    const first = await it.next();
    ctx.status = reply.status;
    const res = ctx.res;
    ctx.body = Readable.from(
      (async function* () {
        let finished = first.done === true;
        try {
          if (!first.done) yield first.value;
          for (let n = await it.next(); !n.done; n = await it.next()) yield n.value;
          finished = true;
          if (reply.trailers) res.addTrailers(await reply.trailers());
        } catch (err) {
          // Headers are gone: cut the connection so the client sees a truncated response, not a short one.
          log.error({ err }, 'stream failed after the response started');
          res.socket?.destroy();
        } finally {
          if (!finished) await it.return?.();
        }
      })(),
      { objectMode: false },
    );
    return;
  }
  ctx.status = reply.status;
  if (reply.status === 204 || reply.status === 304) return;
  ctx.body = reply.body ?? null;
}
