// Proposals (issue 38): with the team setting `consolidation: review`, consolidation's merges and the observer's
// corrections wait in the review queue with what each would change, instead of applying. An admin accepts one
// (applied as versions of the records it names, exactly as the change would have been made: merge events,
// a supersede) or discards it (its rows deleted; the records as they were). Admin routes only (admin scope).
import type { AuthContext } from '../auth/types';
import { insertAudit } from '../db/audit';
import { runBatch } from '../db/batch';
import { db } from '../db/client';
import { mergeRows } from '../db/consolidation';
import { correctionTarget, supersedeRows } from '../db/corrections';
import { teamDb } from '../db/shards';
import { loadViewer } from '../db/visibility';
import type { CairnEnv } from '../env';
import { AppError } from '../lib/errors';
import { writableTeamDb } from '../slots/enter-write';
import { deleteProposals, mergeGroup, proposalById, proposalRows, type ProposalRow } from './queries';

/** Proposal rows read for the queue (a merge is one row per source). */
const ROWS_LIMIT = 200;

interface Named {
  id: number;
  title: string | null;
}

/** One proposal as the queue shows it: what it would change, record by record. */
export interface ProposalItem {
  /** What to accept or discard it by (a merge: its first row). */
  id: number;
  kind: 'merge' | 'supersede';
  /** A merge: the record that would stand for the sources; a correction: the record it would supersede. */
  record: Named;
  /** A merge's sources; a correction's replacement. */
  sources?: Named[];
  by?: Named;
  reason: string | null;
  actor: string;
  who: string | null;
  at: string;
  /** Each record it would change, and how (the versions accepting it writes). */
  changes: { id: number; merged_into?: { from: null; to: number }; superseded_by?: { from: null; to: number } }[];
}

/** The waiting proposals the admin may read, newest first, merges grouped by the record that would stand. */
export async function proposalsFor(env: CairnEnv, auth: AuthContext): Promise<ProposalItem[]> {
  const d = await teamDb(env, auth.teamId);
  const rows = await proposalRows(d, await loadViewer(d, auth), ROWS_LIMIT);
  const merges = new Map<number, ProposalRow[]>();
  const out: ProposalItem[] = [];
  for (const r of rows) {
    if (r.kind === 'merge') {
      const group = merges.get(r.byObservationId!) ?? [];
      if (!group.length) merges.set(r.byObservationId!, group);
      group.push(r);
      continue;
    }
    out.push({
      id: r.id,
      kind: 'supersede',
      record: { id: r.observationId, title: r.title },
      by: { id: r.byObservationId!, title: r.byTitle },
      reason: r.reason,
      actor: r.actor,
      who: r.who,
      at: new Date(r.createdAt).toISOString(),
      changes: [{ id: r.observationId, superseded_by: { from: null, to: r.byObservationId! } }],
    });
  }
  for (const [survivor, group] of merges) {
    const first = group.reduce((a, b) => (b.id < a.id ? b : a));
    const sources = [...group].sort((a, b) => a.observationId - b.observationId);
    out.push({
      id: first.id,
      kind: 'merge',
      record: { id: survivor, title: first.byTitle },
      sources: sources.map((s) => ({ id: s.observationId, title: s.title })),
      reason: first.reason,
      actor: first.actor,
      who: first.who,
      at: new Date(first.createdAt).toISOString(),
      changes: sources.map((s) => ({ id: s.observationId, merged_into: { from: null, to: survivor } })),
    });
  }
  return out.sort((a, b) => b.id - a.id);
}

export type ProposalDecision = 'accept' | 'discard';

/**
 * Accepts or discards proposal `id` (for a merge: the whole group of its survivor). Accepting a merge merges the
 * sources still mergeable into the survivor (a `merge` version each); accepting a correction supersedes the record
 * (a `supersede` version, actor `observer`, the admin who accepted it as its person), 409 `proposal_stale` when the
 * record or its replacement is no longer current. Either way the proposal's rows go in the same batch.
 */
export async function decideProposal(
  env: CairnEnv,
  auth: AuthContext,
  id: number,
  decision: ProposalDecision,
  now: number,
): Promise<{ id: number; decision: ProposalDecision; records: number[] }> {
  const d = await writableTeamDb(env, auth.teamId);
  const viewer = await loadViewer(d, auth);
  const p = await proposalById(d, auth.teamId, id);
  const record = p ? await correctionTarget(d, viewer, p.observationId) : null;
  const by = p?.byObservationId ? await correctionTarget(d, viewer, p.byObservationId) : null;
  if (!p || !record || !by) throw new AppError(404, 'not_found', `No proposal ${id}.`);
  const group = p.kind === 'merge' ? await mergeGroup(d, auth.teamId, by.id) : [{ id: p.id, source: p.observationId }];
  const rows = group.map((g) => g.id);
  const records = group.map((g) => g.source);
  const dd = db(d);
  const audit = insertAudit(dd, {
    teamId: auth.teamId,
    actorUserId: auth.userId,
    action: `proposal.${decision}`,
    target: `observation:${by.id}`,
    detail: { kind: p.kind, records },
    at: now,
  });
  const done = [deleteProposals(dd, auth.teamId, rows), audit];
  if (decision === 'discard') {
    await runBatch(dd, done);
  } else if (p.kind === 'merge') {
    await mergeRows(
      dd,
      {
        teamId: auth.teamId,
        survivor: by.id,
        sources: records,
        similarity: 0,
        reason: p.reason ?? `near-duplicate of #${by.id}`,
        actorUserId: auth.userId,
        at: now,
      },
      done,
    );
  } else {
    if (record.supersededBy !== null || by.supersededBy !== null)
      throw new AppError(
        409,
        'proposal_stale',
        `#${record.id} or #${by.id} is no longer current; discard the proposal (proposal ${id}).`,
      );
    await supersedeRows(
      dd,
      {
        teamId: auth.teamId,
        id: record.id,
        by: by.id,
        actorUserId: auth.userId,
        actor: 'observer',
        reason: p.reason ?? 'observer: proposed correction',
        at: now,
      },
      done,
    );
  }
  return { id, decision, records };
}
