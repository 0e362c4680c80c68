// Text extraction from a file's bytes, for search: pure functions of (bytes, content type).
//   PDF   -> the text of each page (unpdf: PDF.js built for servers, no native code)
//   DOCX  -> the document's raw text (mammoth)
//   text/plain, text/markdown, text/csv, application/json (and other text/*) -> the bytes as UTF-8
//   anything else -> null (nothing to extract)
// The text is capped at `maxChars` (then `truncated` is true). A file that claims a type but is not
// readable as one (a corrupt PDF, a DOCX that is not a zip) rejects with UnreadableDocument, which a
// job should record rather than retry: it will not get better.
// The PDF and DOCX readers are loaded on first use: a server that never reads such a file does not
// hold them (every module held makes each garbage collection longer, see bench/README (f)).

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
}

export class UnreadableDocument extends Error {
  override name = 'UnreadableDocument';
}

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const TEXT_TYPES = new Set(['application/json', 'application/x-ndjson', 'application/csv', 'application/markdown', 'application/xml']);
const DEFAULT_MAX_CHARS = 1_000_000;

/** The media type without parameters, lower-cased: 'Text/Plain; charset=utf-8' -> 'text/plain'. */
function mediaType(contentType: string): string {
  return contentType.split(';')[0]!.trim().toLowerCase();
}

/** Whether extractText has anything to say about this content type. */
export function canExtract(contentType: string): boolean {
  const type = mediaType(contentType);
  return type === 'application/pdf' || type === DOCX || type.startsWith('text/') || TEXT_TYPES.has(type) || type.endsWith('+json');
}

export async function extractText(bytes: Uint8Array, contentType: string, opts: ExtractOptions = {}): Promise<ExtractedText | null> {
  const max = opts.maxChars ?? DEFAULT_MAX_CHARS;
  const type = mediaType(contentType);
  if (type === 'application/pdf') return extractPdf(bytes, max);
  if (type === DOCX) return extractDocx(bytes, max);
  if (canExtract(type)) {
    // Only as many bytes as can make maxChars characters (4 bytes each at most), decoded leniently.
    const head = bytes.subarray(0, Math.min(bytes.length, max * 4));
    return cap(new TextDecoder('utf-8', { fatal: false, ignoreBOM: false }).decode(head), max, head.length < bytes.length);
  }
  return null;
}

async function extractPdf(bytes: Uint8Array, max: number): Promise<ExtractedText> {
  let pages: string[];
  const { extractText: pdfText, getDocumentProxy } = await import('unpdf');
  try {
    // PDF.js may detach the buffer it is given: hand it a copy. verbosity 0: no warnings on stderr.
    const pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 });
    try {
      pages = (await pdfText(pdf, { mergePages: false })).text;
    } finally {
      await pdf.destroy();
    }
  } catch (err) {
    throw new UnreadableDocument(`not a readable PDF: ${(err as Error).message}`, { cause: err });
  }
  const kept: string[] = [];
  let total = 0;
  let truncated = false;
  for (const page of pages) {
    const room = max - total;
    if (page.length > room) {
      kept.push(page.slice(0, Math.max(0, room)));
      truncated = true;
      break;
    }
    kept.push(page);
    total += page.length;
  }
  return { text: kept.join('\n\n'), pages: kept, truncated };
}

async function extractDocx(bytes: Uint8Array, max: number): Promise<ExtractedText> {
  let text: string;
  const { default: mammoth } = await import('mammoth');
  try {
    text = (await mammoth.extractRawText({ buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) })).value;
  } catch (err) {
    throw new UnreadableDocument(`not a readable DOCX: ${(err as Error).message}`, { cause: err });
  }
  return cap(text.replace(/\n{3,}/g, '\n\n').trim(), max, false);
}

function cap(text: string, max: number, cut: boolean): ExtractedText {
  if (text.length <= max) return { text, truncated: cut };
  return { text: text.slice(0, max), truncated: true };
}
