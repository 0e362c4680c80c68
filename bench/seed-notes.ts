// Seeds N realistic notes (default 100 000) for one big user, deterministically, for bench/notes.ts,
// and a crowd of small users beside it (default 20 users of N/200 notes each, at least 20): every
// query the benchmarks time is the big user's, scoped by owner among everyone else's rows.
//
//   npx node bench/seed-notes.ts                    the PGlite seed of 100k notes (cached, see below)
//   npx node bench/seed-notes.ts --n=10000 --reseed  another size; --reseed ignores the cache
//   npx node bench/seed-notes.ts --others=50 --other-notes=1000   the small users: how many, notes each
//   npx node bench/seed-notes.ts --postgres [--keep] a fresh database on DATABASE_URL, seeded (and dropped unless --keep)
//   npx node bench/seed-notes.ts --sample=3          prints 3 generated notes, touches no database
//   npx node bench/seed-notes.ts --verify            the bulk rows against NotesServiceImpl.create's, and its speed
//
// The text comes from the word lists in fixtures/words/ (nothing is downloaded) through a seeded
// PRNG: titles and Markdown bodies of varied length (headings, lists, `- [ ]` action items, code,
// quotes, speaker transcripts), tags from a Zipf-like vocabulary, sources, times spread over two
// years, ~5% of the notes with Chinese, Japanese or Korean text, accented words, typos, and a few
// planted rare words and phrases whose counts are known (see PLANTED), to search for.
//
// Writing: NotesServiceImpl.create does per-note work in one transaction (the note and its
// revision, the word table, the counters): ~3 ms a note here, about 5 minutes for 100k (measure it
// with --verify). Instead the rows are bulk-inserted (multi-row INSERT ... SELECT FROM unnest, 500
// notes a statement) with the derived columns computed by the service's own derive() (search
// vector, excerpt, open action items, body size), the per-user word table (note_words) and counters
// (note_stats, note_tag_stats) aggregated exactly as the service's deltas would leave them, and a
// revision row for every version. --verify checks that a sample of bulk rows equals what the
// service writes for the same content.
//
// Cache: the seeded PGlite data folder is kept under bench/.cache/notes-pglite-n<N>-<hash>/
// (hash: the migrations, the service's text/derivation code, this file, the word lists and the
// PGlite version), so a rerun skips seeding; a stale folder of the same N is removed. PostgreSQL is
// seeded afresh for every run (a new database, dropped afterwards).
//
// The database is left as production would leave it: on PostgreSQL autovacuum would analyze the
// tables within a minute of such a load, so the seed runs VACUUM ANALYZE; the embedded PGlite runs
// no autovacuum (one backend, no background workers) and Folio never analyzes, so the PGlite seed
// is not analyzed either.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import pg from 'pg';
import { pino } from 'pino';
import { openDatabase } from '../core/db/database.ts';
import { DATABASE_SCHEMA } from '../core/domains.ts';
import { IdentityService } from '../core/domain/identity/service.ts';
import type { Principal } from '../core/domain/identity/types.ts';
import { derive } from '../core/domain/notes/derived.ts';
import { parseQuery, toTsquery } from '../core/domain/notes/query.ts';
import { NotesServiceImpl } from '../core/domain/notes/service.ts';
import type { NoteSource } from '../core/domain/notes/types.ts';
import { BENCH_DIR, freshDatabase, ROOT } from './lib.ts';
import { assertNode24, progress, removeDir, round, tempDir } from './util.ts';

export const DEFAULT_N = 100_000;
export const CACHE_DIR = path.join(BENCH_DIR, '.cache');
const WORDS_DIR = path.join(BENCH_DIR, 'fixtures/words');
/** The newest note is from just before this; the oldest two years earlier. */
export const END_MS = Date.UTC(2026, 10, 1);
export const SPAN_MS = 730 * 86_400_000;
export const START_MS = END_MS - SPAN_MS;
const BATCH = 500;
const SEED = 'folio-notes-bench-v1';

// --- what the benchmark searches for ----------------------------------------------------------------

/**
 * Planted into exactly this many notes each (whatever N is, as long as N is larger): rare words no
 * other note contains, and phrases. Counts of live matches are measured after seeding (meta.queries).
 */
export const PLANTED = {
  rare: [
    ['zanzibarite', 1],
    ['quixotical', 3],
    ['brontide', 7],
    ['snollygoster', 15],
    ['xylocarp', 30],
    ['petrichor', 60],
    ['defenestrate', 120],
    ['kakistocracy', 250],
  ] as Array<[string, number]>,
  /** [phrase, share of the notes] */
  phrases: [
    ['quarterly budget review', 0.01],
    ['purple elephant protocol', 0.0004],
    ['move fast and fix things', 0.003],
  ] as Array<[string, number]>,
};

/** What bench/notes.ts searches for; the typos are never written into any note (see typo()). */
export const QUERIES = {
  /** In 13% to 83% of the notes. */
  common: ['release', 'customer', 'meeting', 'time'],
  /** In 1% to 5% of the notes: where the planner must choose between the GIN and the list order. */
  mid: ['transformer', 'strategies', 'validation', 'target'],
  rare: PLANTED.rare.map(([w]) => w),
  phrase: ['"quarterly budget review"', '"purple elephant protocol"', '"move fast and fix things"', '"next week"'],
  cjk: ['会议记录', '项目进度', '数据库', '議事録', '来週', '회의록'],
  typo: ['meetnig', 'budgte', 'kuberntes', 'dashbaord', 'custmer', 'migratoin', 'incidnet'],
};
const TYPO_QUERIES = new Set(QUERIES.typo);

// --- PRNG -------------------------------------------------------------------------------------------

