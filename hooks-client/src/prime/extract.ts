// What `cairn prime` makes of a repository: pure functions from text (Markdown, `git log` output, source files)
// to the notes POST /api/prime stores. Headings, commit subjects and file lists, and TODO lines: short excerpts,
// never a file's contents. Every text is redacted here with the client's rules (the server redacts again).
import { redact } from '#shared/redact';

export type PrimeKind = 'docs' | 'commit' | 'todo';

export interface PrimeNote {
  kind: PrimeKind;
  title: string;
  text: string;
  files: string[];
}

/** The caps of one priming: how many notes of each kind, and how much of anything each holds. */
export const CAPS = {
  docs: 8,
  headingsPerDoc: 30,
  headingChars: 100,
  excerptChars: 240,
  commits: 20,
  filesPerCommit: 20,
  subjectChars: 160,
  todoFiles: 12,
  todosPerFile: 5,
  todoChars: 160,
  /** The server refuses a longer text (PRIME_TEXT_MAX). */
  textChars: 2_000,
} as const;

const oneLine = (s: string, max: number): string => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length <= max ? t : `${t.slice(0, max - 1).trimEnd()}…`;
};

/** Redacted, one line, at most `max` characters. */
const clean = (s: string, max: number): string => oneLine(redact(s), max);

/** A repository's file path as prime names it: redacted too (a file can be named after a token). */
const shownPath = (p: string): string => redact(p);

const cap = (s: string) => (s.length <= CAPS.textChars ? s : `${s.slice(0, CAPS.textChars - 1)}…`);

/**
 * Inline Markdown reduced to its text: images and links (a badge is a link around an image), HTML tags, emphasis.
 * Redacted first, while a secret is still whole (stripping `_` or a link could split one past the rules' reach).
 */
const inlineText = (s: string): string =>
  redact(s)
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]{0,200}>/g, '')
    .replace(/[`*]/g, '')
    .replace(/(^|\s)_{1,2}([^_\s](?:[^_]{0,200}[^_\s])?)_{1,2}(?=$|[\s.,;:!?])/g, '$1$2');

interface Heading {
  level: number;
  text: string;
}

/** ATX headings outside fenced code blocks, with inline markup (links, emphasis, code, HTML) reduced to its text. */
export function markdownHeadings(md: string): Heading[] {
  const out: Heading[] = [];
  let fence: string | null = null;
  for (const line of md.split(/\r?\n/)) {
    const f = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (f) {
      if (fence === null) fence = f[1]![0]!;
      else if (f[1]![0] === fence) fence = null;
      continue;
    }
    if (fence !== null) continue;
    const m = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const text = inlineText(m[2]!).trim();
    if (text) out.push({ level: m[1]!.length, text });
  }
  return out;
}

/** The first paragraph of prose: not a heading, badge, HTML, table, list or code line. */
export function firstParagraph(md: string): string {
  const lines: string[] = [];
  let fence = false;
  for (const raw of md.split(/\r?\n/)) {
    if (/^\s{0,3}(`{3,}|~{3,})/.test(raw)) {
      fence = !fence;
      if (lines.length) break;
      continue;
    }
    if (fence) continue;
    const line = raw.trim();
    if (!line) {
      if (lines.length) break;
      continue;
    }
    if (/^(#|<|\||!\[|\[!\[|[-*+] |\d+\. |>|---|===)/.test(line)) {
      if (lines.length) break;
      continue;
    }
    lines.push(inlineText(line));
  }
  return lines.join(' ');
}

/** A Markdown file's outline as one note (as many headings as fit the caps), or null when it has no headings. */
export function docNote(filePath: string, md: string): PrimeNote | null {
  const path = shownPath(filePath);
  const headings = markdownHeadings(md);
  if (!headings.length) return null;
  const top = Math.min(...headings.map((h) => h.level));
  const excerpt = clean(firstParagraph(md), CAPS.excerptChars);
  const head = `Outline of ${path}:`;
  const tail = excerpt ? `Starts: ${excerpt}` : '';
  // Room for the header, the excerpt and the "+N more" line; headings fill the rest, in order.
  let room = CAPS.textChars - head.length - tail.length - 40;
  const outline: string[] = [];
  for (const h of headings.slice(0, CAPS.headingsPerDoc)) {
    const line = `${'  '.repeat(Math.min(3, h.level - top))}- ${clean(h.text, CAPS.headingChars)}`;
    if (line.length + 1 > room) break;
    outline.push(line);
    room -= line.length + 1;
  }
  if (headings.length > outline.length) outline.push(`(+${headings.length - outline.length} more headings)`);
  const title = `${path}: ${clean(headings[0]!.text, 120)}`;
  return {
    kind: 'docs',
    title: oneLine(title, 200),
    text: cap([head, ...outline, ...(tail ? [tail] : [])].join('\n')),
    files: [path],
  };
}

