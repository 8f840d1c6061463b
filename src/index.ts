// cairn Worker entry: the HTTP app (src/app.ts), the daily retention sweep and the Durable Object classes.
import app from './app';
import type { CairnEnv } from './env';
import { applyRetention } from './retention/sweep';

export { SessionDO } from './session/session-do';
export { TeamDO } from './slots/team-do';
export { HubDO } from './live/hub-do';
export { LimiterDO } from './limits/limiter-do';

export default {
  fetch: app.fetch,
  // Daily (wrangler.toml [triggers]): teams' retention_days.
  scheduled(controller, env, ctx) {
    ctx.waitUntil(applyRetention(env, controller.scheduledTime).then((r) => console.log('retention sweep', r)));
  },
} satisfies ExportedHandler<CairnEnv>;
