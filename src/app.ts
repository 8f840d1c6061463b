// The HTTP app, assembled: each feature is mounted at its prefix with its guards declared beside it, and
// every guard is registered before any route, so a route is protected because of where it lives, never
// because of the order it was added in. test/worker/http/route-table.test.ts walks app.routes and proves that
// every route outside PUBLIC_PATHS refuses a missing token (401) and a wrong scope (403).
import { Hono, type MiddlewareHandler } from 'hono';
import { except } from 'hono/combine';
import { secureHeaders } from 'hono/secure-headers';
import { timing } from 'hono/timing';
import { bootstrapRoutes, requireOperator } from './admin/bootstrap';
import { backupRoutes } from './backup/routes';
import { releaseRoutes } from './hold/routes';
import { requireAdmin } from './admin/guard';
import { adminJobRoutes, ownJobRoutes } from './admin/jobs';
import { adminRoutes } from './admin/routes';
import { authenticate } from './auth/middleware';
import { requireScope, scopeByMethod } from './auth/scope';
import type { AppEnv } from './auth/types';
import { eventRoutes, sessionRoutes } from './ingest/routes';
import { installRoutes } from './install/routes';
import { forgetRoutes } from './forget/routes';
import { correctionRoutes, reviewRoutes } from './corrections/routes';
import { versionRoutes } from './versions/routes';
import { mergeRoutes } from './consolidation/routes';
import { proposalRoutes } from './proposals/routes';
import { adminHealthRoutes, observerAdminRoutes, observerStateRoutes, operatorHealthRoutes } from './health/routes';
import { errorBody, handleError } from './lib/errors';
import { runWithRequestLog } from './lib/log';
import { bodyCap } from './limits/body-limit';
import { rateLimit } from './limits/rate-limit';
import { mcpRoutes } from './mcp/routes';
import { memoryRoutes } from './personal/routes';
import { handoffRoutes } from './handoff/routes';
import { standupRoutes } from './digest/routes';
import { contextRoutes, observationRoutes, projectRoutes, timelineRoutes } from './recall/routes';
import { receiptRoutes } from './receipts/routes';
import { primeRoutes } from './recall/prime';
import { benchRoutes } from './search/bench-routes';
import { backfillRoutes, searchRoutes } from './search/routes';
import { budgetRoutes, usageRoutes } from './usage/routes';
import { liveRoutes, viewerApi } from './viewer/api';
import { viewerRoutes } from './viewer/routes';

type Guard = MiddlewareHandler<AppEnv>;
interface Mount {
  at: string;
  guards: Guard[];
  routes: Hono<AppEnv>;
}

/** The only paths under /api that take no bearer token: health, and the operator's team routes (bootstrap, move: their own secret). */
export const PUBLIC_PATHS = ['/api/health', '/api/admin/teams', '/api/admin/teams/*'] as const;

const health = new Hono<AppEnv>().get('/', (c) => c.json({ status: 'ok', service: 'cairn' }));

/** Public: health, the viewer shell and assets, the client download, operator bootstrap. */
const PUBLIC_MOUNTS: Mount[] = [
  { at: '/api/health', guards: [], routes: health },
  // Bootstrap, team moves, backups and restores (src/backup/routes.ts); `GET /health`: every team's health and every database's size (the same secret).
  {
    at: '/api/admin/teams',
    guards: [requireOperator],
    routes: new Hono<AppEnv>()
      .route('/health', operatorHealthRoutes)
      .route('/', bootstrapRoutes)
      .route('/', backupRoutes),
  },
  { at: '/', guards: [], routes: viewerRoutes },
  { at: '/', guards: [], routes: installRoutes },
];

