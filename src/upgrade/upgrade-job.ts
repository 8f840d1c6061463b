// The `upgrade` job (the server's own lane): visits every team, a few a step, and starts the team's embed job
// where records have no vectors (what data version 1 needs, and what a failed embedding, an import or a restore
// leaves too, so the daily cron runs the same job as a check). An upgrade from below version 2 also starts each
// team's judge-held job (rows stored before the hold-back rule), once: only a run for a version does, and only
// when the version it started from was lower; the team's job does the judging in its own bounded steps.
// When started for a version (`to`), its last step records that version (maintenance_runs, job `upgrade`), and
// no Worker starts it again for it. A step run twice starts nothing twice: the embed job is one per team.
import * as z from 'zod';
import { dataVersion, runEnded, runStarted } from '../db/maintenance';
import { directoryDb, teamDb } from '../db/shards';
import { nextTeamId } from '../db/teams';
import { unembeddedIds } from '../db/vectors';
import type { JobProgress } from '#shared/jobs';
import type { JobKind } from '../jobs/types';
import { startEmbedJob } from '../vectors/embed-job';
import { VECTOR_KINDS } from '../vectors/keys';
import { judgeHeldJob } from '../hold/backfill-job';
import { startJob } from '../jobs/start';
import { JUDGE_HELD_VERSION } from './versions';

const UpgradeParams = z.object({ to: z.number().int().min(1).max(10_000).optional() }).strict();
type UpgradeParams = z.infer<typeof UpgradeParams>;

interface UpgradeCursor {
  after: number;
  teams: number;
  /** Teams whose embed job this upgrade started. */
  embedding: number;
  /** Teams whose judge-held job this upgrade started (absent in cursors saved before it was kept). */
  judging?: number;
  from: number | null;
}

const progress = (c: UpgradeCursor, done = false): JobProgress => ({
  done: c.teams,
  total: null,
  unit: 'teams',
  phase: done ? 'done' : 'checking teams for records without vectors',
});

/** A team: its shard (one look-up, memoized), a look-up per kind, and the embed and judge-held jobs' starts. */
const TEAM_COST = { statements: 2 + VECTOR_KINDS.length, subrequests: 2 };

export const upgradeJob: JobKind<UpgradeParams, UpgradeCursor> = {
  name: 'upgrade',
  lane: 'system',
  params: UpgradeParams,
  dedupe: (p) => `upgrade:${p.to ?? 'check'}`,
  init: () => {
    const cursor: UpgradeCursor = { after: 0, teams: 0, embedding: 0, judging: 0, from: null };
    return { cursor, progress: progress(cursor) };
  },
  async step(ctx, params, start) {
    const dir = directoryDb(ctx.env);
    const c = { ...start };
    if (params.to !== undefined && c.from === null) {
      c.from = await dataVersion(dir);
      await runStarted(dir, 'upgrade', ctx.now);
    }
    const judge = params.to !== undefined && params.to >= JUDGE_HELD_VERSION && (c.from ?? 0) < JUDGE_HELD_VERSION;
    while (ctx.fits(TEAM_COST)) {
      const teamId = await nextTeamId(dir, c.after);
      if (teamId === null) {
        const detail = {
          version: params.to ?? null,
          from: c.from,
          teams: c.teams,
          embedding: c.embedding,
          judging: c.judging ?? 0,
        };
        if (params.to !== undefined)
          await runEnded(dir, 'upgrade', Date.now(), { detail: { ...detail, version: params.to } });
        return { cursor: c, done: true, progress: progress(c, true), result: detail };
      }
      const d = await teamDb(ctx.env, teamId);
      let missing = false;
      for (const kind of VECTOR_KINDS) {
        if ((await unembeddedIds(d, teamId, kind, 1)).length > 0) {
          missing = true;
          break;
        }
      }
      if (missing) {
        await startEmbedJob(ctx.env, teamId);
        c.embedding++;
      }
      if (judge) {
        // One per team while it runs (its dedupe key); started again by a rerun step after it ended, it judges
        // nothing new (the rule is pure).
        await startJob(ctx.env, judgeHeldJob, teamId, {});
        c.judging = (c.judging ?? 0) + 1;
      }
      c.teams++;
      c.after = teamId;
    }
    return { cursor: c, done: false, progress: progress(c) };
  },
};
