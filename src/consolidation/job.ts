// The `consolidate-project` job: a project's near-duplicate observations merged in bounded steps. A unit reads a
// page of candidate groups (same author, type, file lists and concepts: one GROUP BY statement), then for one
// group at a time its texts (2 statements), clusters them (similarity.ts) and merges at most CLUSTERS_PER_UNIT
// clusters (3 statements each; fewer when the step's budget has less room: clustersThatFit). Every unit reads the database as it is, so a step run again after a restart
// finds the merged rows gone from the candidates and repeats nothing. Started by the daily maintenance for each
// project with new observations, or by an admin (POST /api/admin/jobs, kind `consolidate-project`).
import * as z from 'zod';
import type { JobProgress } from '#shared/jobs';
import { candidateGroups, candidateTexts, mergeRows, proposeMergeRows } from '../db/consolidation';
import { getTeamSettings } from '../db/team-settings';
import { jobTeamWrite } from '../slots/enter-write';
import { JobFailure, type JobKind, type StepContext } from '../jobs/types';
import { clusterNearDuplicates, GROUP_MAX, TEXT_CHARS, THRESHOLD_NO_FILES, THRESHOLD_WITH_FILES } from './similarity';

/** Groups read per page. */
const GROUPS_PER_PAGE = 20;
/** Clusters merged per unit; a group with more is taken again in the next unit (its merged rows are gone by then). */
export const CLUSTERS_PER_UNIT = 20;

/**
 * Clusters the next unit may merge: CLUSTERS_PER_UNIT, or as many as the step's budget has room for (2 statements
 * and 3 a cluster), so a step on Free's 40 still merges some after the gate and the page read.
 */
function clustersThatFit(ctx: StepContext): number {
  const used = ctx.used();
  const room = Math.min(ctx.budget.statements - used.statements, ctx.budget.subrequests - used.subrequests);
  return Math.min(CLUSTERS_PER_UNIT, Math.floor((room - 2) / 3));
}

const Params = z.object({ projectId: z.number().int().positive() }).strict();
type Params = z.infer<typeof Params>;

interface Cursor {
  /** Groups whose smallest id is at most this were done. */
  after: number;
  groups: number;
  merged: number;
  clusters: number;
  /** Sources put in the review queue instead of merged (consolidation: review). */
  proposed?: number;
}

const progress = (c: Cursor, phase: string): JobProgress => ({ done: c.groups, total: null, unit: 'groups', phase });

export const consolidateJob: JobKind<Params, Cursor> = {
  name: 'consolidate-project',
  lane: 'team',
  params: Params,
  adminStartable: true,
  dedupe: (p) => `consolidate-project:${p.projectId}`,
  init: () => {
    const cursor: Cursor = { after: 0, groups: 0, merged: 0, clusters: 0 };
    return { cursor, progress: progress(cursor, 'finding near-duplicates') };
  },
  async step(ctx, p, start) {
    if (ctx.teamId === null) throw new JobFailure('team_required', 'A project belongs to a team.');
    const teamId = ctx.teamId;
    // Merges change rows a team move may already have copied: while the team's write gate is closed, wait.
    const pass = await jobTeamWrite(ctx.env, teamId, ctx.now);
    if ('waitMs' in pass)
      return { cursor: start, done: false, progress: progress(start, 'waiting for a move'), waitMs: pass.waitMs };
    const d = pass.dbs.team;
    // consolidation: review (issue 38): each cluster waits in the review queue as a proposal instead of merging.
    const review = (await getTeamSettings(pass.dbs.dir, teamId)).consolidation === 'review';
    const c: Cursor = { ...start };
    for (;;) {
      if (!ctx.fits({ statements: 1 })) break;
      const page = await candidateGroups(d, teamId, p.projectId, c.after, GROUPS_PER_PAGE);
      if (page.length === 0) {
        return {
          cursor: c,
          done: true,
          progress: progress(c, 'done'),
          result: { groups: c.groups, clusters: c.clusters, merged: c.merged, proposed: c.proposed ?? 0 },
        };
      }
      for (const g of page) {
        const perUnit = clustersThatFit(ctx);
        if (perUnit < 1 || !ctx.fits({ statements: 2 + 3 * perUnit }))
          return { cursor: c, done: false, progress: progress(c, 'merging') };
        const texts = await candidateTexts(d, teamId, g.ids.slice(-GROUP_MAX * 2), TEXT_CHARS);
        const clusters = clusterNearDuplicates(texts, g.noFiles ? THRESHOLD_NO_FILES : THRESHOLD_WITH_FILES);
        for (const cl of clusters.slice(0, perUnit)) {
          const act = {
            teamId,
            survivor: cl.survivor,
            sources: cl.sources,
            similarity: cl.similarity,
            actorUserId: ctx.actorUserId,
            at: ctx.now,
          };
          if (review) await proposeMergeRows(d, act);
          else {
            await mergeRows(d, act);
            c.merged += cl.sources.length;
          }
          if (review) c.proposed = (c.proposed ?? 0) + cl.sources.length;
          c.clusters++;
        }
        // All its clusters merged: the group is done. Otherwise the next unit reads it again, smaller.
        if (clusters.length > perUnit) {
          c.after = g.first - 1;
          break;
        }
        c.after = g.first;
        c.groups++;
      }
    }
    return { cursor: c, done: false, progress: progress(c, 'merging') };
  },
};
