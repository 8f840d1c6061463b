// Team retention: a team that sets `retention_days` keeps observations, summaries and prompts that long. The
// daily cron (wrangler.toml [triggers]) deletes older ones from D1, the FTS indexes and the vector index.
import { parseTeamSettings } from '../db/team-settings';
import { oldRecordIds, sweepRecords } from '../db/retention';
import { shardDb, teamsWithShards } from '../db/shards';
import { writeAudit } from '../audit/audit';
import type { CairnEnv } from '../env';
import { requestFtsUpkeep } from '../search/fts-upkeep';
import { getVectorAdapters } from '../vectors/adapters';
import { deleteRecordVectors } from '../vectors/index-records';

const DAY_MS = 86_400_000;
/** Chunks per team per run: a first sweep of a long history continues on the next day's run. */
const MAX_CHUNKS = 200;

export interface SweepReport {
  teams: number;
  observations: number;
  summaries: number;
  prompts: number;
}

export async function applyRetention(env: CairnEnv, now: number): Promise<SweepReport> {
  const report: SweepReport = { teams: 0, observations: 0, summaries: 0, prompts: 0 };
  const adapters = getVectorAdapters(env);
  for (const team of await teamsWithShards(env)) {
    const days = parseTeamSettings(team.settings).retention_days;
    if (!days) continue;
    const d = shardDb(env, team.shard);
    const before = now - days * DAY_MS;
    const gone = { observations: 0, summaries: 0, prompts: 0 };
    for (let i = 0; i < MAX_CHUNKS; i++) {
      const ids = await oldRecordIds(d, team.id, before);
      const c = await sweepRecords(d, team.id, ids);
      // Every vector of every kind and part: Vectorize holds copies of summaries and prompts too.
      await deleteRecordVectors(adapters, team.id, ids);
      gone.observations += c.observations;
      gone.summaries += c.summaries;
      gone.prompts += c.prompts;
      if (c.observations + c.summaries + c.prompts === 0) break;
    }
    if (gone.observations + gone.summaries + gone.prompts === 0) continue;
    report.teams++;
    report.observations += gone.observations;
    report.summaries += gone.summaries;
    report.prompts += gone.prompts;
    await writeAudit(d, { teamId: team.id, actorUserId: null, action: 'retention.sweep', target: `before:${before}`, detail: { days, ...gone }, at: now });
    await requestFtsUpkeep(env, team.id);
  }
  return report;
}
