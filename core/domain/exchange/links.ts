// How notes point at notes and files, inside Folio and in an archive. In Folio a note links to
// another note as /api/v1/notetaker/notes/<id> and to a file as /api/v1/filedb/files/<id>/content
// (Markdown links and images). An export writes those as relative paths inside the archive; an
// import turns relative paths (and an Obsidian vault's [[wiki links]] and ![[embeds]]) back into
// Folio links to what it imported. Code (fenced blocks and `inline code`) is left as it is.
import path from 'node:path/posix';

export const NOTE_LINK = (id: string) => `/api/v1/notetaker/notes/${id}`;
export const FILE_LINK = (id: string) => `/api/v1/filedb/files/${id}/content`;

const UUID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
const FOLIO_TARGET = new RegExp(`^(?:https?://[^/\\s)]+)?/api/v1/(?:notetaker/notes/(${UUID})|filedb/files/(${UUID})/content)$`);

/** A name safe as one path segment on every system: no separators, reserved characters or controls. */
export function segment(name: string, fallback = 'untitled', max = 100): string {
  let s = name
    .normalize('NFC')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f/\\:*?"<>|#^[\]]/g, '-')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^\.+/, '');
  s = Array.from(s).slice(0, max).join('').trim();
  return s === '' ? fallback : s;
}

/** Picks names unique without regard to case or Unicode normalization: "a", "a (2)", ... */
export class UniqueNames {
  readonly #seen = new Set<string>();
  take(dir: string, base: string, ext: string): string {
    for (let i = 1; ; i++) {
      const candidate = `${dir}${base}${i === 1 ? '' : ` (${i})`}${ext}`;
      const key = pathKey(candidate);
      if (!this.#seen.has(key)) {
        this.#seen.add(key);
        return candidate;
      }
    }
  }
  reserve(p: string): void {
    this.#seen.add(pathKey(p));
  }
}

/** The identity of a path in an archive: NFC, case-folded (what collides on macOS and Windows). */
export function pathKey(p: string): string {
  return p.normalize('NFC').toLowerCase();
}

/** A path as a Markdown link target: spaces and the characters that end a link escaped. */
export function linkTarget(p: string): string {
  return p.replace(/[%\s()<>[\]]/g, (c) => encodeURIComponent(c));
}

/** `to` relative to the folder of `from` (both archive paths). */
export function relative(from: string, to: string): string {
  const r = path.relative(path.dirname(from), to);
  return r === '' ? path.basename(to) : r;
}

