// Reading a JSON body: size-limited, depth-limited, strictly UTF-8, with answers that say what was
// wrong. Any content type but multipart is read as JSON: `curl -d '{...}'` sends a form content
// type by default, and refusing it would only teach the caller a header. (The REST surface holds
// to its contract and checks the content type first: core/surfaces/rest/router.ts.)
import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';
import { argPath, BadArguments, PayloadTooLarge } from '../../contract/errors.ts';
import { jsonDepth } from '../../kernel/limits.ts';
import { findTextProblem } from '../../contract/text.ts';
import { malformation, onMalformed } from './client-errors.ts';

export interface BodyLimits {
  requestBytes: number;
  jsonDepth: number;
}

/** An escape that may be a NUL or half of a surrogate pair (a pair is fine; findTextProblem tells). */
const MAYBE_UNSTORABLE = /\\u(?:0000|[dD][89a-fA-F])/;

/** Strict: invalid UTF-8 throws (one decoder serves every read: without `stream` each decode starts afresh). */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** undefined when there is no body at all. */
export function readJsonBody(ctx: Context, limits: BodyLimits): Promise<unknown> {
  return readJsonRequest(ctx.req, limits);
}

/** readJsonBody on the bare Node request (for routes served before Koa). */
export async function readJsonRequest(req: IncomingMessage, limits: BodyLimits): Promise<unknown> {
  const type = req.headers['content-type'] ?? '';
  if (/^multipart\//i.test(type))
    throw new BadArguments('multipart bodies are not accepted here; send a JSON object', [{ path: '(body)', message: 'must be JSON' }]);
  const declared = req.headers['content-length'] ?? '';
  if (declared && Number(declared) > limits.requestBytes) throw tooBig(Number(declared), limits.requestBytes);
  // The HTTP parser may give up inside the body (a bad chunk size, a body shorter than its
  // Content-Length): before the read, or during it (client-errors.ts tells), that is a bad request.
  const refused = (why: string) => new BadArguments(`could not read the body: ${why}`);
  const already = malformation(req);
  if (already) throw refused(already.reason);
  let bytes: Buffer;
  try {
    bytes = await readBytes(req, limits.requestBytes, declared, refused);
  } catch (err) {
    if (err instanceof BadArguments) throw err;
    const e = err as { type?: string; length?: number; received?: number };
    if (e.type === 'entity.too.large') throw tooBig(e.length ?? e.received ?? limits.requestBytes + 1, limits.requestBytes);
    throw new BadArguments(`could not read the body: ${(err as Error).message}`);
  }
  let text: string;
  try {
    text = UTF8.decode(bytes);
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
  // Valid UTF-8 JSON can only carry a NUL or a lone surrogate as an escape (\u0000, \udXXX): without
  // one in the text there is nothing to look for, and the walk is skipped.
  const unstorable = MAYBE_UNSTORABLE.test(text) ? findTextProblem(value) : undefined;
  if (unstorable)
    throw new BadArguments(`the body's ${unstorable.path ? argPath(unstorable.path) : 'value'} ${unstorable.message}`, [
      { in: 'body', path: unstorable.path || '(body)', message: unstorable.message },
    ]);
  return value;
}

/** An error as raw-body words it (the answers above quote its message; `type` tells the kind). */
function readError(message: string, fields: Record<string, unknown>): Error {
  return Object.assign(new Error(message), fields);
}

/**
 * The body's bytes, as raw-body reads them (the same checks, errors and halting), in one promise
 * with the parser's refusal of the rest of the body (client-errors.ts): that rejects it with
 * `refused(why)`, and the connection closes after the answer.
 */
function readBytes(req: IncomingMessage, limit: number, declared: string, refused: (why: string) => Error): Promise<Buffer> {
  const length = declared !== '' && !Number.isNaN(Number(declared)) ? parseInt(declared, 10) : null;
  return new Promise<Buffer>((resolve, reject) => {
    if (length !== null && length > limit)
      return reject(readError('request entity too large', { expected: length, length, limit, type: 'entity.too.large' }));
    if (!req.readable) return reject(readError('stream is not readable', { type: 'stream.not.readable' }));
    // The whole body is in already (a small one comes with the headers: every byte its length
    // declares is buffered, though the parser may not have marked the message complete yet; the
    // parser never buffers more body than that) and nobody reads it yet: take it as it lies.
    const whole = req.complete || (length !== null && req.readableLength === length);
    if (whole && !req.readableFlowing && req.listenerCount('data') === 0) {
      const received = req.readableLength;
      if (received > limit) return reject(readError('request entity too large', { limit, received, type: 'entity.too.large' }));
      const bytes = (req.read() as Buffer | null) ?? Buffer.alloc(0);
      // Flowing from here (there is nothing left to read): the request still ends and closes when
      // the parser is done with it, as a request read to its end does.
      req.resume();
      return resolve(bytes);
    }
    const chunks: Buffer[] = [];
    let received = 0;
    let complete = false;
    const cleanup = () => {
      req.off('aborted', onAborted);
      req.off('close', cleanup);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onEnd);
      stop();
    };
    const fail = (err: Error, halt: boolean) => {
      if (complete) return;
      complete = true;
      cleanup();
      if (halt) {
        req.unpipe();
        req.pause();
      }
      reject(err);
    };
    const onAborted = () =>
      fail(readError('request aborted', { code: 'ECONNABORTED', expected: length, length, received, type: 'request.aborted' }), true);
    const onData = (chunk: Buffer) => {
      if (complete) return;
      received += chunk.length;
      if (received > limit) fail(readError('request entity too large', { limit, received, type: 'entity.too.large' }), true);
      else chunks.push(chunk);
    };
    const onEnd = (err?: Error) => {
      if (complete) return;
      if (err) return fail(err, true);
      if (length !== null && received !== length)
        return fail(
          readError('request size did not match content length', { expected: length, length, received, type: 'request.size.invalid' }),
          true,
        );
      complete = true;
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    };
    // Refused mid-read by the parser: the body never ends; answer now (the connection closes after).
    const stop = onMalformed(req, (why) => fail(refused(why), false));
    req.on('aborted', onAborted);
    req.on('close', cleanup);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onEnd);
  });
}

function tooBig(size: number, limit: number): PayloadTooLarge {
  return new PayloadTooLarge(
    `the request body is ${size} bytes; the most this server accepts is ${limit} bytes. Send less: split the content over several calls (for example create, then append).`,
  );
}
