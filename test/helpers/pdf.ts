// A real PDF with one page per text, made with pdfkit: what the extraction, search and files
// tests upload.
import PDFDocument from 'pdfkit';

export function pdf(pages: string[]): Promise<Buffer> {
  const doc = new PDFDocument({ autoFirstPage: false });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve) => doc.on('end', () => resolve(Buffer.concat(chunks))));
  for (const text of pages) doc.addPage().text(text);
  doc.end();
  return done;
}
