// Pure: a file's path relative to its project root, the form that means the same file on every machine.

const slashes = (p: string) => p.replace(/\\/g, '/');
const isWindowsPath = (p: string) => /^[A-Za-z]:[\\/]/.test(p) || p.startsWith('\\\\');

/**
 * `src/app.ts` for `/home/bob/widgets/src/app.ts` under root `/home/bob/widgets` (either slash style;
 * Windows paths compare case-insensitively). Null when the file is outside the root or is the root itself.
 */
export function relativeToRoot(root: string, file: string): string | null {
  if (!root || !file) return null;
  const r = slashes(root).replace(/\/+$/, '');
  const f = slashes(file);
  const fold = isWindowsPath(root) || isWindowsPath(file);
  const [rc, fc] = fold ? [r.toLowerCase(), f.toLowerCase()] : [r, f];
  if (!fc.startsWith(`${rc}/`)) return null;
  const rel = f.slice(r.length + 1).replace(/^\/+/, '');
  // `..` segments would name something outside the root after all.
  return rel && !rel.split('/').includes('..') ? rel : null;
}
