// The PDF rendering of a report: a small layout engine over pdfkit. Each note's Markdown tokens
// (report-markdown.ts) become blocks (headings, paragraphs, lists with check boxes, quotes, code,
// tables, rules); a block's text becomes words, each word font runs chosen by script
// (report-fonts.ts), laid into lines by measured width; a line with right-to-left text is put in
// visual order by the Unicode bidirectional algorithm (bidi-js) and drawn word by word, since
// pdfkit draws a string left to right. Pages are numbered as they are made (the document streams:
// nothing is kept once written), and each group is an outline entry (the PDF's table of contents).
import bidiModule from 'bidi-js';
import PDFDocument from 'pdfkit';
import { breaksAnywhere, FONT_PACKAGES, fontSet, isRtl, scriptOf, type Face, type FontSet, type Script } from './report-fonts.ts';
import { parse, type Token } from './report-markdown.ts';
import type { Renderer, ReportGroupHead, ReportMeta, ReportNote } from './report-render.ts';

// bidi-js is a UMD module: its CommonJS export is the factory its types call the default export.
const bidi = (bidiModule as unknown as typeof import('bidi-js').default)();
const MARGIN = 56;
const BODY = 10;
const GREY = '#555555';
const LINK = '#1a5fb4';

interface Style {
  bold?: boolean;
  italic?: boolean;
  code?: boolean;
  strike?: boolean;
  link?: string;
  color?: string;
}

interface Run {
  text: string;
  style: Style;
  /** A hard line break before this run. */
  br?: boolean;
}

interface Seg {
  text: string;
  font: string;
  width: number;
  style: Style;
}

interface Word {
  segs: Seg[];
  width: number;
  /** A space separates it from the word before. */
  space: boolean;
  /** Starts a new line (a hard break). */
  br: boolean;
  /** Its bidi embedding level (odd: right to left). */
  level: number;
  /** Its place in the paragraph (logical order). */
  index: number;
}

interface Line {
  words: Word[];
  width: number;
  rtl: boolean;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const when = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

// Without Noto Sans: the standard fonts, which know Windows-1252 only; other characters are folded
// (ő -> o) or shown as a middle dot.
const CP1252_EXTRA = '€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ';
function winAnsi(s: string): string {
  let out = '';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if ((c >= 0x20 && c < 0x7f) || (c >= 0xa0 && c <= 0xff) || CP1252_EXTRA.includes(ch)) out += ch;
    else {
      const folded = ch.normalize('NFKD').replace(/\p{M}/gu, '');
      out += folded && [...folded].every((f) => f.codePointAt(0)! < 0x7f) ? folded : '·';
    }
  }
  return out;
}

const STANDARD: Record<Face, string> = {
  regular: 'Helvetica',
  bold: 'Helvetica-Bold',
  italic: 'Helvetica-Oblique',
  boldItalic: 'Helvetica-BoldOblique',
};

export class PdfRenderer implements Renderer {
  readonly #doc: PDFKit.PDFDocument;
  readonly #fonts: FontSet;
  readonly #noteUrl: (id: string) => string;
  #chunks: Uint8Array[] = [];
  readonly #ended: Promise<void>;
  #done = false;
  #y = MARGIN;
  #page = 0;
  #title = '';

