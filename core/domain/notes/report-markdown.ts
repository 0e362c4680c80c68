// A note's Markdown, parsed once by markdown-it (CommonMark with GFM tables and strikethrough; raw
// HTML is text, never markup) into tokens every report rendering reads: HTML renders them (task
// list items as check boxes), PDF lays them out (report-pdf.ts), and Markdown keeps the note's own
// text with its headings moved below the report's.
import MarkdownIt from 'markdown-it';
import type { Token } from 'markdown-it';

const md = new MarkdownIt('default', { html: false, linkify: false, typographer: false, breaks: false });

const TASK = /^\[([ xX])\][ \t]+/;

/**
 * Marks GFM task list items: a list item whose text starts with `[ ]` or `[x]` gets the attribute
 * data-task ("open" or "done") on its list_item_open and the marker taken off its text.
 */
md.core.ruler.push('folio_tasks', (state) => {
  const tokens = state.tokens;
  for (let i = 2; i < tokens.length; i++) {
    const inline = tokens[i]!;
    if (inline.type !== 'inline' || tokens[i - 1]!.type !== 'paragraph_open' || tokens[i - 2]!.type !== 'list_item_open') continue;
    const m = TASK.exec(inline.content);
    const first = inline.children?.[0];
    if (!m || !first || first.type !== 'text' || !TASK.test(first.content)) continue;
    tokens[i - 2]!.attrSet('data-task', m[1] === ' ' ? 'open' : 'done');
    first.content = first.content.replace(TASK, '');
    inline.content = inline.content.replace(TASK, '');
  }
});

// A task item shows its check box (disabled: a report is read, not edited).
md.renderer.rules['list_item_open'] = (tokens, idx, options, _env, self) => {
  const t = tokens[idx]!;
  const task = t.attrGet('data-task');
  if (!task) return self.renderToken(tokens, idx, options);
  return `<li class="task"><input type="checkbox" disabled${task === 'done' ? ' checked' : ''}> `;
};
// Links leave the report in a new context, without the report as referrer.
md.renderer.rules['link_open'] = (tokens, idx, options, _env, self) => {
  tokens[idx]!.attrSet('rel', 'noopener noreferrer nofollow');
  return self.renderToken(tokens, idx, options);
};

export function parse(body: string): Token[] {
  return md.parse(body, {});
}

/** The note's body as HTML (escaped text, safe links only: markdown-it refuses javascript: and the like). */
export function toHtml(tokens: Token[]): string {
  return md.renderer.render(tokens, md.options, {});
}

/**
 * The body with its ATX headings moved `by` levels down (at most to h6), so a note's `# Decisions`
 * sits below the report's own headings. Headings are found by the parser (never in code blocks).
 */
export function shiftHeadings(body: string, tokens: Token[], by: number): string {
  const lines = body.split('\n');
  for (const t of tokens) {
    if (t.type !== 'heading_open' || !t.map || !t.markup.startsWith('#')) continue;
    const at = t.map[0];
    const line = lines[at];
    if (line === undefined) continue;
    const level = Math.min(6, t.markup.length + by);
    lines[at] = line.replace(/^(\s{0,3})#{1,6}/, `$1${'#'.repeat(level)}`);
  }
  return lines.join('\n');
}

export type { Token };
