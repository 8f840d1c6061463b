// cairn Worker entry: the HTTP app (src/app.ts), the daily retention sweep and the Durable Object classes.
import app from './app';
import type { CairnEnv } from './env';
import { healFts } from './db/fts';
import { allShardDbs } from './db/shards';
import { applyRetention } from './retention/sweep';

export { SessionDO } from './session/session-do';
export { TeamDO } from './slots/team-do';
export { HubDO } from './live/hub-do';
export { LimiterDO } from './limits/limiter-do';

export default {
  fetch: app.fetch,
  // Daily (wrangler.toml [triggers]): FTS indexes healed after a restore, then teams' retention_days.
  scheduled(controller, env, ctx) {
    ctx.waitUntil(
      Promise.all(allShardDbs(env).map(healFts))
        .then((healed) => healed.flat())
        .then((rebuilt) => rebuilt.length && console.warn('FTS indexes were out of step with their tables and were rebuilt', { rebuilt }))
        .then(() => applyRetention(env, controller.scheduledTime))
        .then((r) => console.log('retention sweep', r)),
    );
  },
} satisfies ExportedHandler<CairnEnv>;