/** Everything else: a bearer token (authenticate + rateLimit, below), then the scope this mount needs. */
const TOKEN_MOUNTS: Mount[] = [
  // Hooks write with `ingest`; a session's status may also be read with `read`.
  {
    at: '/api/sessions',
    guards: [scopeByMethod({ read: ['ingest', 'read'], write: ['ingest'] })],
    routes: sessionRoutes,
  },
  { at: '/api/events', guards: [requireScope('ingest')], routes: eventRoutes },
  { at: '/api/forget', guards: [requireScope('ingest')], routes: forgetRoutes },
  // A repository's first notes (cairn prime): a write, counted in the ingest bucket (limits/rate-limit.ts).
  { at: '/api/prime', guards: [requireScope('ingest')], routes: primeRoutes },
  // Supersede, feedback, edit and revert write with `ingest`; a record's history and diffs may also be read with `read`.
  {
    at: '/api/corrections',
    guards: [scopeByMethod({ read: ['ingest', 'read'], write: ['ingest'] })],
    routes: new Hono<AppEnv>().route('/', correctionRoutes).route('/', versionRoutes),
  },
  // A person's own memory and `cairn remember`: writes with `ingest`, the owner's export with `read` too.
  {
    at: '/api/memory',
    guards: [scopeByMethod({ read: ['ingest', 'read'], write: ['ingest'] })],
    routes: memoryRoutes,
  },
  // Continue anywhere: a session's handoff (`read` or `ingest`) and handoff notes (`ingest`).
  {
    at: '/api/handoff',
    guards: [scopeByMethod({ read: ['ingest', 'read'], write: ['ingest'] })],
    routes: handoffRoutes,
  },
  // What I (or the team) did in a window: `cairn standup`.
  { at: '/api/standup', guards: [requireScope('read')], routes: standupRoutes },
  // A job the caller started (forget of their private project, an export): any device token.
  { at: '/api/jobs', guards: [scopeByMethod({ read: ['ingest', 'read'], write: ['ingest'] })], routes: ownJobRoutes },
  { at: '/api/context', guards: [requireScope('read')], routes: contextRoutes },
  { at: '/api/timeline', guards: [requireScope('read')], routes: timelineRoutes },
  { at: '/api/observations', guards: [requireScope('read')], routes: observationRoutes },
  { at: '/api/projects', guards: [requireScope('read')], routes: projectRoutes },
  { at: '/api/search', guards: [requireScope('read')], routes: searchRoutes },
  { at: '/api/receipts', guards: [requireScope('read')], routes: receiptRoutes },
  { at: '/api/viewer', guards: [requireScope('read')], routes: viewerApi },
  { at: '/api/live', guards: [requireScope('read')], routes: liveRoutes },
  // Whether the team's observer runs on its model or the heuristic fallback (`cairn status`): any device token.
  {
    at: '/api/observer',
    guards: [scopeByMethod({ read: ['ingest', 'read'], write: ['ingest'] })],
    routes: budgetRoutes,
  },
  // Whether memory is paused, delayed or behind, in one sentence (`cairn status`, the status line, the viewer).
  {
    at: '/api/observer/state',
    guards: [scopeByMethod({ read: ['ingest', 'read'], write: ['ingest'] })],
    routes: observerStateRoutes,
  },
  {
    at: '/api/admin',
    guards: [requireAdmin],
    routes: new Hono<AppEnv>()
      .route('/', adminRoutes)
      .route('/jobs', adminJobRoutes)
      .route('/usage', usageRoutes)
      .route('/backfill-vectors', backfillRoutes)
      .route('/bench', benchRoutes)
      .route('/health', adminHealthRoutes)
      .route('/observer', observerAdminRoutes)
      .route('/review', reviewRoutes)
      .route('/release', releaseRoutes)
      .route('/merges', mergeRoutes)
      .route('/proposals', proposalRoutes),
  },
  // The MCP transport parses the raw body itself: cap it here.
  { at: '/mcp', guards: [requireScope('read'), bodyCap()], routes: mcpRoutes },
];

const app = new Hono<AppEnv>();
// Every request gets an id (Cloudflare's ray id when there is one) that its log lines carry with its team's id
// once the token is checked (src/lib/log.ts), and that the answer names (`x-request-id`) so a user can quote it.
app.use(async (c, next) => {
  const requestId = c.req.header('cf-ray') ?? crypto.randomUUID();
  c.header('x-request-id', requestId);
  await runWithRequestLog({ requestId, teamId: () => c.get('auth')?.teamId ?? null }, next);
});
// Server-Timing wherever the token guards run (they record the token check and the rate limiter), so on every
// API answer and on /mcp: where a request's time went (token check, rate limiter, session object).
const serverTiming = timing({ totalDescription: 'total' });
app.use('/api/*', serverTiming);
app.use('/mcp', serverTiming);
app.onError(handleError);
app.notFound((c) => c.json(errorBody('not_found', 'No such route.'), 404));

// Guards first. Headers a handler set itself (the viewer's CSP) are kept.
app.use(secureHeaders({ overwrite: false }));
const tokenGuards = (...guards: Guard[]) => except([...PUBLIC_PATHS], ...guards);
app.use('/api/*', tokenGuards(authenticate, rateLimit));
app.use('/mcp', authenticate, rateLimit);
for (const m of [...PUBLIC_MOUNTS, ...TOKEN_MOUNTS]) {
  if (m.guards.length === 0) continue;
  const guards = PUBLIC_MOUNTS.includes(m) ? m.guards : [tokenGuards(...m.guards)];
  app.use(m.at, ...guards);
  app.use(`${m.at}/*`, ...guards);
}

// Then the routes.
for (const m of [...PUBLIC_MOUNTS, ...TOKEN_MOUNTS]) app.route(m.at, m.routes);

export default app;
