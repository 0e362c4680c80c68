// Notes as a source of global search (core/domain/search): a live note is its title, tags and body,
// the body in parts under its headings, so a hit can say which section it is in.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { SearchDocument, SearchSource } from '../../contract/search.ts';
import { headings } from './markdown.ts';
import { ms, rows } from './rows.ts';
import { NOTE_KIND } from './service.ts';

/** The body in parts: the text before the first heading, then each heading's section (heading line included). */
export function noteParts(body: string): SearchDocument['parts'] {
  const lines = body.split('\n');
  const parts: SearchDocument['parts'] = [];
  let from = 0;
  let heading: string | undefined;
  const flush = (to: number) => {
    const text = lines.slice(from, to).join('\n');
    if (text.trim() !== '') parts.push(heading ? { text, where: { heading } } : { text });
  };
  for (const h of headings(lines)) {
    flush(h.line - 1);
    from = h.line - 1;
    heading = h.text || undefined;
  }
  flush(lines.length);
  return parts;
}

export const notesSearchSource: SearchSource = {
  kind: NOTE_KIND,
  namespace: 'notetaker',
  scope: 'notes:read',
  link: (id) => `/notetaker/notes/${id}`,
  async load(em: EntityManager, owner: string, id: string): Promise<SearchDocument | null> {
    const [n] = await rows<{ title: string; body: string; tags: string[]; updated_ms: number }>(
      em,
      `select title, body, tags, ${ms('updated_at', 'updated_ms')} from notes where id = ? and owner_id = ? and deleted_at is null`,
      [id, owner],
    );
    if (!n) return null;
    return { title: n.title, tags: n.tags, updatedAt: new Date(n.updated_ms), contentType: null, parts: noteParts(n.body) };
  },
  async all(em, after, limit) {
    return rows<{ owner: string; id: string }>(
      em,
      `select owner_id as owner, id from notes where deleted_at is null and id > ?::uuid order by id limit ?`,
      [after ?? '00000000-0000-0000-0000-000000000000', limit],
    );
  },
  async count(em) {
    const [r] = await rows<{ n: number }>(em, `select count(*)::int as n from notes where deleted_at is null`);
    return r?.n ?? 0;
  },
};
