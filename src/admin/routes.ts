// Team administration: mounted at /api/admin behind requireAdmin (admin scope, role owner or admin), declared
// in src/app.ts. POST /api/admin/teams (operator bootstrap) is its own mount with its own guard.
import { Hono } from 'hono';
import type { AppEnv } from '../auth/types';
import { transferRoutes } from '../transfer/routes';
import { adminProjectRoutes } from './projects';
import { adminSettingsRoutes } from './settings';
import { adminUserRoutes } from './users';

export const adminRoutes = new Hono<AppEnv>()
  .route('/', adminUserRoutes)
  .route('/', adminProjectRoutes)
  .route('/', adminSettingsRoutes)
  .route('/', transferRoutes);
