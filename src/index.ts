// cairn Worker: assembles routes, middleware and the Durable Object classes.
import { Hono } from 'hono';
import { authenticate } from './auth/middleware';
import type { AppEnv } from './auth/types';
import type { CairnEnv } from './env';
import { ingestRoutes } from './ingest/routes';
import { installRoutes } from './install/routes';
import { healFts } from './db/fts-purge';
import { forgetRoutes } from './forget/routes';
import { errorBody, handleError } from './lib/errors';
import { mcpRoutes } from './mcp/routes';
import { recallRoutes } from './recall/routes';
import { applyRetention } from './retention/sweep';
import { searchRoutes } from './search/routes';
import { adminRoutes } from './admin/routes';
import { bootstrapRoutes } from './admin/bootstrap';
import { rateLimit } from './limits/rate-limit';
import { viewerApi } from './viewer/api';
import { viewerRoutes } from './viewer/routes';

export { SessionDO } from './session/session-do';
export { TeamDO } from './slots/team-do';
export { HubDO } from './live/hub-do';
export { LimiterDO } from './limits/limiter-do';

const app = new Hono<AppEnv>();

app.onError(handleError);
app.notFound((c) => c.json(errorBody('not_found', 'No such route.'), 404));

// Public: health, the viewer shell, the client download, and operator bootstrap (admin secret).
app.get('/api/health', (c) => c.json({ status: 'ok', service: 'cairn' }));
app.route('/', viewerRoutes);
app.route('/', installRoutes);
app.route('/', bootstrapRoutes);

// Everything else needs a bearer token.
app.use('/api/*', authenticate, rateLimit);
app.use('/mcp', authenticate, rateLimit);
app.route('/', ingestRoutes);
app.route('/', recallRoutes);
app.route('/', searchRoutes);
app.route('/', adminRoutes);
app.route('/', forgetRoutes);
app.route('/', mcpRoutes);
app.route('/', viewerApi);

export default {
  fetch: app.fetch,
  // Daily (wrangler.toml [triggers]): FTS indexes healed after a restore, then teams' retention_days.
  scheduled(controller, env, ctx) {
    ctx.waitUntil(
      healFts(env.DB)
        .then((rebuilt) => rebuilt.length && console.warn('FTS indexes were out of step with their tables and were rebuilt', { rebuilt }))
        .then(() => applyRetention(env, controller.scheduledTime))
        .then((r) => console.log('retention sweep', r)),
    );
  },
} satisfies ExportedHandler<CairnEnv>;
