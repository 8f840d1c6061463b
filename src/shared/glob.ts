// Pure glob matching for excluded-project lists (claude-mem §1.5 rules), shared by the server gate and the hooks client.

// When the caller does not know the client's home, `~` stands for any of the usual home prefixes.
const ANY_HOME = '(?:/home/[^/]+|/Users/[^/]+|/root|[A-Za-z]:/Users/[^/]+)';

const slashes = (p: string) => p.replace(/\\/g, '/');

/**
 * Compiles one glob: `**` → any run, `*` → one segment's characters, `?` → one character; anchored.
 * `~` / `~/…` is `home`, or any usual home prefix when `home` is unknown.
 */
export function globToRegExp(glob: string, home?: string | null, ignoreCase = false): RegExp {
  let g = slashes(glob.trim());
  let prefix = '';
  if (g === '~' || g.startsWith('~/')) {
    if (home) g = slashes(home).replace(/\/+$/, '') + g.slice(1);
    else {
      prefix = ANY_HOME;
      g = g.slice(1);
    }
  }
  let body = '';
  for (let i = 0; i < g.length; i++) {
    const ch = g[i]!;
    if (ch === '*' && g[i + 1] === '*') {
      body += '.*';
      i++;
    } else if (ch === '*') body += '[^/]*';
    else if (ch === '?') body += '[^/]';
    else body += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${prefix}${body}$`, ignoreCase ? 'i' : '');
}

/**
 * True when the path (either slash style), or its last segment, matches any glob. Blank paths and blank
 * globs never match. `ignoreCase` is for case-insensitive file systems (the client passes it on Windows).
 */
export function isPathExcluded(path: string, globs: readonly string[], home?: string | null, ignoreCase = false): boolean {
  const p = slashes(path.trim()).replace(/(.)\/+$/, '$1');
  if (!p) return false;
  const base = p.slice(p.lastIndexOf('/') + 1);
  return globs.some((glob) => {
    if (!glob.trim()) return false;
    const re = globToRegExp(glob.replace(/(.)[\\/]+$/, '$1'), home, ignoreCase);
    return re.test(p) || (base !== p && re.test(base));
  });
}

/** Splits a comma-separated glob list (the env/settings-file form) into clean entries. */
export const parseGlobList = (text: string): string[] => text.split(',').map((s) => s.trim()).filter(Boolean);
