// Serving a file's bytes over HTTP: ETag and If-None-Match (304), one byte Range (206; past the end
// 416) with If-Range, HEAD without opening the blob, a Content-Disposition a browser saves under the
// right name (RFC 6266, with RFC 5987's filename* for names beyond ASCII), and no chance for the
// content to run as a page on Folio's origin (nosniff, a sandboxing CSP, active types as attachment).
import { RangeNotSatisfiable } from '../../../contract/errors.ts';
import type { Reply } from '../../../contract/rest.ts';
import { inlineSafe } from '../content-type.ts';
import type { ContentRef } from '../types.ts';

export interface DownloadRequest {
  method: string;
  header(name: string): string | undefined;
}

/** attachment; filename="plain ascii"; filename*=UTF-8''percent-encoded */
export function contentDisposition(name: string, inline: boolean): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${inline ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

const matches = (header: string | undefined, tag: string) =>
  header !== undefined && header.split(',').some((t) => t.trim() === '*' || t.trim().replace(/^W\//, '') === tag);

/**
 * The one range asked for, or undefined for the whole content (no Range, one it cannot parse, or
 * several ranges: the whole is an allowed answer to those). Past the end: 416.
 */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | undefined {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  const unsatisfiable = () => new RangeNotSatisfiable(`the range ${header.trim()} is outside the content's ${size} bytes.`, size);
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) throw unsatisfiable();
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (m[2] !== '' && Number(m[2]) < start) return undefined;
  if (start >= size) throw unsatisfiable();
  return { start, end };
}

export async function downloadReply(
  req: DownloadRequest,
  ref: ContentRef,
  open: (range?: { start: number; end: number }) => Promise<AsyncIterable<Uint8Array>>,
  opts: { onBody?: (range: { start: number; end: number } | undefined) => Promise<void> } = {},
): Promise<Reply> {
  const tag = `"${ref.version}"`;
  const headers: Record<string, string> = {
    ETag: tag,
    'Accept-Ranges': 'bytes',
    'Content-Type': ref.content_type,
    'Content-Disposition': contentDisposition(ref.name, inlineSafe(ref.content_type)),
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "default-src 'none'; sandbox",
    'Repr-Digest': `sha-256=:${Buffer.from(ref.sha256, 'hex').toString('base64')}:`,
    'Cache-Control': 'private, no-cache',
  };
  if (matches(req.header('if-none-match'), tag)) return { status: 304, headers: { ETag: tag, 'Cache-Control': 'private, no-cache' } };
  const ifRange = req.header('if-range');
  const range = ifRange !== undefined && ifRange.trim() !== tag ? undefined : parseRange(req.header('range'), ref.size);
  const length = range ? range.end - range.start + 1 : ref.size;
  headers['Content-Length'] = String(length);
  if (range) headers['Content-Range'] = `bytes ${range.start}-${range.end}/${ref.size}`;
  const status = range ? 206 : 200;
  if (req.method === 'HEAD' || length === 0) {
    if (req.method !== 'HEAD') await opts.onBody?.(range);
    return { status, headers, stream: (async function* () {})() };
  }
  await opts.onBody?.(range);
  return { status, headers, stream: await open(range) };
}
