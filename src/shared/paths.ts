// File paths stored relative to the project root, so one repository checked out at different places on
// different machines (/Users/alice/widgets, C:\src\widgets) shares its file history.

const slashes = (p: string) => p.replace(/\\/g, '/').replace(/\/{2,}/g, '/');
const isWindowsPath = (p: string) => /^[A-Za-z]:[\\/]/.test(p) || p.startsWith('\\\\');

/**
 * `src/app.ts` for `/home/bob/widgets/src/app.ts` under root `/home/bob/widgets` (either slash style;
 * Windows paths compare case-insensitively). Null when the file is outside the root or is the root itself.
 */
export function pathInsideRoot(root: string, file: string): string | null {
  if (!root.trim() || !file.trim()) return null;
  const r = slashes(root.trim()).replace(/\/+$/, '');
  const f = slashes(file.trim());
  const fold = isWindowsPath(root) || isWindowsPath(file);
  const [rc, fc] = fold ? [r.toLowerCase(), f.toLowerCase()] : [r, f];
  if (!fc.startsWith(`${rc}/`)) return null;
  const rel = f.slice(r.length + 1).replace(/^\/+/, '');
  // `..` segments would name something outside the root after all.
  return rel && !rel.split('/').includes('..') ? rel : null;
}

/** `path` relative to `root` when it lies inside it; otherwise the path unchanged (with `/` separators). */
export function relativeToRoot(path: string, root: string | null | undefined): string {
  return (root && pathInsideRoot(root, path)) || slashes(path.trim());
}

/** Rewrites every path against the deepest root that contains it; order kept, duplicates dropped. */
export function relativeToRoots(paths: readonly string[], roots: readonly string[]): string[] {
  const sorted = [...new Set(roots.filter(Boolean))].sort((a, b) => b.length - a.length);
  const out: string[] = [];
  for (const path of paths) {
    const rel = sorted.map((root) => pathInsideRoot(root, path)).find((r) => r !== null) ?? slashes(path.trim());
    if (rel && !out.includes(rel)) out.push(rel);
  }
  return out;
}
