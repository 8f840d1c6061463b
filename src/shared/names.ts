// The names a record cites: identifiers of code (functions, types, constants, flags, routes, file paths) found in
// its text. They are what a reader checks still occurs in the code (src/shared/evidence.ts). Pure, linear: each
// text is read once, up to NAMES_SCAN_CHARS characters, with one tokenising regex that cannot backtrack.

export const MAX_NAMES = 16;
export const MAX_NAME_CHARS = 64;
export const MIN_NAME_CHARS = 3;
/** Characters of a record's text scanned for names (the head; records are short). */
export const NAMES_SCAN_CHARS = 20_000;

/** A run of characters a name may contain, optionally followed by `()`. */
const TOKEN = /[A-Za-z0-9_$./:-]+(?:\(\))?/g;

const CAMEL = /^[a-z_$][a-z0-9_$]*[A-Z][A-Za-z0-9_$]*$/;
const PASCAL = /^[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*$/;
const SNAKE = /^[A-Za-z$][A-Za-z0-9$]*(?:_[A-Za-z0-9$]+)+$/;
const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const FLAG = /^--[a-z0-9][a-z0-9-]*[a-z0-9]$/;
const ROUTE = /^\/[a-z0-9_-]+(?:\/[a-z0-9_:-]+)+$/;
const PATH_WITH_DIR = /^(?:[A-Za-z0-9_.-]+\/)+[A-Za-z0-9_-][A-Za-z0-9_.-]*\.[A-Za-z0-9]{1,8}$/;
const FILE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*\.([A-Za-z0-9]{1,8})$/;
/** Extensions that make a bare `name.ext` a file name rather than a member access (`config.ts`, not `ky.extend`). */
const SOURCE_EXT = new Set(
  'ts tsx mts cts js jsx mjs cjs py rs go rb java kt kts c h cc cpp hpp cs swift php vue svelte css scss html md mdx json jsonc toml yaml yml sql sh'.split(
    ' ',
  ),
);
/**
 * Words that look like code but say nothing about this repository's code: product and platform names written like
 * identifiers (a record's "Fix types for TypeScript 4.4" cites no `TypeScript` in the code; measured on public
 * history, bench/evidence-replay.bench.mjs).
 */
const COMMON = new Set([
  'node_modules',
  'package.json',
  'package-lock.json',
  'TypeScript',
  'JavaScript',
  'CoffeeScript',
  'GitHub',
  'GitLab',
  'BitBucket',
  'PostgreSQL',
  'MySQL',
  'SQLite',
  'MongoDB',
  'DynamoDB',
  'GraphQL',
  'OAuth',
  'YouTube',
  'LinkedIn',
  'PayPal',
  'WordPress',
  'macOS',
  'iOS',
  'iPhone',
  'iPad',
  'tvOS',
  'watchOS',
  'iPadOS',
  'VSCode',
  'IntelliJ',
  'PyPI',
  'NuGet',
  'DevTools',
]);

/**
 * Whether a name is a file path (checked by existence under the repository's top level) rather than an identifier
 * (checked by occurrence): a relative path with a folder. A bare file name (`config.ts`) says where nothing is.
 */
export function isPathName(name: string): boolean {
  return !name.startsWith('/') && !name.startsWith('../') && PATH_WITH_DIR.test(name);
}

/** `config.ts`: a file's name without its folder (not a name: it cannot be looked up; `ky.extend` is not one). */
const isBareFileName = (name: string): boolean => {
  const ext = FILE_NAME.exec(name)?.[1];
  return !!ext && SOURCE_EXT.has(ext.toLowerCase());
};

/**
 * What a token is as a name, or null: a flag (`--dry-run`), a route (`/api/context`), a relative file path with a
 * folder (`src/config.ts`), or an identifier that looks like code (camelCase, PascalCase with two humps, snake_case,
 * or anything called: `parse()`); of a member access (`this.retryCount`) its last part. Plain words, numbers,
 * versions, URLs, bare file names and absolute paths are not names.
 */
export function nameOf(token: string): string | null {
  let t = token.replace(/[.:,;-]+$/, '');
  const called = t.endsWith('()');
  if (called) t = t.slice(0, -2);
  if (t.length < MIN_NAME_CHARS || t.length > MAX_NAME_CHARS || COMMON.has(t)) return null;
  if (/^[0-9.]+$/.test(t) || t.includes('://') || t.startsWith('//')) return null;
  if (FLAG.test(t) || ROUTE.test(t)) return t;
  const path = t.replace(/^\.\//, '');
  if (isPathName(path)) return path;
  if (t.includes('/') || isBareFileName(path)) return null;
  const last = t.slice(t.lastIndexOf('.') + 1);
  if (last.length < MIN_NAME_CHARS || !IDENT.test(last)) return null;
  if (CAMEL.test(last) || PASCAL.test(last) || SNAKE.test(last)) return last;
  return called && last.length >= 4 ? last : null;
}

/** The names the texts cite, first occurrence first, without repeats, at most MAX_NAMES. */
export function namesIn(texts: readonly (string | null | undefined)[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  let budget = NAMES_SCAN_CHARS;
  for (const text of texts) {
    if (!text || budget <= 0) continue;
    const head = text.slice(0, budget);
    budget -= head.length;
    for (const m of head.matchAll(TOKEN)) {
      const name = nameOf(m[0]);
      if (!name || seen.has(name)) continue;
      seen.add(name);
      out.push(name);
      if (out.length >= MAX_NAMES) return out;
    }
  }
  return out;
}
