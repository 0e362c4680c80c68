// Report renderers: Markdown, HTML and PDF (report-pdf.ts) from the same events (start, group,
// note, end), over one model: each note's Markdown parsed once (report-markdown.ts), and a summary
// of the period. Each renderer buffers only what it produced since the last take(), so a report
// streams in chunks of one fetched batch and memory stays bounded whatever the selection.
import { parse, shiftHeadings, toHtml } from './report-markdown.ts';

/** The picture of the period a report opens with. */
export interface ReportSummary {
  /** The bars' period: a day, an ISO week or a month, whichever keeps the chart readable. */
  unit: 'day' | 'week' | 'month';
  periods: Array<{ label: string; count: number }>;
  /** The most used tags, most used first. */
  tags: Array<{ tag: string; count: number }>;
  /** Action items (task list items) open and done over the selected notes. */
  open: number;
  done: number;
}

export interface ReportMeta {
  title: string;
  /** One line saying what was selected and how it is grouped. */
  selection: string;
  generatedAt: string;
  total: number;
  openItems: number;
  summary: ReportSummary;
  /** The groups to come (label and count), for a table of contents. */
  groups?: ReportGroupHead[];
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
  /** The note's Markdown (its first REPORT_BODY_CHARS characters). */
  body: string;
  /** The body goes on beyond what the report shows. */
  truncated: boolean;
}

/** How much of one note a report shows (a report is a digest; the note has the rest). */
export const REPORT_BODY_CHARS = 20_000;

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

/** A Markdown table cell: no pipes or line breaks. */
const cell = (x: string) => mdInline(x).replace(/\n/g, ' ');

