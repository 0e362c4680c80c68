// A DOCX zip bomb made here, small on the wire and huge inflated: a valid document whose
// word/document.xml is `xmlMb` MiB of paragraphs. Its deflate stream is one compressed MiB of
// paragraphs repeated (each part ends with a full flush, so parts concatenate), so it costs the test
// a few milliseconds and no memory. `lie`: the zip declares word/document.xml to be 1 KiB.
import { constants, crc32, deflateRawSync } from 'node:zlib';

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const CONTENT_TYPES =
  '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
  '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
  '<Default Extension="xml" ContentType="application/xml"/>' +
  '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>';
const RELS =
  '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
  '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>';

interface Part {
  name: string;
  deflated: Buffer;
  crc: number;
  size: number;
}

function small(name: string, text: string): Part {
  const bytes = Buffer.from(text);
  return { name, deflated: deflateRawSync(bytes), crc: crc32(bytes), size: bytes.length };
}

function documentXml(xmlMb: number): Part {
  const head = Buffer.from(`<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="${W}"><w:body>`);
  const para = '<w:p><w:r><w:t>all work and no play makes a dull document </w:t></w:r></w:p>';
  const mib = Buffer.from(para.repeat(Math.ceil((1 << 20) / para.length)).slice(0, 1 << 20));
  const tail = Buffer.from('</w:body></w:document>');
  const flush = { finishFlush: constants.Z_FULL_FLUSH, level: 9 };
  const block = deflateRawSync(mib, flush);
  const parts = [deflateRawSync(head, flush), ...Array<Buffer>(xmlMb).fill(block), deflateRawSync(tail)];
  let crc = crc32(head);
  for (let i = 0; i < xmlMb; i++) crc = crc32(mib, crc);
  crc = crc32(tail, crc);
  return { name: 'word/document.xml', deflated: Buffer.concat(parts), crc, size: head.length + xmlMb * mib.length + tail.length };
}

/** The zip: local headers and data, then the central directory, then its end record. */
function zip(parts: Part[], declare: (p: Part) => number): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const p of parts) {
    const name = Buffer.from(p.name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(p.crc >>> 0, 14);
    local.writeUInt32LE(p.deflated.length, 18);
    local.writeUInt32LE(declare(p), 22);
    local.writeUInt16LE(name.length, 26);
    const dir = Buffer.alloc(46);
    dir.writeUInt32LE(0x02014b50, 0);
    dir.writeUInt16LE(20, 4);
    dir.writeUInt16LE(20, 6);
    dir.writeUInt16LE(8, 10);
    dir.writeUInt32LE(p.crc >>> 0, 16);
    dir.writeUInt32LE(p.deflated.length, 20);
    dir.writeUInt32LE(declare(p), 24);
    dir.writeUInt16LE(name.length, 28);
    dir.writeUInt32LE(offset, 42);
    locals.push(local, name, p.deflated);
    central.push(dir, name);
    offset += 30 + name.length + p.deflated.length;
  }
  const dirBytes = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(parts.length, 8);
  end.writeUInt16LE(parts.length, 10);
  end.writeUInt32LE(dirBytes.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dirBytes, end]);
}

export function docxBomb(opts: { xmlMb: number; lie?: boolean }): Buffer {
  const doc = documentXml(opts.xmlMb);
  const parts = [small('[Content_Types].xml', CONTENT_TYPES), small('_rels/.rels', RELS), doc];
  return zip(parts, (p) => (opts.lie && p === doc ? 1024 : p.size));
}

/** DOCX's content type. */
export const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