/** Runs `fn` over the parts of Markdown that are not code. */
function outsideCode(md: string, fn: (text: string) => string): string {
  const parts = md.split(/(^(?:```|~~~)[^\n]*\n[\s\S]*?^(?:```|~~~)[ \t]*$|`[^`\n]+`)/m);
  return parts.map((p, i) => (i % 2 === 1 ? p : fn(p))).join('');
}

const MD_LINK = /(!?\[[^\]\n]*\]\()(<[^>\n]*>|[^)\s]+)((?:\s+"[^"\n]*")?\))/g;

/** Export: Folio links to what is in the archive become relative paths from the note `from`. */
export function toArchiveLinks(body: string, from: string, pathOf: (kind: 'note' | 'file', id: string) => string | undefined): string {
  return outsideCode(body, (text) =>
    text.replace(MD_LINK, (all, open: string, target: string, close: string) => {
      const m = FOLIO_TARGET.exec(target);
      if (!m) return all;
      const to = m[1] ? pathOf('note', m[1].toLowerCase()) : pathOf('file', m[2]!.toLowerCase());
      return to === undefined ? all : `${open}${linkTarget(relative(from, to))}${close}`;
    }),
  );
}

/** What an import knows of the archive, to resolve links. */
export interface Resolver {
  /** The entry at this exact archive path (by pathKey), if any. */
  byPath(key: string): Target | undefined;
  /** Obsidian's rule for [[name]]: a note or file with this base name anywhere in the vault. */
  byName(key: string): Target | undefined;
}
export interface Target {
  kind: 'note' | 'file';
  path: string;
  /** The Folio id it has (or will have); undefined when it was not imported. */
  id: string | undefined;
}

export interface Rewritten {
  body: string;
  /** Files the note links to or embeds: they become its attachments. */
  files: Set<string>;
  /** Links that pointed into the archive at something that was not imported, or at nothing. */
  unresolved: string[];
}

function decode(target: string): string {
  const t = target.startsWith('<') && target.endsWith('>') ? target.slice(1, -1) : target;
  try {
    return decodeURIComponent(t);
  } catch {
    return t;
  }
}

/**
 * Import: relative links to notes and files of the archive become Folio links; with `obsidian`,
 * [[wiki links]] and ![[embeds]] too (unresolved ones stay as they are and are reported).
 */
export function toFolioLinks(body: string, from: string, r: Resolver, obsidian: boolean): Rewritten {
  const files = new Set<string>();
  const unresolved: string[] = [];
  const link = (t: Target, embed: boolean, label: string): string | undefined => {
    if (t.id === undefined) return undefined;
    if (t.kind === 'file') {
      files.add(t.path);
      return `${embed ? '!' : ''}[${label}](${FILE_LINK(t.id)})`;
    }
    return `[${label}](${NOTE_LINK(t.id)})`;
  };
  const out = outsideCode(body, (text) => {
    let s = text.replace(MD_LINK, (all, open: string, target: string, close: string) => {
      if (/^[a-z][a-z0-9+.-]*:|^\/|^#/i.test(target)) return all;
      const rel = decode(target).split('#')[0]!;
      if (rel === '') return all;
      const joined = path.normalize(path.join(path.dirname(from), rel));
      if (joined.startsWith('../')) return all;
      const t = r.byPath(pathKey(joined));
      if (!t) return all;
      if (t.id === undefined) {
        unresolved.push(rel);
        return all;
      }
      if (t.kind === 'file') files.add(t.path);
      return `${open}${t.kind === 'file' ? FILE_LINK(t.id) : NOTE_LINK(t.id)}${close}`;
    });
    if (obsidian)
      s = s.replace(/(!?)\[\[([^\]|#\n]*)(#[^\]|\n]*)?(?:\|([^\]\n]*))?\]\]/g, (all, bang: string, name: string, _h, alias?: string) => {
        const n = name.trim();
        if (n === '') return all;
        const t = resolveWiki(n, from, r);
        const label = (alias ?? n.split('/').pop()!.replace(/\.md$/i, '')).trim();
        const done = t ? link(t, bang === '!', label) : undefined;
        if (done === undefined) unresolved.push(`[[${n}]]`);
        return done ?? all;
      });
    return s;
  });
  return { body: out, files, unresolved };
}

function resolveWiki(name: string, from: string, r: Resolver): Target | undefined {
  const withMd = /\.[a-z0-9]{1,8}$/i.test(name) ? [name] : [`${name}.md`, name];
  for (const n of withMd) {
    const inDir = path.normalize(path.join(path.dirname(from), n));
    const t = r.byPath(pathKey(n)) ?? r.byPath(pathKey(inDir));
    if (t) return t;
  }
  for (const n of withMd) {
    const t = r.byName(pathKey(path.basename(n)));
    if (t) return t;
  }
  return undefined;
}

/** Obsidian's inline #tags (not headings, not in code, not all digits), in order of appearance. */
export function inlineTags(body: string): string[] {
  const found: string[] = [];
  outsideCode(body, (text) => {
    for (const m of text.matchAll(/(?:^|[\s(,;])#([\p{L}\p{N}_\-/]+)/gu)) {
      const tag = m[1]!.replace(/\/+$/, '');
      if (tag !== '' && !/^\d+$/.test(tag)) found.push(tag);
    }
    return text;
  });
  return found;
}
