// Turns any user text into safe FTS5 MATCH expressions: our own tokenising, every term quoted, CJK as bigrams.
import { bigrams, splitCjkRuns } from '../lib/cjk';

/** FTS5 column order of observations_fts; weights for bm25() follow it. fts_scope holds `t<team> p<project>`. */
export const FTS_COLUMNS = ['title', 'subtitle', 'narrative', 'facts', 'concepts', 'cjk_terms', 'fts_scope'] as const;
/**
 * Title dominates; facts and subtitle are dense summaries; narrative is long prose (many passing mentions);
 * concepts are a small closed vocabulary. cjk_terms carries CJK text of every column, so it sits in between.
 * fts_scope only narrows the match and must never score.
 */
export const BM25_WEIGHTS = [10, 4, 2, 4, 1, 3, 0] as const;
/**
 * summaries_fts columns: request, investigated, learned, completed, next_steps, notes, cjk_terms. What was
 * learned and done answers "what did we decide"; the request says what the session was about.
 */
export const SUMMARY_BM25_WEIGHTS = [4, 2, 5, 4, 2, 1, 3] as const;
/** prompts_fts columns: text, cjk_terms. */
export const PROMPT_BM25_WEIGHTS = [1, 1] as const;

/**
 * Scope tokens are `\uE000t<team>` and `\uE000p<project>`. The tokenizer keeps the private-use character inside
 * the token, but `words()` below splits user text at it, so no query can match a scope token by accident and
 * user terms need no column filter (a column filter over common words cost ~2× in our measurements).
 */
const SCOPE_MARK = '\uE000';

/**
 * Past this many projects no scope term is added: each project token adds a doclist to merge, and a long OR
 * of them costs more than the rows it saves (the SQL filter still applies the exact project list).
 */
export const MAX_SCOPE_PROJECTS = 20;

/**
 * Restricts a MATCH expression from buildFtsQuery to some projects inside the FTS index, so common words are
 * intersected with one project's rows instead of the whole database's. The SQL scope is still applied
 * afterwards; this only makes the index visit fewer rows. Team-wide searches add nothing: intersecting with
 * the team token read the whole team's doclist and was slower than filtering in SQL with one team per database.
 */
export function scopeMatch(expr: string, projectIds: readonly number[] | null): string {
  if (!projectIds || projectIds.length === 0 || projectIds.length > MAX_SCOPE_PROJECTS) return expr;
  const tokens = projectIds.map((id) => `"${SCOPE_MARK}p${Math.trunc(id)}"`).join(' OR ');
  return `(${expr}) AND fts_scope : (${tokens})`;
}

/** Words that only carry meaning as FTS syntax when typed in capitals; we never pass syntax through. */
const OPERATORS = new Set(['AND', 'OR', 'NOT', 'NEAR']);
/** Filler words that would make an all-terms match fail for no reason; kept if they are all there is. */
const STOPWORDS = new Set(
  (
    'a an the and or of to in on at for from by with is are was were be been being am it its this that these those how what why when where ' +
    'which who whom whose do does did doing done we i you my our your me us he she him his her they them their there can could should ' +
    'would will shall may might must has have had having into about via not no any some ever so if as than then just also s t'
  ).split(' '),
);
/** Japanese/Chinese particles that glue words together; a phrase is split at them so word order may vary. */
const PARTICLES = new Set([...'のがをにはでともへや的了']);

