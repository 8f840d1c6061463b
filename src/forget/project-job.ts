// The `forget-project` job: a whole project deleted in bounded steps, however large. The request that asks
// (POST /api/forget {kind:'project', confirm}) checks who may and the count, starts this job and answers at once
// with its id. A unit deletes one chunk (≤ 500) of observations, summaries or prompts with their file rows and
// local vectors (one batch) and then their Vectorize vectors; then each session's Durable Object is emptied
// (≤ 25 a step); the last unit deletes the sessions, aliases and the project row with the audit row, and asks
// for an FTS upkeep cycle. Every unit deletes by id, so a step run again after a restart repeats nothing; each chunk's
// batch writes a mark with its count and the last batch's audit row holds the totals, so the rerun also counts what
// the cut-off run deleted (src/jobs/marks.ts).
import * as z from 'zod';
import {
  deleteProject,
  deleteRecordChunk,
  PROJECT_CHUNK,
  projectRecordIds,
  projectSessionsAfter,
  type ForgetCounts,
  type RecordKind,
} from '../db/forget';
import { auditDetails } from '../db/audit';
import { projectIdAfterMove } from '../db/move';
import { earlierChunks, markTarget } from '../jobs/marks';
import { jobTeamWrite, teamRowsDeleted } from '../slots/enter-write';
import { JobFailure, type JobKind } from '../jobs/types';
import type { JobProgress } from '#shared/jobs';
import { requestFtsUpkeep } from '../search/fts-upkeep';
import { sessionStub } from '../session/session-do';
import { getVectorAdapters } from '../vectors/adapters';
import { deleteRecordVectors } from '../vectors/index-records';

/** Session objects emptied per unit (each a Durable Object call). */
const SESSIONS_PER_UNIT = 25;
const KINDS: readonly RecordKind[] = ['observation', 'summary', 'prompt'];
const FIELD = { observation: 'observations', summary: 'summaries', prompt: 'prompts' } as const;

const Params = z
  .object({
    projectId: z.number().int().positive(),
    key: z.string().min(1).max(500),
    /** What the person confirmed: the progress bar's total. */
    total: z.number().int().nonnegative(),
  })
  .strict();
type Params = z.infer<typeof Params>;

interface Cursor {
  /** Index into KINDS, then KINDS.length: sessions, then KINDS.length + 1: the project row, then done. */
  k: number;
  afterSession: number;
  counts: ForgetCounts;
  /** Chunks written so far (their marks are numbered from 0) and when the job began (its marks are no older). */
  chunks?: number;
  since?: number;
}

/** Each chunk's batch writes a mark with its count (src/jobs/marks.ts). */
const CHUNK_MARK = 'forget.chunk';

const phaseName = (k: number) =>
  k < KINDS.length
    ? `deleting ${FIELD[KINDS[k]!]}`
    : k === KINDS.length
      ? 'emptying session objects'
      : 'deleting the project';
const progress = (p: Params, c: Cursor): JobProgress => ({
  done: c.counts.observations + c.counts.summaries + c.counts.prompts,
  total: p.total,
  unit: 'records',
  phase: phaseName(c.k),
});

const countsOf = (detail: Record<string, unknown>): ForgetCounts => {
  const n = (k: keyof ForgetCounts) => (typeof detail[k] === 'number' ? (detail[k] as number) : 0);
  return { observations: n('observations'), summaries: n('summaries'), prompts: n('prompts'), sessions: n('sessions') };
};

