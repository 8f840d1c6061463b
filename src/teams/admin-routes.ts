// Team administration under /api/admin/* (token with the admin scope).
import { Hono } from 'hono';
import type { AppEnv } from '../env';

export const adminRoutes = new Hono<AppEnv>();
