// Report renderers: Markdown, HTML and PDF from the same events (start, group, note, end). Each
// renderer buffers only what it produced since the last take(), so a report streams in chunks of
// one fetched batch and memory stays bounded whatever the selection.
import PDFDocument from 'pdfkit';

export interface ReportMeta {
  title: string;
  /** One line saying what was selected and how it is grouped. */
  selection: string;
  generatedAt: string;
  total: number;
  openItems: number;
}

export interface ReportGroupHead {
  label: string;
  count: number;
}

export interface ReportNote {
  id: string;
  title: string;
  tags: string[];
  updated_at: string;
  excerpt: string;
  open_items: string[];
}

export interface Renderer {
  start(meta: ReportMeta): void;
  group(g: ReportGroupHead): void;
  note(n: ReportNote): void;
  end(): void;
  /** The output produced since the last call (after end(), everything left). */
  take(): Promise<Uint8Array[]>;
}

const enc = new TextEncoder();
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const when = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

// --- Markdown ------------------------------------------------------------------------------------

/** Escapes what would turn plain text into Markdown structure inline. */
function mdInline(s: string): string {
  return s.replace(/([\\`*_[\]<>#|])/g, '\\$1');
}

export class MarkdownRenderer implements Renderer {
  #out: string[] = [];
  start(m: ReportMeta): void {
    this.#out.push(
      `# ${mdInline(m.title)}\n\n${mdInline(m.selection)}  \n${plural(m.total, 'note')}, ${plural(m.openItems, 'open action item')}. Generated ${when(m.generatedAt)}.\n`,
    );
  }
  group(g: ReportGroupHead): void {
    this.#out.push(`\n## ${mdInline(g.label)} (${plural(g.count, 'note')})\n`);
  }
  note(n: ReportNote): void {
    let out = `\n### ${mdInline(n.title)}\n\n_${when(n.updated_at)}${n.tags.length ? ` · ${n.tags.map((t) => `#${t}`).join(' ')}` : ''} · note ${n.id}_\n`;
    if (n.excerpt) out += `\n> ${mdInline(n.excerpt)}\n`;
    if (n.open_items.length) out += `\n${n.open_items.map((i) => `- [ ] ${i}`).join('\n')}\n`;
    this.#out.push(out);
  }
  end(): void {}
  /** The Markdown produced since the last call. */
  takeText(): string {
    const s = this.#out.join('');
    this.#out = [];
    return s;
  }
  take(): Promise<Uint8Array[]> {
    const s = this.takeText();
    return Promise.resolve(s ? [enc.encode(s)] : []);
  }
}

// --- HTML ----------------------------------------------------------------------------------------

function h(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#222}
h2{border-bottom:1px solid #ddd;padding-bottom:.2rem;margin-top:2rem}h3{margin-bottom:.2rem}
.meta{color:#666;font-size:.85rem}blockquote{margin:.5rem 0;padding-left:.8rem;border-left:3px solid #ddd;color:#444}
ul.todo{list-style:none;padding-left:.5rem}ul.todo li::before{content:"\\2610  "}`;

export class HtmlRenderer implements Renderer {
  #out: string[] = [];
  #inGroup = false;
  start(m: ReportMeta): void {
    this.#out.push(
      `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${h(m.title)}</title><style>${STYLE}</style></head><body>\n` +
        `<h1>${h(m.title)}</h1>\n<p class="meta">${h(m.selection)}<br>${plural(m.total, 'note')}, ${plural(m.openItems, 'open action item')}. Generated ${h(when(m.generatedAt))}.</p>\n`,
    );
  }
  group(g: ReportGroupHead): void {
    if (this.#inGroup) this.#out.push('</section>\n');
    this.#inGroup = true;
    this.#out.push(`<section>\n<h2>${h(g.label)} <span class="meta">(${plural(g.count, 'note')})</span></h2>\n`);
  }
  note(n: ReportNote): void {
    let s = `<article>\n<h3>${h(n.title)}</h3>\n<p class="meta">${h(when(n.updated_at))}${n.tags.length ? ` · ${n.tags.map((t) => `#${h(t)}`).join(' ')}` : ''} · note ${h(n.id)}</p>\n`;
    if (n.excerpt) s += `<blockquote>${h(n.excerpt)}</blockquote>\n`;
    if (n.open_items.length) s += `<ul class="todo">${n.open_items.map((i) => `<li>${h(i)}</li>`).join('')}</ul>\n`;
    this.#out.push(`${s}</article>\n`);
  }
  end(): void {
    this.#out.push(`${this.#inGroup ? '</section>\n' : ''}</body></html>\n`);
  }
  take(): Promise<Uint8Array[]> {
    const s = this.#out.join('');
    this.#out = [];
    return Promise.resolve(s ? [enc.encode(s)] : []);
  }
}

// --- PDF -----------------------------------------------------------------------------------------

// The standard PDF fonts (no font file to ship) cover Windows-1252 only. Other characters are
// folded (ő -> o) or shown as '?'. CJK in PDF reports needs an embedded font: not done yet.
const CP1252_EXTRA = '€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ';
function pdfText(s: string): string {
  let out = '';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if ((c >= 0x20 && c < 0x7f) || (c >= 0xa0 && c <= 0xff) || CP1252_EXTRA.includes(ch)) out += ch;
    else if (c === 0x09 || c === 0x0a) out += ' ';
    else {
      const folded = ch.normalize('NFKD').replace(/\p{M}/gu, '');
      out += folded && [...folded].every((f) => f.codePointAt(0)! < 0x7f) ? folded : '?';
    }
  }
  return out;
}

export class PdfRenderer implements Renderer {
  readonly #doc: PDFKit.PDFDocument;
  #chunks: Uint8Array[] = [];
  readonly #ended: Promise<void>;
  #done = false;

  /** `creationDate`: the document's date (default now); the same date and events give the same bytes. */
  constructor(opts: { creationDate?: Date } = {}) {
    this.#doc = new PDFDocument({
      size: 'A4',
      margin: 56,
      bufferPages: false,
      info: { Producer: 'Folio', Creator: 'Folio', CreationDate: opts.creationDate ?? new Date() },
    });
    this.#doc.on('data', (c: Uint8Array) => this.#chunks.push(c));
    this.#ended = new Promise((resolve, reject) => {
      this.#doc.on('end', () => resolve());
      this.#doc.on('error', reject);
    });
  }
  start(m: ReportMeta): void {
    this.#doc.info.Title = pdfText(m.title);
    this.#doc.font('Helvetica-Bold').fontSize(20).text(pdfText(m.title));
    this.#doc
      .moveDown(0.3)
      .font('Helvetica')
      .fontSize(9)
      .fillColor('#555')
      .text(
        pdfText(
          `${m.selection}. ${plural(m.total, 'note')}, ${plural(m.openItems, 'open action item')}. Generated ${when(m.generatedAt)}.`,
        ),
      )
      .fillColor('black');
  }
  group(g: ReportGroupHead): void {
    this.#doc
      .moveDown(1)
      .font('Helvetica-Bold')
      .fontSize(15)
      .text(pdfText(`${g.label} (${plural(g.count, 'note')})`));
  }
  note(n: ReportNote): void {
    const d = this.#doc;
    d.moveDown(0.6).font('Helvetica-Bold').fontSize(12).text(pdfText(n.title));
    d.font('Helvetica')
      .fontSize(8)
      .fillColor('#555')
      .text(pdfText(`${when(n.updated_at)}${n.tags.length ? ` · ${n.tags.map((t) => `#${t}`).join(' ')}` : ''} · note ${n.id}`))
      .fillColor('black');
    if (n.excerpt) d.moveDown(0.2).font('Helvetica-Oblique').fontSize(10).text(pdfText(n.excerpt));
    for (const item of n.open_items)
      d.font('Helvetica')
        .fontSize(10)
        .text(pdfText(`[ ] ${item}`), { indent: 10 });
  }
  end(): void {
    this.#done = true;
    this.#doc.end();
  }
  async take(): Promise<Uint8Array[]> {
    if (this.#done) await this.#ended;
    else await new Promise((r) => setImmediate(r)); // let the document's stream deliver what it has
    const out = this.#chunks;
    this.#chunks = [];
    return out;
  }
}

export function rendererFor(format: 'markdown' | 'html' | 'pdf', opts: { creationDate?: Date } = {}): Renderer {
  return format === 'markdown' ? new MarkdownRenderer() : format === 'html' ? new HtmlRenderer() : new PdfRenderer(opts);
}
