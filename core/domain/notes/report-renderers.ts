// The renderer of each report format. Imported by the render workers (report-worker.ts) only, so
// the PDF renderer (pdfkit, its fonts and font parsers) is never loaded by the server's main
// thread: every module the main thread holds makes each of its garbage collections longer.
import { PdfRenderer } from './report-pdf.ts';
import { HtmlRenderer, MarkdownRenderer, type Renderer } from './report-render.ts';

export function rendererFor(format: 'markdown' | 'html' | 'pdf', opts: { creationDate?: Date; baseUrl?: string } = {}): Renderer {
  return format === 'markdown' ? new MarkdownRenderer(opts) : format === 'html' ? new HtmlRenderer(opts) : new PdfRenderer(opts);
}
