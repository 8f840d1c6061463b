// One reversible edit of one agent configuration file: cairn's part added, taken out again, and the user's
// own bytes restored exactly when nothing else changed in between. Pure text in, text out.
import { deepEqual, detectIndent, type Settings } from './settings-merge';

export interface FileEdit {
  path: string;
  /**
   * The folder the file (and its backup) must stay inside, no link below it followed: a project's root for a
   * project install. Default: the file's own folder.
   */
  root?: string;
  /** The file with cairn's part in it (replacing an earlier one). Throws when the file cannot be read as its format. */
  add(before: string | null): string;
  /** The file without cairn's part. Throws when the file cannot be read as its format. */
  remove(before: string): string;
  /** Whether two texts hold the same configuration (then the backup's bytes can come back). */
  same(a: string, b: string): boolean;
  /** Whether a text holds nothing at all (a file cairn created and emptied again is deleted). */
  empty(text: string): boolean;
  /**
   * Whether the text cairn writes holds a secret (Claude Code's settings with the sender's nonce): the file is then
   * made owner-only (0600), however it was before, so another account on the machine cannot read it.
   */
  secret?(text: string): boolean;
}

export function parseJsonObject(text: string | null, path: string): Settings {
  if (text === null || !text.trim()) return {};
  const v: unknown = JSON.parse(text.replace(/^\uFEFF/, ''));
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error(`${path} is not a JSON object`);
  return v as Settings;
}

/** Rendered like the file it replaces (its indentation), two spaces for a new file. */
export function renderJson(value: Settings, like: string | null): string {
  return `${JSON.stringify(value, null, like ? detectIndent(like) : 2)}\n`;
}

const isObject = (v: unknown): v is Settings => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * `s` with `entry` as `s[container].cairn` (the container created as needed), or without it when `entry` is
 * null (the container dropped when that emptied it): how every agent's MCP server list takes cairn's server.
 */
export function withCairnEntry(s: Settings, container: string, entry: Settings | null): Settings {
  const next = JSON.parse(JSON.stringify(s)) as Settings;
  const servers = isObject(next[container]) ? next[container] : {};
  if (entry) servers.cairn = entry;
  else delete servers.cairn;
  if (Object.keys(servers).length) next[container] = servers;
  else delete next[container];
  return next;
}

/** An edit of a JSON settings file through two pure object transforms. */
export function jsonEdit(path: string, add: (s: Settings) => Settings, remove: (s: Settings) => Settings): FileEdit {
  return {
    path,
    add: (before) => renderJson(add(parseJsonObject(before, path)), before),
    remove: (before) => {
      const parsed = parseJsonObject(before, path);
      const cleaned = remove(parsed);
      return deepEqual(cleaned, parsed) ? before : renderJson(cleaned, before);
    },
    same: (a, b) => deepEqual(parseJsonObject(a, path), parseJsonObject(b, path)),
    empty: (text) => !Object.keys(parseJsonObject(text, path)).length,
  };
}

const BEGIN = '# >>> cairn (added by `cairn install`; `cairn uninstall` removes it)';
const END = '# <<< cairn';

/**
 * An edit that appends a block of lines between two marker comments, for formats cairn does not parse
 * (TOML): a block of whole tables at the end of the file is valid wherever the file's own tables end.
 */
export function markedBlockEdit(path: string, block: string): FileEdit {
  const strip = (text: string): string => {
    const start = text.indexOf(BEGIN);
    if (start < 0) return text;
    const endAt = text.indexOf(END, start);
    // Without its end marker the block's extent is unknown: leave the file alone rather than guess.
    if (endAt < 0) return text;
    const stop = text.indexOf('\n', endAt) < 0 ? text.length : text.indexOf('\n', endAt) + 1;
    // Take out the blank line install put before the block too, so the user's bytes come back exactly.
    const head = text.slice(0, start);
    return (head.endsWith('\n\n') ? head.slice(0, -1) : head) + text.slice(stop);
  };
  return {
    path,
    add: (before) => {
      const base = strip(before ?? '');
      const sep = base === '' ? '' : base.endsWith('\n') ? '\n' : '\n\n';
      return `${base}${sep}${BEGIN}\n${block.trimEnd()}\n${END}\n`;
    },
    remove: strip,
    same: (a, b) => a === b,
    empty: (text) => !text.trim(),
  };
}
