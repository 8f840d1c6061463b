// Pure glob matching for excluded-project lists (claude-mem §1.5 rules), shared by the server gate and the hooks client.
// Globs are compiled to a bit-parallel automaton, not a regex: `**a**a**a**b` against a 4,000-char path
// made the backtracking regex exponential; this runs in (path length × glob length / 32) steps, always.

/** One step of a glob: a literal character, `?` (one character but '/'), `*` (a run without '/'), `**` (any run), a letter. */
type Token = { kind: 'char'; ch: string } | { kind: 'one' } | { kind: 'star' } | { kind: 'any' } | { kind: 'letter' };

const slashes = (p: string) => p.replace(/\\/g, '/');
const SLASH = '/';

function tokenize(glob: string): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    let t: Token;
    if (ch === '*' && glob[i + 1] === '*') {
      t = { kind: 'any' };
      i++;
    } else if (ch === '*') t = { kind: 'star' };
    else if (ch === '?') t = { kind: 'one' };
    else t = { kind: 'char', ch };
    // A run of stars is one star (`**` if any of them is): adjacent stars add nothing but states.
    const last = out[out.length - 1];
    if ((t.kind === 'star' || t.kind === 'any') && last && (last.kind === 'star' || last.kind === 'any')) {
      if (t.kind === 'any') out[out.length - 1] = t;
      continue;
    }
    out.push(t);
  }
  return out;
}

/**
 * A compiled glob: state i means "the first i tokens matched". Sets of states are bit sets, so one path
 * character updates all states at once with a few word operations.
 */
class Automaton {
  readonly #words: number;
  readonly #size: number;
  /** States whose token is a star or `**` (they may be skipped without reading a character). */
  readonly #skippable: Uint32Array;
  /** States that stay put on any character but '/' (`*`), and on any character at all (`**`). */
  readonly #starStay: Uint32Array;
  readonly #anyStay: Uint32Array;
  /** States advanced by any character but '/' (`?`), and by any ASCII letter. */
  readonly #oneStep: Uint32Array;
  readonly #letterStep: Uint32Array;
  /** States advanced by one literal character (lower-cased when matching ignores case). */
  readonly #charStep = new Map<string, Uint32Array>();

