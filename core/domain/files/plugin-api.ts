// What plugins get as ctx.services.files: the files service acting as the caller, each operation
// asking the policy for its scope first. Reads stay within a byte budget the caller names: text is
// read in parts, bytes are refused over the budget (and the answer says where to fetch them).
import { Readable } from 'node:stream';
import type { DomainCaller } from '../../contract/domain.ts';
import { BadArguments, TooLarge } from '../../contract/errors.ts';
import type { FilesServiceImpl } from './service.ts';
import type { CreatedShare, CreateShare, FileMeta, FileText, FileVersion, ListFilesOptions, Page, ShareLink } from './types.ts';

/** A part of a text file, cut on a character boundary. */
export interface TextPart {
  file_id: string;
  version: number;
  name: string;
  content_type: string;
  size: number;
  /** Byte offset of `text` in the file. */
  offset: number;
  text: string;
  /** Where the next part starts; null when this part reaches the end. */
  next_offset: number | null;
}

/** A part of a version's extracted text (or of one PDF page's), within a budget of characters. */
export type TextExtractPart = FileText & {
  /** Character offset of `text` in the whole extracted text (or page). */
  offset: number;
  /** Where the next part starts; null when this part reaches the end. */
  next_offset: number | null;
};

export interface FileBytes {
  file: Pick<FileMeta, 'id' | 'name' | 'content_type' | 'size' | 'version'>;
  data: Uint8Array;
}

