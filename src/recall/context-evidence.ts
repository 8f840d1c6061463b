// The context index's evidence (issue 34): the checkout report of a SessionStart applied to the device's stored
// checkout, every candidate judged against it, and the watch (what to report next time) built from the candidates.
import type { CheckoutEntries, Judgement } from '#shared/evidence';
import type { GitView } from '#shared/git';
import type { WireContextAnswer, WireWatch } from '#shared/wire/checkout';
import type { AuthContext } from '../auth/types';
import { judgeRows, type BranchedRow } from '../evidence/branches';
import type { CheckoutRow } from '../db/evidence';
import {
  applyReport,
  evidenceOf,
  gitViewOf,
  judgeAll,
  keepCheckout,
  ownerOf,
  stateOf,
  unreported,
  watchOf,
} from '../evidence/checkout';
import type { CheckoutReport } from './params';
import { sha256Hex } from '../lib/crypto';

export interface ContextEvidence {
  judged: Map<number, Judgement>;
  /** Set when the request carried a report: what the answer says of it, and what to report next time. */
  exchange: { checkout: WireContextAnswer['checkout']; watch: WireWatch | null; watchDigest: string } | null;
}

const NONE: ContextEvidence = { judged: new Map(), exchange: null };

/** Whether the stored git view is the request's (none sent = the empty view the row keeps for it). */
const sameGit = (a: GitView, b: GitView | null) =>
  a.branch === (b?.branch ?? null) &&
  a.head === (b?.head ?? null) &&
  a.trunk === (b?.trunk ?? null) &&
  a.history.join() === (b?.history ?? []).join();

/**
 * Judges `rows` (the index's candidates) for the caller. With a `report` (POST /api/context) it applies to
 * `projectIds[0]`, the one project the request names, and is stored when it says something new; without, the
 * device's stored checkouts are used (a client that never reported is answered as before: every row unknown).
 * `stored` is the device's checkouts of `projectIds` (checkoutsOf), read by the caller beside the candidates.
 */
export async function contextEvidence(
  d: D1Database,
  auth: Pick<AuthContext, 'teamId' | 'userId' | 'deviceId'>,
  projectIds: readonly number[],
  stored: readonly CheckoutRow[],
  rows: readonly BranchedRow[],
  git: GitView | null,
  report: CheckoutReport | undefined,
  now: number,
): Promise<ContextEvidence> {
  const owner = ownerOf(auth);
  const ids = rows.map((r) => r.id);
  // Without a report, the evidence rows are read only when some checkout is stored.
  if (!report && !stored.length) return NONE;
  const evidence = await evidenceOf(d, auth.teamId, ids);
  const states = new Map<number, CheckoutEntries>(stored.map((r) => [r.projectId, stateOf(r)]));
  const unmerged = unmergedIds(rows, git, stored);
  let exchange: ContextEvidence['exchange'] = null;
  const target = projectIds[0];
  if (report && target !== undefined && projectIds.length === 1) {
    const row = stored.find((r) => r.projectId === target) ?? null;
    const applied = await applyReport(d, owner, target, row, report);
    if (applied) {
      states.set(target, applied.entries);
      if (applied.changed || !row || !sameGit(gitViewOf(row), git))
        await keepCheckout(d, owner, target, applied, git, now);
    }
    const watch = watchOf(newestFirst(rows), evidence, unmerged);
    const watchDigest = await sha256Hex(JSON.stringify(watch));
    exchange = {
      checkout: {
        digest: applied?.digest ?? row?.digest ?? null,
        need: !applied,
        unreported: unreported(watch, states.get(target) ?? {}),
      },
      // Sent only when it is not the watch the client already holds.
      watch: report.watch === watchDigest ? null : watch,
      watchDigest,
    };
  }
  const judged = judgeAll(
    owner,
    ids,
    evidence,
    (p) => states.get(p) ?? null,
    (id) => unmerged.has(id),
  );
  return { judged, exchange };
}

const newestFirst = (rows: readonly BranchedRow[]) =>
  [...rows].sort((a, b) => b.createdAt - a.createdAt || b.id - a.id).map((r) => r.id);

/** Rows of branches that never merged here: by the request's view, else by each project's stored one. */
function unmergedIds(
  rows: readonly BranchedRow[],
  git: GitView | null,
  stored: readonly {
    projectId: number;
    branch: string | null;
    head: string | null;
    trunk: string | null;
    history: string;
  }[],
): Set<number> {
  const out = new Set<number>();
  const view = git ?? (stored.length === 1 ? gitViewOf(stored[0]!) : null);
  if (!view) return out;
  for (const [r, j] of judgeRows(rows, view)) if (j.lineage === 'unmerged') out.add(r.id);
  return out;
}