export interface Commit {
  hash: string;
  date: string;
  subject: string;
  files: string[];
}

export const RECORD = '\u001e';
export const FIELD = '\u001f';
/** The `git log` format parseGitLog reads: a record separator, then abbreviated hash, date and subject. */
export const GIT_LOG_FORMAT = `--format=${RECORD}%h${FIELD}%as${FIELD}%s`;

/** `git log --name-only` output in GIT_LOG_FORMAT → commits (files in the order git lists them). */
export function parseGitLog(out: string): Commit[] {
  const commits: Commit[] = [];
  for (const rec of out.split(RECORD).slice(1)) {
    const [head = '', ...rest] = rec.split('\n');
    const [hash = '', date = '', subject = ''] = head.split(FIELD);
    if (!/^[0-9a-f]{4,64}$/.test(hash)) continue;
    commits.push({ hash, date, subject, files: rest.map((l) => l.trim()).filter(Boolean) });
  }
  return commits;
}

/** One commit as one note: its subject, date and the files it touched (the subject redacted). */
export function commitNote(c: Commit): PrimeNote {
  const subject = clean(c.subject, CAPS.subjectChars) || '(no subject)';
  const files = c.files.slice(0, CAPS.filesPerCommit).map(shownPath);
  const more = c.files.length - files.length;
  const touched = files.length ? ` Touched: ${files.join(', ')}${more > 0 ? ` (+${more} more)` : ''}.` : '';
  return { kind: 'commit', title: subject, text: cap(`Commit ${c.hash} (${c.date}): ${subject}.${touched}`), files };
}

const TODO = /\b(TODO|FIXME|HACK|XXX)\b[:(\s]/;
/** What may stand before the marker: nothing, or a comment opener (`//`, `#`, `/*`, `*`, `--`, `<!--`, `;`, `%`). Prose that mentions a TODO is not one. */
const COMMENT_BEFORE = /(?:^|\/\/|#|\/\*|^\s*\*|--|<!--|;|%)\s*$/;
/** Minified or generated lines are not someone's note. */
const MAX_LINE = 400;

/** The TODO-like comments of a file (from the marker on), at most `todosPerFile`, and how many there were. */
export function todoLines(text: string): { items: string[]; total: number } {
  const items: string[] = [];
  let total = 0;
  for (const line of text.split(/\r?\n/)) {
    if (line.length > MAX_LINE) continue;
    const m = TODO.exec(line);
    if (!m || !COMMENT_BEFORE.test(line.slice(0, m.index))) continue;
    total++;
    if (items.length < CAPS.todosPerFile) items.push(clean(line.slice(m.index), CAPS.todoChars));
  }
  return { items, total };
}

export function todoNote(filePath: string, found: { items: string[]; total: number }): PrimeNote | null {
  if (!found.items.length) return null;
  const path = shownPath(filePath);
  const more = found.total - found.items.length;
  const text = [...found.items.map((i) => `- ${i}`), ...(more > 0 ? [`(+${more} more in this file)`] : [])].join('\n');
  return { kind: 'todo', title: `Open TODOs in ${path} (${found.total})`, text: cap(text), files: [path] };
}

/** Which tracked Markdown files are the docs, best first: README at the root, other root docs, then docs/ by depth. */
export function pickDocs(tracked: readonly string[]): string[] {
  const md = tracked.filter((p) => /\.(md|markdown|mdx|rst|txt)$/i.test(p) || /^readme$/i.test(p));
  const rank = (p: string): number => {
    const depth = p.split('/').length - 1;
    if (depth === 0 && /^readme/i.test(p)) return 0;
    if (depth === 0 && /\.(md|markdown|mdx)$/i.test(p) && !/^(changelog|license|code_of_conduct|security)/i.test(p))
      return 1;
    if (/^docs?\//i.test(p) && depth <= 2 && /\.(md|markdown|mdx)$/i.test(p)) return 2 + depth;
    return -1;
  };
  return md
    .map((p) => ({ p, r: rank(p) }))
    .filter((x) => x.r >= 0)
    .sort((a, b) => a.r - b.r || a.p.localeCompare(b.p))
    .slice(0, CAPS.docs)
    .map((x) => x.p);
}

/** Paths not worth a TODO scan: dependencies, builds, lock files, minified and vendored code. */
export const NOT_SCANNED =
  /(^|\/)(node_modules|vendor|third_party|dist|build|out|target|\.git)\/|\.(min\.js|lock|map|svg|png|jpe?g|gif|ico|pdf|zip|gz|woff2?|ttf|wasm|bin)$|(^|\/)(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|Cargo\.lock|go\.sum)$/i;
