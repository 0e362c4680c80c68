// Reading a JSON body: size-limited, depth-limited, strictly UTF-8, with answers that say what was
// wrong. Any content type but multipart is read as JSON: `curl -d '{...}'` sends a form content
// type by default, and refusing it would only teach the caller a header. (The REST surface holds
// to its contract and checks the content type first: core/surfaces/rest/router.ts.)
import getRawBody from 'raw-body';
import type { Context } from 'koa';
import { BadArguments, PayloadTooLarge } from '../../contract/errors.ts';
import { jsonDepth } from '../../kernel/limits.ts';
import { malformation, onMalformed } from './client-errors.ts';

export interface BodyLimits {
  requestBytes: number;
  jsonDepth: number;
}

/** undefined when there is no body at all. */
export async function readJsonBody(ctx: Context, limits: BodyLimits): Promise<unknown> {
  const type = ctx.get('content-type');
  if (/^multipart\//i.test(type))
    throw new BadArguments('multipart bodies are not accepted here; send a JSON object', [{ path: '(body)', message: 'must be JSON' }]);
  const declared = ctx.get('content-length');
  if (declared && Number(declared) > limits.requestBytes) throw tooBig(Number(declared), limits.requestBytes);
  // The HTTP parser may give up inside the body (a bad chunk size, a body shorter than its
  // Content-Length): before the read, or during it (client-errors.ts tells), that is a bad request.
  const refused = (why: string) => new BadArguments(`could not read the body: ${why}`);
  const already = malformation(ctx.req);
  if (already) throw refused(already.reason);
  let stop = () => {};
  const cut = new Promise<never>((_, reject) => {
    stop = onMalformed(ctx.req, (why) => reject(refused(why)));
  });
  // Bytes, not text: raw-body's decoding would turn invalid UTF-8 into U+FFFD, and store it.
  const reading = getRawBody(ctx.req, { limit: limits.requestBytes, ...(declared ? { length: declared } : {}) });
  let bytes: Buffer;
  try {
    bytes = await Promise.race([reading, cut]);
  } catch (err) {
    if (err instanceof BadArguments) throw err;
    const e = err as { type?: string; length?: number; received?: number };
    if (e.type === 'entity.too.large') throw tooBig(e.length ?? e.received ?? limits.requestBytes + 1, limits.requestBytes);
    throw new BadArguments(`could not read the body: ${(err as Error).message}`);
  } finally {
    stop();
    // Refused mid-read, the read fails when the connection closes after the answer: nobody waits for it.
    reading.catch(() => {});
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new BadArguments('the body is not valid UTF-8; send JSON encoded as UTF-8');
  }
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const msg = err instanceof RangeError ? 'nested too deeply' : (err as Error).message;
    throw new BadArguments(`the body is not valid JSON: ${msg}`, [{ path: '(body)', message: 'is not valid JSON' }]);
  }
  const depth = jsonDepth(value, limits.jsonDepth);
  if (depth > limits.jsonDepth)
    throw new BadArguments(`the body is nested more than ${limits.jsonDepth} levels deep`, [
      { path: '(body)', message: `nested deeper than ${limits.jsonDepth}` },
    ]);
  return value;
}

function tooBig(size: number, limit: number): PayloadTooLarge {
  return new PayloadTooLarge(
    `the request body is ${size} bytes; the most this server accepts is ${limit} bytes. Send less: split the content over several calls (for example create, then append).`,
  );
}
