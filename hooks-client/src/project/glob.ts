// Pure: excluded-project globs (`~/clients/**`, `/tmp/*`), tested against the full path and its folder name.

function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    if (ch === '*' && glob[i + 1] === '*') {
      re += '.*';
      i++;
    } else if (ch === '*') re += '[^/]*';
    else if (ch === '?') re += '[^/]';
    else re += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, process.platform === 'win32' ? 'i' : '');
}

const slashes = (p: string) => p.replace(/\\/g, '/');

/** True when `path` (or its last segment) matches one of the globs; `~` means `home`. */
export function isExcluded(path: string, globs: readonly string[], home: string): boolean {
  const full = slashes(path.trim()).replace(/\/+$/, '');
  if (!full) return false;
  const base = full.split('/').pop() ?? full;
  for (const raw of globs) {
    const g = raw.trim();
    if (!g) continue;
    const expanded = slashes(g.startsWith('~') ? home + g.slice(1) : g).replace(/\/+$/, '');
    const re = globToRegExp(expanded);
    if (re.test(full) || re.test(base)) return true;
  }
  return false;
}
