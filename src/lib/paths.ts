// File paths stored relative to the project root, so one repository checked out at different places on
// different machines (/Users/alice/widgets, C:\src\widgets) shares its file history.

const slashes = (p: string) => p.replace(/\\/g, '/').replace(/\/{2,}/g, '/');
const isWindowsPath = (p: string) => /^[A-Za-z]:\//.test(p);

/** `path` relative to `root` when it lies inside it; otherwise the path unchanged (with `/` separators). */
export function relativeToRoot(path: string, root: string | null | undefined): string {
  const p = slashes(path.trim());
  if (!root) return p;
  const r = slashes(root.trim()).replace(/\/+$/, '');
  if (!r) return p;
  // Windows file systems ignore case; POSIX ones do not.
  const fold = isWindowsPath(r) ? (s: string) => s.toLowerCase() : (s: string) => s;
  if (fold(p) === fold(r)) return '.';
  if (fold(p).startsWith(`${fold(r)}/`)) return p.slice(r.length + 1);
  return p;
}

/** Rewrites every path against the first root that contains it; order kept, duplicates dropped. */
export function relativeToRoots(paths: readonly string[], roots: readonly string[]): string[] {
  const sorted = [...new Set(roots.filter(Boolean))].sort((a, b) => b.length - a.length);
  const out: string[] = [];
  for (const path of paths) {
    let rel = slashes(path.trim());
    for (const root of sorted) {
      const candidate = relativeToRoot(path, root);
      if (candidate !== rel) {
        rel = candidate;
        break;
      }
    }
    if (rel && !out.includes(rel)) out.push(rel);
  }
  return out;
}
