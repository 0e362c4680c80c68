// A note's Markdown drawn for a person at a terminal: headings without their '#', emphasis, lists,
// code and tables styled (marked parses, marked-terminal draws), wrapped to the terminal's width.
// Control characters in the note are dropped there, so a note cannot send escape sequences to the
// terminal. NO_COLOR keeps the layout and drops the colours. Loaded only when it is needed.
import { stripVTControlCharacters } from 'node:util';

export async function forTerminal(markdown: string, width = process.stdout.columns || 80): Promise<string> {
  const [{ Marked }, { markedTerminal }] = await Promise.all([import('marked'), import('marked-terminal')]);
  const marked = new Marked().use(markedTerminal({ width: Math.min(width, 100), reflowText: true, showSectionPrefix: false, tab: 2 }));
  const out = await marked.parse(markdown);
  const text = process.env['NO_COLOR'] ? stripVTControlCharacters(out) : out;
  return text.replace(/\n+$/, '') + '\n';
}
