// Streamed request bodies for upload routes: the raw body as it arrives, or the part `file` of a
// multipart/form-data body (busboy parses the stream; nothing is buffered beyond its small window).
// The JSON body parser never sees these routes.
import type { Context } from 'koa';
import { PassThrough } from 'node:stream';
import busboy from 'busboy';
import { BadArguments, UnsupportedMediaType } from '../../contract/errors.ts';
import type { UploadBody } from '../../contract/rest.ts';
import { malformation, onMalformed } from '../http/client-errors.ts';

/** Form fields before the file: a name, a folder. Kept small. */
const FIELD_LIMITS = { fields: 20, fieldSize: 64 * 1024, parts: 40, files: 1, headerPairs: 100 };

export interface OpenedUpload {
  body: UploadBody;
  /** Called once the handler is done (or failed): drains what is left of the request. */
  finish(): void;
}

export async function openUpload(ctx: Context): Promise<OpenedUpload> {
  const coding = ctx.get('content-encoding').trim().toLowerCase();
  if (coding && coding !== 'identity')
    throw new UnsupportedMediaType(`a ${coding}-encoded upload is not taken here; send the bytes as they are, without a Content-Encoding.`);
  const already = malformation(ctx.req);
  if (already) throw new BadArguments(`could not read the body: ${already.reason}`);
  const type = ctx.get('content-type') || undefined;
  const declared = ctx.get('content-length');
  if (!type || !/^multipart\/form-data\s*;/i.test(type)) {
    // The HTTP parser refusing the rest of the body (a bad chunk) ends the upload with an error.
    const stop = onMalformed(ctx.req, (why) => ctx.req.destroy(new BadArguments(`could not read the body: ${why}`)));
    return {
      body: {
        stream: ctx.req,
        contentType: type,
        length: declared && /^\d+$/.test(declared) ? Number(declared) : undefined,
        filename: undefined,
        fields: {},
      },
      finish: stop,
    };
  }
  return openMultipart(ctx, type);
}

function openMultipart(ctx: Context, type: string): Promise<OpenedUpload> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      // A part's filename="..." is read as UTF-8, as browsers and curl send it (busboy's default,
      // latin1, turned every non-ASCII name into other characters).
      parser = busboy({ headers: { ...ctx.req.headers, 'content-type': type }, limits: FIELD_LIMITS, defParamCharset: 'utf8' });
    } catch (err) {
      reject(new BadArguments(`the multipart body cannot be read: ${(err as Error).message}`));
      return;
    }
    const fields: Record<string, string> = {};
    // The part `file` as the handler reads it: it ends only once the whole form has been read, so
    // a form cut off after the file's bytes, or a field that comes too late, fails the upload
    // before anything is stored (the store commits when its stream ends).
    let file: PassThrough | undefined;
    const fail = (err: Error) => {
      if (!file) reject(err);
      else if (!file.destroyed) file.destroy(err);
    };
    const finish = () => {
      ctx.req.unpipe(parser);
      ctx.req.resume();
    };
    parser.on('field', (name, value) => {
      if (!file) fields[name] = value;
      else if (LATE_FIELDS.has(name))
        fail(
          new BadArguments(
            `the form field \`${name}\` came after the part \`file\`; send the fields first (curl -F ${name}=... -F file=@path).`,
            [{ path: name, message: 'must come before the part `file`' }],
          ),
        );
    });
    parser.on('file', (name, stream, info) => {
      if (file || name !== 'file') {
        stream.resume();
        return;
      }
      const pass = new PassThrough({ highWaterMark: 64 * 1024 });
      file = pass;
      // It may fail before the handler reads it; the handler's read finds the error on the stream
      // (`errored`), so this listener only keeps an early failure from being an uncaught one.
      pass.on('error', () => {});
      // busboy fails the part itself when the form ends early; that failure is the parser's too.
      stream.on('error', (err: Error) => fail(unreadable(err)));
      stream.pipe(pass, { end: false });
      resolve({
        body: { stream: pass, contentType: info.mimeType || undefined, length: undefined, filename: info.filename || undefined, fields },
        finish,
      });
    });
    parser.on('error', (err: Error) => fail(unreadable(err)));
    parser.on('close', () => {
      if (file) {
        if (!file.destroyed) file.end();
        return;
      }
      reject(
        new BadArguments('the multipart body has no part named `file`; send the bytes as the part `file` (curl -F file=@path).', [
          { path: 'file', message: 'is required' },
        ]),
      );
    });
    ctx.req.on('error', (err) => fail(err));
    ctx.req.pipe(parser);
  });
}

/** Fields the upload takes from the form: they must come before the file's bytes. */
const LATE_FIELDS = new Set(['name', 'folder']);

function unreadable(err: Error): BadArguments {
  return new BadArguments(`the multipart body cannot be read: ${err.message}`);
}
