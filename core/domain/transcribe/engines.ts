// Speech-to-text engines behind one interface. `local` (the default, offline): Debian's
// pocketsphinx with pocketsphinx-en-us, on 16 kHz mono WAV made by ffmpeg, with per-word times.
// `openai`: any server that speaks OpenAI's POST /v1/audio/transcriptions (verbose_json). Each
// engine says whether it can run here (and if not, what to install or set), and stops its work
// when the job's signal aborts (a cancel, a timeout, the worker stopping): a local engine's
// processes are killed.
import { execFile } from 'node:child_process';
import { access, constants, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { inputArgs, refusedCodec, refusedContainer } from './input-formats.ts';
import type { EngineName, Segment, TranscribeSettings, TranscriptResult, Word } from './types.ts';

const run = promisify(execFile);
const POCKETSPHINX_MODEL = '/usr/share/pocketsphinx/model/en-us/en-us';

/** A failure a person can act on: its message is shown as the job's error. */
export class EngineFailed extends Error {
  override name = 'EngineFailed';
}

/** A file in a container or codec Folio does not transcribe (./input-formats.ts): refused whatever the engine. */
export class FormatRefused extends EngineFailed {
  override name = 'FormatRefused';
}

export interface Availability {
  ok: boolean;
  /** What is missing and how to get it, when not ok. */
  reason?: string;
  model?: string;
}

export interface TranscribeInput {
  /** The stored audio, as a file on disk. */
  file: string;
  /** Its name and type, for engines that want them. */
  name: string;
  contentType: string;
  language?: string | undefined;
  signal: AbortSignal;
  /** 0..1 of the work done. */
  progress: (fraction: number) => void;
}

export interface Engine {
  readonly name: EngineName;
  available(): Promise<Availability>;
  transcribe(input: TranscribeInput): Promise<TranscriptResult & { model: string }>;
}

async function onPath(cmd: string): Promise<boolean> {
  const dirs = cmd.includes('/') ? [''] : (process.env['PATH'] ?? '').split(path.delimiter);
  for (const d of dirs) {
    try {
      await access(d ? path.join(d, cmd) : cmd, constants.X_OK);
      return true;
    } catch {
      // next
    }
  }
  return false;
}

/**
 * The audio's length in seconds. FormatRefused for a container or audio codec not on Folio's list;
 * EngineFailed when ffprobe finds no audio in it.
 */
export async function probeAudio(ffprobe: string, file: string, signal?: AbortSignal): Promise<number> {
  let out: string;
  try {
    ({ stdout: out } = await run(
      ffprobe,
      [
        '-v',
        'error',
        ...inputArgs(file),
        '-select_streams',
        'a:0',
        '-show_entries',
        'stream=codec_type,codec_name:format=duration',
        '-of',
        'json',
      ],
      { signal, maxBuffer: 1024 * 1024 },
    ));
  } catch (err) {
    if (signal?.aborted) throw err;
    const stderr = (err as { stderr?: unknown }).stderr;
    const refused = refusedContainer(typeof stderr === 'string' ? stderr : '');
    if (refused) throw new FormatRefused(refused);
    throw new EngineFailed('this file is not audio that ffmpeg can read (it may be truncated or corrupt)');
  }
  const info = JSON.parse(out) as {
    streams?: Array<{ codec_type?: string; codec_name?: string }>;
    format?: { duration?: string };
  };
  const audio = info.streams?.find((s) => s.codec_type === 'audio');
  if (!audio) throw new EngineFailed('this file has no audio stream');
  const refused = refusedCodec(audio.codec_name);
  if (refused) throw new FormatRefused(refused);
  const seconds = Number(info.format?.duration);
  if (!Number.isFinite(seconds)) throw new EngineFailed('the length of this audio cannot be read (it may be truncated or corrupt)');
  return seconds;
}

/** pocketsphinx_continuous -time yes: an utterance's text, then "<word> <start> <end> <confidence>" lines. */
export function parsePocketsphinx(out: string, duration: number): TranscriptResult {
  const segments: Segment[] = [];
  const words: Word[] = [];
  let current: Word[] = [];
  let hyp: string | null = null;
  const close = () => {
    if (hyp !== null && current.length) segments.push({ start: current[0]!.start, end: current[current.length - 1]!.end, text: hyp });
    else if (hyp) segments.push({ start: 0, end: duration, text: hyp });
    hyp = null;
    current = [];
  };
  for (const line of out.split('\n')) {
    const m = /^(\S+) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?)$/.exec(line.trim());
    if (m) {
      const token = m[1]!;
      if (token === '<s>') continue;
      if (token === '</s>' || token === '<sil>' || token.startsWith('[') || token.startsWith('++')) continue;
      const w: Word = {
        word: token.replace(/\(\d+\)$/, ''),
        start: Number(m[2]),
        end: Number(m[3]),
        confidence: Math.min(1, Number(m[4])),
      };
      words.push(w);
      current.push(w);
    } else if (line.trim()) {
      close();
      hyp = line.trim();
    }
  }
  close();
  const text = segments
    .map((s) => s.text)
    .join(' ')
    .trim();
  return { text, language: 'en', duration, segments: segments.filter((s) => s.text), words };
}

