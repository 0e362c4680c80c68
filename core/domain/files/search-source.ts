// Files as a source of global search (core/domain/search): a live file is its name and the text
// extracted from its current version, a PDF page by page so a hit can say which page it is on.
// A file whose text is not extracted (yet, or ever) is found by its name.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { SearchDocument, SearchSource } from '../../contract/search.ts';
import { ms } from './rows.ts';
import { FILE_KIND } from './service.ts';

async function rows<T>(em: EntityManager, sql: string, params: unknown[] = []): Promise<T[]> {
  return await em.execute<T[]>(sql, params);
}

export const filesSearchSource: SearchSource = {
  kind: FILE_KIND,
  namespace: 'files',
  scope: 'files:read',
  link: (id) => `/filedb/files/${id}`,
  async load(em: EntityManager, owner: string, id: string): Promise<SearchDocument | null> {
    const [f] = await rows<{ name: string; content_type: string; updated_ms: number; text: string | null; pages: unknown }>(
      em,
      `select f.name, f.content_type, ${ms('f.updated_at', 'updated_ms')}, v.extracted_text as text, v.extracted_pages as pages
         from files f join file_versions v on v.file_id = f.id and v.version = f.version
        where f.id = ? and f.owner_id = ? and f.deleted_at is null`,
      [id, owner],
    );
    if (!f) return null;
    const pages = Array.isArray(f.pages) ? (f.pages as unknown[]).filter((p): p is string => typeof p === 'string') : [];
    const parts: SearchDocument['parts'] =
      pages.length > 0 ? pages.map((text, i) => ({ text, where: { page: i + 1 } })) : f.text ? [{ text: f.text }] : [];
    return { title: f.name, tags: [], updatedAt: new Date(f.updated_ms), contentType: f.content_type, parts };
  },
  async all(em, after, limit) {
    return rows<{ owner: string; id: string }>(
      em,
      `select owner_id as owner, id from files where deleted_at is null and id > ?::uuid order by id limit ?`,
      [after ?? '00000000-0000-0000-0000-000000000000', limit],
    );
  },
  async count(em) {
    const [r] = await rows<{ n: number }>(em, `select count(*)::int as n from files where deleted_at is null`);
    return r?.n ?? 0;
  },
};
