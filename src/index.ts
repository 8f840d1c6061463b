// cairn Worker entry: the HTTP app (src/app.ts), the daily maintenance, the Durable Object classes and the
// job kinds the job lanes run. Each entry point is one metered invocation (src/db/meter.ts).
import app from './app';
import type { CairnEnv } from './env';
import { metered } from './db/meter';
import { registerJobKinds } from './jobs/registry';
import { startDailyMaintenance } from './maintenance/daily';
import { dailyDispatchJob } from './maintenance/dispatch-job';
import { dailyTeamJob } from './maintenance/team-job';
import { embedJob } from './vectors/embed-job';
import { backupJob } from './backup/backup-job';
import { restoreJob } from './backup/restore-job';
import { upgradeOnce } from './upgrade/check';
import { upgradeJob } from './upgrade/upgrade-job';
import { ftsUpkeepJob } from './search/fts-upkeep';
import { moveJob } from './transfer/move-job';
import { forgetProjectJob } from './forget/project-job';
import { registerObserverCorrections } from './observer/corrections-port';
import { observerCorrectionsImpl } from './corrections/observer';
import { importJob } from './transfer/import-job';
import { consolidateJob } from './consolidation/job';
import { judgeHeldJob } from './hold/backfill-job';
import { retentionSweepJob } from './retention/sweep-job';
import { sessionRetireJob } from './retention/session-retire';
import { digestJob } from './digest/job';

// Every kind of job this Worker runs (src/jobs/types.ts says how to write one; NOTES: how to add one).
registerJobKinds([embedJob, ftsUpkeepJob, moveJob, backupJob, restoreJob, upgradeJob, forgetProjectJob, importJob]);
registerJobKinds([consolidateJob, judgeHeldJob]);
registerJobKinds([retentionSweepJob, sessionRetireJob, dailyDispatchJob, dailyTeamJob, digestJob]);
// The observer's corrections need search's query builder and the supersede path (features): plugged in here.
registerObserverCorrections(observerCorrectionsImpl);

export { SessionDO } from './session/session-do';
export { TeamDO } from './slots/team-do';
export { HubDO } from './live/hub-do';
export { LimiterDO } from './limits/limiter-do';
export { JobDO } from './jobs/job-do';

export default {
  fetch: (request: Request, env: CairnEnv, ctx: ExecutionContext) =>
    metered(env, `fetch ${request.method} ${new URL(request.url).pathname}`, () => {
      // After a deploy, what the new version's data needs starts by itself (src/upgrade/).
      upgradeOnce(env, ctx);
      return app.fetch(request, env, ctx);
    }),
  // Daily (wrangler.toml [triggers]): starts the dispatcher job that runs the day's maintenance server-wide and for
  // every team in bounded steps (src/maintenance/): one Durable Object call here, whatever the number of teams.
  scheduled(controller, env, ctx) {
    metered(env, 'scheduled', () => ctx.waitUntil(startDailyMaintenance(env, controller.scheduledTime)));
  },
} satisfies ExportedHandler<CairnEnv>;
