// The browser viewer (GET /) and its live stream.
import { Hono } from 'hono';
import type { AppEnv } from '../env';

export const viewerRoutes = new Hono<AppEnv>();
