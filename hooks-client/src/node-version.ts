// Which Node the client runs on. Pure, and free of node: imports, so the guard can run before any builtin loads.

/** process.getBuiltinModule, which every builtin import of the bundle goes through, arrived in Node 20.16. */
export const MIN_NODE = [20, 16] as const;

/** A one-line explanation when `version` (e.g. "20.10.0" or "v20.10.0") is too old for the client, else null. */
export function nodeVersionProblem(version: string, hasGetBuiltinModule: boolean): string | null {
  const [major = 0, minor = 0] = version
    .replace(/^v/, '')
    .split('.')
    .map((p) => Number.parseInt(p, 10) || 0);
  const tooOld = major < MIN_NODE[0] || (major === MIN_NODE[0] && minor < MIN_NODE[1]);
  if (!tooOld && hasGetBuiltinModule) return null;
  return `cairn needs Node.js ${MIN_NODE.join('.')} or newer, and this is Node.js ${version.replace(/^v?/, 'v')}: install a current Node.js (20 LTS or later) and run the command again.`;
}