/** The caller's files (ctx.services.files). Reads need files:read, writes files:write. */
export interface FilesApi {
  list(opts?: ListFilesOptions): Promise<Page<FileMeta>>;
  get(id: string): Promise<FileMeta>;
  versions(id: string): Promise<FileVersion[]>;
  /** Up to `maxBytes` of the file's text from byte `offset` (UTF-8; a partial character is left for the next part). */
  readText(id: string, opts: { offset?: number; maxBytes: number; version?: number }): Promise<TextPart>;
  /**
   * The text Folio extracted from the file (any type it extracts: PDF, DOCX, text), or from one PDF
   * page, from character `offset`, at most `maxChars` characters of it.
   */
  extractedText(id: string, opts: { version?: number; page?: number; offset?: number; maxChars: number }): Promise<TextExtractPart>;
  /** The whole content, when it is at most `maxBytes`; else TooLarge (fetch it from `contentUrl` instead). */
  readBytes(id: string, opts: { maxBytes: number; version?: number }): Promise<FileBytes>;
  /** The REST URL of the content, for a caller that holds a bearer token. */
  contentUrl(id: string): string;
  /** A new file from text (UTF-8). */
  writeText(input: { name: string; text: string; folder?: string; content_type?: string; note_id?: string }): Promise<FileMeta>;
  /** New text content of an existing file, based on `expectedVersion`. */
  replaceText(id: string, expectedVersion: number, text: string, contentType?: string): Promise<FileMeta>;
  attach(id: string, noteId: string | null): Promise<FileMeta>;
  attachments(noteId: string): Promise<FileMeta[]>;
  trash(id: string): Promise<FileMeta>;
  untrash(id: string): Promise<FileMeta>;
  createShare(id: string, opts?: CreateShare): Promise<CreatedShare & { url: string }>;
  listShares(opts?: { file_id?: string }): Promise<ShareLink[]>;
  revokeShare(shareId: string): Promise<void>;
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Bytes `buf` ends with that begin a UTF-8 character it does not complete. */
function partialTail(buf: Buffer): number {
  for (let back = 1; back <= Math.min(3, buf.length); back++) {
    const b = buf[buf.length - back]!;
    if ((b & 0xc0) === 0x80) continue; // continuation byte
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

export function bindFiles(files: FilesServiceImpl, caller: DomainCaller): FilesApi {
  const { principal: p } = caller;
  const publicUrl = files.publicUrl;
  const read = (what: string) => caller.entitle(['files:read'], `files.${what}`);
  const write = (what: string) => caller.entitle(['files:write'], `files.${what}`);
  const textUpload = (text: string, contentType: string | undefined) => {
    if (typeof text !== 'string') throw new BadArguments('text must be a string', [{ path: 'text', message: 'must be a string' }]);
    const bytes = Buffer.from(text, 'utf8');
    return { source: Readable.from([bytes]), declaredType: contentType ?? 'text/plain; charset=utf-8', length: bytes.length };
  };
  return {
    list: async (opts) => (read('list'), files.list(p, opts)),
    get: async (id) => (read('get'), files.get(p, id)),
    versions: async (id) => (read('versions'), files.versions(p, id)),
    async readText(id, { offset = 0, maxBytes, version }) {
      read('readText');
      if (!Number.isInteger(offset) || offset < 0)
        throw new BadArguments('offset must be a byte offset', [{ path: 'offset', message: 'must be >= 0' }]);
      const ref = await files.content(p, id, version);
      if (offset > ref.size)
        throw new BadArguments(`offset is past the end (${ref.size} bytes)`, [{ path: 'offset', message: `must be at most ${ref.size}` }]);
      const end = Math.min(ref.size, offset + Math.max(4, maxBytes)) - 1;
      let buf = end >= offset ? await collect(await files.read(ref, { start: offset, end })) : Buffer.alloc(0);
      if (end < ref.size - 1) buf = buf.subarray(0, buf.length - partialTail(buf));
      const next = offset + buf.length;
      return {
        file_id: ref.file_id,
        version: ref.version,
        name: ref.name,
        content_type: ref.content_type,
        size: ref.size,
        offset,
        text: buf.toString('utf8'),
        next_offset: next < ref.size ? next : null,
      };
    },
    async extractedText(id, { version, page, offset = 0, maxChars }) {
      read('extractedText');
      if (!Number.isInteger(offset) || offset < 0)
        throw new BadArguments('offset must be a character offset', [{ path: 'offset', message: 'must be >= 0' }]);
      const whole = await files.text(p, id, { ...(version !== undefined ? { version } : {}), ...(page !== undefined ? { page } : {}) });
      if (offset > whole.text.length)
        throw new BadArguments(`offset is past the end (${whole.text.length} characters)`, [
          { path: 'offset', message: `must be at most ${whole.text.length}` },
        ]);
      let end = Math.min(whole.text.length, offset + Math.max(16, maxChars));
      // Never split a surrogate pair.
      if (end < whole.text.length && /[\ud800-\udbff]/.test(whole.text[end - 1] ?? '')) end--;
      return { ...whole, text: whole.text.slice(offset, end), offset, next_offset: end < whole.text.length ? end : null };
    },
    async readBytes(id, { maxBytes, version }) {
      read('readBytes');
      const ref = await files.content(p, id, version);
      if (ref.size > maxBytes)
        throw new TooLarge(
          `the file is ${ref.size} bytes, over this call's ceiling of ${maxBytes}. Download it from ${publicUrl()}/api/v1/filedb/files/${ref.file_id}/content with your bearer token, or read text in parts.`,
          ref.size,
          maxBytes,
        );
      const data = ref.size === 0 ? Buffer.alloc(0) : await collect(await files.read(ref));
      return { file: { id: ref.file_id, name: ref.name, content_type: ref.content_type, size: ref.size, version: ref.version }, data };
    },
    contentUrl: (id) => `${publicUrl()}/api/v1/filedb/files/${id}/content`,
    async writeText({ name, text, folder, content_type, note_id }) {
      write('writeText');
      return files.create(p, { name, folder, note_id, ...textUpload(text, content_type) });
    },
    async replaceText(id, expectedVersion, text, contentType) {
      write('replaceText');
      return files.putContent(p, id, expectedVersion, textUpload(text, contentType));
    },
    attach: async (id, noteId) => (write('attach'), files.attach(p, id, noteId)),
    attachments: async (noteId) => (read('attachments'), files.attachments(p, noteId)),
    trash: async (id) => (write('trash'), files.trash(p, id)),
    untrash: async (id) => (write('untrash'), files.untrash(p, id)),
    async createShare(id, opts = {}) {
      write('createShare');
      const share = await files.createShare(p, id, opts);
      return { ...share, url: `${publicUrl()}/s/${share.token}` };
    },
    listShares: async (opts) => (read('listShares'), files.listShares(p, opts)),
    async revokeShare(shareId) {
      write('revokeShare');
      await files.revokeShare(p, shareId);
    },
  };
}
