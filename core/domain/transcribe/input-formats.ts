// The recordings Folio transcribes: an allow-list of containers (ffmpeg's demuxers) and of audio
// codecs, and the arguments every ffmpeg or ffprobe run over a stored file starts with.
//
// Why a list: among ffmpeg's demuxers are playlists and lists of other files (HLS, concat, image
// sequences, ...) that open whatever they name, another local file or a URL. A user's upload must
// make ffmpeg read that upload and nothing else. So its protocols are limited to `file` (no network,
// no data: or subfile: tricks), and its demuxers to the containers below, none of which opens
// anything else: ffmpeg refuses any other demuxer right after detecting it, before reading a byte
// past the probe. The probe then checks the audio codec before anything is decoded.

/** Containers, as ffmpeg's demuxers name them, with the name a person knows. */
const CONTAINERS: ReadonlyArray<readonly [demuxer: string, label: string]> = [
  ['wav', 'WAV'],
  ['mp3', 'MP3'],
  ['flac', 'FLAC'],
  ['ogg', 'Ogg (Vorbis, Opus, Speex)'],
  ['mov', 'MP4, M4A, MOV, 3GP'],
  ['matroska', 'Matroska, WebM'],
  ['aac', 'AAC'],
  ['aiff', 'AIFF'],
  ['caf', 'CAF'],
  ['amr', 'AMR'],
  ['asf', 'WMA, WMV'],
  ['avi', 'AVI'],
  ['au', 'AU'],
  ['w64', 'Wave64'],
  ['mpegts', 'MPEG-TS'],
];

/** Audio codecs, as ffprobe names them; a name ending in `_` allows the family (pcm_s16le, ...). */
const CODECS: readonly string[] = [
  'pcm_',
  'adpcm_',
  'mp3',
  'mp2',
  'aac',
  'alac',
  'flac',
  'vorbis',
  'opus',
  'speex',
  'amr_nb',
  'amr_wb',
  'wmav1',
  'wmav2',
  'wmapro',
  'wmavoice',
  'ac3',
  'eac3',
  'gsm_ms',
  'g722',
  'g729',
];

/** What Folio takes, for messages and docs. */
export const ACCEPTED = CONTAINERS.map(([, label]) => label).join(', ');

/** Demuxers that open what their file names (other files, URLs), named for the refusal. */
const OPENERS: Readonly<Record<string, string>> = {
  hls: 'an HLS playlist',
  dash: 'a DASH manifest',
  concat: 'a concat list',
  image2: 'an image sequence',
  imf: 'an IMF composition',
  sdp: 'an SDP session description',
};

/**
 * The input options for ffmpeg or ffprobe over one stored file: only this file (protocol `file`;
 * `file:` so no part of the path reads as a protocol) and only the containers above.
 */
export function inputArgs(file: string): string[] {
  return ['-protocol_whitelist', 'file', '-format_whitelist', CONTAINERS.map(([d]) => d).join(','), '-i', `file:${file}`];
}

/**
 * Why a file was refused for its container, from ffmpeg's error output ("[hls @ 0x...] Format not
 * on whitelist ..."), or null when that is not why it failed.
 */
export function refusedContainer(stderr: string): string | null {
  const name = /\[(\w+) @ 0x[0-9a-f]+\] Format not on whitelist/.exec(stderr)?.[1];
  if (!name) return null;
  const opener = OPENERS[name];
  return opener
    ? `this file is not audio: it is ${opener} (${name}), which names other files or addresses to read, and Folio does not follow them. Folio transcribes ${ACCEPTED}`
    : `this file is not audio in a format Folio transcribes (ffmpeg reads it as ${name}); Folio transcribes ${ACCEPTED}`;
}

/** Why a file was refused for its audio codec, or null when the codec is one Folio transcribes. */
export function refusedCodec(codec: string | undefined): string | null {
  if (codec && CODECS.some((c) => (c.endsWith('_') ? codec.startsWith(c) : codec === c))) return null;
  return `the audio in this file is ${codec ? `encoded as ${codec}` : 'in an unknown encoding'}, which Folio does not transcribe; it takes ${CODECS.map((c) => (c.endsWith('_') ? `${c}*` : c)).join(', ')}`;
}

/**
 * Types a recording may have been stored as: its bytes were sniffed at upload (file-type's magic
 * numbers, ../files/content-type.ts), so an image or a PDF is known as one. An unknown type
 * (application/octet-stream) is left to ffprobe, which decides when the job runs.
 */
const RECORDING_TYPE = /^(audio\/|video\/|application\/(ogg|octet-stream|vnd\.ms-asf|mp4|x-matroska|mxf)$)/;

/** Why a stored file cannot be a recording, from its (sniffed) content type; null when it may be one. */
export function refusedType(contentType: string): string | null {
  const media = contentType.split(';')[0]!.trim().toLowerCase();
  if (RECORDING_TYPE.test(media)) return null;
  return `this file is ${media}, not audio or video; Folio transcribes ${ACCEPTED}`;
}
