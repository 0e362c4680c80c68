// What plugins get as ctx.services.transcribe: the transcription service acting as the caller, each
// operation asking the policy for the scope transcribe first. The transcript is read in parts
// within a character budget, so a long recording never overflows an agent's call.
import type { DomainCaller } from '../../contract/domain.ts';
import { BadArguments } from '../../contract/errors.ts';
import type { TranscribeService } from './service.ts';
import type { CreateTranscription, JobStatus, Segment, Transcription } from './types.ts';

/** A part of a transcript: its segments from `offset` that fit the budget. */
export interface TranscriptPart {
  job_id: string;
  language: string | null;
  duration: number;
  /** Index of the first segment in this part. */
  offset: number;
  segments: Segment[];
  /** Where the next part starts; null when this part reaches the end. */
  next_offset: number | null;
  /** Segments in the whole transcript. */
  total: number;
}

export interface TranscribeApi {
  start(input: CreateTranscription): Promise<Transcription>;
  get(id: string): Promise<Transcription>;
  list(opts?: { limit?: number; cursor?: string; status?: JobStatus }): Promise<{ items: Transcription[]; next_cursor: string | null }>;
  cancel(id: string): Promise<Transcription>;
  retry(id: string): Promise<Transcription>;
  /** The transcript's segments from `offset`, as many as fit in `maxChars` (at least one). */
  transcript(id: string, opts: { offset?: number; maxChars: number }): Promise<TranscriptPart>;
}

export function bindTranscribe(t: TranscribeService, caller: DomainCaller): TranscribeApi {
  const p = caller.principal;
  const entitle = (what: string) => caller.entitle(['transcribe'], `transcribe.${what}`);
  const read = (what: string) => caller.entitle(['transcribe:read'], `transcribe.${what}`);
  return {
    start: async (input) => (entitle('start'), t.create(p, input)),
    get: async (id) => (read('get'), t.get(p, id)),
    list: async (opts) => (read('list'), t.list(p, opts)),
    cancel: async (id) => (entitle('cancel'), t.cancel(p, id)),
    retry: async (id) => (entitle('retry'), t.retry(p, id)),
    async transcript(id, { offset = 0, maxChars }) {
      read('transcript');
      if (!Number.isInteger(offset) || offset < 0)
        throw new BadArguments('offset must be a segment index', [{ path: 'offset', message: 'must be >= 0' }]);
      const { result } = await t.result(p, id, 'json');
      const segments: Segment[] = [];
      let used = 0;
      let i = offset;
      for (; i < result.segments.length; i++) {
        const s = result.segments[i]!;
        const cost = s.text.length + 40;
        if (segments.length > 0 && used + cost > maxChars) break;
        segments.push(s);
        used += cost;
      }
      return {
        job_id: id,
        language: result.language,
        duration: result.duration,
        offset,
        segments,
        next_offset: i < result.segments.length ? i : null,
        total: result.segments.length,
      };
    },
  };
}