  constructor(
    tokens: Token[],
    private readonly ignoreCase: boolean,
  ) {
    this.#size = tokens.length + 1;
    this.#words = Math.ceil(this.#size / 32) + 1;
    const set = () => new Uint32Array(this.#words);
    this.#skippable = set();
    this.#starStay = set();
    this.#anyStay = set();
    this.#oneStep = set();
    this.#letterStep = set();
    tokens.forEach((t, i) => {
      const bit = (s: Uint32Array) => (s[i >>> 5]! |= 1 << (i & 31));
      if (t.kind === 'star') [this.#skippable, this.#starStay].forEach(bit);
      else if (t.kind === 'any') [this.#skippable, this.#anyStay].forEach(bit);
      else if (t.kind === 'one') bit(this.#oneStep);
      else if (t.kind === 'letter') bit(this.#letterStep);
      else {
        const key = this.#key(t.ch);
        let s = this.#charStep.get(key);
        if (!s) this.#charStep.set(key, (s = set()));
        bit(s);
      }
    });
  }

  #key(ch: string): string {
    if (!this.ignoreCase) return ch;
    const lower = ch.toLowerCase();
    return lower.length === 1 ? lower : ch;
  }

  /** Adds every state reachable by skipping star tokens (no two stars are adjacent, so one pass is enough). */
  #close(s: Uint32Array): void {
    let carry = 0;
    for (let w = 0; w < this.#words; w++) {
      const moved = s[w]! & this.#skippable[w]!;
      const next = (moved << 1) | carry;
      carry = moved >>> 31;
      s[w] = s[w]! | next;
    }
  }

  matches(text: string): boolean {
    let cur = new Uint32Array(this.#words);
    let nxt = new Uint32Array(this.#words);
    cur[0] = 1;
    this.#close(cur);
    for (let i = 0; i < text.length; i++) {
      const ch = text[i]!;
      const isSlash = ch === SLASH;
      const lit = this.#charStep.get(this.#key(ch));
      const code = ch.charCodeAt(0);
      const isLetter = (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
      let carry = 0;
      let any = 0;
      for (let w = 0; w < this.#words; w++) {
        const c = cur[w]!;
        let step = lit ? lit[w]! : 0;
        if (!isSlash) step |= this.#oneStep[w]!;
        if (isLetter) step |= this.#letterStep[w]!;
        const advanced = c & step;
        const stay = c & (this.#anyStay[w]! | (isSlash ? 0 : this.#starStay[w]!));
        nxt[w] = ((advanced << 1) | carry | stay) >>> 0;
        carry = advanced >>> 31;
        any |= nxt[w]!;
      }
      if (!any) return false;
      this.#close(nxt);
      [cur, nxt] = [nxt, cur];
    }
    const last = this.#size - 1;
    return (cur[last >>> 5]! & (1 << (last & 31))) !== 0;
  }
}

/** Token runs that stand for a usual home folder when the caller does not know the client's home. */
const ANY_HOME: Token[][] = [
  [...'/home/'].map((ch) => ({ kind: 'char', ch }) as Token).concat([{ kind: 'one' }, { kind: 'star' }]),
  [...'/Users/'].map((ch) => ({ kind: 'char', ch }) as Token).concat([{ kind: 'one' }, { kind: 'star' }]),
  [...'/root'].map((ch) => ({ kind: 'char', ch }) as Token),
  [{ kind: 'letter' } as Token].concat(
    [...':/Users/'].map((ch) => ({ kind: 'char', ch }) as Token),
    [{ kind: 'one' }, { kind: 'star' }],
  ),
];

/** A compiled glob; `test` answers whether the whole text matches it. */
export interface GlobMatcher {
  test(text: string): boolean;
}

/**
 * Compiles one glob: `**` → any run, `*` → one segment's characters, `?` → one character; anchored.
 * `~` / `~/…` is `home`, or any usual home prefix when `home` is unknown.
 */
export function compileGlob(glob: string, home?: string | null, ignoreCase = false): GlobMatcher {
  let g = slashes(glob.trim());
  let prefixes: Token[][] = [[]];
  if (g === '~' || g.startsWith('~/')) {
    if (home) g = slashes(home).replace(/\/+$/, '') + g.slice(1);
    else {
      prefixes = ANY_HOME;
      g = g.slice(1);
    }
  }
  const body = tokenize(g);
  const automata = prefixes.map((p) => new Automaton([...p, ...body], ignoreCase));
  return { test: (text) => automata.some((a) => a.matches(text)) };
}

/**
 * True when the path (either slash style), or its last segment, matches any glob. Blank paths and blank
 * globs never match. `ignoreCase` is for case-insensitive file systems (the client passes it on Windows).
 */
export function isPathExcluded(
  path: string,
  globs: readonly string[],
  home?: string | null,
  ignoreCase = false,
): boolean {
  const p = trimTrailingSlashes(slashes(path.trim()));
  if (!p) return false;
  const base = p.slice(p.lastIndexOf('/') + 1);
  return globs.some((glob) => {
    if (!glob.trim()) return false;
    const m = compileGlob(trimTrailingSlashes(slashes(glob)), home, ignoreCase);
    return m.test(p) || (base !== p && m.test(base));
  });
}

/** Drops trailing slashes but keeps a lone `/` (a loop, not a regex: `\/+$` rescans slash runs). */
function trimTrailingSlashes(p: string): string {
  let end = p.length;
  while (end > 1 && p[end - 1] === SLASH) end--;
  return p.slice(0, end);
}

/** Splits a comma-separated glob list (the env/settings-file form) into clean entries. */
export const parseGlobList = (text: string): string[] =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
