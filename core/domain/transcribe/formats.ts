// A transcript as a file: plain text, SubRip (srt), WebVTT (vtt) or JSON (text, segments, words).
import type { ResultFormat, TranscriptResult } from './types.ts';

function stamp(seconds: number, sep: ',' | '.'): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(h)}:${pad(m)}:${pad(s)}${sep}${pad(ms % 1000, 3)}`;
}

export const FORMAT_TYPES: Record<ResultFormat, string> = {
  txt: 'text/plain; charset=utf-8',
  srt: 'application/x-subrip; charset=utf-8',
  vtt: 'text/vtt; charset=utf-8',
  json: 'application/json; charset=utf-8',
};

export function renderTranscript(r: TranscriptResult, format: ResultFormat): string {
  if (format === 'json') return JSON.stringify(r);
  if (format === 'txt') return r.text ? `${r.text}\n` : '';
  const cues = r.segments.map((seg, i) => {
    const times = `${stamp(seg.start, format === 'srt' ? ',' : '.')} --> ${stamp(seg.end, format === 'srt' ? ',' : '.')}`;
    return format === 'srt' ? `${i + 1}\n${times}\n${seg.text}\n` : `${times}\n${seg.text}\n`;
  });
  return format === 'srt' ? cues.join('\n') : `WEBVTT\n\n${cues.join('\n')}`;
}

/** The transcript as a note's Markdown: the text by segment, each with its start time. */
export function transcriptMarkdown(r: TranscriptResult, fileName: string): string {
  const mmss = (sec: number) => `${Math.floor(sec / 60)}:${String(Math.floor(sec % 60)).padStart(2, '0')}`;
  const lines = r.segments.length ? r.segments.map((s) => `**[${mmss(s.start)}]** ${s.text}`) : [r.text || '(no speech was recognised)'];
  return `Transcript of \`${fileName.replace(/`/g, "'")}\` (${mmss(r.duration)}${r.language ? `, ${r.language}` : ''}).\n\n${lines.join('\n\n')}\n`;
}