export class LocalEngine implements Engine {
  readonly name = 'local' as const;
  readonly #s: TranscribeSettings['local'];
  constructor(settings: TranscribeSettings['local']) {
    this.#s = settings;
  }

  async available(): Promise<Availability> {
    const missing: string[] = [];
    if (!(await onPath(this.#s.ffmpeg)) || !(await onPath(this.#s.ffprobe))) missing.push('ffmpeg');
    if (!(await onPath(this.#s.pocketsphinx))) missing.push('pocketsphinx');
    const model = this.#s.model ?? POCKETSPHINX_MODEL;
    if (!(await stat(model).catch(() => null))) missing.push(this.#s.model ? `the model folder ${model}` : 'pocketsphinx-en-us');
    if (missing.length)
      return {
        ok: false,
        reason: `the offline engine needs ${missing.join(', ')}: install the Debian packages (apt-get install ffmpeg pocketsphinx pocketsphinx-en-us), or configure the openai engine`,
      };
    return { ok: true, model: this.#s.model ? path.basename(model) : 'pocketsphinx en-us' };
  }

  async transcribe(input: TranscribeInput): Promise<TranscriptResult & { model: string }> {
    const duration = await probeAudio(this.#s.ffprobe, input.file, input.signal);
    const wav = `${input.file}.16k.wav`;
    try {
      // The probed audio stream only (a video stream is never decoded), read as the probe read it.
      const args = ['-v', 'error', '-nostdin', '-y', ...inputArgs(input.file), '-map', '0:a:0', '-ar', '16000', '-ac', '1', '-f', 'wav'];
      await run(this.#s.ffmpeg, [...args, `file:${wav}`], { signal: input.signal });
    } catch (err) {
      if (input.signal.aborted) throw err;
      throw new EngineFailed('ffmpeg could not convert this audio (it may be truncated or corrupt)');
    }
    input.progress(0.1);
    // pocketsphinx says nothing while it works: progress is estimated from the time it takes
    // (about a third of the audio's length on one core here).
    const started = Date.now();
    const timer = setInterval(
      () => input.progress(Math.min(0.95, 0.1 + (Date.now() - started) / 1000 / Math.max(1, duration * 0.4))),
      1000,
    );
    try {
      const args = ['-infile', wav, '-time', 'yes', '-logfn', '/dev/null'];
      if (this.#s.model) args.push('-hmm', this.#s.model);
      const { stdout } = await run(this.#s.pocketsphinx, args, { signal: input.signal, maxBuffer: 64 * 1024 * 1024 });
      return { ...parsePocketsphinx(stdout, duration), model: this.#s.model ? path.basename(this.#s.model) : 'pocketsphinx en-us' };
    } catch (err) {
      if (input.signal.aborted) throw err;
      const code = (err as { code?: unknown }).code;
      throw new EngineFailed(`pocketsphinx failed${typeof code === 'number' || typeof code === 'string' ? ` (exit ${code})` : ''}`);
    } finally {
      clearInterval(timer);
      await rm(wav, { force: true });
    }
  }
}

interface VerboseJson {
  text?: unknown;
  language?: unknown;
  duration?: unknown;
  segments?: Array<{ start?: unknown; end?: unknown; text?: unknown }>;
  words?: Array<{ start?: unknown; end?: unknown; word?: unknown }>;
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);

export class OpenAiEngine implements Engine {
  readonly name = 'openai' as const;
  readonly #s: TranscribeSettings['openai'];
  readonly #ffprobe: string;
  constructor(settings: TranscribeSettings['openai'], ffprobe: string) {
    this.#s = settings;
    this.#ffprobe = ffprobe;
  }

  available(): Promise<Availability> {
    if (!this.#s.url)
      return Promise.resolve({
        ok: false,
        reason: 'the openai engine has no server: set TRANSCRIBE_OPENAI_URL (and TRANSCRIBE_OPENAI_KEY)',
      });
    return Promise.resolve({ ok: true, model: this.#s.model });
  }

  async transcribe(input: TranscribeInput): Promise<TranscriptResult & { model: string }> {
    const url = `${this.#s.url!.replace(/\/+$/, '')}/v1/audio/transcriptions`;
    const form = new FormData();
    form.set('file', new Blob([await readFile(input.file)], { type: input.contentType }), input.name);
    form.set('model', this.#s.model);
    form.set('response_format', 'verbose_json');
    form.append('timestamp_granularities[]', 'segment');
    form.append('timestamp_granularities[]', 'word');
    if (input.language) form.set('language', input.language);
    input.progress(0.05);
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        body: form,
        signal: input.signal,
        headers: this.#s.key ? { authorization: `Bearer ${this.#s.key}` } : {},
      });
    } catch (err) {
      if (input.signal.aborted) throw err;
      throw new EngineFailed(`the transcription server at ${new URL(url).origin} could not be reached (${(err as Error).message})`);
    }
    const text = await res.text();
    if (!res.ok) throw new EngineFailed(`the transcription server answered ${res.status}: ${text.slice(0, 200)}`);
    let body: VerboseJson;
    try {
      body = JSON.parse(text) as VerboseJson;
    } catch {
      throw new EngineFailed('the transcription server answered something that is not JSON');
    }
    if (!body || typeof body !== 'object' || typeof body.text !== 'string')
      throw new EngineFailed('the transcription server answered JSON without a transcript (no text)');
    let duration = num(body.duration);
    if (duration === null) duration = await probeAudio(this.#ffprobe, input.file, input.signal).catch(() => 0);
    const segments: Segment[] = (Array.isArray(body.segments) ? body.segments : []).flatMap((s) => {
      const start = num(s?.start);
      const end = num(s?.end);
      return start !== null && end !== null && typeof s.text === 'string' ? [{ start, end, text: s.text.trim() }] : [];
    });
    const words: Word[] = (Array.isArray(body.words) ? body.words : []).flatMap((w) => {
      const start = num(w?.start);
      const end = num(w?.end);
      return start !== null && end !== null && typeof w.word === 'string' ? [{ start, end, word: w.word.trim() }] : [];
    });
    return {
      text: body.text.trim(),
      language: typeof body.language === 'string' ? body.language : (input.language ?? null),
      duration,
      segments: segments.length ? segments : body.text.trim() ? [{ start: 0, end: duration, text: body.text.trim() }] : [],
      words,
      model: this.#s.model,
    };
  }
}

export function enginesFrom(settings: TranscribeSettings): Record<EngineName, Engine> {
  return { local: new LocalEngine(settings.local), openai: new OpenAiEngine(settings.openai, settings.local.ffprobe) };
}