export class MarkdownRenderer implements Renderer {
  #out: string[] = [];
  readonly #noteUrl: (id: string) => string;
  constructor(opts: { baseUrl?: string } = {}) {
    this.#noteUrl = noteUrl(opts.baseUrl);
  }
  start(m: ReportMeta): void {
    const s = m.summary;
    const periods = s.periods.map((p) => `| ${cell(p.label)} | ${p.count} |`).join('\n');
    const tags = s.tags.map((t) => `#${t.tag} (${t.count})`).join(', ');
    this.#out.push(
      `# ${mdInline(m.title)}\n\n${mdInline(m.selection)}  \n${plural(m.total, 'note')}, ${plural(m.openItems, 'open action item')}. Generated ${when(m.generatedAt)}.\n` +
        `\n## Summary\n\n| ${s.unit} | notes |\n| --- | ---: |\n${periods}\n\n` +
        `${tags ? `Most used tags: ${tags}.  \n` : ''}Action items: ${s.open} open, ${s.done} done.\n`,
    );
  }
  group(g: ReportGroupHead): void {
    this.#out.push(`\n## ${mdInline(g.label)} (${plural(g.count, 'note')})\n`);
  }
  note(n: ReportNote): void {
    let out = `\n### ${mdInline(n.title)}\n\n_${when(n.updated_at)}${n.tags.length ? ` · ${n.tags.map((t) => `#${t}`).join(' ')}` : ''} · [note ${n.id}](${this.#noteUrl(n.id)})_\n`;
    const body = n.body.trim();
    // The note's own Markdown, its headings below the report's (### is the note's title).
    if (body) out += `\n${shiftHeadings(body, parse(body), 3)}\n`;
    if (n.truncated) out += `\n_… the note goes on; the rest is in the note itself._\n`;
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

const STYLE = `body{font:15px/1.5 system-ui,"Noto Sans",sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#222}
h2{border-bottom:1px solid #ddd;padding-bottom:.2rem;margin-top:2rem}h3{margin-bottom:.2rem}
.meta{color:#666;font-size:.85rem}blockquote{margin:.5rem 0;padding-left:.8rem;border-left:3px solid #ddd;color:#444}
li.task{list-style:none}li.task input{margin:0 .4rem 0 -1.3rem}pre{background:#f4f4f4;padding:.5rem;overflow:auto}
table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:.2rem .5rem}th{background:#eee}
.body h1,.body h2,.body h3,.body h4{font-size:1rem;border:0;margin:.8rem 0 .3rem}nav ol{columns:2}
.summary svg{display:block;max-width:100%;height:auto}`;

const slug = (label: string) => `g-${encodeURIComponent(label).replace(/[^A-Za-z0-9-]/g, '_')}`;

/** The summary as inline SVG: notes per period as bars, the most used tags, open versus done items. */
function summarySvg(s: ReportSummary): string {
  const w = 640;
  const chartH = 90;
  const max = Math.max(1, ...s.periods.map((p) => p.count));
  const bw = Math.min(w / Math.max(1, s.periods.length), 48);
  const bars = s.periods
    .map((p, i) => {
      const bh = (p.count / max) * chartH;
      return `<rect x="${(i * bw + bw * 0.1).toFixed(1)}" y="${(chartH - bh).toFixed(1)}" width="${(bw * 0.8).toFixed(1)}" height="${bh.toFixed(1)}" fill="#4a7bd0"><title>${h(p.label)}: ${plural(p.count, 'note')}</title></rect>`;
    })
    .join('');
  const first = s.periods[0]?.label ?? '';
  const last = s.periods[s.periods.length - 1]?.label ?? '';
  const chart = `<svg role="img" aria-label="Notes per ${s.unit}" viewBox="0 0 ${w} ${chartH + 16}" width="${w}" height="${chartH + 16}">${bars}<line x1="0" y1="${chartH}" x2="${w}" y2="${chartH}" stroke="#888"/><text x="0" y="${chartH + 13}" font-size="11" fill="#666">${h(first)}</text><text x="${w}" y="${chartH + 13}" font-size="11" fill="#666" text-anchor="end">${h(last)}</text><text x="${w}" y="10" font-size="11" fill="#666" text-anchor="end">max ${max}</text></svg>`;
  const tmax = Math.max(1, ...s.tags.map((t) => t.count));
  const tags = s.tags.length
    ? `<h3>Most used tags</h3><svg role="img" aria-label="Most used tags" viewBox="0 0 ${w} ${s.tags.length * 18}" width="${w}" height="${s.tags.length * 18}">${s.tags
        .map((t, i) => {
          const bl = ((w - 200) * t.count) / tmax;
          return `<text x="0" y="${i * 18 + 12}" font-size="12">#${h(t.tag)}</text><rect x="150" y="${i * 18 + 3}" width="${bl.toFixed(1)}" height="11" fill="#7aa35a"/><text x="${(155 + bl).toFixed(1)}" y="${i * 18 + 12}" font-size="11" fill="#666">${t.count}</text>`;
        })
        .join('')}</svg>`
    : '';
  const total = s.open + s.done;
  const ow = total ? (w * s.open) / total : 0;
  const items = `<h3>Action items</h3><svg role="img" aria-label="${s.open} open, ${s.done} done" viewBox="0 0 ${w} 14" width="${w}" height="14">${
    total
      ? `<rect x="0" y="0" width="${ow.toFixed(1)}" height="14" fill="#d08a2a"/><rect x="${ow.toFixed(1)}" y="0" width="${(w - ow).toFixed(1)}" height="14" fill="#5a9a5a"/>`
      : `<rect x="0" y="0" width="${w}" height="14" fill="none" stroke="#bbb"/>`
  }</svg><p class="meta">${s.open} open · ${s.done} done</p>`;
  return `<section class="summary"><h2>Summary</h2><h3>Notes per ${s.unit}</h3>${chart}${tags}${items}</section>\n`;
}

export class HtmlRenderer implements Renderer {
  #out: string[] = [];
  #inGroup = false;
  readonly #noteUrl: (id: string) => string;
  constructor(opts: { baseUrl?: string } = {}) {
    this.#noteUrl = noteUrl(opts.baseUrl);
  }
  start(m: ReportMeta): void {
    this.#out.push(
      `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${h(m.title)}</title><style>${STYLE}</style></head><body>\n` +
        `<h1>${h(m.title)}</h1>\n<p class="meta">${h(m.selection)}<br>${plural(m.total, 'note')}, ${plural(m.openItems, 'open action item')}. Generated ${h(when(m.generatedAt))}.</p>\n` +
        summarySvg(m.summary),
    );
    if (m.groups && m.groups.length > 1)
      this.#out.push(
        `<nav><h2>Contents</h2><ol>${m.groups.map((g) => `<li><a href="#${slug(g.label)}">${h(g.label)}</a> (${g.count})</li>`).join('')}</ol></nav>\n`,
      );
  }
  group(g: ReportGroupHead): void {
    if (this.#inGroup) this.#out.push('</section>\n');
    this.#inGroup = true;
    this.#out.push(`<section id="${slug(g.label)}">\n<h2>${h(g.label)} <span class="meta">(${plural(g.count, 'note')})</span></h2>\n`);
  }
  note(n: ReportNote): void {
    let s = `<article>\n<h3>${h(n.title)}</h3>\n<p class="meta">${h(when(n.updated_at))}${n.tags.length ? ` · ${n.tags.map((t) => `#${h(t)}`).join(' ')}` : ''} · <a href="${h(this.#noteUrl(n.id))}">note ${h(n.id)}</a></p>\n`;
    if (n.body.trim()) s += `<div class="body">\n${toHtml(parse(n.body))}</div>\n`;
    if (n.truncated) s += `<p class="meta">… the note goes on; the rest is in the note itself.</p>\n`;
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

function noteUrl(baseUrl: string | undefined): (id: string) => string {
  const base = (baseUrl ?? '').replace(/\/+$/, '');
  return (id) => `${base}/api/v1/notetaker/notes/${id}`;
}
