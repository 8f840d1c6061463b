// Pure: which context-index rows come from the caller's branch and its merged history, and which from branches that
// never merged into it. The server runs no git: the client sends its branch, HEAD, trunk and the newest commits
// reachable from HEAD or the trunk (src/shared/git.ts GitView); rows carry the branch and commit they were recorded at.
import { HISTORY_ABBREV, type GitView } from '#shared/git';

export interface BranchedRow {
  id: number;
  createdAt: number;
  gitBranch?: string | null;
  gitCommit?: string | null;
}

/**
 * `unmerged`: a branch other than the current one and the trunk whose newest recorded commit is not in the sent
 * history (work on it never reached HEAD or the trunk), or a detached commit outside it. `unknown` when the row or
 * the request carries nothing to judge by (older clients, no repository, git unavailable): neutral, like `merged`.
 */
export type Lineage = 'here' | 'merged' | 'unmerged' | 'unknown';

export interface Judged {
  lineage: Lineage;
  /** What the index shows for an unmerged row: its branch, or the commit's first 7 digits when detached. */
  label: string | null;
}

const UNKNOWN: Judged = { lineage: 'unknown', label: null };

/**
 * Judges every row. A branch is judged by its tip as cairn saw it: the commit of its newest row (rows are the newest
 * of the project, so a branch that appears at all has its newest row among them). `tipRows` may add rows of
 * another kind (a summary's session knows only its first commit; its observations know later ones). Linear.
 */
export function judgeRows<T extends BranchedRow>(
  rows: readonly T[],
  view: GitView | null,
  tipRows: readonly BranchedRow[] = rows,
): Map<T, Judged> {
  const out = new Map<T, Judged>();
  const history = new Set(view?.history ?? []);
  if (view?.head) history.add(view.head.slice(0, HISTORY_ABBREV));
  // Without a history (git missing or slow) nothing is called unmerged: only the current branch is known.
  const canJudge = (view?.history.length ?? 0) > 0;
  const tips = new Map<string, { at: number; id: number; commit: string }>();
  for (const r of tipRows) {
    if (!r.gitBranch || !r.gitCommit) continue;
    const tip = tips.get(r.gitBranch);
    if (!tip || r.createdAt > tip.at || (r.createdAt === tip.at && r.id > tip.id))
      tips.set(r.gitBranch, { at: r.createdAt, id: r.id, commit: r.gitCommit });
  }
  const inHistory = (commit: string) => history.has(commit.slice(0, HISTORY_ABBREV));
  for (const r of rows) {
    if (!view) {
      out.set(r, UNKNOWN);
    } else if (r.gitBranch && r.gitBranch === view.branch) {
      out.set(r, { lineage: 'here', label: null });
    } else if (r.gitBranch && r.gitBranch === view.trunk) {
      out.set(r, { lineage: 'merged', label: null });
    } else if (r.gitBranch) {
      const tip = tips.get(r.gitBranch);
      if (!tip || !canJudge) out.set(r, UNKNOWN);
      else
        out.set(
          r,
          inHistory(tip.commit) ? { lineage: 'merged', label: null } : { lineage: 'unmerged', label: r.gitBranch },
        );
    } else if (r.gitCommit && canJudge) {
      out.set(
        r,
        inHistory(r.gitCommit)
          ? { lineage: 'merged', label: null }
          : { lineage: 'unmerged', label: r.gitCommit.slice(0, 7) },
      );
    } else {
      out.set(r, UNKNOWN);
    }
  }
  return out;
}

/**
 * The `limit` rows the index shows, newest first: every row that is not unmerged before any that is (unmerged work
 * fills only the slots left), each carrying its `branchMark`. Without a view this is the newest `limit`, unmarked.
 */
export function preferMerged<T extends BranchedRow>(
  rows: readonly T[],
  view: GitView | null,
  limit: number,
  tipRows: readonly BranchedRow[] = rows,
): (T & { branchMark: string | null })[] {
  const judged = judgeRows(rows, view, tipRows);
  const newest = [...rows].sort((a, b) => b.createdAt - a.createdAt || b.id - a.id);
  const kept = newest.filter((r) => judged.get(r)?.lineage !== 'unmerged');
  const rest = newest.filter((r) => judged.get(r)?.lineage === 'unmerged');
  return [...kept, ...rest]
    .slice(0, Math.max(0, limit))
    .map((r) => ({ ...r, branchMark: judged.get(r)?.label ?? null }));
}
