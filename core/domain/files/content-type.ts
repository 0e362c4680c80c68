// A file's content type: what its bytes say (file-type's magic numbers) first, then what the client
// declared, then what its name suggests; application/octet-stream when nothing does. Which types a
// browser may show inline on Folio's origin: passive media and plain text only; HTML, SVG, XML, PDF
// and anything unknown are always attachments (they can run script).
import { fileTypeFromBuffer } from 'file-type';

/** How many leading bytes file-type needs to recognise every format it knows. */
export const SNIFF_BYTES = 4100;

/** Types that say nothing about the content: a client's default, not a declaration. */
const GENERIC = new Set(['application/octet-stream', 'application/x-www-form-urlencoded', 'binary/octet-stream', 'application/unknown']);

const BY_EXTENSION: Record<string, string> = {
  txt: 'text/plain; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  markdown: 'text/markdown; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  tsv: 'text/tab-separated-values; charset=utf-8',
  json: 'application/json',
  html: 'text/html; charset=utf-8',
  htm: 'text/html; charset=utf-8',
  svg: 'image/svg+xml',
  xml: 'application/xml',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  log: 'text/plain; charset=utf-8',
};

const TOKEN = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/;

/** A declared Content-Type, normalized ('Text/Plain;charset=UTF-8' -> 'text/plain; charset=utf-8'); undefined if absent or generic. */
export function declaredType(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const [media = '', ...params] = header.split(';').map((s) => s.trim());
  const type = media.toLowerCase();
  if (!TOKEN.test(type) || type.length > 127 || GENERIC.has(type) || type.startsWith('multipart/')) return undefined;
  const charset = params
    .map((p) => /^charset\s*=\s*"?([A-Za-z0-9._-]{1,40})"?$/i.exec(p)?.[1])
    .find((c) => c !== undefined)
    ?.toLowerCase();
  return charset ? `${type}; charset=${charset}` : type;
}

export function typeFromName(name: string): string | undefined {
  const ext = /\.([A-Za-z0-9]{1,10})$/.exec(name)?.[1]?.toLowerCase();
  return ext ? BY_EXTENSION[ext] : undefined;
}

export async function decideType(head: Buffer, declared: string | undefined, name: string): Promise<string> {
  const sniffed = head.length > 0 ? await fileTypeFromBuffer(head).catch(() => undefined) : undefined;
  return sniffed?.mime ?? declared ?? typeFromName(name) ?? 'application/octet-stream';
}

const INLINE = /^(image\/(png|jpeg|gif|webp|avif|bmp)|audio\/[a-z0-9.+-]+|video\/[a-z0-9.+-]+|text\/plain)$/;

/** May a browser render this type inline on Folio's origin? */
export function inlineSafe(contentType: string): boolean {
  return INLINE.test(contentType.split(';')[0]!.trim().toLowerCase());
}
