// The transcribe domain's shapes: a transcription job over a stored audio file, and its result.
/** The config's `transcribe` section (core/kernel/config.ts). */
export interface TranscribeSettings {
  engine: EngineName;
  allowEngineChoice: boolean;
  maxSeconds: number;
  timeoutSeconds: number;
  /** Transcriptions at once per process. */
  concurrency: number;
  /** Jobs one user may have queued or running at once; one more is 429 too_many_queued_jobs. */
  maxQueuedPerUser: number;
  local: { ffmpeg: string; ffprobe: string; pocketsphinx: string; model: string | null };
  openai: { url: string | null; key: string | null; model: string };
}
export type EngineName = 'local' | 'openai';
export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
export const RESULT_FORMATS = ['txt', 'srt', 'vtt', 'json'] as const;
export type ResultFormat = (typeof RESULT_FORMATS)[number];

export interface Segment {
  /** Seconds from the start. */
  start: number;
  end: number;
  text: string;
}

export interface Word {
  start: number;
  end: number;
  word: string;
  /** 0..1, where the engine gives one. */
  confidence?: number;
}

export interface TranscriptResult {
  text: string;
  /** The language given or detected (BCP 47 / ISO 639-1 where known). */
  language: string | null;
  /** The audio's length in seconds. */
  duration: number;
  segments: Segment[];
  words: Word[];
}

/** A transcription job as every surface shows it. */
export interface Transcription {
  id: string;
  file_id: string;
  file_version: number;
  status: JobStatus;
  /** 0..100. */
  progress: number;
  engine: EngineName;
  /** The model the engine used (pocketsphinx's en-us, whisper-1, ...). */
  model: string | null;
  language: string | null;
  tags: string[];
  /** Write the transcript as a note when it succeeds. */
  to_note: boolean;
  /** The note it was written to (a re-run makes a new version of the same note). */
  note_id: string | null;
  /** What went wrong, in words a person can act on. */
  error: string | null;
  /** The audio's length in seconds, once known. */
  duration: number | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export interface CreateTranscription {
  file_id: string;
  version?: number;
  language?: string;
  engine?: EngineName;
  tags?: string[];
  to_note?: boolean;
}