/** sfc32, seeded from a string: the same seed gives the same notes on every machine. */
export class Rng {
  #a: number;
  #b: number;
  #c: number;
  #d: number;
  constructor(seed: string) {
    const h = createHash('sha256').update(seed).digest();
    this.#a = h.readUInt32LE(0);
    this.#b = h.readUInt32LE(4);
    this.#c = h.readUInt32LE(8);
    this.#d = h.readUInt32LE(12);
    for (let i = 0; i < 12; i++) this.next();
  }
  /** [0, 1) */
  next(): number {
    const t0 = (this.#a + this.#b) | 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) | 0;
    this.#c = (this.#c << 21) | (this.#c >>> 11);
    this.#d = (this.#d + 1) | 0;
    const t = (t0 + this.#d) | 0;
    this.#c = (this.#c + t) | 0;
    return (t >>> 0) / 4294967296;
  }
  /** lo..hi inclusive */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  /** Standard normal (Box-Muller). */
  normal(): number {
    const u = 1 - this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }
  uuid(): string {
    const b = Buffer.alloc(16);
    for (let i = 0; i < 16; i += 4) b.writeUInt32LE(Math.floor(this.next() * 4294967296), i);
    b[6] = (b[6]! & 0x0f) | 0x40;
    b[8] = (b[8]! & 0x3f) | 0x80;
    const h = b.toString('hex');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }
}

/** Samples items with weight 1/rank^s: the first items of a list are the most frequent. */
class Zipf<T> {
  readonly items: readonly T[];
  readonly #cdf: Float64Array;
  constructor(items: readonly T[], s = 1) {
    if (items.length === 0) throw new Error('Zipf over nothing');
    this.items = items;
    this.#cdf = new Float64Array(items.length);
    let sum = 0;
    for (let i = 0; i < items.length; i++) this.#cdf[i] = sum += 1 / Math.pow(i + 1, s);
    for (let i = 0; i < items.length; i++) this.#cdf[i]! /= sum;
  }
  sample(r: Rng): T {
    const u = r.next();
    let lo = 0;
    let hi = this.#cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return this.items[lo]!;
  }
}

// --- vocabulary -------------------------------------------------------------------------------------

/** `[name] rest-of-line` headers, then whitespace-separated entries ('_' joins words); # comments. */
function readSections(file: string, splitLines = false): Map<string, { header: string; entries: string[] }> {
  const out = new Map<string, { header: string; entries: string[] }>();
  let current: { header: string; entries: string[] } | undefined;
  for (const raw of readFileSync(path.join(WORDS_DIR, file), 'utf8').split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = /^\[([\w-]+)\]\s*(.*)$/.exec(line);
    if (m) {
      current = { header: m[2]!.trim(), entries: [] };
      out.set(m[1]!, current);
      continue;
    }
    if (!current) throw new Error(`${file}: text before the first [section]`);
    const add = splitLines ? [line] : line.split(/\s+/).map((w) => w.replace(/_/g, ' '));
    for (const w of add) if (!current.entries.includes(w)) current.entries.push(w);
  }
  return out;
}

interface Topic {
  name: string;
  tag: string;
  words: Zipf<string>;
}

interface Vocabulary {
  det: Zipf<string>;
  pron: Zipf<string>;
  prep: Zipf<string>;
  conj: Zipf<string>;
  aux: Zipf<string>;
  adv: Zipf<string>;
  noun: Zipf<string>;
  verb: Zipf<string>;
  adj: Zipf<string>;
  topics: Topic[];
  topicPick: Zipf<Topic>;
  first: Zipf<string>;
  last: Zipf<string>;
  places: Zipf<string>;
  accented: Zipf<string>;
  codenames: Zipf<string>;
  /** A long tail of made-up words (names of things, jargon, foreign words as real notes have them). */
  tail: Zipf<string>;
  cjk: { zh: string[]; ja: string[]; ko: string[] };
  /** Distinct base words in the lists (before inflection), for the report. */
  baseWords: number;
}

let vocabulary: Vocabulary | undefined;

export function loadVocabulary(): Vocabulary {
  if (vocabulary) return vocabulary;
  const en = readSections('english.txt');
  const get = (m: Map<string, { entries: string[] }>, k: string, file: string) => {
    const e = m.get(k)?.entries;
    if (!e?.length) throw new Error(`${file}: no [${k}] section`);
    return e;
  };
  const e = (k: string, s = 1) => new Zipf(get(en, k, 'english.txt'), s);
  const topicSections = readSections('topics.txt');
  const topics: Topic[] = [...topicSections].map(([name, { header, entries }]) => ({
    name,
    tag: header || name,
    words: new Zipf(entries, 0.8),
  }));
  const names = readSections('names.txt');
  const cjk = readSections('cjk.txt', true);
  // Project code names: a long tail of made-up words (as real notes have), from syllables.
  const r = new Rng(`${SEED}:codenames`);
  const syll = [
    'ka',
    'lo',
    'mi',
    'ra',
    'ven',
    'tor',
    'zen',
    'bri',
    'dal',
    'ex',
    'qua',
    'sol',
    'nar',
    'vik',
    'ost',
    'pel',
    'dri',
    'mon',
    'tas',
    'ul',
  ];
  const codenames = new Set<string>();
  while (codenames.size < 2000) codenames.add(Array.from({ length: r.int(2, 3) }, () => r.pick(syll)).join(''));
  // The long tail: real notes of this size hold ~100k distinct words (Heaps' law), most of them
  // rare; the lists above have ~1.3k. Pronounceable made-up words, drawn with a Zipf law.
  const onsets = [
    'b',
    'c',
    'd',
    'f',
    'g',
    'h',
    'j',
    'k',
    'l',
    'm',
    'n',
    'p',
    'r',
    's',
    't',
    'v',
    'w',
    'z',
    'br',
    'cl',
    'dr',
    'fl',
    'gr',
    'pl',
    'st',
    'tr',
    'sh',
    'ch',
    'th',
  ];
  const vowels = ['a', 'e', 'i', 'o', 'u', 'ai', 'ea', 'oo', 'ou'];
  const codas = ['', '', 'n', 'r', 'l', 's', 't', 'm', 'nd', 'st', 'ck'];
  const tail = new Set<string>();
  const taken = new Set([...PLANTED.rare.map(([w]) => w), ...QUERIES.typo]);
  while (tail.size < 150_000) {
    const w = Array.from({ length: r.int(2, 3) }, () => r.pick(onsets) + r.pick(vowels) + r.pick(codas)).join('');
    if (!taken.has(w)) tail.add(w);
  }
  const baseWords = new Set([...en.values(), ...topicSections.values()].flatMap((s) => s.entries)).size;
  vocabulary = {
    det: e('det', 1.1),
    pron: e('pron', 1),
    prep: e('prep', 1),
    conj: e('conj', 1),
    aux: e('aux', 1),
    adv: e('adv', 0.9),
    noun: e('noun', 0.85),
    verb: e('verb', 0.85),
    adj: e('adj', 0.85),
    topics,
    topicPick: new Zipf(topics, 0.7),
    first: new Zipf(get(names, 'first', 'names.txt'), 0.6),
    last: new Zipf(get(names, 'last', 'names.txt'), 0.6),
    places: new Zipf(get(names, 'places', 'names.txt'), 0.8),
    accented: new Zipf(get(names, 'accented', 'names.txt'), 0.8),
    codenames: new Zipf([...codenames], 1),
    tail: new Zipf([...tail], 1),
    cjk: { zh: get(cjk, 'zh', 'cjk.txt'), ja: get(cjk, 'ja', 'cjk.txt'), ko: get(cjk, 'ko', 'cjk.txt') },
    baseWords,
  };
  return vocabulary;
}

// --- inflection -------------------------------------------------------------------------------------

const IRREGULAR_PAST: Record<string, string> = {
  do: 'did',
  make: 'made',
  get: 'got',
  go: 'went',
  know: 'knew',
  think: 'thought',
  take: 'took',
  see: 'saw',
  come: 'came',
  give: 'gave',
  tell: 'told',
  feel: 'felt',
  become: 'became',
  leave: 'left',
  put: 'put',
  mean: 'meant',
  keep: 'kept',
  let: 'let',
  begin: 'began',
  hold: 'held',
  bring: 'brought',
  write: 'wrote',
  sit: 'sat',
  stand: 'stood',
  lose: 'lost',
  pay: 'paid',
  meet: 'met',
  lead: 'led',
  understand: 'understood',
  speak: 'spoke',
  read: 'read',
  spend: 'spent',
  grow: 'grew',
  win: 'won',
  buy: 'bought',
  send: 'sent',
  build: 'built',
  fall: 'fell',
  cut: 'cut',
  sell: 'sold',
  hear: 'heard',
  run: 'ran',
  set: 'set',
  find: 'found',
  catch: 'caught',
  forget: 'forgot',
  choose: 'chose',
  die: 'died',
};
const DOUBLES = new Set([
  'ship',
  'plan',
  'stop',
  'drop',
  'commit',
  'tag',
  'chat',
  'swap',
  'map',
  'skip',
  'drag',
  'log',
  'pin',
  'run',
  'win',
  'sit',
  'cut',
  'set',
  'get',
  'put',
  'let',
  'begin',
  'forget',
  'squash',
]);

function sForm(w: string): string {
  if (/(s|x|z|ch|sh)$/.test(w)) return w + 'es';
  if (/[^aeiou]y$/.test(w)) return w.slice(0, -1) + 'ies';
  return w + 's';
}
function past(v: string): string {
  if (IRREGULAR_PAST[v]) return IRREGULAR_PAST[v];
  if (DOUBLES.has(v)) return v + v.at(-1) + 'ed';
  if (v.endsWith('e')) return v + 'd';
  if (/[^aeiou]y$/.test(v)) return v.slice(0, -1) + 'ied';
  return v + 'ed';
}
function ing(v: string): string {
  if (v.endsWith('ie')) return v.slice(0, -2) + 'ying';
  if (DOUBLES.has(v)) return v + v.at(-1) + 'ing';
  if (v.endsWith('e') && !v.endsWith('ee') && v !== 'be') return v.slice(0, -1) + 'ing';
  return v + 'ing';
}

// --- notes ------------------------------------------------------------------------------------------

export interface GenNote {
  id: string;
  title: string;
  body: string;
  tags: string[];
  source: NoteSource;
  version: number;
  createdMs: number;
  updatedMs: number;
  deletedMs: number | null;
  lang: 'en' | 'zh' | 'ja' | 'ko' | 'mixed';
}

type Kind = 'meeting' | 'journal' | 'todo' | 'design' | 'reading' | 'idea' | 'transcript' | 'note';
const KINDS: Array<[Kind, number]> = [
  ['meeting', 0.3],
  ['journal', 0.1],
  ['todo', 0.12],
  ['design', 0.12],
  ['reading', 0.06],
  ['idea', 0.1],
  ['transcript', 0.05],
  ['note', 0.15],
];
const EXTRA_TAGS = [
  'project-x',
  'follow-up',
  'urgent',
  'q3',
  'q4',
  'important',
  'draft',
  'team-alpha',
  'client-acme',
  'q1',
  'q2',
  'okr',
  'oncall',
  'infra',
  'project-apollo',
  'someday',
  'waiting',
  'reference',
  'team-beta',
  'client-globex',
  'offsite',
  'family',
  'health',
  'home',
  'howto',
  'security',
  'data',
  'api',
  'mobile',
  'web',
  'taxes',
  'car',
  'books-2025',
  'books-2026',
  'hiring-2026',
  'project-zephyr',
  'client-initech',
  'team-gamma',
  'compliance',
  'gdpr',
  'ml',
  'snippets',
  'ideas-backlog',
  'archive',
  'client-umbrella',
];
const EXTRA_ZIPF = new Zipf(EXTRA_TAGS, 1.1);
const HEADINGS = [
  'Context',
  'Notes',
  'Details',
  'Discussion',
  'Open questions',
  'Next steps',
  'Background',
  'Summary',
  'Risks',
  'Follow-ups',
  'Ideas',
  'Links',
];
const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const CJK_HEADINGS = {
  zh: ['议程', '讨论', '决定', '待办事项'],
  ja: ['議題', 'メモ', '決定事項', 'TODO'],
  ko: ['안건', '메모', '결정 사항', '할 일'],
};
const CJK_TITLES = {
  zh: ['会议记录', '周报', '读书笔记', '项目计划'],
  ja: ['議事録', '週報', '読書メモ', '日記'],
  ko: ['회의록', '주간 보고', '독서 노트', '일기'],
};

/** One note's text, from one Rng (the note's own stream, so notes are independent of each other). */
class Writer {
  readonly r: Rng;
  readonly v: Vocabulary;
  readonly topic: Topic;
  readonly date: Date;
  constructor(r: Rng, v: Vocabulary, topic: Topic, date: Date) {
    this.r = r;
    this.v = v;
    this.topic = topic;
    this.date = date;
  }

  /** A word with, rarely, a typo (as people make them): a swap, a dropped or a doubled letter. */
  typo(w: string): string {
    if (w.length < 5 || !this.r.chance(0.006) || !/^[a-z]+$/.test(w)) return w;
    const i = this.r.int(1, w.length - 2);
    const k = this.r.int(0, 2);
    const t =
      k === 0
        ? w.slice(0, i) + w[i + 1] + w[i] + w.slice(i + 2)
        : k === 1
          ? w.slice(0, i) + w.slice(i + 1)
          : w.slice(0, i) + w[i] + w.slice(i);
    return TYPO_QUERIES.has(t) ? w : t;
  }
  noun(): string {
    if (this.r.chance(0.3)) return this.topic.words.sample(this.r);
    if (this.r.chance(0.04)) return this.v.tail.sample(this.r);
    const n = this.typo(this.v.noun.sample(this.r));
    return this.r.chance(0.25) ? sForm(n) : n;
  }
  verb(form: 'base' | 's' | 'ed' | 'ing' = 'base'): string {
    const v = this.v.verb.sample(this.r);
    return this.typo(form === 'base' ? v : form === 's' ? sForm(v) : form === 'ed' ? past(v) : ing(v));
  }
  adj(): string {
    return this.typo(this.v.adj.sample(this.r));
  }
  name(): string {
    return `${this.v.first.sample(this.r)}${this.r.chance(0.4) ? ' ' + this.v.last.sample(this.r) : ''}`;
  }
  np(): string {
    return `${this.v.det.sample(this.r)} ${this.r.chance(0.4) ? this.adj() + ' ' : ''}${this.noun()}`;
  }
  day(): string {
    return this.r.pick(['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'tomorrow', 'the end of the month', 'next sprint', 'EOD']);
  }
  sentence(): string {
    const r = this.r;
    const v = this.v;
    let s: string;
    switch (r.int(0, 13)) {
      case 0:
        s = `${v.pron.sample(r)} ${v.aux.sample(r)} ${this.verb()} ${this.np()} ${v.prep.sample(r)} ${this.np()}`;
        break;
      case 1:
        s = `${this.np()} ${r.chance(0.5) ? 'is' : 'was'} ${r.chance(0.4) ? v.adv.sample(r) + ' ' : ''}${this.adj()}`;
        break;
      case 2:
        s = `${this.name()} ${this.verb('ed')} ${this.np()} ${v.prep.sample(r)} ${this.np()}`;
        break;
      case 3:
        s = `${v.adv.sample(r)}, ${v.pron.sample(r)} ${this.verb('ed')} ${this.np()} ${v.conj.sample(r)} ${v.pron.sample(r)} ${this.verb('ed')} ${this.np()}`;
        break;
      case 4:
        s = `${this.np()} ${v.prep.sample(r)} ${this.np()} ${v.aux.sample(r)} ${this.verb()} ${this.noun()}`;
        break;
      case 5:
        s = `follow up with ${this.name()} about ${this.np()} next week`;
        break;
      case 6:
        s = `we ${this.verb('ed')} ${r.int(2, 40)} ${sForm(this.v.noun.sample(r))} ${v.prep.sample(r)} ${this.v.places.sample(r)}`;
        break;
      case 7:
        s = `${this.np()} ${this.verb('s')} ${this.np()} ${v.adv.sample(r)}`;
        break;
      case 8:
        s = `${v.pron.sample(r)} ${r.chance(0.5) ? 'are' : 'were'} ${this.verb('ing')} ${this.np()} ${v.conj.sample(r)} ${this.np()} ${r.chance(0.5) ? 'is' : 'was'} ${this.adj()}`;
        break;
      case 9:
        s = `${this.v.codenames.sample(r)} ${r.chance(0.5) ? 'is' : 'was'} ${this.adj()} ${v.prep.sample(r)} ${this.np()}`;
        break;
      case 10:
        s = `${v.conj.sample(r)} ${this.np()} ${this.verb('s')}, ${v.pron.sample(r)} ${v.aux.sample(r)} ${this.verb()} ${this.np()}`;
        break;
      case 11:
        s = `${this.r.chance(0.5) ? 'the' : 'our'} ${this.noun()} ${this.noun()} ${r.chance(0.5) ? 'is' : 'was'} ${r.int(1, 99)}% ${this.adj()}`;
        break;
      case 12:
        s = `${this.name()} and ${this.name()} ${this.verb('ed')} ${this.np()} ${v.prep.sample(r)} ${this.day()}`;
        break;
      default:
        s = `${v.pron.sample(r)} ${this.verb('ed')} ${this.np()} ${v.conj.sample(r)} ${this.np()} ${this.verb('ed')} ${this.np()}`;
    }
    if (r.chance(0.04)) s += ` at ${this.v.accented.sample(r)}`;
    const ticket = r.chance(0.03);
    if (ticket) s += ` (${this.topic.name === 'engineering' ? 'INC' : 'PROJ'}-${r.int(100, 9999)})`;
    else if (this.topic.name === 'engineering' && r.chance(0.03))
      s += ` in commit ${Math.floor(r.next() * 0xfffffff)
        .toString(16)
        .padStart(7, 'a')}`;
    return s.charAt(0).toUpperCase() + s.slice(1) + (r.chance(0.08) ? '?' : '.');
  }
  paragraph(min = 2, max = 6): string {
    return Array.from({ length: this.r.int(min, max) }, () => this.sentence()).join(' ');
  }
  bullets(): string {
    return Array.from({ length: this.r.int(2, 6) }, () => `- ${this.r.chance(0.5) ? this.sentence() : this.np()}`).join('\n');
  }
  actionItem(): string {
    return `- [${this.r.chance(0.35) ? 'x' : ' '}] ${this.name()} to ${this.verb()} ${this.np()} by ${this.day()}`;
  }
  actions(): string {
    return Array.from({ length: this.r.int(1, 5) }, () => this.actionItem()).join('\n');
  }
  code(): string {
    const r = this.r;
    return r.pick([
      '```sh\nkubectl -n folio get pods -o wide\nkubectl -n folio logs deploy/api --since=1h | grep -i error\n```',
      '```sql\nselect owner_id, count(*) from notes group by owner_id order by 2 desc limit 10;\n```',
      '```ts\nconst res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });\nif (!res.ok) throw new Error(`status ${res.status}`);\n```',
      '```yaml\nreplicas: 3\nresources:\n  limits:\n    memory: 512Mi\n```',
    ]);
  }
  link(): string {
    return `See [${this.noun()} ${this.noun()}](https://wiki.example.com/${this.v.noun.sample(this.r)}-${this.v.noun.sample(this.r)}) for ${this.np()}.`;
  }
  isoDate(): string {
    return this.date.toISOString().slice(0, 10);
  }
  shortDate(): string {
    return `${MONTHS[this.date.getUTCMonth()]} ${this.date.getUTCDate()}`;
  }
}

function capital(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function pickKind(r: Rng): Kind {
  let u = r.next();
  for (const [k, p] of KINDS) if ((u -= p) < 0) return k;
  return 'note';
}

/** The notes, in creation order, deterministically for a given n. */
/** `stream` makes another user's notes: the same kinds of text under ids of their own. */
export function* generateNotes(n: number, stream = ''): Generator<GenNote> {
  const v = loadVocabulary();
  const root = new Rng(`${SEED}:times:${n}`);
  // Creation times over two years, a little denser lately (the user writes more over time).
  const created = Array.from({ length: n }, () => START_MS + Math.floor(SPAN_MS * Math.pow(root.next(), 0.85)));
  created.sort((a, b) => a - b);
  // Planted words and phrases: note index -> sentences to add.
  const plant = new Map<number, string[]>();
  const pr = new Rng(`${SEED}:plant:${n}`);
  const add = (count: number, sentence: () => string) => {
    const chosen = new Set<number>();
    while (chosen.size < Math.min(count, n)) chosen.add(pr.int(0, n - 1));
    for (const i of chosen) plant.set(i, [...(plant.get(i) ?? []), sentence()]);
  };
  for (const [word, count] of PLANTED.rare)
    add(count, () =>
      pr.pick([
        `Someone used the word ${word} again.`,
        `Note to self: look up ${word}.`,
        `The ${word} idea came up at lunch.`,
        `Is ${word} the right name for it?`,
      ]),
    );
  for (const [phrase, share] of PLANTED.phrases)
    add(Math.round(n * share), () =>
      pr.pick([
        `We scheduled the ${phrase} for ${pr.pick(WEEKDAYS)}.`,
        `Remember: ${phrase}.`,
        `Everyone agreed on the ${phrase}.`,
        `${capital(phrase)} came up again.`,
      ]),
    );
  const ids = new Rng(`${SEED}:ids${stream}`);
  for (let i = 0; i < n; i++) {
    const r = new Rng(`${SEED}:note:${i}`);
    const createdMs = created[i]!;
    const edited = r.chance(0.45);
    let updatedMs = edited ? Math.min(END_MS - 1, createdMs + Math.floor(-Math.log(1 - r.next()) * 7 * 86_400_000)) : createdMs;
    let version = edited && updatedMs > createdMs ? r.int(2, 5) : 1;
    if (version === 1) updatedMs = createdMs;
    const trashed = r.chance(0.015);
    let deletedMs: number | null = null;
    if (trashed) {
      updatedMs = Math.min(END_MS - 1, updatedMs + r.int(1, 30 * 86_400_000));
      deletedMs = updatedMs;
      version++;
    }
    const topic = v.topicPick.sample(r);
    const w = new Writer(r, v, topic, new Date(createdMs));
    let kind = pickKind(r);
    const cjkRoll = r.next();
    const lang: GenNote['lang'] = cjkRoll < 0.02 ? r.pick(['zh', 'zh', 'ja', 'ko'] as const) : cjkRoll < 0.05 ? 'mixed' : 'en';
    if (lang !== 'en' && lang !== 'mixed' && kind === 'transcript') kind = 'meeting';

    // Tags: the kind, often the topic, then a Zipf tail.
    const tags: string[] = [];
    const kindTag: Partial<Record<Kind, string>> = {
      meeting: r.pick(['meeting', 'meeting', 'meeting', 'standup', '1on1', 'retro']),
      journal: 'journal',
      todo: 'todo',
      design: r.chance(0.7) ? 'design' : 'incident',
      reading: 'reading',
      idea: 'idea',
      transcript: 'transcript',
    };
    const kt = kindTag[kind];
    if (kt && r.chance(0.85)) tags.push(kt);
    if (kt === 'standup' || kt === '1on1' || kt === 'retro') tags.push('meeting');
    if (r.chance(0.6)) tags.push(topic.tag);
    const extra = r.next();
    const extraCount = extra < 0.4 ? 0 : extra < 0.75 ? 1 : extra < 0.93 ? 2 : 3;
    for (let k = 0; k < extraCount; k++) tags.push(EXTRA_ZIPF.sample(r));

    // Length: a few hundred bytes to a few KB, transcripts longer.
    const target =
      kind === 'transcript' ? r.int(4_000, 16_000) : Math.max(250, Math.min(7_000, Math.round(1_100 * Math.exp(0.75 * r.normal()))));
    let title: string;
    const blocks: string[] = [];
    if (lang === 'zh' || lang === 'ja' || lang === 'ko') {
      const sentences = v.cjk[lang];
      title = `${r.pick(CJK_TITLES[lang])} ${w.isoDate()}`;
      let size = 0;
      for (const h of CJK_HEADINGS[lang]) {
        if (size > target) break;
        const para = Array.from({ length: r.int(1, 4) }, () => r.pick(sentences)).join('');
        blocks.push(`## ${h}`, para);
        size += Buffer.byteLength(para) + 12;
      }
      if (r.chance(0.5)) blocks.push(`- [ ] ${r.pick(sentences)}`);
    } else {
      const who = w.name();
      switch (kind) {
        case 'meeting':
          title = r.pick([
            `${capital(topic.name)} sync ${w.shortDate()}`,
            `Weekly ${w.v.noun.sample(r)} review`,
            `1:1 with ${who}`,
            `Standup ${w.isoDate()}`,
            `${capital(w.v.codenames.sample(r))} kickoff`,
            `Retro: ${w.noun()} and ${w.noun()}`,
          ]);
          blocks.push('## Attendees', Array.from({ length: r.int(2, 6) }, () => `- ${w.name()}`).join('\n'));
          blocks.push('## Agenda', Array.from({ length: r.int(2, 5) }, (_, k) => `${k + 1}. ${capital(w.np())}`).join('\n'));
          blocks.push('## Notes');
          break;
        case 'journal':
          title = r.pick([
            `Journal ${w.isoDate()}`,
            `Thoughts on ${w.noun()}`,
            `Weekend in ${v.places.sample(r)}`,
            `${WEEKDAYS[r.int(0, 4)]} notes`,
          ]);
          break;
        case 'todo':
          title = r.pick([`Todo ${w.isoDate()}`, `${capital(w.adj())} tasks for ${w.noun()}`, `This week`, `Errands`]);
          blocks.push(w.actions());
          break;
        case 'design':
          title = r.pick([
            `${capital(w.noun())} ${w.noun()} design`,
            `Incident: ${w.noun()} outage on ${w.shortDate()}`,
            `How to ${w.verb()} the ${w.noun()}`,
            `RFC: ${w.adj()} ${w.noun()} for ${w.v.codenames.sample(r)}`,
          ]);
          blocks.push('## Context');
          break;
        case 'reading':
          title = `Reading: ${capital(w.adj())} ${capital(w.noun())} by ${v.last.sample(r)}`;
          blocks.push(`> ${w.sentence()}`);
          break;
        case 'idea':
          title = r.pick([`Idea: ${w.adj()} ${w.noun()}`, `What if we ${w.verb()} the ${w.noun()}?`, `${capital(w.noun())} idea`]);
          break;
        case 'transcript':
          title = `Transcript: ${topic.name} call ${w.isoDate()}`;
          break;
        default:
          title = capital(`${w.adj()} ${w.noun()} ${r.chance(0.5) ? 'notes' : ''}`.trim());
      }
      let size = blocks.reduce((s, b) => s + b.length + 2, 0);
      const speakers = [who, w.name(), w.name()];
      while (size < target) {
        let b: string;
        if (kind === 'transcript') {
          b = `**${r.pick(speakers)}:** ${w.paragraph(1, 4)}`;
        } else {
          const u = r.next();
          if (u < 0.12 && kind !== 'meeting') blocks.push(`## ${r.pick(HEADINGS)}`);
          b =
            u < 0.55
              ? w.paragraph()
              : u < 0.78
                ? w.bullets()
                : u < 0.88
                  ? w.actions()
                  : u < 0.93 && topic.name === 'engineering'
                    ? w.code()
                    : u < 0.96
                      ? w.link()
                      : `> ${w.sentence()}`;
        }
        blocks.push(b);
        size += b.length + 2;
      }
      if (kind === 'meeting') blocks.push('## Decisions', w.bullets(), '## Action items', w.actions());
      if (lang === 'mixed') {
        const sentences = v.cjk[r.pick(['zh', 'zh', 'ja', 'ko'] as const)];
        blocks.splice(r.int(0, blocks.length), 0, Array.from({ length: r.int(1, 4) }, () => r.pick(sentences)).join(''));
      }
    }
    for (const s of plant.get(i) ?? []) blocks.splice(r.int(0, blocks.length), 0, s);
    const source: NoteSource = kind === 'transcript' ? 'transcript' : r.chance(0.65) ? 'manual' : r.chance(0.55) ? 'agent' : 'import';
    yield {
      id: ids.uuid(),
      title,
      body: blocks.join('\n\n') + '\n',
      tags: [...new Set(tags)],
      source,
      version,
      createdMs,
      updatedMs,
      deletedMs,
      lang,
    };
  }
}
// --- writing ----------------------------------------------------------------------------------------

/** The one thing the loader needs from a database client (PGlite in-process, or pg). */
export interface Sql {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: T[] }>;
}

/** A PostgreSQL array literal of texts, for a text[] element passed as text and cast. */
function arrayLiteral(items: readonly string[]): string {
  return `{${items.map((s) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;
}

const INSERT_NOTES = `
insert into notes (id, owner_id, title, body, tags, source, version, body_bytes, excerpt, open_items, search_vector, created_at, updated_at, deleted_at)
select t.id, $1::uuid, t.title, t.body, t.tags::text[], t.source, t.version, t.body_bytes, t.excerpt, t.open_items::text[], t.vec::tsvector,
       t.created_at, t.updated_at, t.deleted_at
  from unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::int[], $9::text[], $10::text[], $11::text[],
              $12::timestamptz[], $13::timestamptz[], $14::timestamptz[])
       as t(id, title, body, tags, source, version, body_bytes, excerpt, open_items, vec, created_at, updated_at, deleted_at)`;

// Every version of a note has its revision, as the service keeps them: 'create' at creation, edits
// in between, the last one at updated_at ('trash' for a trashed note). Contents are the current
// ones (the read paths never read revisions; this keeps the table's size realistic), each stored as
// a snapshot (core/domain/notes/revision-store.ts) and counted against the user's storage.
const INSERT_REVISIONS = `
insert into note_revisions (note_id, version, owner_id, title, body, tags, change, body_bytes, created_at, base_version, stored_bytes)
select n.id, v, n.owner_id, n.title, n.body, n.tags,
       case when v = 1 then 'create' when v = n.version and n.deleted_at is not null then 'trash' when v % 2 = 0 then 'update' else 'append' end,
       n.body_bytes,
       case when v = 1 then n.created_at when v = n.version then n.updated_at
            else n.created_at + (n.updated_at - n.created_at) * (v - 1) / (n.version - 1) end,
       v, octet_length(n.title) + n.body_bytes + coalesce((select sum(octet_length(t)) from unnest(n.tags) t), 0)
  from notes n cross join lateral generate_series(1, n.version) v
 where n.id = any($1::uuid[])`;

export interface SeedStats {
  notes: number;
  live: number;
  trashed: number;
  revisions: number;
  words: number;
  tags: number;
  cjkNotes: number;
  mixedNotes: number;
  bodyBytes: { total: number; mean: number; p50: number; p95: number; max: number };
  vocabularyBaseWords: number;
}

/** The small users seeded beside the big one. */
export interface Others {
  users: number;
  notesEach: number;
}

/** The default crowd: 20 users of n/200 notes each (at least 20). */
export function defaultOthers(n: number): Others {
  return { users: 20, notesEach: Math.max(20, Math.round(n / 200)) };
}

export interface SeedMeta {
  n: number;
  /** Other users' notes in the same tables (each user's rows scoped by owner_id). */
  others: Others & { totalNotes: number; loadMs: number };
  hash: string;
  engine: 'pglite' | 'postgres';
  userId: string;
  email: string;
  token: string;
  seededAt: string;
  timings: { totalMs: number; schemaMs: number; generateAndDeriveMs: number; insertMs: number; wordsAndStatsMs: number; analyzeMs: number };
  stats: SeedStats;
  /** Live note ids, a random sample (for get). */
  sampleIds: string[];
  /** Random positions in the live list order (updated_at desc, id desc): the note a deep page starts after. */
  listPositions: Array<{ position: number; updatedMs: number; id: string }>;
  /** Search queries and how many live notes their words match (before typo tolerance). */
  queries: Record<string, Array<{ q: string; matches: number }>>;
  /** Tag + date window filters for a filtered search, with the live notes they select (no q). */
  filters: Array<{ q: string; tag: string; from: string; to: string; matches: number }>;
  tagCounts: Record<string, number>;
}

function percentileOf(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

/**
 * Generates and bulk-inserts the notes of `userId`, then the word table, the counters and the
 * revisions. The schema (migrations) and the user exist already.
 */
export async function loadNotes(
  sql: Sql,
  userId: string,
  n: number,
  stream = '',
): Promise<{
  stats: SeedStats;
  sampleIds: string[];
  listPositions: SeedMeta['listPositions'];
  tagCounts: Record<string, number>;
  genMs: number;
  insertMs: number;
  wordsMs: number;
}> {
  const words = new Map<string, number>();
  const tagCounts = new Map<string, number>();
  const live: Array<{ updatedMs: number; id: string }> = [];
  const bodySizes: number[] = [];
  let trashed = 0;
  let revisions = 0;
  let cjk = 0;
  let mixed = 0;
  let genMs = 0;
  let insertMs = 0;
  let batch: Array<{ note: GenNote; d: ReturnType<typeof derive> }> = [];
  const t0 = performance.now();
  let lastReport = t0;
  const flush = async () => {
    if (batch.length === 0) return;
    const t = performance.now();
    const col = <T>(f: (x: { note: GenNote; d: ReturnType<typeof derive> }) => T) => batch.map(f);
    await sql.query(INSERT_NOTES, [
      userId,
      col((x) => x.note.id),
      col((x) => x.note.title),
      col((x) => x.note.body),
      col((x) => arrayLiteral(x.note.tags)),
      col((x) => x.note.source),
      col((x) => x.note.version),
      col((x) => x.d.bodyBytes),
      col((x) => x.d.excerpt),
      col((x) => arrayLiteral(x.d.openItems)),
      col((x) => x.d.vector),
      col((x) => new Date(x.note.createdMs).toISOString()),
      col((x) => new Date(x.note.updatedMs).toISOString()),
      col((x) => (x.note.deletedMs === null ? null : new Date(x.note.deletedMs).toISOString())),
    ]);
    await sql.query(INSERT_REVISIONS, [col((x) => x.note.id)]);
    insertMs += performance.now() - t;
    batch = [];
  };
  let i = 0;
  let tg = performance.now();
  for (const note of generateNotes(n, stream)) {
    const d = derive({ title: note.title, body: note.body, tags: note.tags });
    // As the service: note_words counts every stored note (trash keeps its words until purge);
    // the counters count live notes only.
    for (const w of d.words) words.set(w, (words.get(w) ?? 0) + 1);
    revisions += note.version;
    bodySizes.push(d.bodyBytes);
    if (note.lang === 'mixed') mixed++;
    else if (note.lang !== 'en') cjk++;
    if (note.deletedMs === null) {
      live.push({ updatedMs: note.updatedMs, id: note.id });
      for (const t of note.tags) tagCounts.set(t, (tagCounts.get(t) ?? 0) + 1);
    } else trashed++;
    batch.push({ note, d });
    genMs += performance.now() - tg;
    if (batch.length >= BATCH) await flush();
    tg = performance.now();
    if (++i % 10_000 === 0 || performance.now() - lastReport > 15_000) {
      lastReport = performance.now();
      progress(`seed: ${i}/${n} notes (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    }
  }
  await flush();

  const tw = performance.now();
  const sorted = [...words.keys()].sort();
  for (let k = 0; k < sorted.length; k += 10_000) {
    const chunk = sorted.slice(k, k + 10_000);
    await sql.query(`insert into note_words (owner_id, word, notes) select $1::uuid, w, c from unnest($2::text[], $3::int[]) as t(w, c)`, [
      userId,
      chunk,
      chunk.map((w) => words.get(w)!),
    ]);
  }
  await sql.query(`insert into note_stats (owner_id, live_count) values ($1, $2)`, [userId, live.length]);
  await sql.query(
    `insert into storage_usage (owner_id, kind, bytes) select $1::uuid, 'notes', coalesce(sum(stored_bytes), 0) from note_revisions where owner_id = $1`,
    [userId],
  );
  const tags = [...tagCounts.keys()].sort();
  await sql.query(
    `insert into note_tag_stats (owner_id, tag, live_count) select $1::uuid, t, c from unnest($2::text[], $3::int[]) as d(t, c)`,
    [userId, tags, tags.map((t) => tagCounts.get(t)!)],
  );
  const wordsMs = performance.now() - tw;

  // Samples for the benchmark, from their own stream.
  const r = new Rng(`${SEED}:samples:${n}`);
  live.sort((a, b) => b.updatedMs - a.updatedMs || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  const sampleIds = Array.from({ length: Math.min(1000, live.length) }, () => r.pick(live).id);
  const listPositions = Array.from({ length: Math.min(1000, live.length - 1) }, () => {
    const position = r.int(0, live.length - 2);
    return { position, ...live[position]! };
  });
  bodySizes.sort((a, b) => a - b);
  const total = bodySizes.reduce((a, b) => a + b, 0);
  return {
    stats: {
      notes: n,
      live: live.length,
      trashed,
      revisions,
      words: words.size,
      tags: tagCounts.size,
      cjkNotes: cjk,
      mixedNotes: mixed,
      bodyBytes: {
        total,
        mean: Math.round(total / n),
        p50: percentileOf(bodySizes, 50),
        p95: percentileOf(bodySizes, 95),
        max: bodySizes[bodySizes.length - 1] ?? 0,
      },
      vocabularyBaseWords: loadVocabulary().baseWords,
    },
    sampleIds,
    listPositions,
    tagCounts: Object.fromEntries([...tagCounts].sort((a, b) => b[1] - a[1])),
    genMs,
    insertMs,
    wordsMs,
  };
}

/** Live matches of every benchmark query (its words as the service would query them, no typo tolerance). */
async function countMatches(sql: Sql, userId: string): Promise<{ queries: SeedMeta['queries']; filters: SeedMeta['filters'] }> {
  const count = async (q: string, extra = '', params: unknown[] = []) => {
    const { rows } = await sql.query<{ c: number }>(
      `select count(*)::int as c from notes where owner_id = $1 and deleted_at is null and search_vector @@ $2::tsquery ${extra}`,
      [userId, toTsquery(parseQuery(q)), ...params],
    );
    return rows[0]!.c;
  };
  const queries: SeedMeta['queries'] = {};
  for (const [kind, list] of Object.entries(QUERIES)) {
    queries[kind] = [];
    for (const q of list) queries[kind].push({ q, matches: await count(q) });
  }
  // Tag + date window: a common word within one tag over a quarter (or a month).
  const filters: SeedMeta['filters'] = [];
  const windows = [
    ['2025-01-01', '2025-03-31'],
    ['2025-04-01', '2025-06-30'],
    ['2025-07-01', '2025-09-30'],
    ['2025-10-01', '2025-12-31'],
    ['2026-01-01', '2026-03-31'],
    ['2026-04-01', '2026-06-30'],
    ['2026-07-01', '2026-09-30'],
    ['2026-09-01', '2026-09-30'],
  ] as const;
  const combos: Array<[string, string]> = [
    ['project', 'meeting'],
    ['customer', 'sales'],
    ['team', 'engineering'],
    ['update', 'project-x'],
    ['time', 'meeting'],
    ['budget', 'finance'],
    ['meeting', 'follow-up'],
    ['release', 'design'],
  ];
  for (let k = 0; k < combos.length; k++) {
    const [q, tag] = combos[k]!;
    const [from, to] = windows[k]!;
    const matches = await count(
      q,
      `and tags @> array[$3]::text[] and updated_at >= $4::timestamptz and updated_at < ($5::date + 1)::timestamptz`,
      [tag, from, to],
    );
    filters.push({ q, tag, from, to, matches });
  }
  return { queries, filters };
}

// --- the user and the schema ------------------------------------------------------------------------

const EMAIL = 'notes-bench@example.com';

/** Runs Folio's migrations on the database and creates the user with an API token (kept in the meta). */
async function schemaAndUser(
  target: { databaseUrl?: string; dataDir: string },
  others: number,
): Promise<{ userId: string; token: string; otherIds: string[] }> {
  const db = await openDatabase({
    schema: DATABASE_SCHEMA,
    databaseUrl: target.databaseUrl,
    dataDir: target.dataDir,
    log: pino({ level: 'silent' }),
  });
  try {
    const identity = new IdentityService(db);
    const user = await identity.createUser({ email: EMAIL, name: 'Notes Bench' });
    const { token } = await identity.createApiToken(user.id, { name: 'notes bench', scopes: ['*'] });
    const otherIds: string[] = [];
    for (let k = 0; k < others; k++)
      otherIds.push((await identity.createUser({ email: `notes-bench-${k + 1}@example.com`, name: `Small user ${k + 1}` })).id);
    return { userId: user.id, token, otherIds };
  } finally {
    await db.close();
  }
}

/** What the seeded database depends on: change any of it and the cached seed is stale. */
export async function seedHash(): Promise<string> {
  const h = createHash('sha256');
  const files = [
    ...['derived.ts', 'text.ts', 'markdown.ts', 'snippet.ts'].map((f) => path.join(ROOT, 'core/domain/notes', f)),
    ...(await readdir(WORDS_DIR)).sort().map((f) => path.join(WORDS_DIR, f)),
    fileURLToPath(import.meta.url),
    path.join(ROOT, 'node_modules/@electric-sql/pglite/package.json'),
  ];
  // The migrations, as their source (a class's toString is its text).
  for (const m of DATABASE_SCHEMA.migrations) h.update(`${m.name}\n${m.class.toString()}`);
  for (const f of files)
    h.update(path.relative(ROOT, f))
      .update('\0')
      .update(await readFile(f))
      .update('\0');
  return h.digest('hex').slice(0, 12);
}

async function finish(
  sql: Sql,
  engine: SeedMeta['engine'],
  n: number,
  hash: string,
  user: { userId: string; token: string; otherIds: string[] },
  others: Others,
  t0: number,
  schemaMs: number,
  analyze: boolean,
): Promise<SeedMeta> {
  const { userId, token } = user;
  const loaded = await loadNotes(sql, userId, n);
  const to = performance.now();
  for (const [k, id] of user.otherIds.entries()) await loadNotes(sql, id, others.notesEach, `:user${k + 1}`);
  const othersMs = performance.now() - to;
  const ta = performance.now();
  if (analyze) await sql.query('vacuum analyze');
  const analyzeMs = performance.now() - ta;
  const { queries, filters } = await countMatches(sql, userId);
  return {
    n,
    others: { ...others, totalNotes: others.users * others.notesEach, loadMs: Math.round(othersMs) },
    hash,
    engine,
    userId,
    email: EMAIL,
    token,
    seededAt: new Date().toISOString(),
    timings: {
      totalMs: Math.round(performance.now() - t0),
      schemaMs: Math.round(schemaMs),
      generateAndDeriveMs: Math.round(loaded.genMs),
      insertMs: Math.round(loaded.insertMs),
      wordsAndStatsMs: Math.round(loaded.wordsMs),
      analyzeMs: Math.round(analyzeMs),
    },
    stats: loaded.stats,
    sampleIds: loaded.sampleIds,
    listPositions: loaded.listPositions,
    queries,
    filters,
    tagCounts: loaded.tagCounts,
  };
}

export interface PgliteSeed {
  /** The cached folder: `pglite/` (the data) and `meta.json`. Copy it before opening it for writing. */
  dir: string;
  meta: SeedMeta;
  /** False when the cache was used. */
  seeded: boolean;
}

/** The cached PGlite seed of n notes, made now if missing or stale. */
export async function ensurePgliteSeed(n: number, opts: { reseed?: boolean; others?: Others } = {}): Promise<PgliteSeed> {
  const hash = await seedHash();
  const others = opts.others ?? defaultOthers(n);
  const name = `notes-pglite-n${n}-u${others.users}x${others.notesEach}-${hash}`;
  const dir = path.join(CACHE_DIR, name);
  if (!opts.reseed) {
    const meta = await readFile(path.join(dir, 'meta.json'), 'utf8').then(
      (t) => JSON.parse(t) as SeedMeta,
      () => undefined,
    );
    if (meta) return { dir, meta, seeded: false };
  }
  await mkdir(CACHE_DIR, { recursive: true });
  for (const old of await readdir(CACHE_DIR)) {
    if (old.startsWith(`notes-pglite-n${n}-`)) {
      progress(`seed: removing ${old} (stale or being replaced)`);
      await removeDir(path.join(CACHE_DIR, old));
    }
  }
  const partial = path.join(CACHE_DIR, `${name}.partial`);
  progress(
    `seed: ${n} notes and ${others.users} users of ${others.notesEach} into PGlite at ${path.relative(ROOT, dir)} (bulk insert; cached for later runs)`,
  );
  const t0 = performance.now();
  const user = await schemaAndUser({ dataDir: partial }, others.users);
  const schemaMs = performance.now() - t0;
  const pglite = await PGlite.create({ dataDir: path.join(partial, 'pglite'), extensions: { pg_trgm } });
  let meta: SeedMeta;
  try {
    meta = await finish(pglite, 'pglite', n, hash, user, others, t0, schemaMs, false);
  } finally {
    await pglite.close();
  }
  await writeFile(path.join(partial, 'meta.json'), JSON.stringify(meta, null, 1) + '\n');
  await rename(partial, dir);
  progress(`seed: PGlite seeded in ${(meta.timings.totalMs / 1000).toFixed(1)} s`);
  return { dir, meta, seeded: true };
}

/** A fresh database on `serverUrl`, seeded the same way; drop() removes it. */
export async function seedPostgres(
  serverUrl: string,
  n: number,
  others: Others = defaultOthers(n),
): Promise<{ url: string; drop: () => Promise<void>; meta: SeedMeta }> {
  const hash = await seedHash();
  const db = await freshDatabase(serverUrl);
  const scratch = await tempDir('seed');
  try {
    progress(
      `seed: ${n} notes and ${others.users} users of ${others.notesEach} into a fresh PostgreSQL database (bulk insert, then VACUUM ANALYZE)`,
    );
    const t0 = performance.now();
    const user = await schemaAndUser({ databaseUrl: db.url, dataDir: scratch }, others.users);
    const schemaMs = performance.now() - t0;
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    let meta: SeedMeta;
    try {
      meta = await finish(client, 'postgres', n, hash, user, others, t0, schemaMs, true);
    } finally {
      await client.end();
    }
    progress(`seed: PostgreSQL seeded in ${(meta.timings.totalMs / 1000).toFixed(1)} s`);
    return { url: db.url, drop: db.drop, meta };
  } catch (err) {
    await db.drop().catch(() => {});
    throw err;
  } finally {
    await removeDir(scratch);
  }
}

// --- --verify: the bulk rows against the service's own writes ---------------------------------------

/**
 * Writes the first `n` generated notes twice into a scratch PGlite: through NotesServiceImpl.create
 * (timed: the per-note cost of seeding through the service) and through the bulk loader, as two
 * users, then compares every derived column and the word and tag counters.
 */
export async function verify(n = 300): Promise<{ serviceMsPerNote: number; bulkMsPerNote: number; mismatches: string[] }> {
  const dir = await tempDir('seed-verify');
  try {
    const db = await openDatabase({ schema: DATABASE_SCHEMA, dataDir: dir, log: pino({ level: 'silent' }) });
    const generated = [...generateNotes(n)];
    let svcId: string;
    let bulkId: string;
    let serviceMsPerNote: number;
    try {
      const identity = new IdentityService(db);
      svcId = (await identity.createUser({ email: 'svc@example.com' })).id;
      bulkId = (await identity.createUser({ email: 'bulk@example.com' })).id;
      const notes = new NotesServiceImpl(db);
      const principal = { user: { id: svcId } } as unknown as Principal;
      const t = performance.now();
      for (const g of generated) await notes.create(principal, { title: g.title, body: g.body, tags: g.tags, source: g.source });
      serviceMsPerNote = (performance.now() - t) / n;
      // The generated trashed notes go to the trash through the service too (counters, words).
      const created = await db.orm.em
        .fork()
        .execute<Array<{ id: string; title: string; body: string }>>(`select id, title, body from notes where owner_id = ?`, [svcId]);
      for (const g of generated.filter((x) => x.deletedMs !== null)) {
        const row = created.find((c) => c.title === g.title && c.body === g.body);
        if (row) await notes.trash(principal, row.id);
      }
    } finally {
      await db.close();
    }
    const pglite = await PGlite.create({ dataDir: path.join(dir, 'pglite'), extensions: { pg_trgm } });
    try {
      const t = performance.now();
      await loadNotes(pglite, bulkId, n);
      const bulkMsPerNote = (performance.now() - t) / n;
      const rowsOf = async (sql: string, owner: string) => (await pglite.query<Record<string, unknown>>(sql, [owner])).rows;
      const cols = `title, body, tags, source, body_bytes, excerpt, open_items, search_vector::text as vec`;
      const noteSql = `select ${cols} from notes where owner_id = $1 order by title, body`;
      const a = await rowsOf(noteSql, svcId);
      const b = await rowsOf(noteSql, bulkId);
      const mismatches: string[] = [];
      if (a.length !== b.length) mismatches.push(`note count ${a.length} vs ${b.length}`);
      for (let k = 0; k < Math.min(a.length, b.length); k++)
        for (const c of Object.keys(a[k]!))
          if (JSON.stringify(a[k]![c]) !== JSON.stringify(b[k]![c])) mismatches.push(`note "${String(a[k]!['title'])}": ${c} differs`);
      for (const [table, key, count] of [
        ['note_words', 'word', 'notes'],
        ['note_tag_stats', 'tag', 'live_count'],
        ['note_stats', `'-'`, 'live_count'],
      ] as const) {
        const sql = `select ${key} as k, ${count} as c from ${table} where owner_id = $1 order by 1`;
        if (JSON.stringify(await rowsOf(sql, svcId)) !== JSON.stringify(await rowsOf(sql, bulkId))) mismatches.push(`${table} differs`);
      }
      return { serviceMsPerNote, bulkMsPerNote, mismatches };
    } finally {
      await pglite.close();
    }
  } finally {
    await removeDir(dir);
  }
}

// --- CLI --------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  assertNode24();
  const args = process.argv.slice(2);
  const opt = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const n = Number(opt('n') ?? DEFAULT_N);
  if (!Number.isInteger(n) || n < 1000) throw new Error('--n must be an integer >= 1000');
  const others = { ...defaultOthers(n) };
  if (opt('others') !== undefined) others.users = Number(opt('others'));
  if (opt('other-notes') !== undefined) others.notesEach = Number(opt('other-notes'));
  if (!Number.isInteger(others.users) || others.users < 0 || !Number.isInteger(others.notesEach) || others.notesEach < 1)
    throw new Error('--others must be an integer >= 0 and --other-notes an integer >= 1');
  if (opt('sample')) {
    let k = 0;
    const want = Number(opt('sample'));
    for (const note of generateNotes(n)) {
      if (k++ >= want) break;
      console.log(
        `--- ${note.title}  [${note.tags.join(', ')}] ${note.source} v${note.version} ${new Date(note.updatedMs).toISOString()}\n${note.body}`,
      );
    }
    return;
  }
  if (args.includes('--verify')) {
    const v = await verify(Number(opt('verify-n') ?? 300));
    console.log(
      `service create: ${round(v.serviceMsPerNote, 2)} ms/note (${round((v.serviceMsPerNote * n) / 60_000, 1)} min for ${n}); bulk: ${round(v.bulkMsPerNote, 2)} ms/note`,
    );
    console.log(
      v.mismatches.length
        ? `MISMATCH:\n${v.mismatches.slice(0, 20).join('\n')}`
        : 'bulk rows = service rows (every derived column, note_words, counters)',
    );
    if (v.mismatches.length) process.exitCode = 1;
    return;
  }
  if (args.includes('--postgres')) {
    const url = process.env['DATABASE_URL'];
    if (!url) throw new Error('--postgres needs DATABASE_URL');
    const s = await seedPostgres(url, n, others);
    console.log(JSON.stringify({ ...s.meta, sampleIds: s.meta.sampleIds.length, listPositions: s.meta.listPositions.length }, null, 1));
    if (args.includes('--keep')) console.log(`kept: ${s.url}`);
    else await s.drop();
    return;
  }
  const s = await ensurePgliteSeed(n, { reseed: args.includes('--reseed'), others });
  console.log(JSON.stringify({ ...s.meta, sampleIds: s.meta.sampleIds.length, listPositions: s.meta.listPositions.length }, null, 1));
  console.log(s.seeded ? `seeded into ${s.dir}` : `cached: ${s.dir} (--reseed to make it again)`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
