// The observer's side of corrections: the prior records a turn is shown (same files, keyword match through FTS,
// only what the session's author may read in the same project, only current ones), and what its reply said about
// them, stored through the same path as a person's correction with actor `observer`. The author's own records are
// superseded; anyone else's record is flagged outdated for review, whoever the author is: the observer acts with
// the author's hook token (scopes ingest and read), which has no admin power even when its holder is an admin, so
// it does what that token could do by hand. A record the observer was not shown is never touched. With the team's
// `consolidation` setting at `review`, each correction waits in the review queue as a proposal instead (src/proposals/).
import { correctionTarget, addFeedback, supersedeRows } from '../db/corrections';
import { activeRole } from '../db/members';
import { relatedRecords } from '../db/related';
import { db } from '../db/client';
import { proposeSupersede } from '../db/proposals';
import { directoryDb, teamDb } from '../db/shards';
import { getTeamSettings } from '../db/team-settings';
import { loadViewer } from '../db/visibility';
import type { CairnEnv } from '../env';
import type { ObserverCorrections, TurnOwner } from '../observer/corrections-port';
import { PRIOR_MAX_RECORDS, type PriorQuery, type PriorRecord } from '../observer/prior';
import { BM25_WEIGHTS, buildFtsQuery, scopeMatch } from '../search/fts-query';
import { REASON_MAX } from './service';

/** Keyword matches fill at most this many of the shown records; file matches are the stronger sign. */
const KEYWORD_RECORDS = 3;
/** Terms of the turn's keyword query (an OR of them ranks by bm25). */
const QUERY_TERMS = 16;
/** Corrections stored from one reply, whatever it says. */
export const OBSERVER_CORRECTIONS_PER_TURN = 3;

async function related(
  env: CairnEnv,
  owner: TurnOwner,
  query: PriorQuery,
  exclude: number[],
  sessionId: number,
): Promise<PriorRecord[]> {
  const d = await teamDb(env, owner.teamId);
  const viewer = await loadViewer(d, { teamId: owner.teamId, userId: owner.userId });
  const q = buildFtsQuery(query.text, QUERY_TERMS);
  const match =
    q.any && q.all ? { all: scopeMatch(q.all, [owner.projectId]), any: scopeMatch(q.any, [owner.projectId]) } : null;
  const rows = await relatedRecords(
    d,
    viewer,
    owner.projectId,
    { paths: query.paths, match, weights: BM25_WEIGHTS, exclude, sessionId },
    PRIOR_MAX_RECORDS,
    KEYWORD_RECORDS,
  );
  return rows;
}

async function apply(
  env: CairnEnv,
  owner: TurnOwner,
  proposals: { id: number; by: number; reason: string }[],
  shown: readonly number[],
  now: number,
): Promise<number> {
  const wanted = proposals.filter((p) => shown.includes(p.id) && p.id !== p.by).slice(0, OBSERVER_CORRECTIONS_PER_TURN);
  if (!wanted.length) return 0;
  const d = await teamDb(env, owner.teamId);
  // A removed author's sessions change nothing (their role no longer counts; only membership does).
  if ((await activeRole(d, owner.teamId, owner.userId)) === null) return 0;
  const viewer = await loadViewer(d, { teamId: owner.teamId, userId: owner.userId });
  // consolidation: review (issue 38): the observer's corrections wait for an admin instead of applying.
  const review = (await getTeamSettings(directoryDb(env), owner.teamId)).consolidation === 'review';
  let stored = 0;
  for (const p of wanted) {
    // Read again now: the record may have been forgotten, moved or corrected since the turn was shown it.
    const [target, by] = await Promise.all([correctionTarget(d, viewer, p.id), correctionTarget(d, viewer, p.by)]);
    if (
      !target ||
      !by ||
      target.projectId !== owner.projectId ||
      by.projectId !== owner.projectId ||
      target.supersededBy !== null
    )
      continue;
    const reason = `observer: ${p.reason}`.slice(0, REASON_MAX);
    if (review) {
      const at = { teamId: owner.teamId, id: p.id, by: p.by, reason, actorUserId: owner.userId, at: now };
      await proposeSupersede(db(d), at).run();
    } else if (target.authorUserId === owner.userId) {
      await supersedeRows(d, {
        teamId: owner.teamId,
        id: p.id,
        by: p.by,
        actorUserId: owner.userId,
        actor: 'observer',
        reason,
        at: now,
      });
    } else {
      await addFeedback(d, {
        teamId: owner.teamId,
        id: p.id,
        userId: owner.userId,
        kind: 'outdated',
        reason,
        at: now,
        actor: 'observer',
      });
    }
    stored++;
  }
  return stored;
}

export const observerCorrectionsImpl: ObserverCorrections = { related, apply };
