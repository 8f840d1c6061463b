// Claude Code's auto memory, as Claude Code 2.1.332 writes it (pure: text in, facts out). Everything here was read
// from the CLI's own bundle (the native binary of @anthropic-ai/claude-code-linux-x64 2.1.332, pinned in
// scripts/tools/claude-code; `strings` of it, searched for "MEMORY.md"), not guessed:
// - the folder: `join(configDir, "projects", J$(base), "memory")`, configDir `$CLAUDE_CONFIG_DIR` or `~/.claude`,
//   base the project's working-copy or git root, and the slug `J$`: `base.replace(/[^a-zA-Z0-9]/g, "-")`, cut at
//   200 characters with a hash after (`jae=200`; the hash is the CLI's own: longer paths are not found here);
// - `MEMORY.md` is the index: "one line, under ~150 characters: `- [Title](file.md) — one-line hook`. It has no
//   frontmatter. Never write memory content directly into MEMORY.md", and "lines after 200 will be truncated";
// - a memory is its own file with frontmatter: `---`, `name: <slug>`, `description: <one-line summary>`,
//   `metadata:` then `  type: user | feedback | project | reference`, `---`, then the fact (feedback and project
//   types add **Why:** and **How to apply:** lines);
// - the documented switch: setting `autoMemoryEnabled` ("When false, Claude will not read from or write to the
//   auto-memory directory"), or the env CLAUDE_CODE_DISABLE_AUTO_MEMORY.
// The text is other people's data: parsed line by line (linear), bounded, never run or followed.
import { BLOCK_END, BLOCK_START } from '../promote/block';

/** The CLI's own cut: a longer slug gets a hash cairn does not compute, so such a folder is not looked for. */
export const SLUG_MAX = 200;
/** Claude Code reads this many index lines; cairn reads no more. */
export const INDEX_LINES_MAX = 200;
/** A fact's text at most (characters); longer text is cut. */
export const FACT_MAX = 2_000;

export type NativeType = 'user' | 'feedback' | 'project' | 'reference';
const TYPES: readonly string[] = ['user', 'feedback', 'project', 'reference'];

/** One thing the native memory holds: a memory file, or an index line that points at none. */
export interface NativeFact {
  /** The memory's file name (`feedback_testing.md`), or `MEMORY.md` for a line of the index itself. */
  file: string;
  /** Its one-line description or the index line's title. */
  title: string;
  /** The fact itself. */
  text: string;
  type: NativeType | null;
}

/** The folder name Claude Code gives a project at `root` under `projects/`, or null past the CLI's cut. */
export function claudeProjectSlug(root: string): string | null {
  const slug = root.replace(/[^a-zA-Z0-9]/g, '-');
  return slug.length <= SLUG_MAX ? slug : null;
}

/** `text` without cairn's own promoted blocks (a block left open drops the rest: cairn's words are never read back). */
export function withoutPromoted(text: string): string {
  const out: string[] = [];
  let inside = false;
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (!inside && t === BLOCK_START) inside = true;
    else if (inside && t === BLOCK_END) inside = false;
    else if (!inside) out.push(line);
  }
  return out.join('\n');
}

export interface IndexEntry {
  title: string;
  /** The file the line points at (a plain name in the memory folder), or null for a line that points at none. */
  file: string | null;
  hook: string;
}

const POINTER = /^[-*]\s+\[([^\]\n]{0,300})\]\(([^)\s]{1,255})\)\s*(?:[—–:-]\s*)?(.*)$/;

/** The index's entries: its first INDEX_LINES_MAX lines, headings and blank lines left out. */
export function parseIndex(text: string): IndexEntry[] {
  const out: IndexEntry[] = [];
  const lines = withoutPromoted(text).split('\n', INDEX_LINES_MAX);
  for (const raw of lines) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith('<!--')) continue;
    const m = POINTER.exec(line);
    if (m) {
      const target = m[2]!;
      out.push({ title: m[1]!.trim(), file: /^[\w.-]+\.md$/.test(target) ? target : null, hook: m[3]!.trim() });
    } else out.push({ title: '', file: null, hook: line.replace(/^[-*]\s+/, '').slice(0, FACT_MAX) });
  }
  return out;
}

export interface TopicFile {
  name: string | null;
  description: string | null;
  type: NativeType | null;
  body: string;
}

/** A memory file: its frontmatter (`name`, `description`, `metadata: type`, or an older top-level `type`) and body. */
export function parseTopic(text: string): TopicFile {
  const clean = withoutPromoted(text).replace(/^\uFEFF/, '');
  const lines = clean.split('\n');
  const fields: Record<string, string> = {};
  let bodyFrom = 0;
  if (lines[0]?.trim() === '---') {
    const end = lines.findIndex((l, i) => i > 0 && l.trim() === '---');
    if (end > 0) {
      for (const l of lines.slice(1, end)) {
        const m = /^\s*(name|description|type)\s*:\s*(.*)$/.exec(l.trimEnd());
        if (m) fields[m[1]!] = unquote(m[2]!.trim());
      }
      bodyFrom = end + 1;
    }
  }
  const type = fields.type && TYPES.includes(fields.type) ? (fields.type as NativeType) : null;
  return {
    name: fields.name || null,
    description: fields.description || null,
    type,
    body: lines.slice(bodyFrom).join('\n').trim().slice(0, FACT_MAX),
  };
}

const unquote = (v: string): string => (/^(["']).*\1$/.test(v) ? v.slice(1, -1) : v);

/**
 * The facts of a memory folder: each memory file read, then each index line whose file was not read (an older
 * memory written into the index itself). `topics` maps a file name to its text.
 */
export function nativeFacts(index: string | null, topics: ReadonlyMap<string, string>): NativeFact[] {
  const out: NativeFact[] = [];
  const entries = index ? parseIndex(index) : [];
  const titles = new Map(entries.filter((e) => e.file).map((e) => [e.file!, e.title]));
  for (const [file, text] of topics) {
    const t = parseTopic(text);
    if (!t.body) continue;
    out.push({ file, title: t.description ?? titles.get(file) ?? t.name ?? file, text: t.body, type: t.type });
  }
  for (const e of entries) {
    if (e.file && topics.has(e.file)) continue;
    const text = [e.title, e.hook].filter(Boolean).join(' — ');
    if (text) out.push({ file: 'MEMORY.md', title: e.title || e.hook, text, type: null });
  }
  return out;
}

/**
 * A text as cairn compares it: NFKC, lower case, every run of what is not a letter or digit one space (case, spaces
 * and punctuation do not matter). Linear.
 */
export function normalizeFact(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** Normalised lines shorter than this (in words) are not facts of their own: "## Notes", "Why". */
export const FACT_MIN_WORDS = 3;

/** The normalised facts `keep` stores: each fact's title and each line of its text, of FACT_MIN_WORDS words or more. */
export function factLines(facts: readonly NativeFact[]): string[] {
  const out = new Set<string>();
  for (const f of facts)
    for (const line of [f.title, ...f.text.split('\n')]) {
      const n = normalizeFact(line.replace(/^\s*(?:[-*]|\d+\.)\s+/, '').replace(/^\*\*[^*]{1,40}:\*\*\s*/, ''));
      if (n.split(' ').length >= FACT_MIN_WORDS) out.add(n.slice(0, FACT_MAX));
    }
  return [...out];
}
