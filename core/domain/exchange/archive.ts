// Reading an uploaded zip without trusting it. Names are checked here, not by yauzl (whose check
// fails the whole archive): every entry whose name is unsafe (../, absolute, a backslash, a drive
// letter, not UTF-8), that is a symlink or encrypted, that declares more than the per-member cap,
// or that collides with an earlier one once case and Unicode normalization are ignored, is refused
// on its own, with a reason for the report. Too many entries refuse the whole archive. Reading a
// member stops at its declared size (yauzl checks the declared size against what inflates, and so
// does this reader), so a header that lies costs no more than it declared.
import { Transform, type Readable } from 'node:stream';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { pathKey } from './links.ts';

export interface ArchiveLimits {
  /** Entries an archive may hold (directories included). */
  maxEntries: number;
  /** Bytes one member may inflate to. */
  maxMemberBytes: number;
  /** Bytes all members together may inflate to. */
  maxTotalBytes: number;
}

export class ArchiveRefused extends Error {
  override name = 'ArchiveRefused';
}

export interface Member {
  /** The name as stored (NFC): '/'-separated, relative, no '.' or '..' segments. */
  path: string;
  key: string;
  size: number;
  modified: Date;
  entry: Entry;
}

export interface Refused {
  path: string;
  reason: string;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const lossy = new TextDecoder('utf-8');
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

/** Why this name may not be written anywhere, or undefined when it is a plain relative path. */
export function unsafeName(name: string): string | undefined {
  if (name.includes('\\')) return 'the name contains a backslash (a Windows path separator)';
  if (name.startsWith('/')) return 'the name is an absolute path';
  if (/^[A-Za-z]:/.test(name)) return 'the name starts with a drive letter';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'the name contains control characters';
  const parts = name.replace(/\/$/, '').split('/');
  if (parts.some((p) => p === '..')) return "the name climbs out of the archive ('..')";
  if (parts.some((p) => p === '' || p === '.')) return "the name has an empty or '.' segment";
  if (Buffer.byteLength(name) > 1024) return 'the name is longer than 1024 bytes';
  return undefined;
}

export class Archive {
  readonly members: Member[] = [];
  readonly refused: Refused[] = [];
  readonly #zip: ZipFile;

  private constructor(zip: ZipFile) {
    this.#zip = zip;
  }

  static async open(file: string, limits: ArchiveLimits): Promise<Archive> {
    let zip: ZipFile;
    try {
      zip = await yauzl.openPromise(file, { lazyEntries: true, decodeStrings: false, validateEntrySizes: true, autoClose: false });
    } catch (err) {
      throw new ArchiveRefused(`not a zip archive that can be read: ${(err as Error).message}`);
    }
    const a = new Archive(zip);
    try {
      if (zip.entryCount > limits.maxEntries)
        throw new ArchiveRefused(
          `the archive has ${zip.entryCount} entries, over this server's limit of ${limits.maxEntries} (exchange.maxEntries); nothing was imported`,
        );
      await a.#list(limits);
    } catch (err) {
      a.close();
      if (err instanceof ArchiveRefused) throw err;
      throw new ArchiveRefused(`the archive is corrupt: ${(err as Error).message}`);
    }
    return a;
  }

  async #list(limits: ArchiveLimits): Promise<void> {
    const seen = new Map<string, string>();
    let total = 0;
    const zip = this.#zip;
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (entry: Entry) => {
        try {
          this.#consider(entry, limits, seen, (n) => (total += n), total);
        } catch (err) {
          // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
          reject(err as Error);
          return;
        }
        zip.readEntry();
      });
      zip.on('end', () => resolve());
      zip.on('error', reject);
      zip.readEntry();
    });
  }

  #consider(entry: Entry, limits: ArchiveLimits, seen: Map<string, string>, add: (n: number) => void, total: number): void {
    const raw = entry.fileName as unknown as Buffer | string;
    const bytes = typeof raw === 'string' ? Buffer.from(raw) : raw;
    let name: string;
    try {
      name = utf8.decode(bytes);
    } catch {
      this.refused.push({ path: lossy.decode(bytes), reason: 'the name is not valid UTF-8' });
      return;
    }
    const bad = unsafeName(name);
    if (bad) {
      this.refused.push({ path: name, reason: bad });
      return;
    }
    if (name.endsWith('/')) return; // a directory: nothing to import
    const mode = (entry.externalFileAttributes >>> 16) & S_IFMT;
    if (mode === S_IFLNK) {
      this.refused.push({ path: name, reason: 'a symbolic link: links are not followed' });
      return;
    }
    if (entry.isEncrypted()) {
      this.refused.push({ path: name, reason: 'encrypted entries are not read' });
      return;
    }
    if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
      this.refused.push({ path: name, reason: `compression method ${entry.compressionMethod} is not read` });
      return;
    }
    if (entry.uncompressedSize > limits.maxMemberBytes) {
      this.refused.push({
        path: name,
        reason: `declares ${entry.uncompressedSize} bytes, over the limit of ${limits.maxMemberBytes} per member (exchange.maxMemberBytes)`,
      });
      return;
    }
    if (total + entry.uncompressedSize > limits.maxTotalBytes) {
      this.refused.push({
        path: name,
        reason: `the archive's members together pass the limit of ${limits.maxTotalBytes} bytes (exchange.maxTotalBytes)`,
      });
      return;
    }
    const nfc = name.normalize('NFC');
    const key = pathKey(nfc);
    const first = seen.get(key);
    if (first !== undefined) {
      this.refused.push({ path: name, reason: `the same name as ${first} once case and Unicode normalization are ignored` });
      return;
    }
    seen.set(key, name);
    add(entry.uncompressedSize);
    this.members.push({ path: nfc, key, size: entry.uncompressedSize, modified: entry.getLastModDate({ timezone: 'UTC' }), entry });
  }

  /** The member's bytes as a stream that fails once it passes the size the member declared. */
  async stream(m: Member): Promise<Readable> {
    const src = await this.#zip.openReadStreamPromise(m.entry);
    let seen = 0;
    const cap = new Transform({
      transform(chunk: Buffer, _enc, done) {
        seen += chunk.length;
        if (seen > m.size) done(new ArchiveRefused(`inflates to more than the ${m.size} bytes it declares`));
        else done(null, chunk);
      },
    });
    src.on('error', (err) =>
      cap.destroy(
        /too many bytes|too few bytes/.test(err.message)
          ? new ArchiveRefused(`inflates to a size other than the ${m.size} bytes it declares`)
          : err,
      ),
    );
    return src.pipe(cap);
  }

  async read(m: Member): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const c of await this.stream(m)) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  }

  close(): void {
    this.#zip.close();
  }
}
