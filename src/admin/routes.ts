// Team administration under /api/admin/* (token with the admin scope, user role owner or admin).
// POST /api/admin/teams (operator bootstrap) lives in bootstrap.ts and is mounted before authentication.
import { Hono } from 'hono';
import type { AppEnv } from '../auth/types';
import { requireAdmin } from './guard';
import { adminProjectRoutes } from './projects';
import { adminSettingsRoutes } from './settings';
import { adminUserRoutes } from './users';

const admin = new Hono<AppEnv>();
admin.use('*', requireAdmin);
admin.route('/', adminUserRoutes);
admin.route('/', adminProjectRoutes);
admin.route('/', adminSettingsRoutes);

export const adminRoutes = new Hono<AppEnv>().route('/api/admin', admin);
