// cairn Worker entry: the HTTP app (src/app.ts), the daily retention sweep, the Durable Object classes and the
// job kinds the job lanes run. Each entry point is one metered invocation (src/db/meter.ts).
import app from './app';
import type { CairnEnv } from './env';
import { healFts } from './db/fts';
import { metered } from './db/meter';
import { allShardDbs } from './db/shards';
import { registerJobKinds } from './jobs/registry';
import { applyRetention } from './retention/sweep';
import { embedJob } from './vectors/embed-job';

// Every kind of job this Worker runs (src/jobs/types.ts says how to write one; NOTES: how to add one).
registerJobKinds([embedJob]);

export { SessionDO } from './session/session-do';
export { TeamDO } from './slots/team-do';
export { HubDO } from './live/hub-do';
export { LimiterDO } from './limits/limiter-do';
export { JobDO } from './jobs/job-do';

export default {
  fetch: (request: Request, env: CairnEnv, ctx: ExecutionContext) => metered(`fetch ${request.method} ${new URL(request.url).pathname}`, () => app.fetch(request, env, ctx)),
  // Daily (wrangler.toml [triggers]): FTS indexes healed after a restore, then teams' retention_days.
  scheduled(controller, env, ctx) {
    metered('scheduled', () => ctx.waitUntil(
      Promise.all(allShardDbs(env).map(healFts))
        .then((healed) => healed.flat())
        .then((rebuilt) => rebuilt.length && console.warn('FTS indexes were out of step with their tables and were rebuilt', { rebuilt }))
        .then(() => applyRetention(env, controller.scheduledTime))
        .then((r) => console.log('retention sweep', r)),
    ));
  },
} satisfies ExportedHandler<CairnEnv>;
