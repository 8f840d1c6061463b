// Branch and commit as the hooks client reads them and the Worker checks them: one rule on both sides, so a
// value the client would send is one the server accepts (the client sends nothing rather than a value outside it).

/** A branch name as stored: git's usual characters only, bounded. Other names (spaces, non-ASCII) are not sent. */
export const MAX_BRANCH_CHARS = 200;
const BRANCH_RE = /^[A-Za-z0-9][A-Za-z0-9._/+@#-]*$/;

export function isBranchName(v: string): boolean {
  return (
    v.length <= MAX_BRANCH_CHARS &&
    BRANCH_RE.test(v) &&
    !v.includes('..') &&
    !v.includes('//') &&
    !v.endsWith('/') &&
    !v.endsWith('.lock')
  );
}

/** A full object id: SHA-1 (40 hex) or SHA-256 (64 hex), lower case. */
export function isCommitId(v: string): boolean {
  return /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(v);
}

/**
 * The history sent at SessionStart: commits reachable from HEAD (and from the trunk), newest first, each as its
 * first HISTORY_ABBREV hex digits, at most MAX_HISTORY_COMMITS (≈ 2.6 KB of query string).
 */
export const HISTORY_ABBREV = 12;
export const MAX_HISTORY_COMMITS = 200;

export function isHistoryAbbrev(v: string): boolean {
  return v.length === HISTORY_ABBREV && /^[0-9a-f]+$/.test(v);
}

/** What the client knows of its checkout at SessionStart (GET /api/context query: branch, head, trunk, history). */
export interface GitView {
  /** null: detached HEAD (or a branch name outside the rule above). */
  branch: string | null;
  head: string | null;
  /** The default branch (origin/HEAD, else main or master), whose records are never called unmerged. */
  trunk: string | null;
  /** Abbreviated commits reachable from HEAD or the trunk, newest first. */
  history: string[];
}