export const forgetProjectJob: JobKind<Params, Cursor> = {
  name: 'forget-project',
  lane: 'team',
  params: Params,
  // Its result names the project, which may be someone's private one.
  personal: true,
  dedupe: (p) => `forget-project:${p.projectId}`,
  init: (p, { now }) => {
    const cursor: Cursor = {
      k: 0,
      afterSession: 0,
      counts: { observations: 0, summaries: 0, prompts: 0, sessions: 0 },
      chunks: 0,
      since: now,
    };
    return { cursor, progress: progress(p, cursor) };
  },
  async step(ctx, asked, start) {
    let p = asked;
    if (ctx.teamId === null) throw new JobFailure('team_required', 'A project belongs to a team.');
    const teamId = ctx.teamId;
    // Through the team's write gate: while the team moves, the step waits (the lane runs the move meanwhile);
    // after a move the project has a new id where the team now lives, found by its key.
    const pass = await jobTeamWrite(ctx.env, teamId, ctx.now);
    if ('waitMs' in pass) return { cursor: start, done: false, progress: progress(p, start), waitMs: pass.waitMs };
    const d = pass.dbs.team;
    const projectId = await projectIdAfterMove(d, teamId, p.projectId, p.key);
    if (projectId === null) {
      // Gone: this is the last step run again after a restart (its batch landed, its cursor did not), or someone
      // else deleted the project. The last batch's audit row holds the job's counts.
      const target = `project:${p.projectId}`;
      const last = (await auditDetails(d, teamId, 'forget', [target], start.since ?? ctx.now)).get(target);
      const counts = last ? countsOf(last) : { ...start.counts };
      // Said again in case the step that deleted it ended before it told the writers.
      await teamRowsDeleted(ctx.env, teamId);
      return {
        cursor: { ...start, counts },
        done: true,
        progress: { ...progress(p, start), phase: 'done' },
        result: { forgotten: `project:${p.key}`, counts },
      };
    }
    p = { ...p, projectId };
    const adapters = getVectorAdapters(ctx.env);
    const c: Cursor = { ...start, counts: { ...start.counts } };
    // An earlier run of this step (cut off by a restart before its cursor was saved) deleted chunks this cursor
    // does not count: their marks say how many.
    if (c.chunks !== undefined) {
      const earlier = await earlierChunks(d, teamId, CHUNK_MARK, ctx.jobId, c.chunks, c.since ?? 0);
      for (const m of earlier.counts) for (const kind of KINDS) c.counts[FIELD[kind]] += m[FIELD[kind]] ?? 0;
      c.chunks = earlier.next;
    }
    for (;;) {
      const kind = KINDS[c.k];
      if (kind !== undefined) {
        // The look-up, the delete batch (≤ 6 statements with its mark) and the vector deletes (one call per 100 records).
        if (!ctx.fits({ statements: 7, subrequests: Math.ceil(PROJECT_CHUNK / 100) })) break;
        const ids = await projectRecordIds(d, teamId, p.projectId, kind);
        if (ids.length === 0) {
          c.k++;
          continue;
        }
        await deleteRecordVectors(adapters, teamId, { [FIELD[kind]]: ids });
        const mark = {
          action: CHUNK_MARK,
          target: markTarget(ctx.jobId, c.chunks ?? 0),
          field: FIELD[kind],
          at: ctx.now,
        };
        c.counts[FIELD[kind]] += await deleteRecordChunk(d, teamId, kind, ids, mark);
        if (c.chunks !== undefined) c.chunks++;
      } else if (c.k === KINDS.length) {
        if (!ctx.fits({ statements: 1, subrequests: SESSIONS_PER_UNIT })) break;
        const batch = await projectSessionsAfter(d, teamId, p.projectId, c.afterSession, SESSIONS_PER_UNIT);
        if (batch.length === 0) {
          c.k++;
          continue;
        }
        for (const s of batch) await sessionStub(ctx.env, teamId, s.key).forgetAll();
        c.afterSession = batch[batch.length - 1]!.id;
      } else {
        // The last batch: the audit row and 13 deletes (db/forget.ts deleteProject).
        if (!ctx.fits({ statements: 14, subrequests: 2 })) break;
        const last = await deleteProject(d, teamId, p.projectId, {
          actorUserId: ctx.actorUserId ?? 0,
          target: `project:${p.projectId}`,
          detail: { project_id: p.projectId, ...c.counts },
          at: ctx.now,
        });
        c.counts.sessions += last.sessions;
        await teamRowsDeleted(ctx.env, teamId);
        await requestFtsUpkeep(ctx.env, teamId);
        c.k++;
        return {
          cursor: c,
          done: true,
          progress: { ...progress(p, c), phase: 'done' },
          result: { forgotten: `project:${p.key}`, counts: { ...c.counts } },
        };
      }
    }
    return { cursor: c, done: false, progress: progress(p, c) };
  },
};
