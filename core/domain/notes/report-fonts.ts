// The fonts PDF reports embed, found on the server at render time (nothing is shipped): Debian's
// fonts-noto-core (Noto Sans for Latin, Greek and Cyrillic; Noto Sans Arabic and Hebrew; Noto Sans
// Symbols 2 for the check boxes) and fonts-noto-cjk (Noto Sans CJK for Chinese, Japanese and
// Korean). pdfkit embeds only the glyphs a report uses (subsetting), so a report stays small.
// A script without its font is named once at the top of the report and its characters are shown
// as a middle dot, never as '?'. Without Noto Sans itself the standard PDF fonts are used, which
// cover Windows-1252 only.
import { existsSync } from 'node:fs';

export type Script = 'latin' | 'cjk' | 'arabic' | 'hebrew' | 'symbols';
export type Face = 'regular' | 'bold' | 'italic' | 'boldItalic';

export interface FontFile {
  path: string;
  /** The face inside a font collection (.ttc). */
  family?: string;
}

/** The package that brings each script's font, for the report's note when it is missing. */
export const FONT_PACKAGES: Record<Exclude<Script, 'latin'>, { name: string; pkg: string }> = {
  cjk: { name: 'Chinese, Japanese and Korean', pkg: 'fonts-noto-cjk' },
  arabic: { name: 'Arabic', pkg: 'fonts-noto-core' },
  hebrew: { name: 'Hebrew', pkg: 'fonts-noto-core' },
  symbols: { name: 'check-box symbols', pkg: 'fonts-noto-core' },
};

const NOTO = ['/usr/share/fonts/truetype/noto', '/usr/local/share/fonts/noto', '/usr/share/fonts/noto'];
const NOTO_CJK = ['/usr/share/fonts/opentype/noto', '/usr/share/fonts/noto-cjk', '/usr/share/fonts/google-noto-cjk'];

function find(dirs: string[], file: string, family?: string): FontFile | null {
  for (const d of dirs) {
    const path = `${d}/${file}`;
    if (existsSync(path)) return family ? { path, family } : { path };
  }
  return null;
}

export interface FontSet {
  /** Per script and face; a missing bold or italic face falls back to the regular one. */
  files: Partial<Record<Script, Partial<Record<Face, FontFile>>>>;
  /** Scripts with no font at all (their characters print as a middle dot). */
  missing: Exclude<Script, 'latin'>[];
  /** No Noto Sans: Latin text uses the standard PDF fonts (Windows-1252 only). */
  standardLatin: boolean;
}

let cached: FontSet | undefined;

/** The fonts on this server (looked up once per process). */
export function fontSet(): FontSet {
  if (cached) return cached;
  const files: FontSet['files'] = {};
  const latin = {
    regular: find(NOTO, 'NotoSans-Regular.ttf'),
    bold: find(NOTO, 'NotoSans-Bold.ttf'),
    italic: find(NOTO, 'NotoSans-Italic.ttf'),
    boldItalic: find(NOTO, 'NotoSans-BoldItalic.ttf'),
  };
  if (latin.regular) files.latin = clean(latin);
  const cjk = {
    regular: find(NOTO_CJK, 'NotoSansCJK-Regular.ttc', 'NotoSansCJKjp-Regular'),
    bold: find(NOTO_CJK, 'NotoSansCJK-Bold.ttc', 'NotoSansCJKjp-Bold'),
  };
  if (cjk.regular) files.cjk = clean(cjk);
  const arabic = { regular: find(NOTO, 'NotoSansArabic-Regular.ttf'), bold: find(NOTO, 'NotoSansArabic-Bold.ttf') };
  if (arabic.regular) files.arabic = clean(arabic);
  const hebrew = { regular: find(NOTO, 'NotoSansHebrew-Regular.ttf'), bold: find(NOTO, 'NotoSansHebrew-Bold.ttf') };
  if (hebrew.regular) files.hebrew = clean(hebrew);
  const symbols = find(NOTO, 'NotoSansSymbols2-Regular.ttf');
  if (symbols) files.symbols = { regular: symbols };
  const missing = (['cjk', 'arabic', 'hebrew', 'symbols'] as const).filter((s) => !files[s]);
  cached = { files, missing, standardLatin: !files.latin };
  return cached;
}

function clean(faces: Partial<Record<Face, FontFile | null>>): Partial<Record<Face, FontFile>> {
  const out: Partial<Record<Face, FontFile>> = {};
  for (const [k, v] of Object.entries(faces)) if (v) out[k as Face] = v;
  return out;
}

const CJK =
  /[\u1100-\u11ff\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u31ff\u3200-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]|[\u{20000}-\u{3134f}]/u;
const ARABIC = /[\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufeff]/u;
const HEBREW = /[\u0590-\u05ff\ufb1d-\ufb4f]/u;
const SYMBOLS = /[\u2610-\u2612]/u;

/** The script a character is drawn with (everything not named below is Noto Sans's). */
export function scriptOf(ch: string): Script {
  if (ch.charCodeAt(0) < 0x590) return 'latin';
  if (CJK.test(ch)) return 'cjk';
  if (ARABIC.test(ch)) return 'arabic';
  if (HEBREW.test(ch)) return 'hebrew';
  if (SYMBOLS.test(ch)) return 'symbols';
  return 'latin';
}

/** CJK text breaks between any two characters; other scripts at spaces. */
export function breaksAnywhere(ch: string): boolean {
  return CJK.test(ch);
}

export function isRtl(ch: string): boolean {
  return ARABIC.test(ch) || HEBREW.test(ch);
}
