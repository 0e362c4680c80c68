// Transcripts as a source of global search (core/domain/search): a finished transcription is its
// file's name and its segments, each with its start time, so a hit can say when the words were said.
// A re-run keeps the last transcript searchable until the new one replaces it.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { SearchDocument, SearchSource } from '../../contract/search.ts';
import { TRANSCRIPT_KIND } from './service.ts';
import type { TranscriptResult } from './types.ts';

async function rows<T>(em: EntityManager, sql: string, params: unknown[] = []): Promise<T[]> {
  return await em.execute<T[]>(sql, params);
}

export const transcriptsSearchSource: SearchSource = {
  kind: TRANSCRIPT_KIND,
  namespace: 'transcribe',
  scope: 'transcribe:read',
  link: (id) => `/transcribe/jobs/${id}`,
  async load(em: EntityManager, owner: string, id: string): Promise<SearchDocument | null> {
    const [t] = await rows<{ name: string | null; tags: string[]; done_ms: number; result: TranscriptResult }>(
      em,
      `select f.name, t.tags, (extract(epoch from coalesce(t.finished_at, t.created_at)) * 1000)::float8 as done_ms, t.result
         from transcriptions t left join files f on f.id = t.file_id and f.owner_id = t.owner_id
        where t.id = ? and t.owner_id = ? and t.result is not null`,
      [id, owner],
    );
    if (!t) return null;
    const segments = Array.isArray(t.result.segments) ? t.result.segments : [];
    const parts: SearchDocument['parts'] =
      segments.length > 0
        ? segments.map((s) => ({ text: String(s.text ?? ''), where: { start_seconds: Math.round(Number(s.start) * 100) / 100 } }))
        : [{ text: String(t.result.text ?? '') }];
    return {
      title: `Transcript: ${t.name ?? 'a deleted file'}`,
      tags: t.tags,
      updatedAt: new Date(t.done_ms),
      contentType: null,
      parts,
    };
  },
  async all(em, after, limit) {
    return rows<{ owner: string; id: string }>(
      em,
      `select owner_id as owner, id from transcriptions where result is not null and id > ?::uuid order by id limit ?`,
      [after ?? '00000000-0000-0000-0000-000000000000', limit],
    );
  },
  async count(em) {
    const [r] = await rows<{ n: number }>(em, `select count(*)::int as n from transcriptions where result is not null`);
    return r?.n ?? 0;
  },
};
