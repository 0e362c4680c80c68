// A zip archive read with a budget, for DOCX extraction: a few hundred bytes of a zip can declare (or,
// lying, hide) gigabytes of content. The central directory is read first, and the archive is
// refused before anything is inflated when what it declares is over the budget or absurdly
// compressed; then each entry asked for is inflated with a hard cap on its output (zlib stops
// there), so declared sizes that lie cost no more than the budget either.
import { inflateRawSync } from 'node:zlib';

export class BadZip extends Error {
  override name = 'BadZip';
}

/** The archive expands past the budget (declared, or found while inflating). */
export class ZipTooLarge extends Error {
  override name = 'ZipTooLarge';
}

interface Entry {
  method: number;
  compressedSize: number;
  size: number;
  localOffset: number;
}

/**
 * An entry declaring more than this many times its compressed size (and over 1 MiB) is a bomb:
 * Word's XML compresses 5 to 30 times; a bomb of repeated markup about 300 (deflate's ceiling is 1032).
 */
const MAX_RATIO = 200;
const RATIO_FLOOR = 1 << 20;
const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

export class BudgetedZip {
  readonly #buf: Buffer;
  readonly #entries = new Map<string, Entry>();
  readonly #max: number;
  /** Bytes that may still be inflated. */
  #left: number;

  /** Reads the central directory; throws BadZip, or ZipTooLarge when the declared content is over `maxBytes`. */
  constructor(bytes: Uint8Array, maxBytes: number) {
    this.#buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.#max = maxBytes;
    this.#left = maxBytes;
    const buf = this.#buf;
    const end = findEocd(buf);
    const count = buf.readUInt16LE(end + 10);
    let at = buf.readUInt32LE(end + 16);
    if (count === 0xffff || at === 0xffffffff) throw new BadZip('ZIP64 archives are not read');
    let declared = 0;
    for (let i = 0; i < count; i++) {
      if (at + 46 > buf.length || buf.readUInt32LE(at) !== CENTRAL) throw new BadZip('corrupt central directory');
      const flags = buf.readUInt16LE(at + 8);
      const entry: Entry = {
        method: buf.readUInt16LE(at + 10),
        compressedSize: buf.readUInt32LE(at + 20),
        size: buf.readUInt32LE(at + 24),
        localOffset: buf.readUInt32LE(at + 42),
      };
      const nameLen = buf.readUInt16LE(at + 28);
      const name = buf.toString('utf8', at + 46, at + 46 + nameLen);
      at += 46 + nameLen + buf.readUInt16LE(at + 30) + buf.readUInt16LE(at + 32);
      if (flags & 1) throw new BadZip('encrypted entries are not read');
      declared += entry.size;
      if (declared > maxBytes) throw new ZipTooLarge(`it declares more than ${mb(maxBytes)} of content`);
      if (entry.size > RATIO_FLOOR && entry.size > entry.compressedSize * MAX_RATIO)
        throw new ZipTooLarge(`${name} is compressed ${Math.round(entry.size / Math.max(1, entry.compressedSize))} to 1 (a zip bomb?)`);
      this.#entries.set(name, entry);
    }
  }

  has(name: string): boolean {
    return this.#entries.has(name);
  }

  /** The entry's bytes; throws ZipTooLarge once the archive's budget is spent, whatever it declared. */
  read(name: string): Buffer {
    const entry = this.#entries.get(name);
    if (!entry) throw new BadZip(`no ${name} in the archive`);
    const buf = this.#buf;
    const local = entry.localOffset;
    if (local + 30 > buf.length || buf.readUInt32LE(local) !== LOCAL) throw new BadZip(`corrupt entry ${name}`);
    const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const data = buf.subarray(start, start + entry.compressedSize);
    let out: Buffer;
    if (entry.method === 0) out = Buffer.from(data);
    else if (entry.method === 8) {
      try {
        // One byte over the budget tells "exactly the budget" from "more".
        out = inflateRawSync(data, { maxOutputLength: this.#left + 1 });
      } catch (err) {
        if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw this.#tooLarge();
        throw new BadZip(`corrupt entry ${name}: ${(err as Error).message}`);
      }
    } else throw new BadZip(`${name} uses compression method ${entry.method}`);
    if (out.length > this.#left) throw this.#tooLarge();
    this.#left -= out.length;
    return out;
  }

  #tooLarge(): ZipTooLarge {
    return new ZipTooLarge(`it expands to more than ${mb(this.#max)}`);
  }
}

/** The end-of-central-directory record: the last 22 bytes, or before a comment of up to 64 KiB. */
function findEocd(buf: Buffer): number {
  for (let at = buf.length - 22; at >= Math.max(0, buf.length - 22 - 0xffff); at--) {
    if (buf.readUInt32LE(at) === EOCD) return at;
  }
  throw new BadZip('not a zip archive');
}

function mb(bytes: number): string {
  return `${Math.round((bytes / 1048576) * 10) / 10} MB`;
}
