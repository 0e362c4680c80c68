// YAML front matter of a Markdown note: written by export, read by import. Reading is careful: the
// block is capped in size, YAML aliases are capped (a "billion laughs" bomb is refused, not
// expanded), and anything that is not a mapping is an error the report names.
import { parseDocument, stringify } from 'yaml';

/** A front matter block larger than this is refused (a note's metadata is a few hundred bytes). */
export const FRONT_MATTER_MAX_BYTES = 64 * 1024;
/** The most YAML aliases one block may use; a bomb needs thousands. */
const MAX_ALIASES = 50;

export class BadFrontMatter extends Error {
  override name = 'BadFrontMatter';
}

export interface Parsed {
  /** The front matter as a mapping; {} when there is none. */
  data: Record<string, unknown>;
  /** The Markdown after it. */
  body: string;
  hasFrontMatter: boolean;
  /** Set when a leading --- block was not front matter and was kept as part of the body. */
  kept?: string;
}

const OPEN = /^---[ \t]*\r?\n/;
const CLOSE = /^(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/m;

/**
 * `lenient`: a leading `---` block that parses but is not a mapping (a Markdown horizontal rule
 * followed by text) is kept in the body instead of refused.
 */
export function parseNote(text: string, lenient = false): Parsed {
  const src = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const open = OPEN.exec(src);
  if (!open) return { data: {}, body: src, hasFrontMatter: false };
  const rest = src.slice(open[0].length);
  const close = CLOSE.exec(rest);
  if (!close) return { data: {}, body: src, hasFrontMatter: false };
  const block = rest.slice(0, close.index);
  if (Buffer.byteLength(block) > FRONT_MATTER_MAX_BYTES)
    throw new BadFrontMatter(`front matter is larger than ${FRONT_MATTER_MAX_BYTES / 1024} KiB`);
  const doc = parseDocument(block, { prettyErrors: false, uniqueKeys: false });
  if (doc.errors.length > 0) throw new BadFrontMatter(`front matter is not YAML: ${doc.errors[0]!.message.split('\n')[0]}`);
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (err) {
    throw new BadFrontMatter(`front matter refused: ${(err as Error).message.split('\n')[0]} (too many YAML aliases?)`);
  }
  if (data === null || data === undefined) data = {};
  if ((typeof data !== 'object' || Array.isArray(data)) && lenient)
    return {
      data: {},
      body: src,
      hasFrontMatter: false,
      kept: 'starts with --- but what follows is not a YAML mapping: read as a horizontal rule, the whole file is the body',
    };
  if (typeof data !== 'object' || Array.isArray(data)) throw new BadFrontMatter('front matter must be a YAML mapping (key: value lines)');
  return { data: data as Record<string, unknown>, body: rest.slice(close.index + close[0].length), hasFrontMatter: true };
}

/** The note as a file: front matter (keys in the order given), then the body as it is. */
export function writeNote(data: Record<string, unknown>, body: string): string {
  const yaml = stringify(data, { lineWidth: 0 });
  return `---\n${yaml}---\n${body}`;
}

export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined;
}

/** A date as front matter gives it (YAML may already have made it a Date). */
export function date(v: unknown): string | undefined {
  if (v instanceof Date && Number.isFinite(v.getTime())) return v.toISOString();
  if (typeof v === 'string' && Number.isFinite(Date.parse(v))) return new Date(Date.parse(v)).toISOString();
  return undefined;
}

/** Tags as a list, or as Obsidian's comma or space separated string. */
export function tagList(v: unknown): string[] {
  if (Array.isArray(v)) return v.filter((t): t is string => typeof t === 'string').map((t) => t.replace(/^#/, ''));
  if (typeof v === 'string')
    return v
      .split(/[,\s]+/)
      .map((t) => t.replace(/^#/, ''))
      .filter(Boolean);
  return [];
}