/** Chunks that name a file: `a/b.ts`, `deploy.sh`, `.github/workflows/ci.yml` (at most 3, `./` dropped). */
export function pathLikeTerms(text: string): string[] {
  const out = text
    .split(/\s+/)
    .map((c) => c.replace(/^["'`(\[]+|["'`)\],;:?!]+$/g, '').replace(/^\.\//, ''))
    .filter(
      (c) =>
        c.length >= 3 && c.length <= 300 && /^[\w.@/-]+$/.test(c) && (/\/./.test(c) || /\w\.[A-Za-z0-9]{1,8}$/.test(c)),
    );
  return [...new Set(out)].slice(0, 3);
}

export interface FtsQuery {
  /** Every term must match (AND). Null when nothing searchable is left. */
  all: string | null;
  /** Any term may match (OR); a superset of `all`. */
  any: string | null;
  /** The searchable units we found, for tests and debugging. */
  terms: string[];
  /** Only filler words were found ("what did we do"): the text says nothing to match on. */
  fillerOnly: boolean;
}

const quote = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** Latin/digit words of one whitespace-free chunk, lower-cased (e.g. `src/auth.ts` → src, auth, ts). */
const words = (chunk: string) => (chunk.match(/[\p{L}\p{N}]+/gu) ?? []).map((w) => w.toLowerCase());

/** A CJK run split at particles into pieces of at least one character. */
function cjkPieces(run: string): string[] {
  const chars = [...run];
  const pieces: string[] = [];
  let cur = '';
  chars.forEach((ch, i) => {
    const inside = i > 0 && i < chars.length - 1;
    if (PARTICLES.has(ch) && inside && cur.length > 0) {
      pieces.push(cur);
      cur = '';
    } else cur += ch;
  });
  if (cur) pieces.push(cur);
  return pieces;
}

interface Unit {
  /** MATCH fragment for the AND query. */
  strict: string;
  /** MATCH fragments that may each match on their own (OR query). */
  loose: string[];
  label: string;
  stop: boolean;
}

function cjkUnit(piece: string): Unit {
  const grams = bigrams(piece);
  if ([...piece].length === 1) {
    // A lone character: bigrams starting with it, or a one-character run stored as itself.
    const frag = `{cjk_terms} : ${quote(piece)}*`;
    return { strict: frag, loose: [frag], label: piece, stop: false };
  }
  return {
    strict: `{cjk_terms} : ${quote(grams.join(' '))}`,
    loose: grams.map((g) => `{cjk_terms} : ${quote(g)}`),
    label: piece,
    stop: false,
  };
}

const ALNUM = /[\p{L}\p{N}]/u;

/**
 * Drops a possessive `'s` (straight or curly apostrophe) ending a chunk, before trailing punctuation: `Kate's?`
 * asks about Kate, and the phrase "kate s" would miss every row that just says Kate. One backward scan.
 */
export function dropPossessive(chunk: string): string {
  let end = chunk.length;
  while (end > 0 && !ALNUM.test(chunk[end - 1]!)) end--;
  const s = chunk[end - 1];
  const mark = chunk[end - 2];
  if (end >= 3 && (s === 's' || s === 'S') && (mark === "'" || mark === '\u2019'))
    return chunk.slice(0, end - 2) + chunk.slice(end);
  return chunk;
}

function latinUnit(chunk: string): Unit | null {
  const ws = words(dropPossessive(chunk));
  if (ws.length === 0) return null;
  if (ws.length === 1) {
    const w = ws[0]!;
    return { strict: quote(w), loose: [quote(w)], label: w, stop: STOPWORDS.has(w) };
  }
  // A chunk like `auth-middleware.ts` or `user_id` is one name: match it as a phrase, but each part alone may fill.
  return {
    strict: quote(ws.join(' ')),
    loose: ws.filter((w) => !STOPWORDS.has(w)).map(quote),
    label: ws.join(' '),
    stop: false,
  };
}

/** Builds the AND and OR MATCH expressions for arbitrary user text. Never throws, never emits raw syntax. */
export function buildFtsQuery(text: string, maxUnits = 24): FtsQuery {
  const units: Unit[] = [];
  for (const part of splitCjkRuns(text.normalize('NFKC'))) {
    if (part.cjk) {
      for (const piece of cjkPieces(part.text)) units.push(cjkUnit(piece));
      continue;
    }
    for (const chunk of part.text.split(/\s+/)) {
      if (!chunk || OPERATORS.has(chunk)) continue;
      const u = latinUnit(chunk);
      if (u) units.push(u);
    }
  }
  const seen = new Set<string>();
  let kept = units.filter((u) => !seen.has(u.strict) && seen.add(u.strict));
  const fillerOnly = !kept.some((u) => !u.stop);
  if (!fillerOnly) kept = kept.filter((u) => !u.stop);
  kept = kept.slice(0, maxUnits);
  if (kept.length === 0) return { all: null, any: null, terms: [], fillerOnly: false };
  const loose = [...new Set(kept.flatMap((u) => (u.loose.length ? u.loose : [u.strict])))];
  return {
    all: kept.map((u) => u.strict).join(' AND '),
    any: loose.join(' OR '),
    terms: kept.map((u) => u.label),
    fillerOnly,
  };
}
