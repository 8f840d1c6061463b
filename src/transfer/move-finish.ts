// A team move's phases after the map names the new database and the team writes there again (move-job.ts):
//   vectors  the old rows' vectors go (their ids are the old database's, under its prefix), walked by a cursor
//            over each project's records: a step reads about the ids it deletes;
//   drop     after the shard memo's lifetime, the old database is emptied of the team, a chunk at a time;
//   embed    an `embed` job gives the moved rows their vectors; the FTS upkeep of both databases purges the
//            segments that still hold text deleted there (the old rows, and rows the change log deleted).
import { deleteSteps, deleteTeamChunk, projectRecordPage, type RecordTable } from '../db/move';
import { DIRECTORY, shardDb } from '../db/shards';
import { jobStub } from '../jobs/job-do';
import { startJob } from '../jobs/start';
import { ftsUpkeepJob } from '../search/fts-upkeep';
import { getVectorAdaptersOn } from '../vectors/adapters';
import { deleteRecordVectors } from '../vectors/index-records';
import { DELETE_CHUNK, VECTOR_PAGE, type PhaseStep } from './move-cursor';

const VECTOR_TABLES: readonly RecordTable[] = ['observations', 'summaries', 'prompts'];

export const FINISH_PHASES: Record<'vectors' | 'drop' | 'embed', PhaseStep> = {
  async vectors(ctx, _p, c, teamId) {
    const source = shardDb(ctx.env, c.from!);
    const adapters = getVectorAdaptersOn(ctx.env, c.from!);
    let v = c.vec;
    while (v.p < c.projectIds.length && ctx.fits({ statements: 2, subrequests: 1 })) {
      const table = VECTOR_TABLES[v.t]!;
      const page = await projectRecordPage(source, teamId, table, c.projectIds[v.p]!, v.from, VECTOR_PAGE);
      if (page.length) {
        await deleteRecordVectors(adapters, teamId, { [table]: page.map((r) => r.id) });
      }
      if (page.length === VECTOR_PAGE) v = { ...v, from: page[page.length - 1]! };
      else v = v.t + 1 < VECTOR_TABLES.length ? { p: v.p, t: v.t + 1, from: null } : { p: v.p + 1, t: 0, from: null };
    }
    return { c: { ...c, vec: v, ...(v.p >= c.projectIds.length ? { phase: 'drop' as const, n: 0 } : {}) } };
  },

  async drop(ctx, p, c, teamId) {
    // Isolates trust their memo of the team's database for SHARD_MEMO_MS: the old rows stay until it ran out.
    const wait = c.flippedAt + p.settleMs - ctx.now;
    if (wait > 0) return { c, waitMs: wait };
    const source = shardDb(ctx.env, c.from!);
    const steps = deleteSteps(c.from !== DIRECTORY);
    let n = c.n;
    while (n < steps && ctx.fits({ statements: 1 })) {
      if ((await deleteTeamChunk(source, teamId, n, DELETE_CHUNK)) === 0) n++;
      // The old database serves other teams: room for their statements between two deletes.
      await ctx.breathe();
    }
    return { c: { ...c, n, ...(n >= steps ? { phase: 'embed' as const } : {}) } };
  },

  async embed(ctx, p, c, teamId) {
    // The moved rows have new ids on the new database and no vectors yet: the embed job gives them theirs.
    await jobStub(ctx.env, teamId).start({
      kind: 'embed',
      params: { mode: 'missing' },
      teamId,
      actorUserId: null,
      actor: null,
    });
    // Deleted rows leave their text in FTS segments until they are merged: the old database's of every row the
    // drop deleted, the new one's of rows the change log (or the clear of an earlier move's leftovers) deleted.
    await startJob(ctx.env, ftsUpkeepJob, null, { shard: c.from!, check: false });
    await startJob(ctx.env, ftsUpkeepJob, null, { shard: p.to, check: false });
    return {
      c,
      done: true,
      result: {
        from: c.from,
        to: p.to,
        moved: true,
        counts: c.counts,
        writes_closed: { steps: c.closedSteps, ms: c.closedMs },
        rounds: c.log.round + 1,
        deleted_by_log: c.log.deleted,
      },
    };
  },
};
