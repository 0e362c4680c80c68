// Streamed request bodies for upload routes: the raw body as it arrives, or the part `file` of a
// multipart/form-data body (busboy parses the stream; nothing is buffered beyond its small window).
// The JSON body parser never sees these routes.
import type { Context } from 'koa';
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
      parser = busboy({ headers: { ...ctx.req.headers, 'content-type': type }, limits: FIELD_LIMITS });
    } catch (err) {
      reject(new BadArguments(`the multipart body cannot be read: ${(err as Error).message}`));
      return;
    }
    const fields: Record<string, string> = {};
    let found = false;
    const finish = () => {
      ctx.req.unpipe(parser);
      ctx.req.resume();
    };
    parser.on('field', (name, value) => {
      if (!found) fields[name] = value;
    });
    parser.on('file', (name, stream, info) => {
      if (found || name !== 'file') {
        stream.resume();
        return;
      }
      found = true;
      resolve({
        body: { stream, contentType: info.mimeType || undefined, length: undefined, filename: info.filename || undefined, fields },
        finish,
      });
    });
    parser.on('error', (err: Error) => {
      if (!found) reject(new BadArguments(`the multipart body cannot be read: ${err.message}`));
    });
    parser.on('close', () => {
      if (!found)
        reject(
          new BadArguments('the multipart body has no part named `file`; send the bytes as the part `file` (curl -F file=@path).', [
            { path: 'file', message: 'is required' },
          ]),
        );
    });
    ctx.req.on('error', (err) => {
      if (!found) reject(err);
    });
    ctx.req.pipe(parser);
  });
}
