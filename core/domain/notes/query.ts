// Web-search syntax -> a tsquery literal over the lexemes text.ts indexes. Same grammar as
// PostgreSQL's websearch_to_tsquery: words are ANDed, "quoted phrases" are adjacent words, a leading
// - excludes, OR (any case) between two terms makes them alternatives (binding tighter than AND).
// Done here rather than by websearch_to_tsquery so that folding and CJK bigrams apply to the query
// exactly as they did to the note, on both engines.
import { fold, isFuzzyWord, quoteLexeme, runLexemes, runs } from './text.ts';

export interface QueryToken {
  lexeme: string;
  /** A lone CJK character matches every bigram starting with it (see text.ts). */
  prefix: boolean;
}

/** One term: a word or a quoted phrase, possibly excluded. */
export interface Atom {
  negated: boolean;
  tokens: QueryToken[];
  /** Folded word runs (non-CJK) and CJK runs, for highlighting. */
  highlights: Array<{ text: string; cjk: boolean }>;
  /** Set when this atom is one plain word that typo tolerance may replace. */
  word?: string;
  /** Typo tolerance: alternatives that replace `word`. */
  alternatives?: string[];
}

/** AND of clauses, each an OR of atoms. */
export type ParsedQuery = Atom[][];

export function parseQuery(q: string): ParsedQuery {
  const raw: Array<{ text: string; negated: boolean; quoted: boolean } | 'or'> = [];
  let i = 0;
  while (i < q.length) {
    const c = q[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    let negated = false;
    if (c === '-' && i + 1 < q.length && !/\s/.test(q[i + 1]!)) {
      negated = true;
      i++;
    }
    if (q[i] === '"') {
      const end = q.indexOf('"', i + 1);
      const text = q.slice(i + 1, end === -1 ? q.length : end);
      raw.push({ text, negated, quoted: true });
      i = end === -1 ? q.length : end + 1;
      continue;
    }
    let j = i;
    while (j < q.length && !/\s/.test(q[j]!) && q[j] !== '"') j++;
    const text = q.slice(i, j);
    i = j;
    if (!negated && text.toLowerCase() === 'or') raw.push('or');
    else raw.push({ text, negated, quoted: false });
  }

  const clauses: ParsedQuery = [];
  let pendingOr = false;
  for (const item of raw) {
    if (item === 'or') {
      pendingOr = clauses.length > 0;
      continue;
    }
    const atom = toAtom(item.text, item.negated);
    if (!atom) continue;
    const last = clauses[clauses.length - 1];
    if (pendingOr && last) last.push(atom);
    else clauses.push([atom]);
    pendingOr = false;
  }
  return clauses;
}

function toAtom(text: string, negated: boolean): Atom | null {
  const rs = runs(fold(text));
  if (rs.length === 0) return null;
  const tokens: QueryToken[] = [];
  rs.forEach((run, idx) => {
    const followed = idx < rs.length - 1;
    if (!run.cjk) {
      tokens.push({ lexeme: run.text, prefix: false });
      return;
    }
    const lexemes = runLexemes(run);
    if (lexemes.length === 1) {
      // A single character: exact when a token follows in the phrase, else any bigram it starts.
      tokens.push({ lexeme: lexemes[0]!, prefix: !followed });
      return;
    }
    // Bigrams; the run's trailing unigram only matters when the phrase continues after it.
    const keep = followed ? lexemes : lexemes.slice(0, -1);
    for (const l of keep) tokens.push({ lexeme: l, prefix: false });
  });
  const atom: Atom = { negated, tokens, highlights: rs.map((r) => ({ text: r.text, cjk: r.cjk })) };
  if (rs.length === 1 && !rs[0]!.cjk) atom.word = rs[0]!.text;
  return atom;
}

/** True when at least one term is not excluded (a query of only -words matches by exclusion). */
export function hasPositive(q: ParsedQuery): boolean {
  return q.some((clause) => clause.some((a) => !a.negated));
}

export function toTsquery(q: ParsedQuery): string {
  return q
    .map((clause) => {
      const parts = clause.map(atomQuery);
      return parts.length === 1 ? parts[0]! : `( ${parts.join(' | ')} )`;
    })
    .join(' & ');
}

function atomQuery(a: Atom): string {
  let body: string;
  if (a.alternatives && a.alternatives.length > 0) {
    body = a.alternatives.length === 1 ? quoteLexeme(a.alternatives[0]!) : `( ${a.alternatives.map(quoteLexeme).join(' | ')} )`;
  } else {
    const toks = a.tokens.map((t) => quoteLexeme(t.lexeme) + (t.prefix ? ':*' : ''));
    body = toks.length === 1 ? toks[0]! : `( ${toks.join(' <-> ')} )`;
  }
  return a.negated ? `!${body.startsWith('(') ? body : `( ${body} )`}` : body;
}

/** Terms to mark in snippets: the positive atoms' runs (or their typo-tolerance replacements). */
export function highlightTerms(q: ParsedQuery): Array<{ text: string; cjk: boolean }> {
  const out = new Map<string, { text: string; cjk: boolean }>();
  for (const clause of q) {
    for (const a of clause) {
      if (a.negated) continue;
      const list = a.alternatives?.length ? a.alternatives.map((text) => ({ text, cjk: false })) : a.highlights;
      for (const h of list) out.set(`${h.cjk}:${h.text}`, h);
    }
  }
  return [...out.values()];
}

/** The plain words of positive atoms (candidates for typo tolerance). */
export function plainWords(q: ParsedQuery): string[] {
  const out = new Set<string>();
  for (const clause of q) for (const a of clause) if (!a.negated && a.word) out.add(a.word);
  return [...out];
}

/** A copy of the query with each given word replaced by its alternatives. */
export function withAlternatives(q: ParsedQuery, alternatives: Map<string, string[]>): ParsedQuery {
  return q.map((clause) =>
    clause.map((a) => {
      const alts = !a.negated && a.word ? alternatives.get(a.word) : undefined;
      return alts ? { ...a, alternatives: alts } : a;
    }),
  );
}

/** A lexeme the per-user word counts (note_words) cover: a word of 3 to 64 letters, not a prefix. */
function counted(t: QueryToken): boolean {
  return !t.prefix && isFuzzyWord(t.lexeme);
}

/** The words whose counts bound what `q` matches (see matchBound). */
export function countedWords(q: ParsedQuery): string[] {
  const out = new Set<string>();
  for (const clause of q)
    for (const a of clause) {
      if (a.negated) continue;
      if (a.alternatives?.length) for (const w of a.alternatives) out.add(w);
      else for (const t of a.tokens) if (counted(t)) out.add(t.lexeme);
    }
  return [...out];
}

/**
 * An upper bound of how many notes `q` matches, from how many notes hold each word (`count`);
 * null when no clause can be bounded (every clause has a term the counts do not cover, or only
 * excluded terms). A phrase or word is bounded by its rarest counted word, alternatives by their
 * sum, a clause (OR) by the sum of its terms, the query (AND) by its smallest clause.
 */
export function matchBound(q: ParsedQuery, count: (word: string) => number): number | null {
  let bound: number | null = null;
  for (const clause of q) {
    let sum = 0;
    for (const a of clause) {
      if (a.negated) {
        sum = NaN; // NOT x bounds nothing
        break;
      }
      let atom: number;
      if (a.alternatives?.length) atom = a.alternatives.reduce((n, w) => n + count(w), 0);
      else {
        const known = a.tokens.filter(counted);
        if (known.length === 0) {
          sum = NaN;
          break;
        }
        atom = Math.min(...known.map((t) => count(t.lexeme)));
      }
      sum += atom;
    }
    if (!Number.isNaN(sum)) bound = bound === null ? sum : Math.min(bound, sum);
  }
  return bound;
}

/**
 * A query every match of `q` also matches, without phrases: each phrase's words ANDed, clauses
 * with an excluded term left out (NOT "a b" is not NOT (a AND b)). The GIN index answers it
 * exactly, without reading a vector; the phrase then needs checking on these candidates only.
 * Null when `q` has no positive phrase (nothing to gain) or nothing is left to narrow by.
 */
export function phraseCandidates(q: ParsedQuery): string | null {
  let phrase = false;
  const clauses: string[] = [];
  for (const clause of q) {
    if (clause.some((a) => a.negated)) continue;
    const parts = clause.map((a) => {
      if (a.alternatives?.length) return atomQuery(a);
      if (a.tokens.length > 1) phrase = true;
      const toks = a.tokens.map((t) => quoteLexeme(t.lexeme) + (t.prefix ? ':*' : ''));
      return toks.length === 1 ? toks[0]! : `( ${toks.join(' & ')} )`;
    });
    clauses.push(parts.length === 1 ? parts[0]! : `( ${parts.join(' | ')} )`);
  }
  return phrase && clauses.length > 0 ? clauses.join(' & ') : null;
}
