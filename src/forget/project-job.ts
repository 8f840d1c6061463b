// The `forget-project` job: a whole project deleted in bounded steps, however large. The request that asks
// (POST /api/forget {kind:'project', confirm}) checks who may and the count, starts this job and answers at once
// with its id. A unit deletes one chunk (≤ 500) of observations, summaries or prompts with their file rows and
// local vectors (one batch) and then their Vectorize vectors; then each session's Durable Object is emptied
// (≤ 25 a step); the last unit deletes the sessions, aliases and the project row with the audit row, and asks
// for an FTS upkeep cycle. Every unit deletes by id, so a step run again after a restart repeats nothing.
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
import { projectIdAfterMove } from '../db/move';
import { jobTeamWrite } from '../slots/enter-write';
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
}

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

export const forgetProjectJob: JobKind<Params, Cursor> = {
  name: 'forget-project',
  lane: 'team',
  params: Params,
  dedupe: (p) => `forget-project:${p.projectId}`,
  init: (p) => {
    const cursor: Cursor = {
      k: 0,
      afterSession: 0,
      counts: { observations: 0, summaries: 0, prompts: 0, sessions: 0 },
    };
    return { cursor, progress: progress(p, cursor) };
  },
  async step(ctx, asked, start) {
    let p = asked;
    if (ctx.teamId === null) throw new JobFailure('team_required', 'A project belongs to a team.');
    const teamId = ctx.teamId;
    // Through the team's write gate: while the team moves, the step waits (the lane runs the move meanwhile);
    // after a move the project has a new id where the team now lives, found by its key.
    ctx.subrequest();
    const pass = await jobTeamWrite(ctx.env, teamId, ctx.now);
    if ('waitMs' in pass) return { cursor: start, done: false, progress: progress(p, start), waitMs: pass.waitMs };
    const d = pass.dbs.team;
    const projectId = await projectIdAfterMove(d, teamId, p.projectId, p.key);
    if (projectId === null)
      return {
        cursor: start,
        done: true,
        progress: { ...progress(p, start), phase: 'done' },
        result: { forgotten: `project:${p.key}`, counts: { ...start.counts } },
      };
    p = { ...p, projectId };
    const adapters = getVectorAdapters(ctx.env);
    const c: Cursor = { ...start, counts: { ...start.counts } };
    for (;;) {
      const kind = KINDS[c.k];
      if (kind !== undefined) {
        // The look-up, the delete batch (≤ 3 statements) and the vector deletes (one call per 100 records).
        if (!ctx.fits({ statements: 4, subrequests: Math.ceil(PROJECT_CHUNK / 100) })) break;
        const ids = await projectRecordIds(d, teamId, p.projectId, kind);
        if (ids.length === 0) {
          c.k++;
          continue;
        }
        await deleteRecordVectors(adapters, teamId, { [FIELD[kind]]: ids });
        if (adapters) ctx.subrequest(Math.ceil(ids.length / 100));
        c.counts[FIELD[kind]] += await deleteRecordChunk(d, teamId, kind, ids);
      } else if (c.k === KINDS.length) {
        if (!ctx.fits({ statements: 1, subrequests: SESSIONS_PER_UNIT })) break;
        const batch = await projectSessionsAfter(d, teamId, p.projectId, c.afterSession, SESSIONS_PER_UNIT);
        if (batch.length === 0) {
          c.k++;
          continue;
        }
        for (const s of batch) await sessionStub(ctx.env, teamId, s.key).forgetAll();
        ctx.subrequest(batch.length);
        c.afterSession = batch[batch.length - 1]!.id;
      } else {
        if (!ctx.fits({ statements: 10, subrequests: 1 })) break;
        const last = await deleteProject(d, teamId, p.projectId, {
          actorUserId: ctx.actorUserId ?? 0,
          target: `project:${p.projectId}`,
          detail: { project_id: p.projectId, ...c.counts },
          at: ctx.now,
        });
        c.counts.sessions += last.sessions;
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
