// Text extraction from a file's bytes, for search: pure functions of (bytes, content type).
//   PDF   -> the text of each page (unpdf: PDF.js built for servers, no native code)
//   DOCX  -> the document's raw text (mammoth)
//   text/plain, text/markdown, text/csv, application/json (and other text/*) -> the bytes as UTF-8
//   anything else -> null (nothing to extract)
// The text is capped at `maxChars` (then `truncated` is true), a PDF is read to its `maxPages`th
// page at most (then `truncated` too), and a DOCX whose zip would expand past `maxDecompressedBytes`
// is refused before (or, when its declared sizes lie, while) it is inflated. A file that claims a
// type but is not readable as one (a corrupt PDF, a DOCX that is not a zip, or that expands too
// much) rejects with UnreadableDocument, which a job should record rather than retry: it will not
// get better.
// Only text is decoded where it is asked for (bounded, linear work): every other format is parsed
// by third-party code from untrusted bytes, so the files domain runs it in a child process with
// memory and time limits (`inChildProcess`, extract-entry.ts). The PDF and DOCX readers are loaded
// on first use there.
import { BadZip, BudgetedZip, ZipTooLarge } from './zip.ts';

export interface ExtractedText {
  /** The whole text (for a PDF, the pages joined by a blank line). */
  text: string;
  /** A PDF's text page by page (each capped with the whole); absent for other types. */
  pages?: string[];
  /** True when the text was cut at maxChars. */
  truncated: boolean;
}

export interface ExtractOptions {
  /** Most characters kept (default 1,000,000). */
  maxChars?: number;
  /** Most pages of a PDF read (default 1,000). */
  maxPages?: number;
  /** Most bytes a DOCX's zip may expand to (default 64 MiB). */
  maxDecompressedBytes?: number;
}

export class UnreadableDocument extends Error {
  override name = 'UnreadableDocument';
}

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const TEXT_TYPES = new Set(['application/json', 'application/x-ndjson', 'application/csv', 'application/markdown', 'application/xml']);
const DEFAULT_MAX_CHARS = 1_000_000;
const DEFAULT_MAX_PAGES = 1000;
const DEFAULT_MAX_DECOMPRESSED = 64 * 1024 * 1024;

/** The media type without parameters, lower-cased: 'Text/Plain; charset=utf-8' -> 'text/plain'. */
function mediaType(contentType: string): string {
  return contentType.split(';')[0]!.trim().toLowerCase();
}

function isText(type: string): boolean {
  return type.startsWith('text/') || TEXT_TYPES.has(type) || type.endsWith('+json');
}

/** Whether extractText has anything to say about this content type. */
export function canExtract(contentType: string): boolean {
  const type = mediaType(contentType);
  return type === 'application/pdf' || type === DOCX || isText(type);
}

/**
 * Whether extracting this type means parsing its bytes (every format but text, this one and any
 * added later), which must run where a hostile file can only take down its own process.
 */
export function inChildProcess(contentType: string): boolean {
  return canExtract(contentType) && !isText(mediaType(contentType));
}

export async function extractText(bytes: Uint8Array, contentType: string, opts: ExtractOptions = {}): Promise<ExtractedText | null> {
  const max = opts.maxChars ?? DEFAULT_MAX_CHARS;
  const type = mediaType(contentType);
  if (type === 'application/pdf') return extractPdf(bytes, max, opts.maxPages ?? DEFAULT_MAX_PAGES);
  if (type === DOCX) return extractDocx(bytes, max, opts.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED);
  if (isText(type)) {
    // Only as many bytes as can make maxChars characters (4 bytes each at most), decoded leniently.
    const head = bytes.subarray(0, Math.min(bytes.length, max * 4));
    return cap(new TextDecoder('utf-8', { fatal: false, ignoreBOM: false }).decode(head), max, head.length < bytes.length);
  }
  return null;
}

async function extractPdf(bytes: Uint8Array, max: number, maxPages: number): Promise<ExtractedText> {
  const { getDocumentProxy } = await import('unpdf');
  const kept: string[] = [];
  let total = 0;
  let truncated = false;
  try {
    // PDF.js may detach the buffer it is given: hand it a copy. verbosity 0: no warnings on stderr.
    const pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 });
    try {
      // Page after page (unpdf's extractText reads every page at once), and no further than needed.
      const last = Math.min(pdf.numPages, maxPages);
      if (pdf.numPages > last) truncated = true;
      for (let n = 1; n <= last; n++) {
        const page = await pdf.getPage(n);
        const content = await page.getTextContent();
        page.cleanup();
        const text = content.items.map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : '') : '')).join('');
        const room = max - total;
        if (text.length > room) {
          kept.push(text.slice(0, Math.max(0, room)));
          truncated = true;
          break;
        }
        kept.push(text);
        total += text.length;
      }
    } finally {
      await pdf.destroy();
    }
  } catch (err) {
    throw new UnreadableDocument(`not a readable PDF: ${(err as Error).message}`, { cause: err });
  }
  return { text: kept.join('\n\n'), pages: kept, truncated };
}

async function extractDocx(bytes: Uint8Array, max: number, maxDecompressed: number): Promise<ExtractedText> {
  let text: string;
  const { default: mammoth } = await import('mammoth');
  try {
    const zip = new BudgetedZip(bytes, maxDecompressed);
    // mammoth reads parts through the opened-zip interface its unzip.openZip accepts as `file`
    // (undeclared in its types): each part is inflated here, within the budget, when it asks.
    const file = {
      exists: (name: string) => zip.has(name),
      // A promise that rejects (not a throw) when the budget is spent: mammoth chains on it.
      read: (name: string, encoding?: string) =>
        new Promise<string | Uint8Array>((resolve) => {
          const part = zip.read(name);
          if (encoding === 'base64') resolve(part.toString('base64'));
          else resolve(encoding ? new TextDecoder(encoding).decode(part) : new Uint8Array(part));
        }),
    };
    text = (await mammoth.extractRawText({ file } as unknown as { buffer: Buffer })).value;
  } catch (err) {
    if (err instanceof ZipTooLarge) throw new UnreadableDocument(`a DOCX too large to read: ${err.message}`, { cause: err });
    const why = err instanceof BadZip ? err.message : (err as Error).message;
    throw new UnreadableDocument(`not a readable DOCX: ${why}`, { cause: err });
  }
  return cap(text.replace(/\n{3,}/g, '\n\n').trim(), max, false);
}

function cap(text: string, max: number, cut: boolean): ExtractedText {
  if (text.length <= max) return { text, truncated: cut };
  return { text: text.slice(0, max), truncated: true };
}