  /** `creationDate`: the document's date (default now); the same date and events give the same bytes. */
  constructor(opts: { creationDate?: Date; baseUrl?: string } = {}) {
    this.#fonts = fontSet();
    const base = (opts.baseUrl ?? '').replace(/\/+$/, '');
    this.#noteUrl = (id) => `${base}/api/v1/notetaker/notes/${id}`;
    this.#doc = new PDFDocument({
      size: 'A4',
      margin: MARGIN,
      bufferPages: false,
      info: { Producer: 'Folio', Creator: 'Folio', CreationDate: opts.creationDate ?? new Date() },
    });
    for (const [script, faces] of Object.entries(this.#fonts.files))
      for (const [face, file] of Object.entries(faces)) this.#doc.registerFont(`${script}-${face}`, file.path, file.family);
    this.#doc.on('data', (c: Uint8Array) => this.#chunks.push(c));
    this.#ended = new Promise((resolve, reject) => {
      this.#doc.on('end', () => resolve());
      this.#doc.on('error', reject);
    });
    this.#doc.on('pageAdded', () => this.#pageStarted());
    this.#pageStarted();
  }

  // --- pages -------------------------------------------------------------------------------------

  get #width(): number {
    return this.#doc.page.width - 2 * MARGIN;
  }
  get #bottom(): number {
    return this.#doc.page.height - MARGIN;
  }

  #pageStarted(): void {
    this.#page++;
    this.#y = MARGIN;
    const d = this.#doc;
    // The footer sits in the bottom margin: drawn with no margin, so it starts no page of its own.
    const margin = d.page.margins.bottom;
    d.page.margins.bottom = 0;
    const label = this.#title ? `${this.#title} · page ${this.#page}` : `page ${this.#page}`;
    this.#drawText(
      label,
      this.#font('latin', 'regular'),
      8,
      MARGIN,
      d.page.height - 36,
      { color: '#888888' },
      {
        width: this.#width,
        align: 'center',
      },
    );
    d.page.margins.bottom = margin;
  }

  /** Room for `h` more points on this page, or a new page. */
  #ensure(h: number): void {
    if (this.#y + h > this.#bottom && this.#y > MARGIN) this.#doc.addPage();
  }

  // --- fonts and text ----------------------------------------------------------------------------

  #font(script: Script, face: Face): string {
    const faces = this.#fonts.files[script];
    if (faces) {
      if (faces[face]) return `${script}-${face}`;
      const bold = face === 'bold' || face === 'boldItalic';
      if (bold && faces.bold) return `${script}-bold`;
      if (faces.regular) return `${script}-regular`;
    }
    return this.#fonts.files.latin ? this.#font('latin', face) : STANDARD[face];
  }

  /** What `text` prints as in `font` (the standard fonts know Windows-1252 only). */
  #printable(text: string, font: string): string {
    return font.startsWith('Helvetica') || font.startsWith('Courier') ? winAnsi(text) : text;
  }

  #drawText(text: string, font: string, size: number, x: number, y: number, style: Style, opts: PDFKit.Mixins.TextOptions = {}): void {
    const d = this.#doc;
    const shown = this.#printable(text, font);
    const color = style.color ?? (style.link ? LINK : 'black');
    d.font(font)
      .fontSize(size)
      .fillColor(color)
      .text(shown, x, y, { lineBreak: false, ...opts });
    if (!style.link && !style.strike) return;
    // pdfkit's own link, underline and strike need a wrapped text's width: drawn here instead.
    const w = d.widthOfString(shown);
    if (style.link) {
      d.link(x, y, w, size * 1.2, style.link);
      d.moveTo(x, y + size * 1.1)
        .lineTo(x + w, y + size * 1.1)
        .lineWidth(0.5)
        .strokeColor(color)
        .stroke();
    }
    if (style.strike)
      d.moveTo(x, y + size * 0.65)
        .lineTo(x + w, y + size * 0.65)
        .lineWidth(0.6)
        .strokeColor(color)
        .stroke();
  }

  /** The font of one character in a style; a script with no font prints a middle dot in Noto Sans. */
  #fontFor(ch: string, style: Style): { font: string; ch: string } {
    const face: Face = style.bold ? (style.italic ? 'boldItalic' : 'bold') : style.italic ? 'italic' : 'regular';
    if (style.code && ch.charCodeAt(0) < 0x7f) return { font: 'Courier', ch };
    const script = scriptOf(ch);
    if (script !== 'latin' && !this.#fonts.files[script]) return { font: this.#font('latin', face), ch: '·' };
    return { font: this.#font(script, face), ch };
  }

  /** Runs -> words (CJK characters each a word of their own), each word in font runs, measured. */
  #words(runs: Run[], size: number): Word[] {
    const words: Word[] = [];
    let cur: Word | null = null;
    let space = false;
    let br = false;
    const d = this.#doc;
    const finish = () => {
      if (cur) {
        for (const s of cur.segs) s.width = d.font(s.font).fontSize(size).widthOfString(this.#printable(s.text, s.font));
        cur.width = cur.segs.reduce((n, s) => n + s.width, 0);
        words.push(cur);
      }
      cur = null;
    };
    for (const run of runs) {
      if (run.br) {
        finish();
        br = true;
        space = false;
      }
      for (const ch of run.text) {
        if (/\s/.test(ch)) {
          finish();
          space = words.length > 0 || space;
          continue;
        }
        const alone = breaksAnywhere(ch);
        if (alone) finish();
        const { font, ch: shown } = this.#fontFor(ch, run.style);
        if (!cur) {
          cur = { segs: [], width: 0, space, br, level: 0, index: words.length };
          space = false;
          br = false;
        }
        const w: Word = cur;
        const last = w.segs[w.segs.length - 1];
        if (last && last.font === font && last.style === run.style) last.text += shown;
        else w.segs.push({ text: shown, font, width: 0, style: run.style });
        if (alone) finish();
      }
    }
    finish();
    return words;
  }

  /** Words -> lines no wider than `width`, each with its words in visual (left to right) order. */
  #lines(words: Word[], width: number, size: number): Line[] {
    if (words.length === 0) return [];
    const text = words.map((w) => (w.space ? ' ' : '') + w.segs.map((s) => s.text).join('')).join('');
    const hasRtl = [...text].some(isRtl);
    let baseRtl = false;
    if (hasRtl) {
      const levels = bidi.getEmbeddingLevels(text);
      baseRtl = (levels.paragraphs[0]?.level ?? 0) % 2 === 1;
      let at = 0;
      for (const w of words) {
        if (w.space) at++;
        const chars = w.segs.map((s) => s.text).join('');
        // The level of its first strong character (a word is one direction: spaces split them).
        let level = levels.levels[at] ?? 0;
        let i = 0;
        for (const ch of chars) {
          if (/\p{L}/u.test(ch)) {
            level = levels.levels[at + i] ?? level;
            break;
          }
          i += ch.length;
        }
        w.level = level;
        at += chars.length;
      }
    }
    const space = this.#doc.font(this.#font('latin', 'regular')).fontSize(size).widthOfString(' ');
    const lines: Line[] = [];
    let line: Word[] = [];
    let lw = 0;
    const push = () => {
      if (line.length) lines.push({ words: visualOrder(line), width: lw, rtl: baseRtl });
      line = [];
      lw = 0;
    };
    for (const w of words) {
      const gap = line.length && w.space ? space : 0; // the same rule as #drawLines' (logical neighbours)
      if (w.br || (line.length && lw + gap + w.width > width)) push();
      line.push(w);
      lw += (line.length > 1 && w.space ? space : 0) + w.width;
    }
    push();
    return lines;
  }

  /** Draws lines from `x` (right-aligned when the paragraph is right to left), advancing the page position. */
  #drawLines(lines: Line[], x: number, width: number, size: number, opts: { first?: (y: number) => void } = {}): void {
    const lh = size * 1.4;
    const space = this.#doc.font(this.#font('latin', 'regular')).fontSize(size).widthOfString(' ');
    lines.forEach((line, n) => {
      this.#ensure(lh);
      const y = this.#y;
      if (n === 0) opts.first?.(y);
      let at = line.rtl ? x + width - line.width : x;
      // Left-to-right text of one font and style goes out as one string (fewer operators, and a
      // text extractor sees one word where CJK characters touch); right-to-left words one by one.
      let piece: { text: string; font: string; style: Style; x: number; ltr: boolean } | null = null;
      const flush = () => {
        if (piece) this.#drawText(piece.text, piece.font, size, piece.x, y, piece.style);
        piece = null;
      };
      line.words.forEach((w, i) => {
        // A space sits between two neighbours when the logically later one had one before it.
        const prev = line.words[i - 1];
        const gap = !!prev && (prev.index > w.index ? prev.space : w.space);
        if (gap) at += space;
        const ltr = w.level % 2 === 0;
        const segs = ltr ? w.segs : [...w.segs].reverse();
        segs.forEach((s, j) => {
          const p = piece;
          if (p && ltr && p.ltr && p.font === s.font && p.style === s.style) p.text += (gap && j === 0 ? ' ' : '') + s.text;
          else {
            flush();
            piece = { text: s.text, font: s.font, style: s.style, x: at, ltr };
          }
          at += s.width;
        });
      });
      flush();
      this.#y += lh;
    });
  }

  #paragraph(runs: Run[], size: number, indent: number, opts: { bullet?: Run; after?: number; bar?: boolean } = {}): void {
    const x = MARGIN + indent;
    const width = this.#width - indent;
    const lines = this.#lines(this.#words(runs, size), width, size);
    const top = this.#y;
    this.#drawLines(lines, x, width, size, {
      first: (y) => {
        if (opts.bullet) {
          const b = this.#words([opts.bullet], size)[0];
          if (b) for (const s of b.segs) this.#drawText(s.text, s.font, size, x - 12, y, s.style);
        }
      },
    });
    if (opts.bar && this.#y > top) {
      this.#doc
        .moveTo(x - 8, Math.max(MARGIN, top))
        .lineTo(x - 8, this.#y)
        .lineWidth(2)
        .strokeColor('#cccccc')
        .stroke();
    }
    this.#y += opts.after ?? size * 0.5;
  }

  // --- Markdown blocks ---------------------------------------------------------------------------

  #inline(children: Token[] | null, base: Style = {}): Run[] {
    const runs: Run[] = [];
    let bold = 0;
    let italic = 0;
    let strike = 0;
    let link: string | undefined;
    const style = (): Style => ({
      ...base,
      ...(bold || base.bold ? { bold: true } : {}),
      ...(italic || base.italic ? { italic: true } : {}),
      ...(strike ? { strike: true } : {}),
      ...(link ? { link } : {}),
    });
    let current = style();
    const restyle = () => {
      current = style();
    };
    for (const t of children ?? []) {
      if (t.type === 'text') runs.push({ text: t.content, style: current });
      else if (t.type === 'code_inline') runs.push({ text: t.content, style: { ...current, code: true } });
      else if (t.type === 'strong_open') {
        bold++;
        restyle();
      } else if (t.type === 'strong_close') {
        bold--;
        restyle();
      } else if (t.type === 'em_open') {
        italic++;
        restyle();
      } else if (t.type === 'em_close') {
        italic--;
        restyle();
      } else if (t.type === 's_open') {
        strike++;
        restyle();
      } else if (t.type === 's_close') {
        strike--;
        restyle();
      } else if (t.type === 'link_open') {
        const href = String(t.attrGet('href') ?? '');
        link = /^(https?:|mailto:)/i.test(href) ? href : undefined;
        restyle();
      } else if (t.type === 'link_close') {
        link = undefined;
        restyle();
      } else if (t.type === 'softbreak') runs.push({ text: ' ', style: current });
      else if (t.type === 'hardbreak') runs.push({ text: '', style: current, br: true });
      else if (t.type === 'image') runs.push({ text: `[image: ${t.content || 'no description'}]`, style: { ...current, italic: true } });
      else if (t.content) runs.push({ text: t.content, style: current });
    }
    return runs;
  }

  #markdown(tokens: Token[]): void {
    const lists: Array<{ ordered: boolean; n: number }> = [];
    let quote = 0;
    let heading = 0;
    let bullet: Run | undefined;
    const indent = () => lists.length * 16 + quote * 14;
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i]!;
      switch (t.type) {
        case 'heading_open':
          heading = Number(t.tag.slice(1));
          this.#y += 4;
          break;
        case 'heading_close':
          heading = 0;
          break;
        case 'bullet_list_open':
          lists.push({ ordered: false, n: 0 });
          break;
        case 'ordered_list_open':
          lists.push({ ordered: true, n: Number(t.attrGet('start') ?? 1) || 1 });
          break;
        case 'bullet_list_close':
        case 'ordered_list_close':
          lists.pop();
          if (lists.length === 0) this.#y += 3;
          break;
        case 'list_item_open': {
          const task = t.attrGet('data-task');
          const list = lists[lists.length - 1];
          const symbols = !!this.#fonts.files.symbols;
          if (task) bullet = { text: symbols ? (task === 'done' ? '☑' : '☐') : task === 'done' ? '[x]' : '[ ]', style: {} };
          else if (list?.ordered) bullet = { text: `${list.n++}.`, style: {} };
          else bullet = { text: '•', style: {} };
          break;
        }
        case 'list_item_close':
          bullet = undefined;
          break;
        case 'blockquote_open':
          quote++;
          break;
        case 'blockquote_close':
          quote--;
          break;
        case 'inline': {
          // A note's own headings sit below its title (12.5 pt).
          const size = heading ? ([0, 12, 11, 10.5, 10, 10, 10][heading] ?? BODY) : BODY;
          const base: Style = heading ? { bold: true } : quote ? { color: GREY } : {};
          const runs = this.#inline(t.children, base);
          const tight = lists.length > 0 && !heading;
          this.#paragraph(runs, size, indent(), {
            ...(bullet ? { bullet } : {}),
            after: tight ? 1 : size * 0.5,
            bar: quote > 0,
          });
          bullet = undefined;
          break;
        }
        case 'fence':
        case 'code_block':
          this.#code(t.content, indent());
          break;
        case 'hr':
          this.#ensure(12);
          this.#doc
            .moveTo(MARGIN + indent(), this.#y + 4)
            .lineTo(MARGIN + this.#width, this.#y + 4)
            .lineWidth(0.5)
            .strokeColor('#bbbbbb')
            .stroke();
          this.#y += 12;
          break;
        case 'table_open': {
          const rows: Array<{ head: boolean; cells: Run[][] }> = [];
          let head = false;
          for (i++; i < tokens.length && tokens[i]!.type !== 'table_close'; i++) {
            const c = tokens[i]!;
            if (c.type === 'thead_open') head = true;
            else if (c.type === 'thead_close') head = false;
            else if (c.type === 'tr_open') rows.push({ head, cells: [] });
            else if (c.type === 'inline') rows[rows.length - 1]?.cells.push(this.#inline(c.children, head ? { bold: true } : {}));
          }
          this.#table(rows, indent());
          break;
        }
        default:
          break;
      }
    }
  }

  #code(content: string, indent: number): void {
    const size = 8.5;
    const lh = size * 1.35;
    const x = MARGIN + indent + 6;
    const width = this.#width - indent - 12;
    const text = content.replace(/\n$/, '');
    for (const raw of text.split('\n')) {
      const words = this.#words([{ text: raw.replace(/\t/g, '  ') || ' ', style: { code: true } }], size);
      // Code keeps its spaces: one line per source line, wrapped only when wider than the page.
      const lines = raw.trim() === '' ? [{ words: [], width: 0, rtl: false }] : this.#lines(words, width, size);
      for (const line of lines) {
        this.#ensure(lh);
        this.#doc.rect(MARGIN + indent, this.#y - 1.5, this.#width - indent, lh).fill('#f2f2f2');
        this.#y -= 0; // the rectangle is under the line
        this.#drawLines([line], x, width, size);
      }
    }
    this.#y += 6;
  }

  #table(rows: Array<{ head: boolean; cells: Run[][] }>, indent: number): void {
    const cols = Math.max(1, ...rows.map((r) => r.cells.length));
    const size = 9;
    const lh = size * 1.4;
    const colW = (this.#width - indent) / cols;
    for (const row of rows) {
      const laid = row.cells.map((c) => this.#lines(this.#words(c, size), colW - 8, size));
      const h = Math.max(1, ...laid.map((l) => l.length)) * lh + 6;
      this.#ensure(h);
      const top = this.#y;
      if (row.head) this.#doc.rect(MARGIN + indent, top, colW * cols, h).fill('#eeeeee');
      laid.forEach((lines, c) => {
        this.#y = top + 3;
        this.#drawLines(lines, MARGIN + indent + c * colW + 4, colW - 8, size);
      });
      for (let c = 0; c < cols; c++)
        this.#doc
          .rect(MARGIN + indent + c * colW, top, colW, h)
          .lineWidth(0.5)
          .strokeColor('#999999')
          .stroke();
      this.#y = top + h;
    }
    this.#y += 8;
  }

  // --- the report --------------------------------------------------------------------------------

  start(m: ReportMeta): void {
    this.#title = m.title.length > 60 ? `${m.title.slice(0, 57)}...` : m.title;
    this.#doc.info.Title = m.title;
    this.#paragraph([{ text: m.title, style: { bold: true } }], 20, 0, { after: 4 });
    this.#paragraph(
      [{ text: `${m.selection}. ${plural(m.total, 'note')}. Generated ${when(m.generatedAt)}.`, style: { color: GREY } }],
      9,
      0,
      { after: 6 },
    );
    const missing = this.#fonts.missing.map((s) => `${FONT_PACKAGES[s].name} (${FONT_PACKAGES[s].pkg})`);
    if (this.#fonts.standardLatin) missing.unshift('letters beyond Western European (fonts-noto-core)');
    if (missing.length)
      this.#paragraph(
        [
          {
            text: `This server has no font for ${missing.join(', ')}: such characters are shown as a middle dot (·).`,
            style: { italic: true, color: '#a05a00' },
          },
        ],
        9,
        0,
        { after: 8 },
      );
    this.#summary(m);
  }

  /** The picture of the period: notes per day or week, the most used tags, open versus done items. */
  #summary(m: ReportMeta): void {
    const s = m.summary;
    const d = this.#doc;
    const x0 = MARGIN;
    const w = this.#width;
    this.#ensure(150);
    this.#paragraph([{ text: `Notes per ${s.unit}`, style: { bold: true } }], 11, 0, { after: 4 });
    const chartH = 70;
    const top = this.#y;
    const max = Math.max(1, ...s.periods.map((p) => p.count));
    const n = Math.max(1, s.periods.length);
    const bw = Math.min(w / n, 36);
    s.periods.forEach((p, i) => {
      const h = (p.count / max) * chartH;
      d.rect(x0 + i * bw + bw * 0.1, top + chartH - h, bw * 0.8, h).fill('#4a7bd0');
    });
    d.moveTo(x0, top + chartH)
      .lineTo(x0 + w, top + chartH)
      .lineWidth(0.5)
      .strokeColor('#888888')
      .stroke();
    this.#y = top + chartH + 3;
    const first = s.periods[0]?.label ?? '';
    const last = s.periods[s.periods.length - 1]?.label ?? '';
    this.#drawText(first, this.#font('latin', 'regular'), 7, x0, this.#y, { color: GREY });
    if (last !== first) this.#drawText(last, this.#font('latin', 'regular'), 7, x0, this.#y, { color: GREY }, { width: w, align: 'right' });
    this.#drawText(`max ${max}`, this.#font('latin', 'regular'), 7, x0, top - 2, { color: GREY }, { width: w, align: 'right' });
    this.#y += 16;

    if (s.tags.length) {
      this.#ensure(30 + s.tags.length * 12);
      this.#paragraph([{ text: 'Most used tags', style: { bold: true } }], 11, 0, { after: 4 });
      const tmax = Math.max(1, ...s.tags.map((t) => t.count));
      for (const t of s.tags) {
        const y = this.#y;
        this.#paragraph([{ text: `#${t.tag}`, style: {} }], 8, 0, { after: 0 });
        const bwid = ((w - 160) * t.count) / tmax;
        d.rect(x0 + 120, y + 1, bwid, 8).fill('#7aa35a');
        this.#drawText(String(t.count), this.#font('latin', 'regular'), 8, x0 + 124 + bwid, y, { color: GREY });
        this.#y = Math.max(this.#y, y + 12);
      }
      this.#y += 6;
    }

    this.#ensure(40);
    this.#paragraph([{ text: 'Action items', style: { bold: true } }], 11, 0, { after: 4 });
    const total = s.open + s.done;
    const y = this.#y;
    if (total > 0) {
      const ow = (w * s.open) / total;
      if (s.open) d.rect(x0, y, ow, 10).fill('#d08a2a');
      if (s.done) d.rect(x0 + ow, y, w - ow, 10).fill('#5a9a5a');
    } else d.rect(x0, y, w, 10).lineWidth(0.5).strokeColor('#bbbbbb').stroke();
    this.#y = y + 13;
    this.#paragraph([{ text: `${s.open} open · ${s.done} done`, style: { color: GREY } }], 8, 0, { after: 10 });
  }

  group(g: ReportGroupHead): void {
    this.#ensure(60);
    this.#y += 8;
    this.#doc.outline.addItem(`${g.label} (${g.count})`);
    this.#paragraph([{ text: `${g.label} (${plural(g.count, 'note')})`, style: { bold: true } }], 15, 0, { after: 6 });
    this.#doc
      .moveTo(MARGIN, this.#y - 3)
      .lineTo(MARGIN + this.#width, this.#y - 3)
      .lineWidth(0.5)
      .strokeColor('#cccccc')
      .stroke();
  }

  note(n: ReportNote): void {
    this.#ensure(50);
    this.#y += 6;
    this.#paragraph([{ text: n.title, style: { bold: true } }], 12.5, 0, { after: 2 });
    const url = this.#noteUrl(n.id);
    this.#paragraph(
      [
        { text: `${when(n.updated_at)}${n.tags.length ? ` · ${n.tags.map((t) => `#${t}`).join(' ')}` : ''} · `, style: { color: GREY } },
        { text: 'open the note', style: url.startsWith('http') ? { link: url, color: LINK } : { color: GREY } },
        ...(url.startsWith('http') ? [] : [{ text: ` (GET ${url})`, style: { color: GREY } }]),
      ],
      8,
      0,
      { after: 5 },
    );
    this.#markdown(parse(n.body));
    if (n.truncated)
      this.#paragraph([{ text: `… the note goes on; the rest is in the note itself.`, style: { italic: true, color: GREY } }], 9, 0);
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

/**
 * A line's words in visual order (Unicode bidi rule L2): from the highest level down to the lowest
 * odd one, every run of words at that level or above is reversed.
 */
function visualOrder(words: Word[]): Word[] {
  const levels = words.map((w) => w.level);
  const max = Math.max(0, ...levels);
  if (max === 0) return words;
  const lowestOdd = Math.min(...levels.map((l) => (l % 2 === 1 ? l : l + 1)));
  let out = [...words];
  for (let level = max; level >= lowestOdd; level--) {
    const next: Word[] = [];
    let run: Word[] = [];
    for (const w of out) {
      if (w.level >= level) run.push(w);
      else {
        next.push(...run.reverse(), w);
        run = [];
      }
    }
    next.push(...run.reverse());
    out = next;
  }
  return out;
}
