// Pure: the values of one key in a git config file's text. Enough of git's syntax for the few keys the client
// reads from files (`remote.<name>.url`, `core.worktree`, `extensions.objectFormat`, `safe.directory`): sections
// `[core]` and `[remote "origin"]`, `key = value`, quotes, comments. Includes are not followed: a file the client
// reads is never a reason to read another.

export interface ConfigEntry {
  /** Lower-cased section name (`remote`), and its subsection as written (`origin`), or null. */
  section: string;
  subsection: string | null;
  /** Lower-cased key. */
  key: string;
  value: string;
}

/** Every `key = value` line of `text`, in order, under the section it belongs to. Linear in the text. */
export function configEntries(text: string): ConfigEntry[] {
  const out: ConfigEntry[] = [];
  let section = '';
  let subsection: string | null = null;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const head = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$/.exec(line);
    if (head) {
      section = head[1]!.toLowerCase();
      subsection = head[2] === undefined ? null : head[2].replace(/\\(.)/g, '$1');
      // `[core] worktree = x` on one line is allowed by git.
      const rest = head[3]!.trim();
      if (!rest) continue;
      const inline = keyValue(rest);
      if (inline && section) out.push({ section, subsection, ...inline });
      continue;
    }
    const kv = keyValue(line);
    if (kv && section) out.push({ section, subsection, ...kv });
  }
  return out;
}

function keyValue(line: string): { key: string; value: string } | null {
  const m = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
  if (!m) return null;
  // A key without `=` is boolean true.
  return { key: m[1]!.toLowerCase(), value: m[2] === undefined ? 'true' : unquote(m[2]) };
}

/** A value with its comment cut and quotes and escapes resolved, as git reads it. */
function unquote(v: string): string {
  let out = '';
  let quoted = false;
  for (let i = 0; i < v.length; i++) {
    const c = v[i]!;
    if (c === '"') quoted = !quoted;
    else if (c === '\\' && i + 1 < v.length) {
      const n = v[++i]!;
      out += n === 'n' ? '\n' : n === 't' ? '\t' : n;
    } else if (!quoted && (c === '#' || c === ';')) break;
    else out += c;
  }
  return quoted ? out : out.trim();
}

/** The values of `section[.subsection].key`, in file order (the last one wins for a single-valued key). */
export function configValues(text: string, section: string, key: string, subsection: string | null = null): string[] {
  const s = section.toLowerCase();
  const k = key.toLowerCase();
  return configEntries(text)
    .filter((e) => e.section === s && e.key === k && e.subsection === subsection)
    .map((e) => e.value);
}
